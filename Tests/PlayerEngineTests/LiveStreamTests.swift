import AudioCore
import AudioTestSupport
import Platform
import SessionCore
import Testing

@testable import PlayerEngine

/// Internet radio through the engine and the player, with a fake live stream (`ToneDecoder`
/// with `isLive`): what the station says is shown as it changes, a quiet network is not the
/// end of the track, a dropped connection is said and so is its return, seeking is refused
/// (G19), and a stream paused by a call resumes live (G14), connected afresh.
@Suite(.timeLimit(.minutes(2))) struct LiveStreamTests {
  let radio = "http://radio.example/live.mp3"
  let call = InterruptionCause(kind: .call, by: "call")

  @Test func G19_aLiveStreamHasNoLengthAndRefusesSeeking() async throws {
    let rig = PlayerRig(tracks: [radio, "b.wav"])
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.3)
    let s = rig.player.snapshot
    #expect(s.isLive && s.duration == nil && !s.isSeekable)
    #expect(s.title == "Radio X")
    for kind: RemoteCommandKind in [
      .seekForward, .seekBackward, .skipForward, .skipBackward, .changePlaybackPosition,
    ] {
      #expect(!s.enabledCommands.contains(kind), "\(kind) is enabled on a live stream")
    }
    #expect(s.enabledCommands.contains(.nextTrack))
    let before = rig.player.snapshot.position
    let asked = monotonicNanoseconds()
    #expect(await rig.player.send(.changePlaybackPosition(seconds: 20)) == .commandDisabled)
    #expect(await rig.player.send(.skipForward(seconds: 5)) == .commandDisabled)
    // The stream plays on meanwhile, however long this task waited for its turn (the parallel
    // run once took 4.8 s): no more than the time that passed, never a jump.
    let passed = Double(monotonicNanoseconds() - asked) / 1e9
    let moved = rig.player.snapshot.position - before
    #expect(moved <= passed + 0.5, "a refused seek moved the position by \(moved) s in \(passed) s")
  }

  @Test func whatTheStationSaysIsShownAndADroppedConnectionIsNotTheEnd() async throws {
    let rig = PlayerRig(tracks: [radio, "b.wav"])
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.2)
    let stream = try #require(rig.library.decoders(for: radio).last)

    stream.say(
      LiveState(
        metadata: TrackMetadata(
          title: "One More Time", artist: "Daft Punk",
          album: "Radio X")))
    #expect(await rig.until { $0.title == "One More Time" && $0.metadata.artist == "Daft Punk" })
    #expect(await eventually { rig.messages.contains("on air: Daft Punk - One More Time") })
    #expect(await eventually { rig.lastPublished?.title == "One More Time" })

    // The network goes quiet and the stream says why: still playing, the same track, and
    // the reason on the status line.
    stream.stall(true)
    stream.say(
      LiveState(metadata: stream.metadata, reconnecting: "the station closed the connection"))
    #expect(
      await rig.until {
        $0.reconnecting == "the station closed the connection"
          && $0.reason == "Reconnecting… (the station closed the connection)"
      })
    #expect(
      await eventually {
        rig.messages.contains(
          "the stream dropped (the station closed the connection); reconnecting…")
      })
    // Longer than the ring holds (1.5 s): a fake file would have ended by now.
    try await Task.sleep(for: .seconds(2))
    #expect(rig.player.snapshot.state == .playing)
    #expect(rig.heard == [radio], "a quiet stream was taken for its end")

    stream.say(LiveState(metadata: stream.metadata))
    stream.stall(false)
    #expect(await rig.until { $0.reconnecting == nil && $0.reason == nil })
    #expect(await eventually { rig.messages.contains("reconnected to the stream") })
    // The station clears its title (a server restarted): its name is shown, and not said as
    // if it were a song.
    stream.say(LiveState(metadata: TrackMetadata(title: "Radio X"), station: "Radio X"))
    #expect(await rig.until { $0.title == "Radio X" && $0.metadata.artist == nil })
    _ = await rig.player.perform(.setRepeat(.off))  // a step after the change, to see its words
    #expect(!rig.messages.contains("on air: Radio X"), "\(rig.messages)")
    let before = rig.player.snapshot.position
    #expect(await rig.until { $0.position(at: monotonicNanoseconds()) > before + 0.3 })
    #expect(rig.heard == [radio])
  }

  @Test func G14_aStreamPausedByACallResumesLiveOnAFreshConnection() async throws {
    let rig = PlayerRig(tracks: [radio])
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.5)
    let opened = rig.library.decoders(for: radio).count
    rig.player.deliver(.interruption(.began(call)))
    try #require(await rig.until { $0.state == .paused && $0.pausedBy == .interruption })
    rig.player.deliver(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    try #require(await rig.until { $0.state == .playing })
    // Live, not from what was buffered when the call came: the stream was opened again, and
    // it is heard from its new start.
    #expect(await eventually { rig.library.decoders(for: radio).count == opened + 1 })
    #expect(await rig.until { $0.isAdvancing })
    #expect(rig.player.snapshot.position < 0.5)
    #expect(rig.messages.contains { $0.hasPrefix("resumed") })

    // The user's pause and play: live again.
    #expect(await rig.player.send(.pause) == .success)
    #expect(await rig.player.send(.play) == .success)
    #expect(await eventually { rig.library.decoders(for: radio).count == opened + 2 })
    #expect(await rig.until { $0.state == .playing })
  }
}
