/// The remote commands an app can receive (docs/MANNERS.md's words; MPRemoteCommandCenter's).
public enum RemoteCommandKind: String, Sendable, Hashable, Codable, CaseIterable {
  case play, pause, togglePlayPause, stop, nextTrack, previousTrack
  case seekForward, seekBackward, skipForward, skipBackward, changePlaybackPosition
  case volumeUp, volumeDown, mute
  case nextChapter, previousChapter
  case changePlaybackRate

  /// The command in plain words, for messages ("next track", "volume up").
  public var words: String {
    switch self {
    case .play: "play"
    case .pause: "pause"
    case .togglePlayPause: "play/pause"
    case .stop: "stop"
    case .nextTrack: "next track"
    case .previousTrack: "previous track"
    case .seekForward, .seekBackward, .skipForward, .skipBackward: "seek"
    case .changePlaybackPosition: "set the position"
    case .volumeUp: "volume up"
    case .volumeDown: "volume down"
    case .mute: "mute"
    case .nextChapter: "next chapter"
    case .previousChapter: "previous chapter"
    case .changePlaybackRate: "change the speed"
    }
  }

  /// Whether the command changes the system volume (G3).
  public var isVolume: Bool { self == .volumeUp || self == .volumeDown || self == .mute }
}

/// One remote command with its argument, where it has one.
public enum RemoteCommand: Sendable, Hashable, Codable {
  case play, pause, togglePlayPause, stop, nextTrack, previousTrack
  case seekForward, seekBackward
  /// Skip by a number of seconds (negative values are not allowed; use skipBackward).
  case skipForward(seconds: Double)
  case skipBackward(seconds: Double)
  /// Jump to a position in seconds from the start of the track.
  case changePlaybackPosition(seconds: Double)
  /// Change the system volume by a percentage (G3).
  case volumeUp(percent: Double)
  case volumeDown(percent: Double)
  case mute
  /// The start of the next chapter of the track playing: not the next track (G19).
  case nextChapter
  /// The start of the previous chapter, or of this one when more than 3 s of it have played.
  case previousChapter
  /// Play at this speed (1: as recorded), the pitch kept; MPRemoteCommandCenter's
  /// changePlaybackRateCommand, MPRIS's Rate. The player keeps it within its range (hark's:
  /// 0.5 to 3).
  case changePlaybackRate(Double)

  /// The command's kind, which is what `isEnabled` is kept for.
  public var kind: RemoteCommandKind {
    switch self {
    case .play: .play
    case .pause: .pause
    case .togglePlayPause: .togglePlayPause
    case .stop: .stop
    case .nextTrack: .nextTrack
    case .previousTrack: .previousTrack
    case .seekForward: .seekForward
    case .seekBackward: .seekBackward
    case .skipForward: .skipForward
    case .skipBackward: .skipBackward
    case .changePlaybackPosition: .changePlaybackPosition
    case .volumeUp: .volumeUp
    case .volumeDown: .volumeDown
    case .mute: .mute
    case .nextChapter: .nextChapter
    case .previousChapter: .previousChapter
    case .changePlaybackRate: .changePlaybackRate
    }
  }

  /// The argument, for the commands that carry one.
  public var argument: Double? {
    switch self {
    case .skipForward(let s), .skipBackward(let s), .changePlaybackPosition(let s): s
    case .volumeUp(let p), .volumeDown(let p): p
    case .changePlaybackRate(let r): r
    case .play, .pause, .togglePlayPause, .stop, .nextTrack, .previousTrack, .seekForward,
      .seekBackward, .mute, .nextChapter, .previousChapter:
      nil
    }
  }

  /// Rebuilds a command from its kind and argument; nil when a needed argument is missing.
  public init?(kind: RemoteCommandKind, argument: Double?) {
    switch kind {
    case .play: self = .play
    case .pause: self = .pause
    case .togglePlayPause: self = .togglePlayPause
    case .stop: self = .stop
    case .nextTrack: self = .nextTrack
    case .previousTrack: self = .previousTrack
    case .seekForward: self = .seekForward
    case .seekBackward: self = .seekBackward
    case .mute: self = .mute
    case .nextChapter: self = .nextChapter
    case .previousChapter: self = .previousChapter
    case .skipForward:
      guard let a = argument, a.isFinite, a >= 0 else { return nil }
      self = .skipForward(seconds: a)
    case .skipBackward:
      guard let a = argument, a.isFinite, a >= 0 else { return nil }
      self = .skipBackward(seconds: a)
    case .changePlaybackPosition:
      guard let a = argument, a.isFinite, a >= 0 else { return nil }
      self = .changePlaybackPosition(seconds: a)
    case .volumeUp:
      guard let a = argument, a.isFinite, a >= 0 else { return nil }
      self = .volumeUp(percent: a)
    case .volumeDown:
      guard let a = argument, a.isFinite, a >= 0 else { return nil }
      self = .volumeDown(percent: a)
    case .changePlaybackRate:
      guard let a = argument, a.isFinite, a > 0 else { return nil }
      self = .changePlaybackRate(a)
    }
  }
}

/// How an app answered a remote command (MPRemoteCommandHandlerStatus).
public enum CommandStatus: String, Sendable, Hashable, Codable {
  case success
  /// The command is disabled right now (G19): it was ignored.
  case commandDisabled
  /// There is nothing to act on (an empty queue).
  case noSuchContent
  /// The app tried and failed.
  case commandFailed
}

/// Where files handed to a running player go in its queue (`hark play`, `hark add`): like
/// `cmus-remote` and `mocp -a`, one player per user takes what the user names from any terminal.
public enum QueuePlacement: String, Sendable, Hashable, Codable, CaseIterable {
  /// Right after the track playing, and played at once; the rest of the queue stays.
  case now
  /// After the track playing and after what was handed over as `next` before it (in the order
  /// handed), so that several "play next"s play in the order they were asked for.
  case next
  /// At the end of the queue.
  case end
}
