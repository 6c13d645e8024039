import Testing

@testable import SessionCore

/// The sleep timer of the whole desktop, rule by rule: when it ends, what it fades out and
/// pauses (hark's now-playing session, the desktop's MPRIS players, never hark's twice), and
/// that nothing resumes after it.
@Suite(.timeLimit(.minutes(2))) struct SleepTimerRuleTests {
  static let second: UInt64 = 1_000_000_000
  static let t0: UInt64 = 1_000 * second
  static let hark = SessionID(1)

  /// hark's player playing `position` seconds into a track of `duration`.
  static func harkPlaying(
    _ now: UInt64, position: Double = 10, duration: Double? = 200, rate: Double = 1,
    chapterEnd: Double? = nil, state: PlaybackState = .playing
  ) -> SleepTimer.Listening {
    let info = PlaybackInfo(
      state: state, title: "Song", duration: duration, position: position, rate: rate,
      chapterEnd: chapterEnd)
    return SleepTimer.Listening(
      now: now, nowPlaying: .init(session: hark, name: "hark", playback: info),
      playing: state == .playing ? [hark] : [], sessionPids: [4242])
  }

  static func quiet(_ now: UInt64) -> SleepTimer.Listening {
    SleepTimer.Listening(now: now, sessionPids: [4242])
  }

  static func mpv(
    _ state: PlaybackState = .playing, position: Double = 50, length: Double? = 60,
    rate: Double = 1
  ) -> SleepTimer.DesktopPlayer {
    .init(
      busName: "org.mpris.MediaPlayer2.mpv", name: "mpv", pid: 777, state: state,
      position: position, length: length, rate: rate)
  }

  /// hark's own player on MPRIS: its pid has a session.
  static let harkOnMPRIS = SleepTimer.DesktopPlayer(
    busName: "org.mpris.MediaPlayer2.hark", name: "hark", pid: 4242, state: .playing)

  // MARK: Durations

  @Test func aDurationEndsItsTimeAfterItWasSetAndNotBefore() {
    var timer = SleepTimer()
    let set = timer.set(SleepTimerSetting(.duration(seconds: 30)), Self.harkPlaying(Self.t0))
    #expect(set == [.announce])
    #expect(timer.status(at: Self.t0)?.remaining == 30)
    #expect(timer.status(at: Self.t0 + 10 * Self.second)?.remaining == 20)
    #expect(timer.wakeAt == Self.t0 + 30 * Self.second)
    let before = Self.t0 + 30 * Self.second - 1
    #expect(timer.update(Self.harkPlaying(before)) == [])
    let ends = timer.update(Self.harkPlaying(Self.t0 + 30 * Self.second))
    #expect(ends == [.endSession(Self.hark, fade: 5), .surveyDesktop, .announce])
    #expect(timer.status(at: Self.t0)?.state == .ending)
    #expect(timer.status(at: Self.t0)?.apps == ["hark"])
  }

  @Test func whenItEndsHarksSessionAndEveryDesktopPlayerThatPlaysFadeOut() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.duration(seconds: 1), fade: 3), Self.harkPlaying(Self.t0))
    let end = Self.t0 + Self.second
    _ = timer.update(Self.harkPlaying(end))
    let vlc = SleepTimer.DesktopPlayer(
      busName: "org.mpris.MediaPlayer2.vlc", name: "VLC", state: .playing)
    let paused = SleepTimer.DesktopPlayer(
      busName: "org.mpris.MediaPlayer2.cmus", name: "cmus", state: .paused)
    let effects = timer.surveyed([vlc, paused, Self.mpv()], Self.harkPlaying(end))
    #expect(effects == [.pauseDesktop([Self.mpv(), vlc], fade: 3), .announce])
    #expect(timer.status(at: end)?.apps == ["hark", "mpv", "VLC"])
  }

  @Test func harksOwnPlayersOnMPRISAreReachedThroughTheirSessionsOnly() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.duration(seconds: 1)), Self.harkPlaying(Self.t0))
    let end = Self.t0 + Self.second
    _ = timer.update(Self.harkPlaying(end))
    // By its pid (a session's process), and by hark's name even when the bus gives no pid.
    var secondHark = Self.harkOnMPRIS
    secondHark.busName = "org.mpris.MediaPlayer2.hark.instance99"
    secondHark.pid = nil
    let effects = timer.surveyed([Self.harkOnMPRIS, secondHark], Self.harkPlaying(end))
    #expect(!effects.contains { if case .pauseDesktop = $0 { true } else { false } })
  }

  @Test func itEndsOnceHarksSessionHasPausedAndTheDesktopIsDone() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.duration(seconds: 1)), Self.harkPlaying(Self.t0))
    let end = Self.t0 + Self.second
    _ = timer.update(Self.harkPlaying(end))
    _ = timer.surveyed([Self.mpv()], Self.harkPlaying(end))
    #expect(timer.wakeAt == end + 5 * Self.second + SleepTimer.sessionGrace)
    // The session still fades; the desktop is done.
    #expect(timer.desktopPaused(Self.harkPlaying(end + 2 * Self.second)) == [])
    #expect(timer.status(at: end)?.state == .ending)
    let paused = Self.harkPlaying(end + 5 * Self.second, state: .paused)
    #expect(timer.update(paused) == [.announce])
    #expect(timer.status(at: end)?.state == .ended)
    #expect(timer.status(at: end)?.apps == ["hark", "mpv"])
    #expect(timer.wakeAt == nil)
  }

  @Test func aSessionThatNeverPausesIsWaitedForUntilItsFadeAndAGraceAreOver() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.duration(seconds: 1)), Self.harkPlaying(Self.t0))
    let end = Self.t0 + Self.second
    _ = timer.update(Self.harkPlaying(end))
    _ = timer.surveyed([], Self.harkPlaying(end))
    let limit = end + 5 * Self.second + SleepTimer.sessionGrace
    #expect(timer.update(Self.harkPlaying(limit - 1)) == [])
    #expect(timer.update(Self.harkPlaying(limit)) == [.announce])
    #expect(timer.status(at: limit)?.state == .ended)
    // It played on (the user pressed play during the fade): the timer paused nothing.
    #expect(timer.status(at: limit)?.apps == [])
  }

  @Test func whenNothingPlaysItEndsPausingNothing() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.duration(seconds: 1)), Self.quiet(Self.t0))
    let end = Self.t0 + Self.second
    #expect(timer.update(Self.quiet(end)) == [.surveyDesktop, .announce])
    #expect(timer.surveyed([Self.mpv(.paused)], Self.quiet(end)) == [.announce])
    #expect(
      timer.status(at: end) == SleepTimerStatus(state: .ended, mode: .duration(seconds: 1), fade: 5)
    )
  }

  /// A paused hark session is not the timer's to touch: only what plays is paused.
  @Test func aPausedHarkSessionIsNotToldToPause() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.duration(seconds: 1)), Self.quiet(Self.t0))
    let effects = timer.update(Self.harkPlaying(Self.t0 + Self.second, state: .paused))
    #expect(!effects.contains { if case .endSession = $0 { true } else { false } })
  }

  // MARK: The end of a track or a chapter

  /// The fade ends half a second before the track does (`endMargin`): the pause falls before the
  /// next track begins.
  @Test func endOfTrackBeginsTheFadeThatLongBeforeTheTracksEnd() {
    var timer = SleepTimer()
    let listening = Self.harkPlaying(Self.t0, position: 100, duration: 130)
    #expect(timer.set(SleepTimerSetting(.endOfTrack, fade: 5), listening) == [.announce])
    #expect(timer.status(at: Self.t0)?.remaining == 24.5)
    #expect(timer.wakeAt == Self.t0 + 24_500_000_000)
    let at = Self.t0 + 24_500_000_000
    let effects = timer.update(Self.harkPlaying(at, position: 124.5, duration: 130))
    #expect(effects == [.endSession(Self.hark, fade: 5), .surveyDesktop, .announce])
  }

  @Test func aSeekOrAPauseMovesTheEndAndTheSessionsHearOfIt() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.endOfTrack), Self.harkPlaying(Self.t0, position: 100))
    #expect(timer.status(at: Self.t0)?.remaining == 94.5)
    // Half a second later, as it plays: no news.
    let later = Self.t0 + Self.second / 2
    #expect(timer.update(Self.harkPlaying(later, position: 100.5)) == [])
    // A seek back.
    #expect(timer.update(Self.harkPlaying(later, position: 10)) == [.announce])
    #expect(timer.status(at: later)?.remaining == 184.5)
    // Paused: the end is not known until it plays again.
    #expect(
      timer.update(Self.harkPlaying(later, position: 10, state: .paused)) == [
        .surveyDesktop, .announce,
      ])
    #expect(timer.status(at: later)?.remaining == nil)
  }

  @Test func theRateSaysHowSoonTheTrackEnds() {
    var timer = SleepTimer()
    _ = timer.set(
      SleepTimerSetting(.endOfTrack, fade: 0), Self.harkPlaying(Self.t0, position: 100, rate: 2))
    #expect(timer.status(at: Self.t0)?.remaining == 49.5)
  }

  @Test func endOfChapterWaitsForThePublishedChapterEnd() {
    var timer = SleepTimer()
    let listening = Self.harkPlaying(Self.t0, position: 100, duration: 3600, chapterEnd: 160)
    _ = timer.set(SleepTimerSetting(.endOfChapter, fade: 5), listening)
    #expect(timer.status(at: Self.t0)?.remaining == 54.5)
    // The next chapter: its end, as the publisher says.
    _ = timer.update(Self.harkPlaying(Self.t0, position: 170, duration: 3600, chapterEnd: 400))
    #expect(timer.status(at: Self.t0)?.remaining == 224.5)
  }

  @Test func aTrackWithoutChaptersIsOneChapter() {
    var timer = SleepTimer()
    let listening = Self.harkPlaying(Self.t0, position: 100, duration: 130, chapterEnd: nil)
    _ = timer.set(SleepTimerSetting(.endOfChapter, fade: 5), listening)
    #expect(timer.status(at: Self.t0)?.remaining == 24.5)
  }

  @Test func setNearTheEndTheFadeFitsWhatIsLeft() {
    var timer = SleepTimer()
    let effects = timer.set(
      SleepTimerSetting(.endOfTrack, fade: 5),
      Self.harkPlaying(Self.t0, position: 128, duration: 130))
    #expect(effects.first == .endSession(Self.hark, fade: 1.5))
  }

  @Test func aStreamWithNoLengthIsWaitedFor() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.endOfTrack), Self.harkPlaying(Self.t0, duration: nil))
    #expect(timer.status(at: Self.t0)?.remaining == nil)
    #expect(timer.status(at: Self.t0)?.state == .running)
    #expect(timer.wakeAt == nil)
  }

  @Test func withoutHarkPlayingADesktopPlayersTrackIsSurveyedAndWaitedFor() {
    var timer = SleepTimer()
    #expect(
      timer.set(SleepTimerSetting(.endOfTrack, fade: 5), Self.quiet(Self.t0)) == [
        .surveyDesktop, .announce,
      ])
    // One survey at a time.
    #expect(timer.update(Self.quiet(Self.t0 + 3 * Self.second)) == [])
    let at = Self.t0 + Self.second
    #expect(timer.surveyed([Self.mpv(position: 50, length: 60)], Self.quiet(at)) == [.announce])
    #expect(timer.status(at: at)?.remaining == 4.5)
    // Asked again every survey interval, for a seek or a pause.
    #expect(timer.wakeAt == at + SleepTimer.surveyInterval)
    #expect(timer.update(Self.quiet(at + SleepTimer.surveyInterval - 1)) == [])
    #expect(timer.update(Self.quiet(at + SleepTimer.surveyInterval)) == [.surveyDesktop])
    let later = at + SleepTimer.surveyInterval
    _ = timer.surveyed([Self.mpv(position: 52, length: 60)], Self.quiet(later))
    let ends = timer.update(Self.quiet(at + 4_500_000_000))
    #expect(ends == [.surveyDesktop, .announce])
    #expect(
      timer.surveyed([Self.mpv(position: 54.5)], Self.quiet(at + 4_500_000_000))
        == [.pauseDesktop([Self.mpv(position: 54.5)], fade: 5), .announce])
  }

  @Test func theDesktopIsNotSurveyedWhileHarkPlaysTheTrackWaitedFor() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.endOfTrack), Self.harkPlaying(Self.t0))
    for s in 1...20 {
      let effects = timer.update(
        Self.harkPlaying(Self.t0 + UInt64(s) * Self.second, position: 10 + Double(s)))
      #expect(!effects.contains(.surveyDesktop))
    }
  }

  // MARK: Cancel, set again, ended

  @Test func cancelTurnsItOffAndStopsADesktopFadeUnderWay() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.duration(seconds: 1)), Self.quiet(Self.t0))
    #expect(timer.cancel(Self.quiet(Self.t0)) == [.announce])
    #expect(timer.status(at: Self.t0) == nil)
    #expect(timer.wakeAt == nil)
    _ = timer.set(SleepTimerSetting(.duration(seconds: 1)), Self.quiet(Self.t0))
    let end = Self.t0 + Self.second
    _ = timer.update(Self.quiet(end))
    _ = timer.surveyed([Self.mpv()], Self.quiet(end))
    #expect(timer.cancel(Self.quiet(end)) == [.stopDesktopFade, .announce])
    #expect(timer.desktopPaused(Self.quiet(end)) == [])
    #expect(timer.isOff)
  }

  @Test func settingItAgainReplacesTheTimerBeforeIt() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.duration(seconds: 60)), Self.quiet(Self.t0))
    #expect(
      timer.set(SleepTimerSetting(.duration(seconds: 10)), Self.quiet(Self.t0)) == [.announce])
    #expect(timer.wakeAt == Self.t0 + 10 * Self.second)
  }

  @Test func endedItStaysEndedAndNeverAsksForAnythingMore() {
    var timer = SleepTimer()
    _ = timer.set(SleepTimerSetting(.duration(seconds: 1)), Self.harkPlaying(Self.t0))
    let end = Self.t0 + Self.second
    _ = timer.update(Self.harkPlaying(end))
    _ = timer.surveyed([], Self.harkPlaying(end))
    _ = timer.update(Self.harkPlaying(end + Self.second, state: .paused))
    #expect(timer.status(at: end)?.state == .ended)
    // The user plays again: the timer has nothing to say about it.
    for s in 2...10 {
      #expect(timer.update(Self.harkPlaying(end + UInt64(s) * Self.second)) == [])
    }
  }

  // MARK: Settings and the status

  @Test(arguments: [
    (SleepTimerSetting(.duration(seconds: 0)), true),
    (SleepTimerSetting(.duration(seconds: -5)), true),
    (SleepTimerSetting(.duration(seconds: .infinity)), true),
    (SleepTimerSetting(.duration(seconds: 86_401)), true),
    (SleepTimerSetting(.duration(seconds: 86_400)), false),
    (SleepTimerSetting(.endOfTrack, fade: -1), true),
    (SleepTimerSetting(.endOfTrack, fade: 61), true),
    (SleepTimerSetting(.endOfTrack, fade: .nan), true),
    (SleepTimerSetting(.endOfChapter, fade: 0), false),
  ])
  func settingsOutOfRangeAreRefusedByName(setting: SleepTimerSetting, refused: Bool) {
    #expect((setting.problem != nil) == refused)
  }
}
