import Testing

@testable import SessionCore

/// G18: which app is the now-playing app that receives remote commands.
@Suite(.timeLimit(.minutes(2))) struct NowPlayingRuleTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var profile: Profile
    var playback: PlaybackInfo?
    var commands: Set<RemoteCommandKind>
    var eligible: Bool
    var testDescription: String {
      "\(profile) \(playback?.state.rawValue ?? "nothing") \(commands.count) commands"
    }
  }

  static let cases: [Case] = [
    Case(profile: .music, playback: info(.playing), commands: [.pause], eligible: true),
    Case(profile: .music, playback: info(.paused), commands: [.play], eligible: true),
    Case(profile: .alert, playback: info(.playing), commands: [.stop], eligible: true),
    Case(profile: .music, playback: info(.stopped), commands: [.play], eligible: false),
    Case(profile: .music, playback: nil, commands: [.play], eligible: false),
    Case(profile: .music, playback: info(.playing), commands: [], eligible: false),
    Case(profile: .game, playback: info(.playing), commands: [.pause], eligible: false),
    Case(profile: .mixingPlayback, playback: info(.playing), commands: [.pause], eligible: false),
    Case(profile: .nav, playback: info(.playing), commands: [.pause], eligible: false),
  ]

  @Test(arguments: cases)
  func G18_eligibleOnlyNonMixableInAnAudioContextWithACommand(c: Case) {
    var policy = SessionPolicy()
    let app = policy.add(1, "app", c.profile)
    #expect(!policy.isEligibleForNowPlaying(app))

    let notes = policy.succeed(.publish(app, c.playback, enabledCommands: c.commands))
    #expect(policy.isEligibleForNowPlaying(app) == c.eligible)
    #expect(policy.nowPlaying == (c.eligible ? app : nil))
    #expect(notes.events(for: app) == (c.eligible ? [.nowPlaying(isNowPlaying: true)] : []))
  }

  /// A takeover that ended without shouldResume made the other app the primary listening
  /// experience: paused by that interruption, the app leaves its audio context while that app
  /// is in its own. While a resumable interruption lasts (a call), it stays in it; paused by
  /// the user it stays in it.
  @Test func G18_anAppPausedByAnInterruptionThatIsOverIsNotEligibleBesideThePrimaryApp() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let commands: Set<RemoteCommandKind> = [.play, .pause]
    _ = policy.succeed(.activate(hark))
    _ = policy.succeed(.publish(hark, info(.playing), enabledCommands: commands))
    let music = policy.add(2, "music", .music)
    _ = policy.succeed(.activate(music))
    _ = policy.succeed(.publish(music, info(.playing), enabledCommands: commands))
    var paused = info(.paused)
    paused.pausedBy = .interruption
    _ = policy.succeed(.publish(hark, paused, enabledCommands: commands))
    #expect(policy.isEligibleForNowPlaying(hark), "still interrupted: it may resume")
    _ = policy.succeed(.deactivate(music, []))
    var musicPaused = info(.paused)
    musicPaused.pausedBy = .user
    _ = policy.succeed(.publish(music, musicPaused, enabledCommands: commands))
    #expect(!policy.isEligibleForNowPlaying(hark), "the music app is the primary one now")
    #expect(policy.nowPlaying == music)
    var user = info(.paused)
    user.pausedBy = .user
    _ = policy.succeed(.publish(hark, user, enabledCommands: commands))
    #expect(policy.isEligibleForNowPlaying(hark))
  }

  /// An interrupter that dies (a call killed with SIGKILL) or that speaks and goes (an assistant)
  /// makes no other app the primary one: the paused player stays eligible, so the user's own play
  /// reaches it (G18 must not make "press play" impossible).
  @Test(arguments: [false, true])
  func G18_anInterruptionEndedByNobodyElsesPlayingLeavesThePlayerEligible(crashed: Bool) {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let commands: Set<RemoteCommandKind> = [.play, .pause, .togglePlayPause]
    _ = policy.succeed(.activate(hark))
    _ = policy.succeed(.publish(hark, info(.playing), enabledCommands: commands))
    let call = policy.add(2, "call", .call)
    _ = policy.succeed(.activate(call))
    var paused = info(.paused)
    paused.pausedBy = .interruption
    _ = policy.succeed(.publish(hark, paused, enabledCommands: commands))
    _ = policy.succeed(crashed ? .disconnect(call) : .deactivate(call, []))
    #expect(policy.isEligibleForNowPlaying(hark))
    #expect(policy.nowPlaying == hark)
  }

  /// An older player still waiting on an interruption does not take the listener from the one the
  /// user played last: after an assistant left that one paused, play goes to it.
  @Test func G18_theLastPlayerPausedByAnEndedInterruptionKeepsTheKeysBeforeAnOlderOne() {
    var policy = SessionPolicy()
    let commands: Set<RemoteCommandKind> = [.play, .pause]
    let older = policy.add(1, "music", .music)
    _ = policy.succeed(.activate(older))
    _ = policy.succeed(.publish(older, info(.playing), enabledCommands: commands))
    let newer = policy.add(2, "music2", .music)
    _ = policy.succeed(.activate(newer))
    _ = policy.succeed(.publish(newer, info(.playing), enabledCommands: commands))
    var paused = info(.paused)
    paused.pausedBy = .interruption
    _ = policy.succeed(.publish(older, paused, enabledCommands: commands))
    let assistant = policy.add(3, "assistant", .music)
    _ = policy.succeed(.activate(assistant))
    _ = policy.succeed(.publish(newer, paused, enabledCommands: commands))
    _ = policy.succeed(.deactivate(assistant, []))
    #expect(policy.isEligibleForNowPlaying(newer))
    #expect(policy.nowPlaying == newer)
  }

  @Test func G18_mostRecentToStartPlayingIsNowPlaying() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let music = policy.add(2, "music", .music)
    let commands: Set<RemoteCommandKind> = [.play, .pause, .nextTrack]

    let first = policy.succeed(.publish(hark, info(.playing), enabledCommands: commands))
    #expect(policy.nowPlaying == hark)
    #expect(first.events(for: hark) == [.nowPlaying(isNowPlaying: true)])

    let second = policy.succeed(.publish(music, info(.playing), enabledCommands: commands))
    #expect(policy.nowPlaying == music)
    #expect(second.events(for: hark) == [.nowPlaying(isNowPlaying: false)])
    #expect(second.events(for: music) == [.nowPlaying(isNowPlaying: true)])

    // A position update from hark is not a new start.
    var later = info(.playing)
    later.position = 40
    let update = policy.succeed(.publish(hark, later, enabledCommands: commands))
    #expect(policy.nowPlaying == music)
    #expect(update.isEmpty)

    // Pausing and playing again is.
    policy.succeed(.publish(hark, info(.paused), enabledCommands: commands))
    #expect(policy.nowPlaying == music)
    let again = policy.succeed(.publish(hark, info(.playing), enabledCommands: commands))
    #expect(policy.nowPlaying == hark)
    #expect(again.events(for: hark) == [.nowPlaying(isNowPlaying: true)])
    #expect(again.events(for: music) == [.nowPlaying(isNowPlaying: false)])
  }

  @Test func G18_pausedAppThatNeverPlayedDoesNotTakeOverFromOneThatDid() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let other = policy.add(2, "other", .music)
    policy.succeed(.publish(hark, info(.playing), enabledCommands: [.pause]))
    let notes = policy.succeed(.publish(other, info(.paused), enabledCommands: [.play]))
    #expect(policy.isEligibleForNowPlaying(other))
    #expect(policy.nowPlaying == hark)
    #expect(notes.isEmpty)
  }

  /// Ways out of the audio context: nothing loaded, nothing the app can honour.
  static let exits: [(PlaybackInfo?, Set<RemoteCommandKind>)] = [
    (nil, [.play]),
    (info(.paused), []),
  ]

  /// As on the phone, the app that played stays the now-playing app when it stops (Play starts
  /// its track again, as MPRIS's Stop then Play does), until another app plays.
  @Test func G18_aStoppedAppStaysTheNowPlayingAppUntilAnotherPlays() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    policy.succeed(.publish(hark, info(.playing), enabledCommands: [.pause, .nextTrack]))
    var stopped = info(.stopped)
    stopped.pausedBy = .user
    let notes = policy.succeed(.publish(hark, stopped, enabledCommands: [.play]))
    #expect(policy.nowPlaying == hark)
    #expect(notes.events(for: hark).isEmpty, "nothing changed for it")
    // Another app that was paused before does not take it: it has not played since.
    let other = policy.add(2, "other", .music)
    policy.succeed(.publish(other, info(.paused), enabledCommands: [.play]))
    #expect(policy.nowPlaying == hark)
    // It plays: it is the now-playing app, and stays it when it stops in turn.
    let plays = policy.succeed(.publish(other, info(.playing), enabledCommands: [.pause]))
    #expect(policy.nowPlaying == other)
    #expect(plays.events(for: hark) == [.nowPlaying(isNowPlaying: false)])
    policy.succeed(.publish(other, stopped, enabledCommands: [.play]))
    #expect(policy.nowPlaying == other)
    #expect(!policy.isEligibleForNowPlaying(hark) || policy.nowPlaying != hark)
    // An app that never played is not eligible stopped.
    let fresh = policy.add(3, "fresh", .music)
    policy.succeed(.publish(fresh, stopped, enabledCommands: [.play]))
    #expect(!policy.isEligibleForNowPlaying(fresh))
  }

  @Test(arguments: exits)
  func G18_leavingTheAudioContextGivesUpNowPlaying(
    playback: PlaybackInfo?, commands: Set<RemoteCommandKind>
  ) {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    policy.succeed(.publish(hark, info(.playing), enabledCommands: [.pause, .nextTrack]))
    #expect(policy.nowPlaying == hark)

    let notes = policy.succeed(.publish(hark, playback, enabledCommands: commands))
    #expect(policy.nowPlaying == nil)
    #expect(notes.events(for: hark) == [.nowPlaying(isNowPlaying: false)])
  }

  @Test func G18_stoppingHandsNowPlayingToTheOtherEligibleApp() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let music = policy.add(2, "music", .music)
    policy.succeed(.publish(hark, info(.playing), enabledCommands: [.pause]))
    policy.succeed(.publish(music, info(.playing), enabledCommands: [.pause]))
    let notes = policy.succeed(.publish(music, info(.stopped), enabledCommands: [.play]))
    #expect(policy.nowPlaying == hark)
    #expect(notes.events(for: hark) == [.nowPlaying(isNowPlaying: true)])
    #expect(notes.events(for: music) == [.nowPlaying(isNowPlaying: false)])
  }

  @Test func G18_becomingMixableGivesUpNowPlaying() {
    var policy = SessionPolicy()
    let app = policy.add(1, "app", .music)
    policy.succeed(.publish(app, info(.playing), enabledCommands: [.pause]))
    let notes = policy.succeed(.setCategory(app, .ambient, mode: .default, options: []))
    #expect(policy.nowPlaying == nil)
    #expect(notes.events(for: app) == [.nowPlaying(isNowPlaying: false)])
  }

  @Test func G18_disconnectHandsNowPlayingToTheRemainingEligibleApp() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let music = policy.add(2, "music", .music)
    let game = policy.add(3, "game", .game)
    policy.succeed(.publish(hark, info(.playing), enabledCommands: [.pause]))
    policy.succeed(.publish(hark, info(.paused), enabledCommands: [.play]))
    policy.succeed(.publish(music, info(.playing), enabledCommands: [.pause]))
    policy.succeed(.publish(game, info(.playing), enabledCommands: [.pause]))
    #expect(policy.nowPlaying == music)

    let notes = policy.succeed(.disconnect(music))
    #expect(policy.nowPlaying == hark)
    #expect(notes.events(for: hark) == [.nowPlaying(isNowPlaying: true)])
    #expect(notes.events(for: game).isEmpty)
    // The one that left is not written to.
    #expect(!notes.recipients.contains(music))
  }

  @Test func G18_disconnectOfTheOnlyNowPlayingAppLeavesNone() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    policy.succeed(.publish(hark, info(.playing), enabledCommands: [.pause]))
    let notes = policy.succeed(.disconnect(hark))
    #expect(policy.nowPlaying == nil)
    #expect(notes.isEmpty)
  }
}
