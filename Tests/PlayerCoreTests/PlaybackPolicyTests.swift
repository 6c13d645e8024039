import SessionCore
import Testing

@testable import PlayerCore

/// G1, G4–G6, G10 and G14 as the player's policy: inputs in, effects out.
@Suite(.timeLimit(.minutes(2))) struct PlaybackPolicyTests {
  let call = InterruptionCause(kind: .call, by: "hark call")
  let music = InterruptionCause(kind: .otherAudio, by: "music")
  let headphones = Route(name: "Headphones", kind: .headphones)
  let bluetooth = Route(name: "Bluetooth headset", kind: .bluetooth)

  /// A policy whose play was granted.
  private func playing() -> PlaybackPolicy {
    var policy = PlaybackPolicy()
    #expect(policy.userPlay() == [.activateAndPlay])
    policy.started()
    #expect(policy.phase == .playing)
    return policy
  }

  /// A policy the user paused.
  private func userPaused() -> PlaybackPolicy {
    var policy = playing()
    #expect(policy.userPause() == [.stopOutput, .deactivate])
    return policy
  }

  private func unplugged(_ route: Route) -> RouteChange {
    RouteChange(reason: .oldDeviceUnavailable, previous: route, current: .speakers)
  }

  private func plugged(_ route: Route) -> RouteChange {
    RouteChange(reason: .newDeviceAvailable, previous: .speakers, current: route)
  }

  // MARK: G1: the user decides

  @Test func G1_playAsksForTheAudioAndPlaysOnceGranted() {
    var policy = PlaybackPolicy()
    #expect(policy.phase == .stopped(nil))
    #expect(policy.pausedBy == nil)
    #expect(policy.userPlay() == [.activateAndPlay])
    #expect(policy.phase == .stopped(nil))
    #expect(!policy.isPlaying)
    policy.started()
    #expect(policy.isPlaying)
    #expect(policy.userPlay() == [])
  }

  @Test func G1_pauseStopsTheOutputAndGivesTheAudioBack() {
    var policy = playing()
    #expect(policy.userPause() == [.stopOutput, .deactivate])
    #expect(policy.phase == .paused(.user))
    #expect(policy.pausedBy == .user)
    #expect(policy.userPause() == [])
    #expect(policy.userPlay() == [.activateAndPlay])
  }

  @Test func G1_theEndOfTheQueueStopsAndSaysWhy() {
    var policy = playing()
    policy.stopped(.endOfQueue)
    #expect(policy.phase == .stopped(.endOfQueue))
    #expect(policy.pausedBy == .endOfQueue)
  }

  /// The reason shown is the one that took it from playing: a call passing over a player the
  /// machine's sleep paused leaves it paused for the sleep, not for the user.
  @Test func G5_G14_theReasonAPauseHadOutlivesAnInterruptionOverIt() {
    var policy = playing()
    _ = policy.machineWillSleep()
    #expect(policy.pausedBy == .sleep)
    _ = policy.interruptionBegan(call)
    #expect(policy.pausedBy == .interruption)
    #expect(policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated) == [])
    #expect(policy.phase == .paused(.sleep))
  }

  /// The sleep timer's end pauses what plays, with its reason, and a call over that pause
  /// resumes nothing (G14: it was not playing when the call began).
  @Test func G14_theSleepTimerPausesAndNothingResumesIt() {
    var policy = playing()
    #expect(policy.timerEnded() == [.stopOutput, .deactivate, .say(.sleepTimerEnded)])
    #expect(policy.phase == .paused(.timer))
    #expect(policy.pausedBy == .timer)
    _ = policy.interruptionBegan(call)
    #expect(policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated) == [])
    #expect(policy.phase == .paused(.timer))
    // Not playing: nothing to pause.
    var paused = userPaused()
    #expect(paused.timerEnded() == [])
    #expect(paused.pausedBy == .user)
  }

  // MARK: G14: interruptions

  @Test func G14_aCallPausesAPlayerAndItResumesWhenTheCallEndsWithShouldResume() {
    var policy = playing()
    #expect(
      policy.interruptionBegan(call) == [
        .stopOutput, .say(.interrupted(call, willResume: true)),
      ])
    #expect(policy.phase == .interrupted(resumeAfter: true, by: call))
    #expect(policy.pausedBy == .interruption)
    #expect(!policy.isPlaying)
    #expect(
      policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated)
        == [.activateAndPlay])
    policy.started()
    #expect(policy.phase == .playing)
  }

  @Test func G14_userPauseSurvivesACall() {
    var policy = userPaused()
    #expect(policy.interruptionBegan(call) == [])
    #expect(policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated) == [])
    #expect(policy.phase == .paused(.user))
    #expect(policy.pausedBy == .user)
  }

  @Test func G14_pausingDuringACallMeansDoNotResumeAfterIt() {
    var policy = playing()
    _ = policy.interruptionBegan(call)
    #expect(policy.userPause() == [])
    #expect(policy.phase == .interrupted(resumeAfter: false, by: call))
    #expect(policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated) == [])
    #expect(policy.phase == .paused(.user))
  }

  @Test func G14_endedWithoutShouldResumeStaysPausedByTheInterruption() {
    var policy = playing()
    #expect(
      policy.interruptionBegan(music) == [.stopOutput, .say(.interrupted(music, willResume: true))])
    #expect(
      policy.interruptionEnded(shouldResume: false, reason: .interrupterDeactivated)
        == [.say(.tookOver("music"))])
    #expect(policy.phase == .paused(.interruption))
    #expect(policy.pausedBy == .interruption)
    #expect(!policy.isPlaying)
  }

  @Test func G14_anInterrupterThatExitsLeavesThePlayerPausedAndSaysSo() {
    var policy = playing()
    _ = policy.interruptionBegan(call)
    #expect(
      policy.interruptionEnded(shouldResume: false, reason: .interrupterExited)
        == [.say(.interrupterVanished("hark call"))])
    #expect(policy.phase == .paused(.interruption))
    #expect(policy.userPlay() == [.activateAndPlay])
  }

  /// A `began` whose `ended` never comes must not leave the player stuck: play always works.
  @Test func G14_playWorksDuringAnInterruptionThatNeverEnds() {
    var policy = playing()
    _ = policy.interruptionBegan(call)
    #expect(policy.userPlay() == [.activateAndPlay])
    policy.started()
    #expect(policy.phase == .playing)
    // A late `ended` for it changes nothing.
    #expect(policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated) == [])
    #expect(policy.phase == .playing)
  }

  @Test func G14_aSecondInterrupterKeepsTheResumeOfTheFirst() {
    var policy = playing()
    _ = policy.interruptionBegan(call)
    #expect(policy.interruptionBegan(music) == [])
    #expect(policy.phase == .interrupted(resumeAfter: true, by: music))
    #expect(
      policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated)
        == [.activateAndPlay])
  }

  @Test func G14_anEndedWithoutABeganChangesNothing() {
    var policy = playing()
    #expect(policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated) == [])
    #expect(policy.phase == .playing)
    var paused = userPaused()
    #expect(paused.interruptionEnded(shouldResume: false, reason: .interrupterExited) == [])
    #expect(paused.phase == .paused(.user))
  }

  /// A stopped player has nothing to resume and no pause to show: an interruption passing over
  /// it leaves it stopped, not "paused by the user" (which would make it eligible to be the
  /// now-playing app, G18).
  @Test func G14_aStoppedPlayerStaysStoppedThroughAnInterruption() {
    var policy = PlaybackPolicy()
    #expect(policy.interruptionBegan(call) == [])
    #expect(policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated) == [])
    #expect(policy.phase == .stopped(nil))
    #expect(policy.pausedBy == nil)
  }

  // MARK: G4, G5, G6: routes

  @Test func G5_unplugWhilePlayingStopsAtOnceAndPausesByRoute() {
    var policy = playing()
    #expect(
      policy.routeChanged(unplugged(headphones)) == [
        .stopOutputAtOnce, .deactivate, .say(.outputWentAway("Headphones")),
      ])
    #expect(policy.phase == .paused(.route))
    #expect(policy.pausedBy == .route)
  }

  @Test func G5_unplugWhilePausedChangesNothing() {
    var policy = userPaused()
    #expect(policy.routeChanged(unplugged(headphones)) == [])
    #expect(policy.phase == .paused(.user))
  }

  @Test func G5_pluggingBackInDoesNotResumeByDefault() {
    var policy = playing()
    _ = policy.routeChanged(unplugged(headphones))
    #expect(policy.routeChanged(plugged(headphones)) == [])
    #expect(policy.phase == .paused(.route))
  }

  @Test func G5_optInResumesOnlyWhenTheSameOutputComesBack() {
    var policy = playing()
    policy.resumeOnReconnect = true
    _ = policy.routeChanged(unplugged(headphones))
    #expect(policy.routeChanged(plugged(bluetooth)) == [])
    #expect(policy.routeChanged(plugged(headphones)) == [.activateAndPlay])
  }

  @Test func G5_optInDoesNothingOnceTheUserPlayedAgain() {
    var policy = playing()
    policy.resumeOnReconnect = true
    _ = policy.routeChanged(unplugged(headphones))
    _ = policy.userPlay()
    policy.started()
    _ = policy.userPause()
    #expect(policy.routeChanged(plugged(headphones)) == [])
    #expect(policy.phase == .paused(.user))
  }

  /// Headphones pulled out during a call: when the call ends, nothing may start playing from
  /// the speakers; the player stays paused until the user plays (G5).
  @Test func G5_unplugDuringAnInterruptionCancelsTheResume() {
    var policy = playing()
    _ = policy.interruptionBegan(call)
    _ = policy.routeChanged(unplugged(headphones))
    #expect(policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated) == [])
    #expect(!policy.isPlaying)
  }

  @Test func G4_aNewDeviceWhilePlayingGoesOnWithoutAPause() {
    var policy = playing()
    #expect(policy.routeChanged(plugged(headphones)) == [])
    #expect(policy.phase == .playing)
  }

  @Test func G6_anOutputTheUserPicksGoesOnWithoutAPause() {
    var policy = playing()
    let picked = RouteChange(reason: .override, previous: .speakers, current: bluetooth)
    #expect(policy.routeChanged(picked) == [])
    #expect(policy.phase == .playing)
    let category = RouteChange(reason: .categoryChange, previous: bluetooth, current: bluetooth)
    #expect(policy.routeChanged(category) == [])
    #expect(policy.phase == .playing)
  }

  // MARK: G10: the server may refuse

  @Test func G10_aRefusedPlaySaysWhyAndStaysPaused() {
    var policy = userPaused()
    #expect(policy.userPlay() == [.activateAndPlay])
    #expect(
      policy.activationRefused("a call is in progress") == [
        .say(.cannotPlayNow(reason: "a call is in progress"))
      ])
    #expect(policy.phase == .paused(.user))
    #expect(!policy.isPlaying)
  }

  @Test func G10_aRefusedPlayFromStoppedStaysStopped() {
    var policy = PlaybackPolicy()
    _ = policy.userPlay()
    #expect(policy.activationRefused("a call is in progress").count == 1)
    #expect(policy.phase == .stopped(nil))
  }

  @Test func G10_losingTheAudioWhilePlayingPausesByInterruption() {
    var policy = playing()
    #expect(
      policy.activationRefused("a call is in progress") == [
        .say(.cannotPlayNow(reason: "a call is in progress"))
      ])
    #expect(policy.phase == .paused(.interruption))
  }

  @Test func G10_aRefusedResumeAfterACallLeavesThePlayerPaused() {
    var policy = playing()
    _ = policy.interruptionBegan(call)
    #expect(
      policy.interruptionEnded(shouldResume: true, reason: .interrupterDeactivated)
        == [.activateAndPlay])
    #expect(policy.activationRefused("a call is in progress").count == 1)
    #expect(!policy.isPlaying)
    #expect(policy.pausedBy == .interruption)
    #expect(policy.userPlay() == [.activateAndPlay])
  }
}
