import SessionCore
import Testing

@testable import PlayerCore

/// The desktop's sleep timer as hark's player meets it: the session server says it ended, the
/// player fades out over the seconds given and pauses with the reason `timer`, and nothing
/// resumes it but the user.
@Suite struct SleepTimerTests {
  let call = InterruptionCause(kind: .call, by: "call")

  @Test func itFadesOutThenPausesWithTheTimersReason() {
    var rig = CoreRig(seconds: 60)
    rig.playing()
    rig.deliver(.sleepTimerEnded(fade: 5))
    #expect(rig.engine.fading == 5)
    #expect(rig.snapshot.state == .playing, "it plays on, fading, for the fade's length")
    #expect(rig.lastEffects.contains(.wake(afterNanoseconds: 5_000_000_000)))
    rig.pass(4.5)
    #expect(rig.snapshot.state == .playing)
    rig.pass(0.75)
    #expect(rig.snapshot.state == .paused)
    #expect(rig.snapshot.pausedBy == .timer)
    #expect(rig.snapshot.pauseReason == .timer)
    #expect(rig.snapshot.reason == "Paused — the sleep timer ended")
    #expect(rig.messages.last == "paused: the sleep timer ended")
    #expect(rig.published.last?.0.pausedBy == .timer)
    #expect(rig.published.last?.0.reason == .timer)
    #expect(rig.engine.state == .paused)
    #expect(rig.engine.fading == nil, "the gain is back for the next play")
    #expect(!rig.server.active, "the audio is given back, as a pause gives it")
    // The pause comes before the gain goes back: nothing is heard of it.
    let pause = rig.engineCommands.lastIndex(of: .pause)
    let end = rig.engineCommands.lastIndex(of: .endFade)
    #expect(pause != nil && end != nil && pause! < end!)
    // Nothing resumes it but the user.
    rig.pass(30)
    #expect(rig.snapshot.state == .paused)
    #expect(rig.send(.play) == .success)
    #expect(rig.snapshot.state == .playing)
    #expect(rig.snapshot.pausedBy == nil)
  }

  @Test func withNoFadeItPausesAtOnce() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.sleepTimerEnded(fade: 0))
    #expect(rig.snapshot.pausedBy == .timer)
    #expect(rig.engine.fading == nil)
  }

  @Test func pausedAlreadyItChangesNothing() {
    var rig = CoreRig()
    rig.playing()
    rig.send(.pause)
    rig.deliver(.sleepTimerEnded(fade: 5))
    #expect(rig.engine.fading == nil)
    rig.pass(6)
    #expect(rig.snapshot.pausedBy == .user)
  }

  /// G14: a call during the fade finds the player paused by the timer, and its end, resumable
  /// as it is, resumes nothing.
  @Test func G14_aCallDuringTheFadeResumesNothingWhenItEnds() {
    var rig = CoreRig(seconds: 60)
    rig.playing()
    rig.deliver(.sleepTimerEnded(fade: 5))
    rig.pass(1)
    rig.deliver(.interruption(.began(call)))
    #expect(rig.engine.fading == nil)
    #expect(rig.engine.state == .paused)
    rig.deliver(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    #expect(rig.snapshot.state == .paused)
    #expect(rig.snapshot.pausedBy == .timer)
    #expect(rig.server.activationsAsked == 1, "no resume was asked for")
  }

  @Test func theUsersPauseDuringTheFadeIsTheUsers() {
    var rig = CoreRig(seconds: 60)
    rig.playing()
    rig.deliver(.sleepTimerEnded(fade: 5))
    rig.pass(1)
    rig.send(.pause)
    #expect(rig.snapshot.pausedBy == .user)
    #expect(rig.engine.fading == nil)
    rig.send(.play)
    rig.pass(10)
    #expect(rig.snapshot.state == .playing, "the fade is over: no pause comes later")
  }

  @Test func playDuringTheFadeKeepsItPlaying() {
    var rig = CoreRig(seconds: 60)
    rig.playing()
    rig.deliver(.sleepTimerEnded(fade: 5))
    rig.pass(2)
    #expect(rig.send(.play) == .success)
    #expect(rig.engine.fading == nil)
    rig.pass(10)
    #expect(rig.snapshot.state == .playing)
  }

  @Test func aTimerCancelledOrSetAgainDuringTheFadeStopsIt() {
    for status in [nil, SleepTimerStatus(state: .running, mode: .endOfTrack, fade: 5)] {
      var rig = CoreRig(seconds: 60)
      rig.playing()
      rig.deliver(.sleepTimerEnded(fade: 5))
      rig.deliver(.sleepTimer(SleepTimerStatus(state: .ending, mode: .endOfTrack, fade: 5)))
      #expect(rig.engine.fading == 5, "its own end is no reason to stop")
      rig.pass(1)
      rig.deliver(.sleepTimer(status))
      #expect(rig.engine.fading == nil)
      rig.pass(10)
      #expect(rig.snapshot.state == .playing)
    }
  }

  @Test func theOutputGoingDuringTheFadeIsWhyItPaused() {
    var rig = CoreRig(seconds: 60)
    rig.playing()
    rig.deliver(.sleepTimerEnded(fade: 5))
    rig.deliver(
      .routeChange(
        RouteChange(
          reason: .oldDeviceUnavailable, previous: Route(name: "Headphones", kind: .headphones),
          current: .speakers)))
    #expect(rig.snapshot.pausedBy == .route)
    #expect(rig.engine.fading == nil)
  }

  /// The interface shows the time left, moving on with the clock from when the server said it.
  @Test func theSnapshotCarriesTheTimerAndItsTimeLeft() {
    var rig = CoreRig()
    rig.playing()
    let said = rig.now
    rig.deliver(
      .sleepTimer(
        SleepTimerStatus(state: .running, mode: .duration(seconds: 900), fade: 5, remaining: 60)))
    #expect(rig.snapshot.sleepTimer?.mode == .duration(seconds: 900))
    #expect(rig.snapshot.sleepTimerRemaining(at: said + 10_000_000_000) == 50)
    #expect(rig.snapshot.sleepTimerRemaining(at: said + 90_000_000_000) == 0)
    rig.deliver(.sleepTimer(SleepTimerStatus(state: .running, mode: .endOfTrack, fade: 5)))
    #expect(rig.snapshot.sleepTimerRemaining(at: said) == nil, "an end not known")
    rig.deliver(.sleepTimer(nil))
    #expect(rig.snapshot.sleepTimer == nil)
  }
}
