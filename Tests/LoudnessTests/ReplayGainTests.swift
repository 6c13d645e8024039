import AudioCore
import Glibc
import Testing

@testable import Loudness

/// The arithmetic: which gain a mode takes, the preamp, clipping prevention, Opus's R128 gains,
/// and the numbers as taggers write them.
@Suite struct ReplayGainArithmeticTests {
  let tags = ReplayGainTags(trackGain: -7.5, trackPeak: 0.5, albumGain: -5, albumPeak: 0.9)

  @Test func eachModeTakesItsGainAndFallsBackToTheOther() {
    #expect(ReplayGainSettings(mode: .off).decibels(for: tags) == nil)
    #expect(ReplayGainSettings(mode: .track).decibels(for: tags) == -7.5)
    #expect(ReplayGainSettings(mode: .album).decibels(for: tags) == -5)
    let trackOnly = ReplayGainTags(trackGain: -3)
    let albumOnly = ReplayGainTags(albumGain: -4)
    #expect(ReplayGainSettings(mode: .album).decibels(for: trackOnly) == -3)
    #expect(ReplayGainSettings(mode: .track).decibels(for: albumOnly) == -4)
    // No gain tag: the track plays as it is, whatever the preamp.
    #expect(
      ReplayGainSettings(mode: .track, preampDecibels: 6).decibels(for: ReplayGainTags()) == nil)
  }

  @Test func thePreampIsAddedAndClippingPreventionCapsAtThePeak() throws {
    // +6 dB on -7.5 is -1.5 dB; the peak 0.5 leaves 6.02 dB of headroom: not capped.
    let plus6 = ReplayGainSettings(mode: .track, preampDecibels: 6)
    #expect(plus6.decibels(for: tags) == -1.5)
    // A quiet track (+8 dB) whose peak is 0.5: capped at 20·log10(1/0.5) = 6.02 dB.
    let quiet = ReplayGainTags(trackGain: 8, trackPeak: 0.5)
    let capped = try #require(ReplayGainSettings(mode: .track).decibels(for: quiet))
    #expect(abs(capped - 6.0206) < 0.001)
    #expect(ReplayGainSettings(mode: .track, preventClipping: false).decibels(for: quiet) == 8)
    // No peak tag: taken as full scale, so no gain above 0 dB.
    #expect(ReplayGainSettings(mode: .track).decibels(for: ReplayGainTags(trackGain: 4)) == 0)
    // Album mode uses the album's peak with the album's gain.
    let loudAlbum = ReplayGainTags(trackGain: 1, trackPeak: 0.1, albumGain: 3, albumPeak: 0.9)
    let album = try #require(ReplayGainSettings(mode: .album).decibels(for: loudAlbum))
    #expect(abs(album - 0.9151) < 0.001)
    // The linear factor the decoder multiplies by.
    #expect(abs(linearGain(decibels: -6.0206) - 0.5) < 0.0001)
  }

  @Test func valuesAreReadAsTaggersWriteThem() {
    let t = ReplayGainTags(tags: [
      "replaygain_track_gain": " -6.54 dB", "REPLAYGAIN_TRACK_PEAK": "0.987654",
      "ReplayGain_Album_Gain": "+1,25 dB", "replaygain_album_peak": "1.2",
    ])
    #expect(t.trackGain == -6.54)
    #expect(t.trackPeak == 0.987654)
    #expect(t.albumGain == 1.25)
    #expect(t.albumPeak == 1.2)
    let junk = ReplayGainTags(tags: [
      "REPLAYGAIN_TRACK_GAIN": "loud", "REPLAYGAIN_ALBUM_GAIN": "-99 dB",
      "REPLAYGAIN_TRACK_PEAK": "0", "REPLAYGAIN_ALBUM_PEAK": "nan",
    ])
    #expect(junk == ReplayGainTags())
    #expect(junk.isEmpty)
  }

  /// Opus: R128 gains are Q7.8 dB relative to −23 LUFS; ReplayGain's reference is 5 dB louder.
  @Test func opusR128GainsBecomeReplayGain() {
    let t = ReplayGainTags(tags: ["R128_TRACK_GAIN": "-2560", "R128_ALBUM_GAIN": "128"])
    #expect(t.trackGain == -5)  // -10 dB to -23 LUFS is -5 dB to -18
    #expect(t.albumGain == 5.5)
    // A ReplayGain tag, where there is one, wins.
    let both = ReplayGainTags(tags: ["R128_TRACK_GAIN": "0", "REPLAYGAIN_TRACK_GAIN": "-1 dB"])
    #expect(both.trackGain == -1)
    #expect(ReplayGainTags(tags: ["R128_TRACK_GAIN": "-2.5"]).trackGain == nil)
  }
}

/// The tags read from files: made by ffmpeg at test time where it writes them (FLAC, Ogg
/// Vorbis, Opus, MP3 with ID3v2.3 and 2.4, WavPack's APEv2), by hand where it does not (APEv2
/// after MP3 audio and before ID3v1, as mp3gain writes it; a FLAC whose cover comes first).
@Suite(.timeLimit(.minutes(2))) final class GainTagReaderTests {
  let folder: String = {
    var template = Array("/tmp/hark-loudness-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()

  deinit { _ = system("rm -rf '\(folder)'") }

  /// One second of sine in `name`, with ReplayGain tags, made by ffmpeg with `options`.
  func make(_ name: String, _ options: [String], tags: [String: String]) throws -> String {
    let path = folder + "/" + name
    var command = "ffmpeg -nostdin -v error -y -f lavfi -i sine=f=440:d=1 -ac 2 "
    command += options.joined(separator: " ")
    for (key, value) in tags.sorted(by: { $0.key < $1.key }) {
      command += " -metadata '\(key)=\(value)'"
    }
    command += " '\(path)'"
    try #require(system(command) == 0, "ffmpeg could not make \(name)")
    return path
  }

  static let standard = [
    "REPLAYGAIN_TRACK_GAIN": "-6.54 dB", "REPLAYGAIN_TRACK_PEAK": "0.876543",
    "REPLAYGAIN_ALBUM_GAIN": "-5.25 dB", "REPLAYGAIN_ALBUM_PEAK": "0.999",
  ]
  static let expected = ReplayGainTags(
    trackGain: -6.54, trackPeak: 0.876543, albumGain: -5.25, albumPeak: 0.999)

  @Test(arguments: [
    ("tagged.flac", ["-c:a", "flac"]),
    ("tagged.ogg", ["-c:a", "libvorbis"]),
    ("tagged.opus", ["-c:a", "libopus"]),
    ("v24.mp3", ["-c:a", "libmp3lame", "-id3v2_version", "4"]),
    ("v23.mp3", ["-c:a", "libmp3lame", "-id3v2_version", "3"]),
    ("tagged.wv", ["-c:a", "wavpack"]),
  ])
  func theGainTagsOfEachFormatAreRead(_ name: String, _ options: [String]) throws {
    let path = try make(name, options, tags: Self.standard)
    #expect(GainTagReader.read(path: path) == Self.expected, "\(name)")
  }

  @Test func anOpusFilesR128GainIsRead() throws {
    let path = try make("r128.opus", ["-c:a", "libopus"], tags: ["R128_TRACK_GAIN": "-1280"])
    #expect(GainTagReader.read(path: path).trackGain == 0)
  }

  @Test func aFileWithoutGainTagsHasNone() throws {
    let path = try make("plain.flac", ["-c:a", "flac"], tags: ["TITLE": "Plain"])
    #expect(GainTagReader.read(path: path).isEmpty)
    #expect(GainTagReader.read(path: folder + "/missing.flac").isEmpty)
    #expect(GainTagReader.read(path: folder).isEmpty)
  }

  /// Whether a file has chapters, for the player to have FFmpeg read them: ID3v2's CHAP frames
  /// (ffmpeg writes them from its metadata file's chapters), Vorbis comments' CHAPTERxx.
  @Test func chapterMarksAreFound() throws {
    let meta = folder + "/chapters.txt"
    let f = try #require(fopen(meta, "w"))
    fputs(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=500\ntitle=One\n", f)
    fclose(f)
    let mp3 = try make(
      "chapters.mp3",
      [
        "-i", meta, "-map", "0:a", "-map_chapters", "1", "-c:a", "libmp3lame", "-id3v2_version",
        "3",
      ], tags: [:])
    let wanted: (String) -> Bool = {
      $0 == GainTagReader.chaptersField || $0.hasPrefix("CHAPTER")
    }
    #expect(GainTagReader.read(path: mp3, keep: wanted) == ["HAS_CHAPTERS": "1"])
    let flac = try make(
      "chapters.flac", ["-c:a", "flac"],
      tags: ["CHAPTER001": "00:00:00.000", "CHAPTER001NAME": "One"])
    #expect(
      GainTagReader.read(path: flac, keep: wanted).keys.sorted() == [
        "CHAPTER001", "CHAPTER001NAME",
      ])
    let plain = try make("plain.mp3", ["-c:a", "libmp3lame"], tags: ["TITLE": "x"])
    #expect(GainTagReader.read(path: plain, keep: wanted).isEmpty)
  }

  /// mp3gain's way: APEv2 after the audio, before an ID3v1 tag.
  @Test func apeV2BeforeID3v1IsRead() {
    func item(_ key: String, _ value: String) -> [UInt8] {
      let v = Array(value.utf8)
      return le32(v.count) + le32(0) + Array(key.utf8) + [0] + v
    }
    let items =
      item("REPLAYGAIN_TRACK_GAIN", "-3.21 dB") + item("Artist", "x")
      + item("REPLAYGAIN_TRACK_PEAK", "0.5")
    let footer =
      Array("APETAGEX".utf8) + le32(2000) + le32(items.count + 32) + le32(3) + le32(0)
      + [UInt8](repeating: 0, count: 8)
    let id3v1 = Array("TAG".utf8) + [UInt8](repeating: 0x20, count: 125)
    let audio = [UInt8](repeating: 0xFF, count: 3000)
    let fields = GainTagReader.fields(in: audio + items + footer + id3v1)
    #expect(fields == ["REPLAYGAIN_TRACK_GAIN": "-3.21 dB", "REPLAYGAIN_TRACK_PEAK": "0.5"])
  }

  /// A FLAC whose first block is a large picture: skipped by its length, not read.
  @Test func aFLACCoverBeforeTheCommentsIsSkipped() {
    let comment = Array("REPLAYGAIN_ALBUM_GAIN=-2.00 dB".utf8)
    let vorbis = le32(3) + Array("abc".utf8) + le32(1) + le32(comment.count) + comment
    let picture: [UInt8] = [6, 0x01, 0x00, 0x00] + [UInt8](repeating: 7, count: 65_536)
    let streamInfo: [UInt8] = [0, 0, 0, 34] + [UInt8](repeating: 0, count: 34)
    let block: [UInt8] = [0x84, 0, 0, UInt8(vorbis.count)] + vorbis
    let file = Array("fLaC".utf8) + streamInfo + picture + block
    #expect(GainTagReader.fields(in: file) == ["REPLAYGAIN_ALBUM_GAIN": "-2.00 dB"])
  }

  /// Damaged headers give no tags and no crash: every length checked before it is used.
  @Test func damagedHeadersGiveNothing() {
    let flac = Array("fLaC".utf8) + [0x84, 0xFF, 0xFF, 0xFF] + le32(0x7FFF_FFFF)
    #expect(GainTagReader.fields(in: flac).isEmpty)
    let id3 =
      Array("ID3".utf8) + [4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F] + Array("TXXX".utf8)
      + [0x7F, 0x7F, 0x7F, 0x7F, 0, 0]
    #expect(GainTagReader.fields(in: id3).isEmpty)
    let ogg = Array("OggS".utf8) + [0, 2] + [UInt8](repeating: 0, count: 20) + [255]
    #expect(GainTagReader.fields(in: ogg).isEmpty)
    let ape =
      Array("APETAGEX".utf8) + le32(2000) + le32(Int(Int32.max)) + le32(5) + le32(0)
      + [UInt8](repeating: 0, count: 8)
    #expect(GainTagReader.fields(in: ape).isEmpty)
    #expect(GainTagReader.fields(in: []).isEmpty)
  }
}

private func le32(_ n: Int) -> [UInt8] {
  [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24 & 0xFF)]
}
