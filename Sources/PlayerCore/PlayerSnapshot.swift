import AudioCore
import SessionCore

/// How loud the output is, or why there is no volume to show (G3).
public enum VolumeReading: Sendable, Hashable, Codable {
  /// The system volume of the output's card, 0…100.
  case level(percent: Double, muted: Bool)
  /// The output has no volume control (a null, file or network device): show its name instead.
  case unavailable(device: String)
}

/// Everything the views (terminal UI, MPRIS, `hark status`, the headless player's lines) show
/// about the player, taken at one moment. Cheap to copy; drawn, never mutated.
public struct PlayerSnapshot: Sendable, Equatable, Codable {
  public var state: PlaybackState = .stopped
  /// Why it is paused or stopped (the last thing that took it from playing); nil while
  /// playing, and stopped before anything played.
  public var pausedBy: PauseCause?
  /// The same, in the finer vocabulary the views show (an interruption's kind among them).
  public var pauseReason: PauseReason?
  /// The interruption in progress, and whether the player will resume when it ends.
  public var interruption: InterruptionCause?
  public var willResume = false
  /// The output that went away, when that is why it is paused (G5).
  public var lostRoute: Route?

  /// The current entry of the queue (playing, paused, or next to play when stopped).
  public var current: QueuedTrack?
  /// Title from the tags, else from the file name.
  public var title: String?
  public var metadata = TrackMetadata()
  /// Seconds heard of the current track, as of `positionTime`.
  public var position = 0.0
  /// When `position` was read (monotonic nanoseconds): while playing, a view adds the time since.
  public var positionTime: UInt64 = 0
  /// Playing and heard: the output has started, so the position moves with the clock. Just
  /// after a start, a resume or a seek it has not yet (a sound server takes a few hundred
  /// milliseconds), and the position waits rather than running ahead and stepping back.
  public var isAdvancing = false
  public var duration: Double?
  /// The speed heard, the pitch kept (1: as recorded): the position moves this many seconds
  /// of the file a second.
  public var rate = 1.0
  public var isSeekable = false
  public var format: PCMFormat?
  /// A live stream (internet radio): no length, no seek; a resume connects afresh.
  public var isLive = false
  /// The live stream's connection dropped and is being made again: why it dropped.
  public var reconnecting: String?
  /// The chapters of the current track (`Chapter.ordered`), once found; empty when it has none.
  public var chapters: [Chapter] = []
  /// Where the long recordings heard since the player started were left, by path (the library
  /// index holds those of earlier runs): the queue and the library mark them.
  public var places: [String: ListeningPlace] = [:]

  /// The queue in the user's order, and the order it plays in.
  public var queue: [QueuedTrack] = []
  public var playOrder: [QueuedTrack] = []
  public var shuffle = false
  public var repeatMode: RepeatMode = .off
  /// Entries that could not be played, with the reason.
  public var failed: [Int: String] = [:]

  /// The remote commands that may be sent now (G19).
  public var enabledCommands: Set<RemoteCommandKind> = []
  public var volume: VolumeReading = .unavailable(device: "default")
  /// The ALSA device playing.
  public var deviceName = "default"
  /// The current output, as the session server knows it.
  public var route: Route?
  /// Another app's prompt lowers the music (G9).
  public var ducked = false
  public var silentMode = false
  /// The last problem worth a line: a file that would not play, a refused activation.
  public var problem: PlayerProblem?
  /// Whether the session server last said this player is the now-playing app (G18); false
  /// without a server.
  public var isNowPlaying = false
  /// The track heard is spoken word (a podcast, an audiobook): a prompt pauses it rather than
  /// ducking it.
  public var isSpoken = false
  /// The desktop's sleep timer, as the session server last said (nil: none is set), and when
  /// it said so (monotonic nanoseconds): its `remaining` was true then.
  public var sleepTimer: SleepTimerStatus?
  public var sleepTimerAt: UInt64 = 0

  public init() {}

  /// Position now, moving on with the clock while playing.
  public func position(at now: UInt64) -> Double {
    guard state == .playing, isAdvancing, now > positionTime else { return position }
    let p = position + Double(now - positionTime) / 1e9 * rate
    return duration.map { min(p, $0) } ?? p
  }

  /// Which of `chapters` is heard at `position` (of `position(at:)`); nil without chapters,
  /// and before the first.
  public func chapterIndex(at position: Double) -> Int? {
    Chapter.index(in: chapters, at: position)
  }

  /// Where the chapter heard at `position` ends (before the first chapter: where it starts);
  /// nil without chapters.
  public func chapterEnd(at position: Double) -> Double? {
    guard let first = chapters.first else { return nil }
    guard let i = chapterIndex(at: position) else { return first.start }
    return Chapter.end(of: i, in: chapters, duration: duration)
  }

  /// Seconds until the sleep timer ends, at `now` (monotonic nanoseconds); nil when no timer
  /// runs or its end is not known.
  public func sleepTimerRemaining(at now: UInt64) -> Double? {
    guard let t = sleepTimer, t.state == .running, let remaining = t.remaining else { return nil }
    let since = now > sleepTimerAt ? Double(now - sleepTimerAt) / 1e9 : 0
    return max(0, remaining - since)
  }

  /// What `hark status` and the session server get (the now-playing info).
  public var playbackInfo: PlaybackInfo {
    PlaybackInfo(
      state: state, title: title, artist: metadata.artist, album: metadata.album,
      duration: duration, position: (position * 1000).rounded() / 1000,
      rate: state == .playing && isAdvancing ? rate : 0, pausedBy: pausedBy, reason: pauseReason,
      output: deviceName,
      volume: {
        if case .level(let p, _) = volume { (p * 10).rounded() / 10 } else { nil }
      }(), chapterEnd: chapterEnd(at: position).map { ($0 * 1000).rounded() / 1000 })
  }

  /// Whether the player is in an audio context (G18): eligible to be the now-playing app and to
  /// own its MPRIS name. Stopped, or paused by an interruption that ended without resuming, it
  /// is out of it on its own account, but still in it while the session server keeps it the
  /// now-playing app (no other app has played since: the interrupter died, or went without
  /// another app taking the listener), and the user's play must reach it, media keys included.
  public var isInAudioContext: Bool {
    guard !queue.isEmpty && !enabledCommands.isEmpty else { return false }
    if playbackInfo.isInAudioContext(interrupted: interruption != nil) { return true }
    // Stopped, or paused by an interruption that is over: in it while the session server keeps
    // it the now-playing app, until another app plays (as the phone does: Play works).
    return isNowPlaying && (state == .stopped || (state == .paused && pausedBy == .interruption))
  }

  /// One short line saying why playback is paused or quiet, in plain words; nil when there is
  /// nothing to explain.
  public var reason: String? {
    switch (state, pausedBy) {
    case (.paused, .sleep):
      return "Paused — the computer slept"
    case (.paused, .route):
      return "Paused — " + Self.gone(lostRoute)
    case (.paused, .interruption):
      if let i = interruption {
        switch i.kind {
        case .call: return "Paused — call in progress" + (willResume ? " (will resume)" : "")
        case .recording:
          return "Paused — '\(i.by)' is recording" + (willResume ? " (will resume)" : "")
        case .otherAudio where isSpoken, .navigation where isSpoken:
          return "Paused for '\(i.by)'" + (willResume ? " (resumes after)" : "")
        case .otherAudio:
          // Another music app lets go without shouldResume, an alarm with it (G13): which,
          // only its end says, so nothing is promised (as the headless player's line).
          return "Paused — '\(i.by)' is playing"
        case .alarm: return "Paused — alarm" + (willResume ? " (will resume)" : "")
        case .assistant:
          return "Paused — the assistant is speaking" + (willResume ? " (will resume)" : "")
        case .navigation: return "Paused for navigation" + (willResume ? " (will resume)" : "")
        }
      }
      return "Paused — another app took over"
    case (.paused, .timer):
      return "Paused — the sleep timer ended"
    case (.stopped, .endOfQueue):
      return "Stopped — the end of the queue"
    case (.stopped, .route):
      return problem == nil ? "Stopped — " + Self.gone(lostRoute) : nil
    case (.paused, .user), (.paused, nil), (.paused, .endOfQueue), (.playing, _),
      (.stopped, .user), (.stopped, nil), (.stopped, .interruption), (.stopped, .sleep),
      (.stopped, .timer):
      break
    }
    if let why = reconnecting, state == .playing { return "Reconnecting… (\(why))" }
    if ducked && state == .playing { return "Quieter — another app is speaking" }
    if silentMode { return "Silent mode is on (music still plays)" }
    return nil
  }

  static func gone(_ route: Route?) -> String {
    guard let route else { return "the output went away" }
    switch route.kind {
    case .headphones: return "headphones unplugged"
    case .bluetooth: return "'\(route.name)' disconnected"
    case .usb: return "'\(route.name)' unplugged"
    case .hdmi, .line, .speakers, .unknown: return "'\(route.name)' went away"
    }
  }
}

/// Something that happened, beyond the change of state a new snapshot shows.
public enum PlayerNotice: Sendable, Equatable, Codable {
  /// A track started being heard.
  case nowPlaying(QueuedTrack)
  /// The position jumped (a seek), to this many seconds.
  case seeked(Double)
  /// Something for the user: a refusal, an output that went away, a resume.
  case message(PlayerMessage)
  /// A file was skipped: `line` names it in full with the reason (for the log and the
  /// headless player's output); the snapshot's `problem` says it in short for a status line.
  case couldNotPlay(QueuedTrack, line: String)
  /// The queue played to its end; `nothingPlayed` when no track in it could be played.
  case queueEnded(nothingPlayed: Bool)
  /// The output would not open, so playback stopped: `line` says which and why. Play tries it
  /// again; a player with no one to press play (the headless one) ends.
  case outputFailed(line: String)
}
