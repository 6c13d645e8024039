/// Whether an app's media is playing, as it publishes it.
public enum PlaybackState: String, Sendable, Hashable, Codable {
  case playing, paused, stopped
}

/// Who or what paused or stopped playback, so every view can say why (G14, G5): the last thing
/// that took it from playing.
public enum PauseCause: String, Sendable, Hashable, Codable, CaseIterable {
  /// The user paused or stopped.
  case user
  /// Another app's audio (a call, an alarm, another player, a prompt for spoken word).
  case interruption
  /// The output it played on went away, or would not open (G5).
  case route
  /// The machine went to sleep (G5: it stays paused after waking).
  case sleep
  /// The queue played to its end.
  case endOfQueue
  /// The sleep timer ended.
  case timer
}

/// Why an app is paused or stopped, in the one vocabulary every view shows (the status line,
/// `hark status --json`, hark's MPRIS metadata): the last thing that took it from playing.
public enum PauseReason: String, Sendable, Hashable, Codable, CaseIterable {
  case user
  /// The output it played on went away, or would not open (G5).
  case outputGone
  case call, alarm, assistant, navigation, recording
  /// Another app's audio took over (music, a game).
  case otherApp
  /// The machine went to sleep.
  case sleep
  /// The sleep timer ended.
  case timer
  case endOfQueue

  /// The reason for `cause`, and for an interruption, what interrupted.
  public init(_ cause: PauseCause, interruption: InterruptionCause.Kind?) {
    switch cause {
    case .user: self = .user
    case .route: self = .outputGone
    case .sleep: self = .sleep
    case .timer: self = .timer
    case .endOfQueue: self = .endOfQueue
    case .interruption:
      switch interruption {
      case .call: self = .call
      case .alarm: self = .alarm
      case .assistant: self = .assistant
      case .navigation: self = .navigation
      case .recording: self = .recording
      case .otherAudio, nil: self = .otherApp
      }
    }
  }
}

/// What an app that plays publishes about it: the now-playing info (MPNowPlayingInfoCenter).
public struct PlaybackInfo: Sendable, Hashable, Codable {
  public var state: PlaybackState
  public var title: String?
  public var artist: String?
  public var album: String?
  /// Seconds, nil for a stream of unknown length.
  public var duration: Double?
  /// Seconds from the start of the track at the moment of publishing.
  public var position: Double?
  /// 1 while playing at normal speed, 0 while paused.
  public var rate: Double?
  public var pausedBy: PauseCause?
  /// Why, in the finer vocabulary the views show (an interruption's kind among them).
  public var reason: PauseReason?
  /// The output it plays on ("pulse", "hw:1,0").
  public var output: String?
  /// The system volume of that output in percent (G3); nil where it has none.
  public var volume: Double?
  /// Where the chapter playing ends, in seconds from the start of the track (the start of the
  /// next chapter, or the chapter's own end); nil when the track has no chapters. A sleep timer
  /// set to the end of the chapter reads it.
  public var chapterEnd: Double?

  public init(
    state: PlaybackState, title: String? = nil, artist: String? = nil, album: String? = nil,
    duration: Double? = nil, position: Double? = nil, rate: Double? = nil,
    pausedBy: PauseCause? = nil, reason: PauseReason? = nil, output: String? = nil,
    volume: Double? = nil, chapterEnd: Double? = nil
  ) {
    self.state = state
    self.title = title
    self.artist = artist
    self.album = album
    self.duration = duration
    self.position = position
    self.rate = rate
    self.pausedBy = pausedBy
    self.reason = reason
    self.output = output
    self.volume = volume
    self.chapterEnd = chapterEnd
  }

  private enum CodingKeys: String, CodingKey {
    case state, title, artist, album, duration, position, rate, pausedBy, reason, output, volume
    case chapterEnd
  }

  /// Every key is written, absent values as null, so readers of `hark status --json` can rely
  /// on the names being there.
  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(state, forKey: .state)
    try c.encode(title, forKey: .title)
    try c.encode(artist, forKey: .artist)
    try c.encode(album, forKey: .album)
    try c.encode(duration, forKey: .duration)
    try c.encode(position, forKey: .position)
    try c.encode(rate, forKey: .rate)
    try c.encode(pausedBy, forKey: .pausedBy)
    try c.encode(reason, forKey: .reason)
    try c.encode(output, forKey: .output)
    try c.encode(volume, forKey: .volume)
    try c.encode(chapterEnd, forKey: .chapterEnd)
  }
}

extension PlaybackInfo {
  /// Whether an app that published this is in an audio context (G18): playing, or paused with
  /// something loaded, but not paused by an interruption that is over (another app took over
  /// without letting it resume: that app is now the primary listening experience). While the
  /// interruption lasts (`interrupted`), the app stays in its context: it may resume.
  public func isInAudioContext(interrupted: Bool) -> Bool {
    switch state {
    case .playing: true
    case .paused: pausedBy != .interruption || interrupted
    case .stopped: false
    }
  }
}
