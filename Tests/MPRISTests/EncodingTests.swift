import Platform
import Testing

@testable import MPRIS

/// The text conversions the bus needs, checked without a bus.
@Suite(.timeLimit(.minutes(2))) struct EncodingTests {
  @Test func pathElementsKeepAlphanumericsAndEscapeEverythingElse() {
    #expect(MediaPlayerObject.pathElement("track42") == "track42")
    #expect(MediaPlayerObject.pathElement("") == "_")
    #expect(MediaPlayerObject.pathElement("_") == "_5f")
    #expect(MediaPlayerObject.pathElement("a b") == "a_20b")
    #expect(MediaPlayerObject.pathElement("é") == "_c3_a9")
  }

  @Test func distinctTrackIDsMakeDistinctPaths() {
    let ids = ["", "_", "__", "_5f", "a_20b", "a b", "a/b", "a_2fb", "é", "_c3_a9"]
    #expect(Set(ids.map(MediaPlayerObject.pathElement)).count == ids.count)
  }

  @Test func fileURLsArePercentEncoded() {
    #expect(MPRISTrack.fileURL(path: "/music/a.flac") == "file:///music/a.flac")
    #expect(
      MPRISTrack.fileURL(path: "/music/Björk/#1 100%.ogg")
        == "file:///music/Bj%C3%B6rk/%231%20100%25.ogg")
    // A Latin-1 name (not UTF-8) is named by its own byte, as the file system has it.
    let latin1 = FileName.string(Array("/music/Bj".utf8) + [0xF6] + Array("rk.ogg".utf8))
    #expect(MPRISTrack.fileURL(path: latin1) == "file:///music/Bj%F6rk.ogg")
  }

  @Test func durationsBecomeWholeMicroseconds() {
    #expect(Duration.milliseconds(12_500).mprisMicroseconds == 12_500_000)
    #expect(Duration.nanoseconds(1_999).mprisMicroseconds == 1)
    #expect(Duration.seconds(-3).mprisMicroseconds == -3_000_000)
    #expect(Duration.seconds(Int64.max).mprisMicroseconds == .max)
  }

  @Test func playerNamesMustBeBusNameElements() {
    #expect(MPRISServer.isValidPlayerName("hark"))
    #expect(MPRISServer.isValidPlayerName("hark-2_b"))
    #expect(!MPRISServer.isValidPlayerName(""))
    #expect(!MPRISServer.isValidPlayerName("2hark"))
    #expect(!MPRISServer.isValidPlayerName("hark.instance1"))
  }

  @Test func busAddressValuesAreEscaped() {
    #expect(MPRISServer.escapeAddressValue("/run/user/1000/bus") == "/run/user/1000/bus")
    #expect(MPRISServer.escapeAddressValue("/tmp/a b,c=d") == "/tmp/a%20b%2cc%3dd")
  }

  @Test func changedPropertiesNeverIncludePosition() {
    let old = MPRISState(playbackStatus: .playing, volume: nil)
    var new = old
    #expect(MediaPlayerObject.changedProperties(from: old, to: new).isEmpty)
    new.volume = 1  // reads 1.0 either way
    #expect(MediaPlayerObject.changedProperties(from: old, to: new).isEmpty)
    new.volume = 0.5
    new.canSeek = true
    #expect(MediaPlayerObject.changedProperties(from: old, to: new) == ["Volume", "CanSeek"])
  }
}
