import Testing

@testable import SessionCore

/// G9–G12: who interrupts, who mixes, who ducks, who may start during a call.
@Suite(.timeLimit(.minutes(2))) struct ActivationRuleTests {
  @Test func G9_nonMixableActivationInterruptsOtherNonMixable() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let music = policy.add(2, "music", .music)
    policy.succeed(.activate(hark))

    let notes = policy.succeed(.activate(music))
    #expect(notes.interruptions(for: hark) == [beganByOtherAudio("music")])
    #expect(notes.interruptions(for: music).isEmpty)
    #expect(!policy.isActive(hark))
    #expect(policy.isActive(music))
    #expect(policy.sessions[hark]?.interruptedBy == [music])
  }

  @Test(arguments: [Profile.alert, .music, .recorder, Profile(category: .audioProcessing)])
  func G9_everyNonMixableCategoryInterruptsPlayback(interrupter: Profile) {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let other = policy.add(2, "other", interrupter)
    policy.succeed(.activate(hark))
    let notes = policy.succeed(.activate(other))
    let kind: InterruptionCause.Kind = interrupter == .recorder ? .recording : .otherAudio
    #expect(notes.interruptions(for: hark) == [.began(InterruptionCause(kind: kind, by: "other"))])
    #expect(!policy.isActive(hark))
  }

  @Test func G9_mixableSessionsKeepPlayingAndGetTheSecondaryAudioHint() {
    var policy = SessionPolicy()
    let game = policy.add(1, "game", .game)
    let mixer = policy.add(2, "mixer", .mixingPlayback)
    let hark = policy.add(3, "hark", .music)
    policy.succeed(.activate(game))
    policy.succeed(.activate(mixer))

    let started = policy.succeed(.activate(hark))
    #expect(started.interruptions.isEmpty)
    #expect(policy.isActive(game) && policy.isActive(mixer) && policy.isActive(hark))
    #expect(started.events(for: game) == [.silenceSecondaryAudioHint(.begin)])
    #expect(started.events(for: mixer) == [.silenceSecondaryAudioHint(.begin)])
    #expect(started.events(for: hark).isEmpty)
    #expect(policy.secondaryAudioShouldBeSilenced(game))

    let stopped = policy.succeed(.deactivate(hark, []))
    #expect(stopped.events(for: game) == [.silenceSecondaryAudioHint(.end)])
    #expect(stopped.events(for: mixer) == [.silenceSecondaryAudioHint(.end)])
    #expect(!policy.secondaryAudioShouldBeSilenced(game))
  }

  @Test func G9_nonMixableSessionsGetNoSecondaryAudioHint() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let alert = policy.add(2, "alert", .alert)
    let music = policy.add(3, "music", .music)
    policy.succeed(.activate(hark))
    let notes = policy.succeed(.activate(music))
    // hark is told it was interrupted, not that it is secondary audio.
    #expect(notes.events(for: hark) == [.interruption(beganByOtherAudio("music"))])
    #expect(notes.events(for: alert).isEmpty)
    #expect(!policy.secondaryAudioShouldBeSilenced(hark))
    #expect(!policy.secondaryAudioShouldBeSilenced(alert))
  }

  @Test(arguments: [Profile.game, .mixingPlayback, .nav])
  func G9_mixableActivationInterruptsNobody(mixable: Profile) {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let other = policy.add(2, "other", mixable)
    policy.succeed(.activate(hark))
    let notes = policy.succeed(.activate(other))
    #expect(notes.interruptions.isEmpty)
    #expect(policy.isActive(hark) && policy.isActive(other))
  }

  /// Spoken word: a prompt that interrupts spoken audio pauses a podcast instead of ducking it
  /// (words over words are lost), resumably, and still only ducks music; its end, with notify, lets
  /// the podcast resume (G14).
  @Test func G9_G14_aPromptPausesSpokenAudioResumablyAndDucksMusic() {
    var policy = SessionPolicy()
    let podcast = policy.add(1, "podcast", .podcast)
    let game = policy.add(2, "game", .game)
    let nav = policy.add(3, "nav", .spokenNav)
    policy.succeed(.activate(podcast))
    policy.succeed(.activate(game))
    let began = policy.succeed(.activate(nav))
    // A prompt that interrupts spoken audio says it is a navigation prompt.
    #expect(
      began.interruptions(for: podcast)
        == [.began(InterruptionCause(kind: .navigation, by: "nav"))])
    #expect(!policy.isActive(podcast))
    #expect(!policy.isDucked(podcast), "paused, not ducked")
    #expect(policy.isActive(game) && policy.isDucked(game), "other audio is ducked as before")
    let ended = policy.succeed(.deactivate(nav, .notifyOthersOnDeactivation))
    #expect(
      ended.interruptions(for: podcast) == [
        .ended(shouldResume: true, reason: .interrupterDeactivated)
      ])
  }

  /// Music under the same prompt is ducked, not paused; a podcast under a prompt that only
  /// ducks is ducked (the prompt did not ask for more).
  @Test func G9_onlySpokenAudioIsPausedAndOnlyByAPromptThatAsks() {
    var policy = SessionPolicy()
    let music = policy.add(1, "music", .music)
    let nav = policy.add(2, "nav", .spokenNav)
    policy.succeed(.activate(music))
    #expect(policy.succeed(.activate(nav)).interruptions.isEmpty)
    #expect(policy.isDucked(music))
    var other = SessionPolicy()
    let podcast = other.add(1, "podcast", .podcast)
    let plainNav = other.add(2, "nav", .nav)
    other.succeed(.activate(podcast))
    #expect(other.succeed(.activate(plainNav)).interruptions.isEmpty)
    #expect(other.isDucked(podcast))
  }

  @Test func G9_duckOthersDucksEveryOtherActiveSessionUntilItDeactivates() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let game = policy.add(2, "game", .game)
    let idle = policy.add(3, "idle", .music)
    let nav = policy.add(4, "nav", .nav)
    policy.succeed(.activate(hark))
    policy.succeed(.activate(game))

    let prompt = policy.succeed(.activate(nav))
    #expect(prompt.interruptions.isEmpty)
    #expect(prompt.events(for: hark) == [.ducking(isDucked: true)])
    #expect(prompt.events(for: game) == [.ducking(isDucked: true)])
    #expect(prompt.events(for: idle).isEmpty)
    #expect(prompt.events(for: nav).isEmpty)
    #expect(policy.isDucked(hark) && policy.isDucked(game))
    #expect(!policy.isDucked(idle))
    #expect(!policy.isDucked(nav))

    let done = policy.succeed(.deactivate(nav, .notifyOthersOnDeactivation))
    #expect(done.events(for: hark) == [.ducking(isDucked: false)])
    #expect(done.events(for: game) == [.ducking(isDucked: false)])
    #expect(done.interruptions.isEmpty)
    #expect(!policy.isDucked(hark) && !policy.isDucked(game))
    #expect(policy.isActive(hark) && policy.isActive(game))
  }

  @Test func G9_sessionActivatingWhileADuckerIsActiveStartsDucked() {
    var policy = SessionPolicy()
    let nav = policy.add(1, "nav", .nav)
    let hark = policy.add(2, "hark", .music)
    policy.succeed(.activate(nav))
    #expect(!policy.isDucked(hark))
    let notes = policy.succeed(.activate(hark))
    #expect(notes.events(for: hark) == [.ducking(isDucked: true)])
    #expect(policy.isDucked(hark))
  }

  @Test func G9_duckerThatLeavesByDisconnectingStillLiftsTheDucking() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let nav = policy.add(2, "nav", .nav)
    policy.succeed(.activate(hark))
    policy.succeed(.activate(nav))
    #expect(policy.isDucked(hark))
    let notes = policy.succeed(.disconnect(nav))
    #expect(notes.events(for: hark) == [.ducking(isDucked: false)])
    #expect(!policy.isDucked(hark))
  }

  @Test(arguments: [Profile.music, .alert, .game, .mixingPlayback, .nav, .recorder])
  func G10_nonCallActivationDuringACallIsRefused(profile: Profile) {
    var policy = SessionPolicy()
    let call = policy.add(1, "call", .call)
    let app = policy.add(2, "app", profile)
    policy.succeed(.activate(call))
    let before = policy

    let outcome = policy.apply(.activate(app))
    #expect(outcome.failure == .activationRefused(.callInProgress))
    #expect(outcome.notifications.isEmpty)
    #expect(policy.sessions == before.sessions)
    #expect(policy.activeCall == call)
    #expect(!policy.isActive(app))
  }

  @Test func G10_activationWorksAgainOnceTheCallHasEnded() {
    var policy = SessionPolicy()
    let call = policy.add(1, "call", .call)
    let hark = policy.add(2, "hark", .music)
    policy.succeed(.activate(call))
    #expect(policy.apply(.activate(hark)).failure == .activationRefused(.callInProgress))
    policy.succeed(.deactivate(call, .notifyOthersOnDeactivation))
    #expect(policy.activeCall == nil)
    #expect(policy.apply(.activate(hark)).failure == nil)
    #expect(policy.isActive(hark))
  }

  @Test func G10_activationOfASessionThatNeverRegisteredIsRefused() {
    var policy = SessionPolicy()
    let outcome = policy.apply(.activate(SessionID(42)))
    #expect(outcome.failure == .activationRefused(.notRegistered))
    #expect(outcome.notifications.isEmpty)
    #expect(policy.sessions.isEmpty)
  }

  @Test func G11_callInterruptsEverySessionMixableOrNot() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let game = policy.add(2, "game", .game)
    let mixer = policy.add(3, "mixer", .mixingPlayback)
    let nav = policy.add(4, "nav", .nav)
    let idle = policy.add(5, "idle", .music)
    let call = policy.add(6, "call", .call)
    for id in [hark, game, mixer, nav] { policy.succeed(.activate(id)) }

    let notes = policy.succeed(.activate(call))
    for id in [hark, game, mixer, nav] {
      #expect(notes.interruptions(for: id) == [beganByCall()], "session \(id)")
      #expect(!policy.isActive(id), "session \(id)")
      #expect(policy.sessions[id]?.interruptedBy == [call], "session \(id)")
    }
    // Only active sessions are interrupted; an idle one has nothing to lose.
    #expect(notes.interruptions(for: idle).isEmpty)
    #expect(policy.sessions[idle]?.isInterrupted == false)
    #expect(policy.activeSessions == [call])
    #expect(policy.activeCall == call)
    #expect(!policy.isDucked(hark))
  }

  @Test func G11_callActivatesEvenDuringAnotherCall() {
    var policy = SessionPolicy()
    let first = policy.add(1, "first call", .call)
    let second = policy.add(2, "second call", .call)
    policy.succeed(.activate(first))

    let outcome = policy.apply(.activate(second))
    #expect(outcome.failure == nil)
    #expect(outcome.notifications.interruptions(for: first) == [beganByCall("second call")])
    #expect(policy.activeSessions == [second])
  }

  @Test func G11_mixableCallStillInterruptsEverySession() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let game = policy.add(2, "game", .game)
    let call = policy.add(
      3, "voip", Profile(category: .playAndRecord, mode: .voiceCall, options: .mixWithOthers))
    policy.succeed(.activate(hark))
    policy.succeed(.activate(game))
    let notes = policy.succeed(.activate(call))
    #expect(notes.interruptions(for: hark) == [beganByCall("voip")])
    #expect(notes.interruptions(for: game) == [beganByCall("voip")])
    #expect(policy.activeSessions == [call])
  }

  @Test func G11_sessionBecomingACallWhileActiveInterruptsEveryOtherSession() {
    var policy = SessionPolicy()
    let game = policy.add(1, "game", .game)
    let phone = policy.add(2, "phone", Profile(category: .playAndRecord, options: .mixWithOthers))
    policy.succeed(.activate(game))
    policy.succeed(.activate(phone))
    #expect(policy.isActive(game))

    let notes = policy.succeed(.setCategory(phone, .playAndRecord, mode: .voiceCall, options: []))
    #expect(notes.interruptions(for: game) == [beganByCall("phone")])
    #expect(policy.activeSessions == [phone])
  }

  @Test func G12_recordSessionIsActiveOnlyBetweenActivateAndDeactivate() {
    var policy = SessionPolicy(silentMode: true)
    let rec = policy.add(1, "rec", .recorder)
    let game = policy.add(2, "game", .game)
    #expect(!policy.isActive(rec))

    policy.succeed(.activate(rec))
    #expect(policy.isActive(rec))
    #expect(!policy.isMuted(rec))
    #expect(policy.sessions[rec]?.isMixable == false)
    #expect(policy.isOtherAudioPlaying(besides: game))

    policy.succeed(.deactivate(rec, []))
    #expect(!policy.isActive(rec))
    // Deactivated, it is no longer other audio a game would defer to.
    #expect(!policy.isOtherAudioPlaying(besides: game))
  }

  /// G12: while it records, music is interrupted as for a call (resumably, when the recorder
  /// deactivates with notify), a mixable game too, and nothing but a call may start: no alert
  /// sounds into the recording. A call may (G11), and interrupts the recording.
  @Test func G12_aRecordingSilencesEverythingButACall() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let game = policy.add(2, "game", .game)
    let alarm = policy.add(3, "alarm", .alert)
    let rec = policy.add(4, "rec", .recorder)
    let phone = policy.add(5, "phone", .call)
    policy.succeed(.activate(hark))
    policy.succeed(.activate(game))
    let began = policy.succeed(.activate(rec))
    let recording = InterruptionCause(kind: .recording, by: "rec")
    #expect(began.interruptions(for: hark) == [.began(recording)])
    #expect(began.interruptions(for: game) == [.began(recording)])
    #expect(policy.apply(.activate(alarm)).failure == .activationRefused(.recordingInProgress))
    #expect(policy.apply(.activate(hark)).failure == .activationRefused(.recordingInProgress))
    #expect(ActivationRefusal.recordingInProgress.description == "a recording is in progress")
    let call = policy.succeed(.activate(phone))
    #expect(call.interruptions(for: rec) == [beganByCall("phone")])
    policy.succeed(.deactivate(phone, .notifyOthersOnDeactivation))
    #expect(policy.activeSessions.isEmpty)
    // A recording that ends with notify lets music resume.
    policy.succeed(.activate(rec))
    let ended = policy.succeed(.deactivate(rec, .notifyOthersOnDeactivation))
    #expect(
      ended.interruptions(for: hark).last
        == .ended(shouldResume: true, reason: .interrupterDeactivated))
  }
}
