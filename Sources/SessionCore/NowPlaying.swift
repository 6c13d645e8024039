/// Whether an app's media is playing, as it publishes it.
public enum PlaybackState: String, Sendable, Hashable, Codable {
  case playing, paused, stopped
}

/// Who or what paused playback, so every view can say why (G14, G5).
public enum PauseCause: String, Sendable, Hashable, Codable {
  case user, interruption, route
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
  /// The output it plays on ("pulse", "hw:1,0").
  public var output: String?
  /// The system volume of that output in percent (G3); nil where it has none.
  public var volume: Double?

  public init(
    state: PlaybackState, title: String? = nil, artist: String? = nil, album: String? = nil,
    duration: Double? = nil, position: Double? = nil, rate: Double? = nil,
    pausedBy: PauseCause? = nil, output: String? = nil, volume: Double? = nil
  ) {
    self.state = state
    self.title = title
    self.artist = artist
    self.album = album
    self.duration = duration
    self.position = position
    self.rate = rate
    self.pausedBy = pausedBy
    self.output = output
    self.volume = volume
  }

  private enum CodingKeys: String, CodingKey {
    case state, title, artist, album, duration, position, rate, pausedBy, output, volume
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
    try c.encode(output, forKey: .output)
    try c.encode(volume, forKey: .volume)
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
