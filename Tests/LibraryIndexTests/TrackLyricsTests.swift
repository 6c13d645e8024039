import Glibc
import Lyrics
import Platform
import Testing

@testable import LibraryIndex

/// Lyrics found for a track, through the real hark-tags (TagLib's C++ API) on files made at
/// test time: an .lrc beside the track, Vorbis LYRICS and UNSYNCEDLYRICS, MP4's ©lyr, ID3v2's
/// USLT and SYLT (written byte by byte here, as no encoder writes SYLT), and which wins.
@Suite(.timeLimit(.minutes(2))) final class TrackLyricsTests {
  let folder: String = {
    var template = Array("/tmp/hark-lyrics-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()

  deinit { _ = system("rm -rf '\(folder)'") }

  func make(_ name: String, _ tags: [String: String] = [:], codec: String = "flac") throws
    -> String
  {
    let path = folder + "/" + name
    var command = "ffmpeg -nostdin -v error -y -f lavfi -i sine=d=1 -c:a \(codec)"
    if codec == "libmp3lame" { command += " -write_id3v2 0 -write_xing 0" }
    for (k, v) in tags.sorted(by: { $0.key < $1.key }) { command += " -metadata '\(k)=\(v)'" }
    try #require(system(command + " '\(path)'") == 0, "ffmpeg could not make \(name)")
    return path
  }

  func write(_ path: String, _ text: String) {
    _ = try? replaceFile(path, with: Array(text.utf8), mode: 0o644)
  }

  @Test func lrcTextInAVorbisCommentIsSynced() throws {
    let path = try make("a.flac", ["LYRICS": "[00:00.50]Hello\n[00:00.80]World"])
    let found = TrackLyrics.find(for: path)
    let lyrics = try #require(found.lyrics)
    #expect(lyrics.isSynced)
    #expect(lyrics.lines.map(\.text) == ["Hello", "World"])
    #expect(lyrics.source == .tag("LYRICS"))
  }

  @Test func mp4AndUnsyncedVorbisLyricsArePlainText() throws {
    let m4a = try make("b.m4a", ["lyrics": "Plain words\nsecond line"], codec: "aac")
    let a = try #require(TrackLyrics.find(for: m4a).lyrics)
    #expect(!a.isSynced)
    #expect(a.lines.map(\.text) == ["Plain words", "second line"])
    #expect(a.source == .tag("©lyr"))
    let ogg = try make("d.ogg", ["UNSYNCEDLYRICS": "tab\there"], codec: "libvorbis")
    let b = try #require(TrackLyrics.find(for: ogg).lyrics)
    #expect(b.lines.map(\.text) == ["tab\there"], "control characters kept; views escape them")
  }

  @Test func id3SYLTWinsOverUSLTAndAnLrcBesideWinsOverBoth() throws {
    let mp3 = try make("c.mp3", codec: "libmp3lame")
    let audio = try #require(readBytes(mp3))
    let tag = ID3.tag([
      ID3.uslt("Unsynced words"),
      ID3.sylt([(2000, "Second"), (500, "First")]),
    ])
    _ = try? replaceFile(mp3, with: tag + audio, mode: 0o644)
    let fromTags = try #require(TrackLyrics.find(for: mp3).lyrics)
    #expect(fromTags.source == .tag("SYLT"))
    #expect(fromTags.lines.map(\.text) == ["First", "Second"])
    #expect(fromTags.lines.map(\.time) == [0.5, 2])

    // Unsynced lyrics beside lose to the synced tags; synced ones beside win.
    write(folder + "/c.lrc", "just words")
    #expect(TrackLyrics.find(for: mp3).lyrics?.source == .tag("SYLT"))
    write(folder + "/c.lrc", "[00:00.10]From the file")
    let beside = try #require(TrackLyrics.find(for: mp3).lyrics)
    #expect(beside.source == .file(folder + "/c.lrc"))
    #expect(beside.lines.map(\.text) == ["From the file"])
  }

  @Test func anLrcBesideATrackWithoutLyricsIsItsLyricsAndNoneIsNone() throws {
    let path = try make("plain.flac")
    #expect(TrackLyrics.find(for: path) == TrackLyrics.Found())
    write(folder + "/plain.LRC", "Only words\n\nand more")
    let lyrics = try #require(TrackLyrics.find(for: path).lyrics)
    #expect(lyrics.lines.map(\.text) == ["Only words", "", "and more"])
    // A file TagLib cannot read says why.
    write(folder + "/junk.flac", "not audio at all")
    #expect(TrackLyrics.find(for: folder + "/junk.flac").problem != nil)
  }

  func readBytes(_ path: String) -> [UInt8]? {
    if case .bytes(let b) = readWholeFile(path) { return b }
    return nil
  }
}

/// ID3v2.4 frames, byte by byte.
enum ID3 {
  static func syncsafe(_ n: Int) -> [UInt8] {
    [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)]
  }

  static func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
    Array(id.utf8) + syncsafe(body.count) + [0, 0] + body
  }

  /// Unsynced lyrics, UTF-8, English, no description.
  static func uslt(_ text: String) -> [UInt8] {
    frame("USLT", [3] + Array("eng".utf8) + [0] + Array(text.utf8))
  }

  /// Synced lyrics in milliseconds, UTF-8.
  static func sylt(_ entries: [(Int, String)]) -> [UInt8] {
    var body: [UInt8] = [3] + Array("eng".utf8) + [2, 1, 0]
    for (ms, text) in entries {
      body += Array(text.utf8) + [0]
      body += [
        UInt8(ms >> 24 & 0xFF), UInt8(ms >> 16 & 0xFF), UInt8(ms >> 8 & 0xFF), UInt8(ms & 0xFF),
      ]
    }
    return frame("SYLT", body)
  }

  static func tag(_ frames: [[UInt8]]) -> [UInt8] {
    let body = frames.flatMap { $0 }
    return Array("ID3".utf8) + [4, 0, 0] + syncsafe(body.count) + body
  }
}
