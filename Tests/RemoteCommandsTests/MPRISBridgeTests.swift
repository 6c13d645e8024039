import MPRIS
import Platform
import SessionCore
import Testing

@testable import RemoteCommands
import PlayerCore
import AudioCore

/// The mapping between MPRIS and hark's own vocabulary (the bus itself is tested in
/// MPRISTests and end to end with playerctl).
@Suite(.timeLimit(.minutes(2))) struct MPRISBridgeTests {
  private var playing: PlayerSnapshot {
    var s = PlayerSnapshot()
    s.state = .playing
    s.current = QueuedTrack(id: 7, path: "music/a b.flac")
    s.queue = [s.current!]
    s.title = "A"
    s.metadata.artist = "Someone"
    s.duration = 61.5
    s.enabledCommands = [.play, .pause, .togglePlayPause, .stop, .changePlaybackPosition]
    s.volume = .level(percent: 40, muted: false)
    return s
  }

  @Test func G19_whatMPRISMayDoIsExactlyWhatIsEnabled() {
    let state = MPRISBridge.state(of: playing, directory: "/home/me")
    #expect(!state.canGoNext)
    #expect(!state.canGoPrevious)
    #expect(state.canPlay && state.canPause && state.canSeek)
    var more = playing
    more.enabledCommands.formUnion([.nextTrack, .previousTrack])
    more.enabledCommands.remove(.changePlaybackPosition)
    let other = MPRISBridge.state(of: more, directory: "/")
    #expect(other.canGoNext && other.canGoPrevious && !other.canSeek)
  }

  @Test func theTrackIsDescribedWithAnAbsoluteURL() throws {
    let state = MPRISBridge.state(of: playing, directory: "/home/me")
    let track = try #require(state.track)
    #expect(track.id == "7")
    #expect(track.title == "A")
    #expect(track.artists == ["Someone"])
    #expect(track.url == "file:///home/me/music/a%20b.flac")
    #expect(track.length == .milliseconds(61_500))
    #expect(state.playbackStatus == .playing)
  }

  /// The chapter heard, in hark's own key (MPRIS has no word for chapters); none without.
  @Test func theChapterHeardIsHarksOwnKey() throws {
    #expect(MPRISBridge.state(of: playing, directory: "/").track?.extra["hark:chapter"] == nil)
    var book = playing
    book.chapters = [Chapter(start: 0, title: "Opening"), Chapter(start: 30)]
    book.position = 12
    #expect(MPRISBridge.state(of: book, directory: "/").track?.extra["hark:chapter"] == "Opening")
    book.position = 31
    #expect(MPRISBridge.state(of: book, directory: "/").track?.extra["hark:chapter"] == "Chapter 2")
  }

  @Test func G3_volumeIsTheSystemVolumeOrNothing() {
    #expect(MPRISBridge.state(of: playing, directory: "/").volume == 0.4)
    var muted = playing
    muted.volume = .level(percent: 40, muted: true)
    #expect(MPRISBridge.state(of: muted, directory: "/").volume == 0)
    var none = playing
    none.volume = .unavailable(device: "null")
    #expect(MPRISBridge.state(of: none, directory: "/").volume == nil)
  }

  @Test func requestsBecomeTheSameRemoteCommandsNeverOthers() {
    let s = playing
    #expect(MPRISBridge.translate(.play, current: s) == .command(.play))
    #expect(MPRISBridge.translate(.playPause, current: s) == .command(.togglePlayPause))
    #expect(MPRISBridge.translate(.next, current: s) == .command(.nextTrack))
    #expect(MPRISBridge.translate(.previous, current: s) == .command(.previousTrack))
    #expect(MPRISBridge.translate(.stop, current: s) == .command(.stop))
    // WirePlumber's Pause as a sink goes: the output's news for the player, not a command.
    #expect(MPRISBridge.translate(.pauseForLostOutput, current: s) == .action(.pauseForLostOutput))
    #expect(
      MPRISBridge.translate(.seek(by: .seconds(5)), current: s)
        == .command(.skipForward(seconds: 5)))
    #expect(
      MPRISBridge.translate(.seek(by: .milliseconds(-2500)), current: s)
        == .command(.skipBackward(seconds: 2.5)))
    // Past the end of the track (61.5 s, at 0 s): Next, as MPRIS says.
    var at60 = s
    at60.position = 60
    at60.positionTime = 1_000
    at60.isAdvancing = true
    #expect(
      MPRISBridge.translate(.seek(by: .seconds(100)), current: s, now: 1_000)
        == .command(.nextTrack))
    #expect(
      MPRISBridge.translate(.seek(by: .seconds(1)), current: at60, now: 1_000)
        == .command(.skipForward(seconds: 1)))
    #expect(
      MPRISBridge.translate(.seek(by: .seconds(1)), current: at60, now: 600_000_000)
        == .command(.nextTrack), "half a second on, 60.6 + 1 is past 61.5")
    #expect(
      MPRISBridge.translate(.setPosition(trackID: "7", to: .seconds(12)), current: s)
        == .command(.changePlaybackPosition(seconds: 12)))
    #expect(MPRISBridge.translate(.setPosition(trackID: "6", to: .seconds(12)), current: s) == nil)
    #expect(MPRISBridge.translate(.setLoopStatus(.track), current: s) == .action(.setRepeat(.one)))
    #expect(MPRISBridge.translate(.setShuffle(true), current: s) == .action(.setShuffle(true)))
    #expect(MPRISBridge.translate(.setVolume(0.25), current: s) == .action(.setVolume(percent: 25)))
    #expect(MPRISBridge.translate(.setRate(1.5), current: s) == .command(.changePlaybackRate(1.5)))
  }

  /// Rate is the speed heard, and a write to it is taken exactly when the command is enabled.
  @Test func rateIsTheSpeedHeardAndChangesOnlyWhenItMay() {
    var s = playing
    s.rate = 1.75
    #expect(MPRISBridge.state(of: s, directory: "/").rate == 1.75)
    #expect(!MPRISBridge.state(of: s, directory: "/").canChangeRate)
    s.enabledCommands.insert(.changePlaybackRate)
    #expect(MPRISBridge.state(of: s, directory: "/").canChangeRate)
  }

  @Test func openURIAddsLocalFilesAndStreams() {
    let s = playing
    #expect(
      MPRISBridge.translate(.openURI("file:///m/a%20b.flac"), current: s)
        == .action(.add(["/m/a b.flac"], play: true)))
    // Internet radio: the URL as it is, a stream to play.
    #expect(
      MPRISBridge.translate(.openURI("http://example.com/x.mp3"), current: s)
        == .action(.add(["http://example.com/x.mp3"], play: true)))
    #expect(MPRISBridge.translate(.openURI("ftp://example.com/x.mp3"), current: s) == nil)
    // A percent-encoded byte that is not UTF-8 names the file whose name has that byte.
    let latin1 = FileName.string(Array("/m/Bj".utf8) + [0xF6] + Array("rk.ogg".utf8))
    #expect(
      MPRISBridge.translate(.openURI("file:///m/Bj%F6rk.ogg"), current: s)
        == .action(.add([latin1], play: true)))
    #expect(MPRISBridge.translate(.openURI("file://host/x.mp3"), current: s) == nil)
  }
}
