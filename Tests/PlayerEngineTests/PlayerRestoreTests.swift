import SessionCore
import Testing

@testable import PlayerEngine

/// `PlayerAction.restore`: the terminal interface's saved queue comes back paused where it
/// was, and play goes on from there.
@Suite(.timeLimit(.minutes(2))) struct PlayerRestoreTests {
  @Test func aRestoredQueueIsPausedAtItsPositionAndPlaysFromThere() async throws {
    let rig = PlayerRig(tracks: ["a.wav", "b.wav", "c.wav"])
    defer { rig.stop() }
    await rig.player.perform(
      .restore(
        paths: ["c.wav", "b.wav", "a.wav"], current: 1, position: 12.5, shuffle: false,
        repeatMode: .all))
    let s = rig.player.snapshot
    #expect(s.queue.map(\.path) == ["c.wav", "b.wav", "a.wav"])
    #expect(s.current?.path == "b.wav")
    #expect(s.state == .paused)
    #expect(s.pausedBy == .user)
    #expect(abs(s.position - 12.5) < 0.05)
    #expect(s.repeatMode == .all)
    // Paused by the user with a queue: in an audio context, so media keys reach it (G18)...
    #expect(s.isInAudioContext)
    // ...but nothing was heard and the session was never activated (G1).
    #expect(rig.session.activations.isEmpty)
    #expect(rig.devices.opened.allSatisfy { $0.framesWritten == 0 })

    #expect(await rig.player.send(.play) == .success)
    try #require(await rig.until { $0.state == .playing })
    let p = rig.player.snapshot.position
    #expect(p >= 12.4 && p < 13.5, "play went on from \(p), not from 12.5")
    #expect(rig.player.snapshot.current?.path == "b.wav")
  }

  @Test func aRestoreReplacesWhatWasQueuedAndPlaying() async throws {
    let rig = PlayerRig(tracks: ["a.wav", "b.wav"])
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.2)
    await rig.player.perform(
      .restore(paths: ["b.wav"], current: nil, position: 0, shuffle: true, repeatMode: .off))
    let s = rig.player.snapshot
    #expect(s.queue.map(\.path) == ["b.wav"])
    #expect(s.current?.path == "b.wav")
    #expect(s.state == .paused)
    #expect(s.shuffle)
  }

  @Test func anEmptyRestoreLeavesAnEmptyStoppedPlayer() async throws {
    let rig = PlayerRig(tracks: ["a.wav"])
    defer { rig.stop() }
    await rig.player.perform(
      .restore(paths: [], current: nil, position: 0, shuffle: false, repeatMode: .off))
    #expect(rig.player.snapshot.queue.isEmpty)
    #expect(rig.player.snapshot.state == .stopped)
  }
}
