import Testing

@testable import SessionCore

/// G13 and G14: how interruptions end, with or without shouldResume.
@Suite(.timeLimit(.minutes(2))) struct InterruptionRuleTests {
  /// hark playing, interrupted by `interrupter`; returns the policy and both ids.
  private func harkInterrupted(
    by name: String, _ profile: Profile
  ) -> (SessionPolicy, hark: SessionID, interrupter: SessionID) {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let other = policy.add(2, name, profile)
    policy.succeed(.activate(hark))
    policy.succeed(.activate(other))
    #expect(policy.sessions[hark]?.interruptedBy == [other])
    return (policy, hark, other)
  }

  /// Acceptance scenario 1 at the policy level: the call hangs up with notify.
  @Test func G13_callDeactivatingWithNotifyLetsTheInterruptedResume() {
    var (policy, hark, call) = harkInterrupted(by: "call", .call)
    let notes = policy.succeed(.deactivate(call, .notifyOthersOnDeactivation))
    #expect(
      notes.interruptions(for: hark) == [
        .ended(shouldResume: true, reason: .interrupterDeactivated)
      ])
    #expect(policy.sessions[hark]?.isInterrupted == false)
    // The interrupted app resumes by activating, which the server now allows.
    #expect(policy.apply(.activate(hark)).failure == nil)
  }

  @Test func G13_alarmDeactivatingWithNotifyLetsTheInterruptedResume() {
    var (policy, hark, alarm) = harkInterrupted(by: "alarm", .alert)
    #expect(
      policy.succeed(.deactivate(alarm, .notifyOthersOnDeactivation)).interruptions(for: hark)
        == [.ended(shouldResume: true, reason: .interrupterDeactivated)])
  }

  /// Acceptance scenario 3 at the policy level: another player takes over, then leaves.
  @Test func G13_takeoverDeactivatingWithoutNotifyEndsWithoutShouldResume() {
    var (policy, hark, music) = harkInterrupted(by: "music", .music)
    let notes = policy.succeed(.deactivate(music, []))
    #expect(
      notes.interruptions(for: hark) == [
        .ended(shouldResume: false, reason: .interrupterDeactivated)
      ])
    #expect(policy.sessions[hark]?.isInterrupted == false)
  }

  @Test func G13_interruptionEndsOnlyWhenEveryInterrupterHasGone() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let music = policy.add(2, "music", .music)
    let call = policy.add(3, "call", .call)
    policy.succeed(.activate(hark))
    #expect(
      policy.succeed(.activate(music)).interruptions(for: hark) == [beganByOtherAudio("music")])

    let ring = policy.succeed(.activate(call))
    #expect(ring.interruptions(for: music) == [beganByCall()])
    // hark already heard its `began`; the call joins what it waits for.
    #expect(ring.interruptions(for: hark).isEmpty)
    #expect(policy.sessions[hark]?.interruptedBy == [music, call])

    let hangUp = policy.succeed(.deactivate(call, .notifyOthersOnDeactivation))
    #expect(
      hangUp.interruptions(for: music) == [
        .ended(shouldResume: true, reason: .interrupterDeactivated)
      ])
    #expect(hangUp.interruptions(for: hark).isEmpty)
    #expect(policy.sessions[hark]?.interruptedBy == [music])

    let musicLeaves = policy.succeed(.deactivate(music, []))
    #expect(
      musicLeaves.interruptions(for: hark) == [
        .ended(shouldResume: false, reason: .interrupterDeactivated)
      ])
    #expect(policy.sessions[hark]?.isInterrupted == false)
  }

  @Test func G13_shouldResumeOnlyWhenEveryInterrupterNotified() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let alarm = policy.add(2, "alarm", .alert)
    let call = policy.add(3, "call", .call)
    policy.succeed(.activate(hark))
    policy.succeed(.activate(alarm))
    policy.succeed(.activate(call))

    // The order of leaving does not matter; only that both notified.
    #expect(policy.succeed(.deactivate(alarm, .notifyOthersOnDeactivation)).interruptions.isEmpty)
    let last = policy.succeed(.deactivate(call, .notifyOthersOnDeactivation))
    #expect(
      last.interruptions(for: hark) == [
        .ended(shouldResume: true, reason: .interrupterDeactivated)
      ])
  }

  @Test func G13_oneInterrupterLeavingWithoutNotifySpoilsShouldResumeForGood() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let assistant = policy.add(2, "assistant", .alert)
    let call = policy.add(3, "call", .call)
    policy.succeed(.activate(hark))
    policy.succeed(.activate(assistant))
    policy.succeed(.activate(call))

    policy.succeed(.deactivate(assistant, []))
    let last = policy.succeed(.deactivate(call, .notifyOthersOnDeactivation))
    #expect(
      last.interruptions(for: hark) == [
        .ended(shouldResume: false, reason: .interrupterDeactivated)
      ])
  }

  @Test func G13_nextInterruptionStartsResumableAgain() {
    var (policy, hark, music) = harkInterrupted(by: "music", .music)
    policy.succeed(.deactivate(music, []))
    policy.succeed(.activate(hark))

    let call = policy.add(3, "call", .call)
    policy.succeed(.activate(call))
    let notes = policy.succeed(.deactivate(call, .notifyOthersOnDeactivation))
    #expect(
      notes.interruptions(for: hark) == [
        .ended(shouldResume: true, reason: .interrupterDeactivated)
      ])
  }

  @Test func G13_sessionThatTakesTheAudioBackGetsNoLateEnded() {
    var (policy, hark, music) = harkInterrupted(by: "music", .music)
    // The user presses play in hark while the other player is still there.
    let back = policy.succeed(.activate(hark))
    #expect(back.interruptions(for: music) == [beganByOtherAudio("hark")])
    #expect(policy.sessions[hark]?.isInterrupted == false)

    let musicLeaves = policy.succeed(.deactivate(music, .notifyOthersOnDeactivation))
    #expect(musicLeaves.interruptions(for: hark).isEmpty)
    #expect(policy.isActive(hark))
  }

  @Test func G13_interruptedSessionThatDeactivatesStillHearsTheEnd() {
    var (policy, hark, call) = harkInterrupted(by: "call", .call)
    // The app gives up its (already lost) audio while waiting.
    #expect(policy.succeed(.deactivate(hark, [])).interruptions.isEmpty)
    let notes = policy.succeed(.deactivate(call, .notifyOthersOnDeactivation))
    #expect(
      notes.interruptions(for: hark) == [
        .ended(shouldResume: true, reason: .interrupterDeactivated)
      ])
  }

  @Test func G14_crashedCallEndsTheInterruptionAndPlayWorksAgain() {
    var (policy, hark, call) = harkInterrupted(by: "call", .call)
    #expect(policy.apply(.activate(hark)).failure == .activationRefused(.callInProgress))

    let crash = policy.succeed(.disconnect(call))
    #expect(
      crash.interruptions(for: hark) == [.ended(shouldResume: false, reason: .interrupterExited)])
    #expect(policy.sessions[call] == nil)
    #expect(policy.activeCall == nil)

    let play = policy.apply(.activate(hark))
    #expect(play.failure == nil)
    #expect(policy.isActive(hark))
  }

  @Test func G14_crashedTakeoverEndsTheInterruptionWithoutShouldResume() {
    var (policy, hark, music) = harkInterrupted(by: "music", .music)
    let crash = policy.succeed(.disconnect(music))
    #expect(
      crash.interruptions(for: hark) == [.ended(shouldResume: false, reason: .interrupterExited)])
    #expect(policy.apply(.activate(hark)).failure == nil)
  }

  @Test func G14_crashOfOneInterrupterWaitsForTheOtherAndSpoilsShouldResume() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let alarm = policy.add(2, "alarm", .alert)
    let call = policy.add(3, "call", .call)
    policy.succeed(.activate(hark))
    policy.succeed(.activate(alarm))
    policy.succeed(.activate(call))

    #expect(policy.succeed(.disconnect(call)).interruptions(for: hark).isEmpty)
    #expect(policy.sessions[hark]?.interruptedBy == [alarm])
    let last = policy.succeed(.deactivate(alarm, .notifyOthersOnDeactivation))
    #expect(
      last.interruptions(for: hark) == [
        .ended(shouldResume: false, reason: .interrupterDeactivated)
      ])
  }

  @Test func G14_disconnectOfTheInterruptedSessionNotifiesNobody() {
    var (policy, hark, music) = harkInterrupted(by: "music", .music)
    let gone = policy.succeed(.disconnect(hark))
    #expect(gone.interruptions.isEmpty)
    #expect(policy.sessions[hark] == nil)
    #expect(policy.succeed(.deactivate(music, .notifyOthersOnDeactivation)).isEmpty)
  }
}

/// What an interrupter is, as others are told: its role where it said one in its hello, else
/// what its category makes it; a sound-server stream by its media role.
@Suite struct InterruptionKindTests {
  @Test func anAppsRoleOrCategorySaysWhatItInterruptsAs() {
    typealias K = InterruptionCause.Kind
    #expect(K(role: .alarm, category: .playback, options: [], isCall: false) == .alarm)
    #expect(K(role: nil, category: .playback, options: [], isCall: false) == .otherAudio)
    #expect(K(role: .music, category: .playback, options: [], isCall: false) == .otherAudio)
    #expect(
      K(
        role: nil, category: .playback, options: [.interruptSpokenAudioAndMixWithOthers],
        isCall: false) == .navigation)
    #expect(K(role: nil, category: .playAndRecord, options: [], isCall: false) == .assistant)
    #expect(K(role: nil, category: .playAndRecord, options: [], isCall: true) == .call)
    #expect(K(role: .alarm, category: .record, options: [], isCall: false) == .recording)
    #expect(K(mediaRole: "Alert") == .alarm)
    #expect(K(mediaRole: "alarm") == .alarm)
    #expect(K(mediaRole: "Communication") == .call)
    #expect(K(mediaRole: "phone") == .call)
    #expect(K(mediaRole: "Navigation") == .navigation)
    #expect(K(mediaRole: "Assistant") == .assistant)
    #expect(K(mediaRole: "Music") == .otherAudio)
    #expect(K(mediaRole: nil) == .otherAudio)
  }

  @Test func anAlarmThatSaysItIsOneInterruptsAsAnAlarm() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    _ = policy.succeed(.activate(hark))
    _ = policy.succeed(.connect(SessionID(2), AppIdentity(name: "alarm", pid: 2, role: .alarm)))
    _ = policy.succeed(.setCategory(SessionID(2), .playback, mode: .default, options: []))
    let notes = policy.succeed(.activate(SessionID(2)))
    #expect(
      notes.events(for: hark) == [
        .interruption(.began(InterruptionCause(kind: .alarm, by: "alarm")))
      ])
  }
}
