/// The engine's transport as its owner sees it: the tracks it is given, what it says back, and
/// a moment's view of it. Values only: the player's decisions (PlayerCore) read them without
/// the engine, and tests make them by hand.

/// A queue entry the engine plays: an identity the queue understands and a file.
public struct QueuedTrack: Hashable, Sendable, Codable {
  public var id: Int
  public var path: String
  public init(id: Int, path: String) {
    self.id = id
    self.path = path
  }
}

/// What the engine tells its owner.
public enum EngineEvent: Sendable, Equatable {
  /// A file could not be opened or failed midway; the engine went on with the next one.
  case trackFailed(QueuedTrack, DecodeError)
  /// The output device went away mid-write (ENODEV, EBADFD, EIO...): playback is paused.
  case deviceLost(device: String, code: Int32)
  /// The output device could not be opened.
  case deviceFailed(String)
  /// Everything queued has been heard.
  case endOfQueue
  /// The track being heard is now this one (the previous one ended, gaplessly or not).
  case nowHearing(QueuedTrack)
  /// Something inside the engine went wrong that the user cannot fix but should hear of (and
  /// a bug report should hold): the render thread not answering, say.
  case fault(String)
  /// The device has started playing what it was given (after a start, a resume or a seek):
  /// from now on the position moves with the clock (`EngineSnapshot.isAdvancing`).
  case outputStarted
  /// A load has opened this track (the one asked for, or the first after it that opens) and
  /// it is ready where it was asked to be, playing or paused.
  case loaded(QueuedTrack)
  /// A live stream being decoded changed what it says (`EngineSnapshot.metadata`) or its
  /// connection (`EngineSnapshot.reconnecting`). Said when decoded, a ring (about 1.5 s) before
  /// it is heard.
  case streamChanged(QueuedTrack)
}

/// An output that would not open.
public struct OutputOpenError: Error, Hashable, Sendable, CustomStringConvertible {
  public var device: String
  public var message: String
  public init(device: String, message: String) {
    self.device = device
    self.message = message
  }
  public var description: String { message }
}

/// The transport's state, as the owner sees it.
public enum EngineState: Sendable, Equatable {
  case stopped, playing, paused
}

/// A moment's view of the engine, cheap to take from any thread.
public struct EngineSnapshot: Sendable, Equatable {
  public var state: EngineState
  public var track: QueuedTrack?
  /// Seconds heard of the current track (from the device's delay, not what was decoded).
  public var position: Double
  public var duration: Double?
  public var format: PCMFormat?
  public var metadata: TrackMetadata?
  public var isSeekable: Bool
  public var deviceName: String
  /// What the engine has already lined up after the track being heard.
  public var lookahead: Lookahead
  /// A track being opened for a load (a slow disk, a network mount): until it opens, `track`
  /// is nil.
  public var loading: QueuedTrack? = nil
  /// Playing, and the device has started: what is heard moves on with the clock. Between a
  /// start (or a resume, or a seek) and the device's start, through a sound server a few
  /// hundred milliseconds, the position stays where it is.
  public var isAdvancing: Bool = false
  /// A live stream (internet radio): no length, no seek; a resume connects afresh.
  public var isLive: Bool = false
  /// The live stream's connection dropped and is being made again: why it dropped.
  public var reconnecting: String? = nil
  /// The live stream's station, as its server names it.
  public var liveStation: String? = nil
  /// Which stretch of the ring is heard: it changes whenever what is heard starts somewhere
  /// new (a track begins, also the same one again on repeat, a seek, a load), so that a
  /// position that goes back with it is a jump, not a position falling behind.
  public var segment: Int = 0
  /// The speed of what is heard (1: as recorded; 2: twice as fast, the pitch kept): the
  /// position moves this many seconds of the file a second.
  public var rate: Double = 1
  /// Whether it can play at speeds other than 1× (its time stretch can be had).
  public var canChangeRate: Bool = true

  public init(
    state: EngineState, track: QueuedTrack? = nil, position: Double = 0,
    duration: Double? = nil, format: PCMFormat? = nil, metadata: TrackMetadata? = nil,
    isSeekable: Bool = false, deviceName: String, lookahead: Lookahead = .undecided,
    loading: QueuedTrack? = nil, isAdvancing: Bool = false, isLive: Bool = false,
    reconnecting: String? = nil, liveStation: String? = nil, segment: Int = 0, rate: Double = 1,
    canChangeRate: Bool = true
  ) {
    self.state = state
    self.track = track
    self.position = position
    self.duration = duration
    self.format = format
    self.metadata = metadata
    self.isSeekable = isSeekable
    self.deviceName = deviceName
    self.lookahead = lookahead
    self.loading = loading
    self.isAdvancing = isAdvancing
    self.isLive = isLive
    self.reconnecting = reconnecting
    self.liveStation = liveStation
    self.segment = segment
    self.rate = rate
    self.canChangeRate = canChangeRate
  }
}

/// What an engine has lined up after the track being heard: the decoder runs up to a ring's
/// length (about 1.5 s) ahead, so near the end of a track it has already asked what comes next.
public enum Lookahead: Sendable, Equatable {
  /// The decoder is still in the track being heard: it will ask what follows when it gets there.
  case undecided
  /// The decoder has moved on to this track.
  case next(QueuedTrack)
  /// The decoder found nothing after the track being heard: playback ends with it.
  case end
}
