/// What ends the sleep timer.
public enum SleepTimerMode: Sendable, Hashable {
  /// This many seconds after it was set (`hark timer 30m`).
  case duration(seconds: Double)
  /// When the track the now-playing app plays ends (whichever track that is by then).
  case endOfTrack
  /// When the chapter the now-playing app plays ends: hark's player publishes its chapter's
  /// end (`PlaybackInfo.chapterEnd`); a track without chapters, and an app that publishes none
  /// (every other desktop player: MPRIS has no chapters), is one chapter, so its end stands
  /// for the chapter's.
  case endOfChapter
}

/// What the user sets: when the timer ends, and how long what plays then takes to fade out.
public struct SleepTimerSetting: Sendable, Hashable {
  public var mode: SleepTimerMode
  /// Seconds over which what plays fades out before it pauses; 0 pauses it at once.
  public var fade: Double

  public init(_ mode: SleepTimerMode, fade: Double = SleepTimerSetting.defaultFade) {
    self.mode = mode
    self.fade = fade
  }

  /// The phone's clock fades a few seconds: long enough not to wake a sleeper with a cut, short
  /// enough that the end is where it was asked for.
  public static let defaultFade = 5.0
  /// The longest timer: a day (longer is a mistake, 30h for 30m).
  public static let longest = 86_400.0
  /// The longest fade: a minute.
  public static let longestFade = 60.0

  /// Why this setting cannot be used, in words naming the value; nil when it can.
  public var problem: String? {
    if !fade.isFinite || fade < 0 || fade > Self.longestFade {
      return "the fade must be 0 to \(Int(Self.longestFade)) seconds, not \(fade)"
    }
    if case .duration(let seconds) = mode,
      !seconds.isFinite || seconds <= 0 || seconds > Self.longest
    {
      return
        "the timer must be more than 0 and at most \(Int(Self.longest)) seconds, not \(seconds)"
    }
    return nil
  }
}

/// The sleep timer as `hark status --json`, `hark timer` and the interface show it, and as the
/// session server tells its sessions (`SessionEvent.sleepTimer`).
public struct SleepTimerStatus: Sendable, Hashable, Codable {
  public enum State: String, Sendable, Hashable, Codable, CaseIterable {
    /// Counting down, or waiting for the track's or chapter's end.
    case running
    /// It ended: what played is fading out, to pause.
    case ending
    /// It ended, and what played was paused (`apps`); it stays so until the timer is set again
    /// or cancelled. Nothing resumes by itself.
    case ended
  }

  public var state: State
  public var mode: SleepTimerMode
  /// Seconds of the fade.
  public var fade: Double
  /// Seconds until it ends (and the fade begins) as of when this was made; nil when that is not
  /// known (the end of a track while nothing with a length plays) and once it has ended.
  public var remaining: Double?
  /// What it fades out and pauses (ending), or faded out and paused (ended): the apps' names.
  public var apps: [String]

  public init(
    state: State, mode: SleepTimerMode, fade: Double, remaining: Double? = nil, apps: [String] = []
  ) {
    self.state = state
    self.mode = mode
    self.fade = fade
    self.remaining = remaining
    self.apps = apps
  }

  private enum CodingKeys: String, CodingKey {
    case state, mode, seconds, fade, remaining, apps
  }

  /// `mode` is `duration` (with `seconds`), `endOfTrack` or `endOfChapter`; every key is
  /// written, absent values as null, as in the rest of the status.
  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(state, forKey: .state)
    switch mode {
    case .duration(let seconds):
      try c.encode("duration", forKey: .mode)
      try c.encode(seconds, forKey: .seconds)
    case .endOfTrack:
      try c.encode("endOfTrack", forKey: .mode)
      try c.encodeNil(forKey: .seconds)
    case .endOfChapter:
      try c.encode("endOfChapter", forKey: .mode)
      try c.encodeNil(forKey: .seconds)
    }
    try c.encode(fade, forKey: .fade)
    try c.encode(remaining, forKey: .remaining)
    try c.encode(apps, forKey: .apps)
  }

  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    state = try c.decode(State.self, forKey: .state)
    let name = try c.decode(String.self, forKey: .mode)
    switch name {
    case "duration":
      mode = .duration(seconds: try c.decode(Double.self, forKey: .seconds))
    case "endOfTrack": mode = .endOfTrack
    case "endOfChapter": mode = .endOfChapter
    default:
      throw DecodingError.dataCorruptedError(
        forKey: .mode, in: c, debugDescription: "unknown timer mode '\(name)'")
    }
    fade = try c.decode(Double.self, forKey: .fade)
    remaining = try c.decodeIfPresent(Double.self, forKey: .remaining)
    apps = try c.decodeIfPresent([String].self, forKey: .apps) ?? []
  }
}

/// The sleep timer of the whole desktop, as a value: inputs (time passed in) → new state +
/// effects, which the session server carries out. No clock, no I/O.
///
/// When it ends, what is heard fades out over `fade` seconds and pauses, as the phone's clock
/// does it ("when the timer ends: stop playing"): hark's now-playing session, if it plays (told
/// with `endSession`: it fades itself out and pauses with the reason `timer`), and every other
/// desktop player that plays, reached through MPRIS (`pauseDesktop`: the shell fades its
/// Volume, pauses it and puts the Volume back). Every player that plays, not only one: on a
/// desktop two can play at once (a video in a browser beside the music), and a timer that
/// stopped one would leave the other playing all night. hark's own players are on MPRIS too;
/// they are reached through their sessions only, never paused twice.
///
/// The end of a track or a chapter is the now-playing app's: hark's now-playing session while
/// it plays (its published position, duration, rate and chapter end), else the first desktop
/// player that plays (its MPRIS Position, mpris:length and Rate, surveyed every
/// `surveyInterval` while that is what the timer waits for). The fade then begins `fade` before
/// that end, less `endMargin`, so that the pause falls just before it: hark's player would
/// otherwise start the next track (or end its queue), and mpv quit at its last file's end.
public struct SleepTimer: Sendable, Hashable {
  /// A player on the desktop's session bus (MPRIS), as a survey found it.
  public struct DesktopPlayer: Sendable, Hashable {
    /// Its bus name, `org.mpris.MediaPlayer2.mpv`.
    public var busName: String
    /// What to call it: its Identity, else the last part of its bus name.
    public var name: String
    /// The process that owns the name, when the bus says.
    public var pid: Int32?
    public var state: PlaybackState
    /// Seconds into its track, at the survey.
    public var position: Double?
    /// Its track's length in seconds (mpris:length), when it says.
    public var length: Double?
    /// Its playback rate (1 unless it says otherwise).
    public var rate: Double

    public init(
      busName: String, name: String, pid: Int32? = nil, state: PlaybackState,
      position: Double? = nil, length: Double? = nil, rate: Double = 1
    ) {
      self.busName = busName
      self.name = name
      self.pid = pid
      self.state = state
      self.position = position
      self.length = length
      self.rate = rate
    }
  }

  /// hark's now-playing session (SessionPolicy.nowPlaying) as the server knows it now.
  public struct NowPlaying: Sendable, Hashable {
    public var session: SessionID
    public var name: String
    /// What it published, its position brought to now.
    public var playback: PlaybackInfo
    public init(session: SessionID, name: String, playback: PlaybackInfo) {
      self.session = session
      self.name = name
      self.playback = playback
    }
  }

  /// What the timer looks at, as of `now`.
  public struct Listening: Sendable, Hashable {
    /// Monotonic nanoseconds.
    public var now: UInt64
    public var nowPlaying: NowPlaying?
    /// The sessions whose published state is playing.
    public var playing: Set<SessionID>
    /// The processes that have a session: their MPRIS players are hark's own.
    public var sessionPids: Set<Int32>

    public init(
      now: UInt64, nowPlaying: NowPlaying? = nil, playing: Set<SessionID> = [],
      sessionPids: Set<Int32> = []
    ) {
      self.now = now
      self.nowPlaying = nowPlaying
      self.playing = playing
      self.sessionPids = sessionPids
    }
  }

  /// What the session server must do.
  public enum Effect: Sendable, Hashable {
    /// Tell hark's session that the timer ended: it fades out over `fade` seconds and pauses
    /// (the reason `timer`).
    case endSession(SessionID, fade: Double)
    /// Find the desktop's players and what they do; answered with `surveyed`.
    case surveyDesktop
    /// Fade these players' Volume out over `fade` seconds (at once without one), pause them,
    /// and put each Volume back as it was; answered with `desktopPaused`.
    case pauseDesktop([DesktopPlayer], fade: Double)
    /// The timer was cancelled or set again during that fade: stop it, put the Volumes back,
    /// pause nothing. (`desktopPaused` still answers the fade.)
    case stopDesktopFade
    /// Tell the sessions the timer's state (`status(at:)`): it changed, or its end moved.
    case announce
  }

  public enum Phase: Sendable, Hashable {
    case off
    case running(Running)
    case ending(Ending)
    /// It ended; `apps` were paused.
    case ended(SleepTimerSetting, apps: [String])
  }

  public struct Running: Sendable, Hashable {
    public var setting: SleepTimerSetting
    /// When it ends (the fade begins), if known: a duration's end, or the track's or chapter's
    /// end less the fade, as last estimated.
    public var endsAt: UInt64?
    /// The end of the track or chapter waited for, as last estimated.
    public var trackEndsAt: UInt64?
  }

  public struct Ending: Sendable, Hashable {
    public var setting: SleepTimerSetting
    /// The fade it asked for (shorter than the setting's when less of the track was left).
    public var fade: Double
    /// hark's session told to fade out (and its name), waited for until it stops playing or
    /// `until` passes.
    public var session: SessionID?
    public var sessionName = ""
    public var until: UInt64
    public var desktop: DesktopStep
    /// What it fades out, in the order told.
    public var apps: [String]
  }

  /// Where the desktop's part of an ending is.
  public enum DesktopStep: Sendable, Hashable {
    /// Waiting for a survey to say what plays.
    case surveying
    /// Fading out and pausing what played.
    case fading
    case done
  }

  /// The desktop's players as a survey found them, and when (monotonic nanoseconds).
  public struct Survey: Sendable, Hashable {
    public var players: [DesktopPlayer]
    public var at: UInt64
  }

  /// What the sessions were last told: the status without its remaining time, and the end.
  private struct Announced: Sendable, Hashable {
    var shape: SleepTimerStatus?
    var endsAt: UInt64?
  }

  public private(set) var phase: Phase = .off
  /// The last survey of the desktop's players.
  public private(set) var lastSurvey: Survey?
  /// A survey has been asked for and not answered yet.
  public private(set) var surveying = false
  /// Desktop fades asked for and not answered yet: one stopped by a cancel still answers, and
  /// may do so while the fade of a timer set again after it is under way.
  public private(set) var desktopFades = 0
  /// The timer waits for a desktop player's track: surveys go on every `surveyInterval`.
  private var watchingDesktop = false
  private var announced = Announced()

  /// How often the desktop's players are asked again while the timer waits for one's track:
  /// its position is read afresh (a seek, a pause, the next track) at this interval.
  public static let surveyInterval: UInt64 = 2_000_000_000
  /// How long after its fade hark's session is waited for before the timer counts it paused.
  public static let sessionGrace: UInt64 = 3_000_000_000
  /// A move of the end by more than this is told to the sessions (a seek, a pause).
  public static let announceStep: UInt64 = 1_000_000_000
  /// How long before a track's or chapter's end the pause is to fall: an estimate made from a
  /// position published or surveyed a moment ago is that close, and what is left is heard when
  /// play resumes.
  public static let endMargin: UInt64 = 500_000_000

  public init() {}

  // MARK: Derived state

  public var isOff: Bool { phase == .off }

  /// The status to show and tell, as of `now`; nil while off.
  public func status(at now: UInt64) -> SleepTimerStatus? {
    switch phase {
    case .off: return nil
    case .running(let r):
      let remaining = r.endsAt.map { Double($0 > now ? $0 - now : 0) / 1e9 }
      return SleepTimerStatus(
        state: .running, mode: r.setting.mode, fade: r.setting.fade, remaining: remaining)
    case .ending(let e):
      return SleepTimerStatus(
        state: .ending, mode: e.setting.mode, fade: e.setting.fade, apps: e.apps)
    case .ended(let setting, let apps):
      return SleepTimerStatus(state: .ended, mode: setting.mode, fade: setting.fade, apps: apps)
    }
  }

  /// When `update` must be called next (monotonic nanoseconds): the end, the next survey, or
  /// the end of the wait for hark's session; nil when nothing is due.
  public var wakeAt: UInt64? {
    switch phase {
    case .off, .ended: return nil
    case .running(let r):
      var due = r.endsAt
      if watchingDesktop, !surveying {
        let next = (lastSurvey?.at ?? 0) &+ Self.surveyInterval
        due = min(due ?? next, next)
      }
      return due
    case .ending(let e):
      return e.session == nil ? nil : e.until
    }
  }

  /// Whether `player` is one of hark's own (its process has a session, or it has hark's name):
  /// reached through its session, never through MPRIS.
  public static func isHarks(_ player: DesktopPlayer, _ listening: Listening) -> Bool {
    if let pid = player.pid, listening.sessionPids.contains(pid) { return true }
    let hark = "org.mpris.MediaPlayer2.hark"
    return player.busName == hark || player.busName.hasPrefix(hark + ".")
  }

  // MARK: Inputs

  /// The user set the timer (`hark timer 30m`, a key): it starts counting now, in place of any
  /// timer before it. The caller has checked `setting.problem`.
  public mutating func set(_ setting: SleepTimerSetting, _ listening: Listening) -> [Effect] {
    step(listening) { t in
      var effects: [Effect] = []
      if case .ending(let e) = t.phase, e.desktop == .fading { effects.append(.stopDesktopFade) }
      var endsAt: UInt64? = nil
      if case .duration(let seconds) = setting.mode {
        endsAt = listening.now &+ nanoseconds(seconds)
      }
      t.phase = .running(Running(setting: setting, endsAt: endsAt, trackEndsAt: nil))
      return effects + t.evaluate(listening)
    }
  }

  /// The user cancelled it. A desktop fade under way stops, its Volume put back; hark's session
  /// hears of it (`announce`) and stops its own fade.
  public mutating func cancel(_ listening: Listening) -> [Effect] {
    step(listening) { t in
      var effects: [Effect] = []
      if case .ending(let e) = t.phase, e.desktop == .fading { effects.append(.stopDesktopFade) }
      t.phase = .off
      t.watchingDesktop = false
      return effects
    }
  }

  /// Time passed, or what plays changed (a publish, a session gone, the now-playing app).
  public mutating func update(_ listening: Listening) -> [Effect] {
    step(listening) { t in t.evaluate(listening) }
  }

  /// The desktop's players, as a survey found them (at `listening.now`).
  public mutating func surveyed(_ players: [DesktopPlayer], _ listening: Listening) -> [Effect] {
    step(listening) { t in
      t.surveying = false
      t.lastSurvey = Survey(players: players, at: listening.now)
      guard case .ending(var e) = t.phase, e.desktop == .surveying else {
        return t.evaluate(listening)
      }
      let playing = players.filter { $0.state == .playing && !Self.isHarks($0, listening) }
        .sorted { $0.busName < $1.busName }
      if playing.isEmpty {
        e.desktop = .done
        t.phase = .ending(e)
        return t.evaluate(listening)
      }
      e.desktop = .fading
      e.apps += playing.map(\.name)
      t.phase = .ending(e)
      t.desktopFades += 1
      return [.pauseDesktop(playing, fade: e.fade)] + t.evaluate(listening)
    }
  }

  /// The desktop's players asked to fade and pause have been (or could not be), or the fade
  /// was stopped.
  public mutating func desktopPaused(_ listening: Listening) -> [Effect] {
    step(listening) { t in
      t.desktopFades = max(0, t.desktopFades - 1)
      if case .ending(var e) = t.phase, e.desktop == .fading, t.desktopFades == 0 {
        e.desktop = .done
        t.phase = .ending(e)
      }
      return t.evaluate(listening)
    }
  }

  // MARK: The rules

  /// Runs `body`, then tells the sessions if what they would show changed.
  private mutating func step(_ listening: Listening, _ body: (inout SleepTimer) -> [Effect])
    -> [Effect]
  {
    var effects = body(&self)
    let now = listening.now
    var shape = status(at: now)
    shape?.remaining = nil
    var endsAt: UInt64? = nil
    if case .running(let r) = phase { endsAt = r.endsAt }
    let moved: Bool
    switch (announced.endsAt, endsAt) {
    case (nil, nil): moved = false
    case (.some(let a), .some(let b)): moved = (a > b ? a - b : b - a) > Self.announceStep
    case (nil, .some), (.some, nil): moved = true
    }
    if shape != announced.shape || moved {
      announced = Announced(shape: shape, endsAt: endsAt)
      effects.append(.announce)
    }
    return effects
  }

  /// Where the timer stands now: its end estimated again, the surveys it needs asked for, and
  /// its end (or the end of an ending) carried out when due.
  private mutating func evaluate(_ listening: Listening) -> [Effect] {
    let now = listening.now
    switch phase {
    case .off, .ended:
      watchingDesktop = false
      return []
    case .running(var r):
      var effects: [Effect] = []
      switch r.setting.mode {
      case .duration:
        watchingDesktop = false
      case .endOfTrack, .endOfChapter:
        let (trackEnd, needsDesktop) = trackEnd(r.setting.mode, listening)
        watchingDesktop = needsDesktop
        r.trackEndsAt = trackEnd
        r.endsAt = trackEnd.map { $0 &- min($0, nanoseconds(r.setting.fade)) }
        if needsDesktop, !surveying,
          lastSurvey.map({ now &- $0.at >= Self.surveyInterval || $0.at > now }) ?? true
        {
          surveying = true
          effects.append(.surveyDesktop)
        }
      }
      guard let endsAt = r.endsAt, endsAt <= now else {
        phase = .running(r)
        return effects
      }
      // Less of the track left than the fade (set near its end): the fade fits what is left,
      // so that the pause falls on the end rather than into the next track.
      var fade = r.setting.fade
      if let trackEnd = r.trackEndsAt {
        fade = min(fade, Double(trackEnd > now ? trackEnd - now : 0) / 1e9)
      }
      return effects + end(r.setting, fade: fade, listening)
    case .ending(var e):
      if let id = e.session {
        if !listening.playing.contains(id) {
          e.session = nil
        } else if now >= e.until {
          // It plays on after its fade: the user called the fade off (play). Not paused.
          e.session = nil
          if let i = e.apps.firstIndex(of: e.sessionName) { e.apps.remove(at: i) }
        }
      }
      if e.session == nil && e.desktop == .done {
        phase = .ended(e.setting, apps: e.apps)
        return []
      }
      phase = .ending(e)
      return []
    }
  }

  /// The timer's end: hark's now-playing session is told if it plays, and the desktop is
  /// surveyed for what else plays.
  private mutating func end(_ setting: SleepTimerSetting, fade: Double, _ listening: Listening)
    -> [Effect]
  {
    var effects: [Effect] = []
    var ending = Ending(
      setting: setting, fade: fade, session: nil,
      until: listening.now &+ nanoseconds(fade) &+ Self.sessionGrace, desktop: .surveying, apps: [])
    if let np = listening.nowPlaying, listening.playing.contains(np.session) {
      ending.session = np.session
      ending.sessionName = np.name
      ending.apps.append(np.name)
      effects.append(.endSession(np.session, fade: fade))
    }
    watchingDesktop = false
    // A survey under way answers for the end too: it is at most a moment old.
    if !surveying {
      surveying = true
      effects.append(.surveyDesktop)
    }
    phase = .ending(ending)
    return effects
  }

  /// When the pause is to fall (`endMargin` before the end of the track or chapter the
  /// now-playing app plays), as of `listening`, and whether that app is a desktop player (whose
  /// position only a survey tells).
  private func trackEnd(_ mode: SleepTimerMode, _ listening: Listening) -> (UInt64?, Bool) {
    let now = listening.now
    if let np = listening.nowPlaying, np.playback.state == .playing {
      let p = np.playback
      let end = mode == .endOfChapter ? (p.chapterEnd ?? p.duration) : p.duration
      // Rate 0 while playing: the output has not started; the next publish says.
      guard let end, let position = p.position, let rate = p.rate, rate > 0 else {
        return (nil, false)
      }
      let atEnd = now &+ nanoseconds(max(0, end - position) / rate)
      return (atEnd &- min(atEnd, Self.endMargin), false)
    }
    guard let survey = lastSurvey,
      let player = survey.players.filter({
        $0.state == .playing && !Self.isHarks($0, listening)
      }).min(by: { $0.busName < $1.busName }),
      let length = player.length, let position = player.position, player.rate > 0
    else { return (nil, true) }
    let end = survey.at &+ nanoseconds(max(0, length - position) / player.rate)
    return (end &- min(end, Self.endMargin), true)
  }
}

/// Seconds (finite, not negative) as nanoseconds, saturating.
private func nanoseconds(_ seconds: Double) -> UInt64 {
  guard seconds.isFinite, seconds > 0 else { return 0 }
  let ns = seconds * 1e9
  return ns >= Double(UInt64.max) ? .max : UInt64(ns)
}
