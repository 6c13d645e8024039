import Testing

@testable import SessionCore

/// G2 (silent mode), G7 (category changes) and G8 (other audio playing) at the policy level.
@Suite(.timeLimit(.minutes(2))) struct SilentModeAndCategoryRuleTests {
  @Test(arguments: Category.allCases)
  func G2_silentModeMutesExactlySoloAmbientAndAmbient(category: Category) {
    var policy = SessionPolicy()
    let app = policy.add(1, "app", Profile(category: category))
    policy.succeed(.activate(app))
    let muted = category == .soloAmbient || category == .ambient

    let on = policy.succeed(.setSilentMode(true))
    #expect(policy.silentMode)
    #expect(policy.isMuted(app) == muted)
    #expect(on.events(for: app) == [.silentMode(isOn: true, mutesThisSession: muted)])
    // Muting is not deactivating: the session keeps its audio.
    #expect(policy.isActive(app))

    let off = policy.succeed(.setSilentMode(false))
    #expect(!policy.isMuted(app))
    #expect(off.events(for: app) == [.silentMode(isOn: false, mutesThisSession: false)])
  }

  @Test(arguments: [CategoryOptions.mixWithOthers, .duckOthers, [.mixWithOthers, .duckOthers]])
  func G2_silentModeNeverMutesPlaybackWhateverItsOptions(options: CategoryOptions) {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", Profile(category: .playback, options: options))
    let recorder = policy.add(2, "rec", .recorder)
    let phone = policy.add(3, "phone", Profile(category: .playAndRecord, options: options))
    policy.succeed(.setSilentMode(true))
    #expect(!policy.isMuted(hark))
    #expect(!policy.isMuted(recorder))
    #expect(!policy.isMuted(phone))
  }

  /// Acceptance scenario 9: hark keeps playing, the game is muted.
  @Test func G2_silentModeMutesTheGameButNotTheMusic() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let game = policy.add(2, "game", .game)
    policy.succeed(.activate(hark))
    policy.succeed(.activate(game))

    let notes = policy.succeed(.setSilentMode(true))
    #expect(notes.events(for: hark) == [.silentMode(isOn: true, mutesThisSession: false)])
    #expect(notes.events(for: game) == [.silentMode(isOn: true, mutesThisSession: true)])
    #expect(policy.isActive(hark) && policy.isActive(game))
    #expect(!policy.isMuted(hark))
    #expect(policy.isMuted(game))
  }

  @Test func G2_settingSilentModeToWhatItIsNotifiesNobody() {
    var policy = SessionPolicy()
    let game = policy.add(1, "game", .game)
    policy.succeed(.setSilentMode(true))
    let again = policy.succeed(.setSilentMode(true))
    #expect(again.isEmpty)
    #expect(policy.isMuted(game))
  }

  @Test func G2_changingCategoryUnderSilentModeTellsTheSessionWhetherItIsMuted() {
    var policy = SessionPolicy(silentMode: true)
    let app = policy.add(1, "app", .music)
    #expect(!policy.isMuted(app))

    let toAmbient = policy.succeed(.setCategory(app, .ambient, mode: .default, options: []))
    #expect(policy.isMuted(app))
    #expect(toAmbient.events(for: app) == [.silentMode(isOn: true, mutesThisSession: true)])

    let back = policy.succeed(.setCategory(app, .playback, mode: .default, options: []))
    #expect(!policy.isMuted(app))
    #expect(back.events(for: app) == [.silentMode(isOn: true, mutesThisSession: false)])
  }

  @Test func G2_sessionConnectingWhileSilentModeIsOnIsToldItIsMuted() {
    var policy = SessionPolicy(silentMode: true)
    let notes = policy.succeed(.connect(SessionID(1), AppIdentity(name: "app", pid: 1)))
    // A new session is soloAmbient, which silent mode mutes.
    #expect(
      notes.events(for: SessionID(1)) == [.silentMode(isOn: true, mutesThisSession: true)])
    #expect(policy.isMuted(SessionID(1)))
  }

  @Test func G7_switchingAnActiveSessionBetweenPlaybackAndRecordKeepsItActive() {
    var policy = SessionPolicy()
    let memo = policy.add(1, "memo", .music)
    policy.succeed(.activate(memo))

    let toRecord = policy.succeed(.setCategory(memo, .record, mode: .default, options: []))
    #expect(policy.isActive(memo))
    #expect(policy.sessions[memo]?.category == .record)
    #expect(toRecord.interruptions.isEmpty)

    let toPlayback = policy.succeed(.setCategory(memo, .playback, mode: .default, options: []))
    #expect(policy.isActive(memo))
    #expect(toPlayback.interruptions.isEmpty)
  }

  @Test func G7_activeSessionBecomingNonMixableTakesTheAudioLikeAnActivation() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let game = policy.add(2, "game", .game)
    policy.succeed(.activate(hark))
    policy.succeed(.activate(game))
    #expect(policy.isActive(hark))

    let notes = policy.succeed(.setCategory(game, .soloAmbient, mode: .default, options: []))
    #expect(notes.interruptions(for: hark) == [beganByOtherAudio("game")])
    #expect(!policy.isActive(hark))
    #expect(policy.isActive(game))
    #expect(policy.sessions[hark]?.interruptedBy == [game])
  }

  @Test func G8_otherAudioIsPlayingOnlyWhileAnotherSessionIsActive() {
    var policy = SessionPolicy()
    let game = policy.add(1, "game", .game)
    #expect(!policy.isOtherAudioPlaying(besides: game))

    let music = policy.add(2, "music", .music)
    #expect(!policy.isOtherAudioPlaying(besides: game))

    policy.succeed(.activate(music))
    #expect(policy.isOtherAudioPlaying(besides: game))
    #expect(policy.isOtherAudioPlaying(besides: nil))
    // The music is not "other" audio for itself.
    #expect(!policy.isOtherAudioPlaying(besides: music))

    policy.succeed(.deactivate(music, []))
    #expect(!policy.isOtherAudioPlaying(besides: game))
  }

  @Test func G8_audioSilentModeMutesDoesNotCountAsPlaying() {
    var policy = SessionPolicy()
    let other = policy.add(1, "other game", .game)
    let game = policy.add(2, "game", .game)
    policy.succeed(.activate(other))
    #expect(policy.isOtherAudioPlaying(besides: game))
    policy.succeed(.setSilentMode(true))
    #expect(!policy.isOtherAudioPlaying(besides: game))
  }

  /// What a game does at launch (G8): look, pick, never ask.
  private func launchGame(in policy: inout SessionPolicy, id: UInt64) -> SessionID {
    let game = SessionID(id)
    policy.succeed(.connect(game, AppIdentity(name: "game", pid: 7)))
    let category: Category = policy.isOtherAudioPlaying(besides: game) ? .ambient : .soloAmbient
    policy.succeed(.setCategory(game, category, mode: .default, options: []))
    policy.succeed(.activate(game))
    return game
  }

  @Test func G8_gamePicksAmbientWhenOtherAudioIsPlayingAndLeavesItPlaying() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    policy.succeed(.activate(hark))

    let game = launchGame(in: &policy, id: 2)
    #expect(policy.sessions[game]?.category == .ambient)
    #expect(policy.isActive(hark))
    #expect(policy.isActive(game))
    #expect(policy.sessions[hark]?.isInterrupted == false)
  }

  @Test func G8_gamePicksSoloAmbientWhenNothingIsPlaying() {
    var policy = SessionPolicy()
    policy.add(1, "hark", .music)  // connected but silent
    let game = launchGame(in: &policy, id: 2)
    #expect(policy.sessions[game]?.category == .soloAmbient)
    #expect(policy.isActive(game))
  }
}
