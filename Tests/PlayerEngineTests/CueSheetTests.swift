import AudioCore
import AudioTestSupport
import Glibc
import Testing

@testable import PlayerEngine
@testable import MediaFiles

/// Cue sheets: a concert ripped to one file with its .cue is its tracks, with their titles and
/// performers, gapless between them, each seekable within itself.
@Suite(.timeLimit(.minutes(2))) final class CueSheetTests {
  private let folder: String = {
    var template = Array("/tmp/hark-cue.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
  }()
  deinit { _ = system("rm -rf '\(folder)'") }

  private func write(_ name: String, _ bytes: [UInt8]) -> String {
    let path = folder + "/" + name
    let f = fopen(path, "w")!
    _ = fwrite(bytes, 1, bytes.count, f)
    fclose(f)
    return path
  }
  private func write(_ name: String, _ text: String) -> String { write(name, Array(text.utf8)) }

  static let live = """
    REM GENRE Rock
    REM DATE 1999
    PERFORMER "The Band"
    TITLE "Live at Home"
    FILE "Live.wav" WAVE
      TRACK 01 AUDIO
        TITLE "Opening"
        INDEX 01 00:00:00
      TRACK 02 AUDIO
        TITLE "Middle Of It"
        PERFORMER "A Guest"
        FLAGS DCP
        INDEX 00 00:01:70
        INDEX 01 00:02:00
      TRACK 03 DATA
        INDEX 01 00:03:00
      TRACK 04 AUDIO
        TITLE "Encore"
        INDEX 01 00:04:00

    """

  @Test func aSheetIsReadAsItsAudioTracksWithTitlesAndCDTimes() throws {
    let path = write("Live.cue", Self.live.replacingOccurrences("\n", "\r\n"))
    let sheet = try CueSheet.read(path).get()
    #expect(sheet.title == "Live at Home")
    #expect(sheet.performer == "The Band")
    #expect(sheet.tracks.map(\.number) == [1, 2, 4], "the data track is left out")
    #expect(sheet.tracks.map(\.title) == ["Opening", "Middle Of It", "Encore"])
    #expect(sheet.tracks[1].performer == "A Guest")
    // INDEX 01, in CD frames: the pregap (INDEX 00) belongs to the track before.
    #expect(sheet.tracks.map(\.start) == [0, 150, 300])
    #expect(sheet.tracks[0].file == folder + "/Live.wav")
    #expect(sheet.references(path) == [path + "#1", path + "#2", path + "#4"])
    #expect(CueSheet.Reference(path + "#2") == CueSheet.Reference(sheet: path, track: 2))
    #expect(CueSheet.Reference(folder + "/song#2.flac") == nil)
    #expect(QueueLoader.title(fromPath: path + "#4") == "Live #4")
  }

  /// EAC and foobar2000 write the gains into the sheet: the album's at the top, each track's
  /// under it; a track's own wins over the album's of the same name.
  @Test func replayGainRemarksAreReadForTheSheetAndEachTrack() throws {
    let text = """
      REM GENRE Rock
      REM REPLAYGAIN_ALBUM_GAIN -7.89 dB
      REM REPLAYGAIN_ALBUM_PEAK 0.988525
      FILE "Live.flac" WAVE
        TRACK 01 AUDIO
          REM REPLAYGAIN_TRACK_GAIN -8.12 dB
          INDEX 01 00:00:00
        TRACK 02 AUDIO
          INDEX 01 00:10:00
      """
    let sheet = try CueSheet.read(write("Gains.cue", text)).get()
    #expect(
      sheet.gainTags(ofTrack: 1) == [
        "REPLAYGAIN_ALBUM_GAIN": "-7.89 dB", "REPLAYGAIN_ALBUM_PEAK": "0.988525",
        "REPLAYGAIN_TRACK_GAIN": "-8.12 dB",
      ])
    #expect(sheet.gainTags(ofTrack: 2)["REPLAYGAIN_TRACK_GAIN"] == nil)
    #expect(sheet.gainTags(ofTrack: 2)["REPLAYGAIN_ALBUM_GAIN"] == "-7.89 dB")
  }

  @Test func aLatin1SheetWithABOMlessBodyReadsAndAnEmptyOneSaysSo() throws {
    // "Café" in Latin-1, as many rippers write it.
    var bytes = Array("FILE \"a.wav\" WAVE\n TRACK 01 AUDIO\n  TITLE \"Caf".utf8)
    bytes += [0xE9] + Array("\"\n  INDEX 01 00:00:00\n".utf8)
    let sheet = try CueSheet.read(write("latin.cue", bytes)).get()
    #expect(sheet.tracks.first?.title == "Café")
    let utf8 = try CueSheet.read(write("bom.cue", [0xEF, 0xBB, 0xBF] + Array(Self.live.utf8))).get()
    #expect(utf8.title == "Live at Home")
    let empty = CueSheet.read(write("empty.cue", "REM nothing\n"))
    #expect(throws: DecodeError.self) { try empty.get() }
    #expect(CueSheet.cdFrames("01:02:03") == 4_653)
    #expect(CueSheet.cdFrames("00:60:00") == nil)
    // A hostile sheet's huge time is refused, not an overflow that ends the player.
    #expect(CueSheet.cdFrames("99999999999:00:00") == nil)
    #expect(CueSheet.cdFrames("99999:59:74") == 449_999_999)
  }

  /// The sheet names Live.wav; the rip was made FLAC: the file beside it with the same name.
  @Test func aFolderWithASheetIsItsTracksAndTheFileItCutsIsNotQueuedTwice() throws {
    _ = write("Live.cue", Self.live)
    _ = write("Live.flac", "audio")
    _ = write("bonus.flac", "audio")
    let (files, problems) = QueueLoader.load([folder])
    #expect(problems.isEmpty)
    let cue = folder + "/Live.cue"
    #expect(files == [folder + "/bonus.flac", cue + "#1", cue + "#2", cue + "#4"])
    #expect(try CueSheet.read(cue).get().tracks[0].file == folder + "/Live.flac")
    // Named on its own, and as a queue names its tracks (a restored queue, a hand-over).
    #expect(QueueLoader.load([cue]).files == [cue + "#1", cue + "#2", cue + "#4"])
    #expect(QueueLoader.load([cue + "#2"]).files == [cue + "#2"])
  }

  @Test func aSheetWhoseFileIsMissingLeavesTheFolderAsItIs() throws {
    _ = write("Other.cue", Self.live.replacingOccurrences("Live.wav", "Gone.wav"))
    _ = write("Live.flac", "audio")
    #expect(QueueLoader.load([folder]).files == [folder + "/Live.flac"])
  }

  /// Each track is its stretch of the file: frame 0 of track 2 is the file's frame at 2 s,
  /// its length runs to track 4's start, and a seek stays within it.
  @Test func aTrackIsItsStretchOfTheFileAndSeeksWithinIt() throws {
    let cue = write("Live.cue", Self.live)
    let library = ToneLibrary([folder + "/Live.wav": .counter(6 * 44_100)])
    let open = { (path: String) throws(DecodeError) -> any AudioDecoder in
      try library.open(path)
    }
    let two = try CueSheet.open(CueSheet.Reference(sheet: cue, track: 2), using: open)
    #expect(two.frameCount == 2 * 44_100)
    #expect(two.metadata.title == "Middle Of It")
    #expect(two.metadata.artist == "A Guest")
    #expect(two.metadata.album == "Live at Home")
    #expect(two.metadata.trackNumber == 2)
    var buffer = [Float](repeating: 0, count: 2 * 4_096)
    func firstFrame() throws -> Int? {
      let n = try buffer.withUnsafeMutableBufferPointer { b throws(DecodeError) in
        try two.read(into: b)
      }
      return n > 0 ? ToneDecoder.counterFrame(of: buffer[0])?.frame : nil
    }
    #expect(try firstFrame() == 2 * 44_100)
    try two.seek(toFrame: 44_100)
    #expect(try firstFrame() == 3 * 44_100)
    // Read to its end: it stops where track 4 starts.
    var total = 44_100 + 4_096
    while true {
      let n = try buffer.withUnsafeMutableBufferPointer { b throws(DecodeError) in
        try two.read(into: b)
      }
      if n == 0 { break }
      total += n
    }
    #expect(total == 2 * 44_100)
    let last = try CueSheet.open(CueSheet.Reference(sheet: cue, track: 4), using: open)
    #expect(last.frameCount == 2 * 44_100, "the last runs to the end of the file")
    #expect(throws: DecodeError.self) {
      try CueSheet.open(CueSheet.Reference(sheet: cue, track: 9), using: open)
    }
  }

  /// Consecutive tracks of one file play gaplessly: every frame of the file, once, in order.
  @Test func consecutiveTracksOfOneFilePlayGapless() async throws {
    let cue = write("Live.cue", Self.live)
    let wav = folder + "/Live.wav"
    let references = try CueSheet.read(cue).get().references(cue)
    let rig = EngineRig(
      queue: references, tracks: [wav: .counter(6 * 44_100)],
      output: FakeOutput.Options(pacing: .realTime(speed: 8))
    ) { configuration in
      let library = ToneLibrary([wav: .counter(6 * 44_100)])
      configuration.openDecoder = { path throws(DecodeError) in
        guard let reference = CueSheet.Reference(path) else { return try library.open(path) }
        return try CueSheet.open(reference) { file throws(DecodeError) in try library.open(file) }
      }
    }
    defer { rig.shutdown() }
    rig.start(references[0])
    try #require(await rig.endOfQueue(), "\(rig.state)")
    #expect(rig.heard.map(\.path) == references)
    #expect(difference(counterFrames(rig.output()), Array(0..<(6 * 44_100))) == nil)
    #expect(rig.devices.opened.count == 1, "one output, never reopened between the tracks")
  }
}

extension String {
  fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
    split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
  }
}
