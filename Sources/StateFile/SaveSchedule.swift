import PlayerCore

/// When the player writes the state file while it runs, not only as it ends: so that a crash, a
/// `kill -9`, the out-of-memory killer or a power cut loses at most a few seconds of changes to
/// the queue and a minute of the position, rather than everything since the last quit (MPD saves
/// its state every two minutes for the same reason). Pure: the player's keeper shows it what it
/// sees and carries out the saves it asks for.
///
/// The rules:
/// - A change of the queue, of the current entry, of shuffle or repeat, a pause, a stop or a
///   resume is saved `settle` after the first change not saved yet: a burst of changes (a folder
///   added in parts, keys pressed in a row) is one save, and a change of shuffle, repeat or the
///   entry undone before it is none.
/// - While paused or stopped, a move of the position (a seek) is a change.
/// - While playing, the position is saved every `whilePlaying`.
/// - After a save, the next waits at least `shareOfTime` times as long as it took: saves never
///   take more than a `1 / shareOfTime` of the time, however long the queue (200,000 paths) and
///   however often it changes (a held `n`).
/// - A save that failed (a full disk) is tried again `retryAfter` later, its changes still due.
/// - Nothing is saved until something differs from what the file holds: a player that restored
///   the file and was left alone writes nothing.
public struct SaveSchedule: Sendable, Equatable {
  /// What the state file keeps, as the keeper sees it.
  public struct Seen: Sendable, Equatable {
    /// How many times the queue has changed (counted by the keeper: the queue itself is long).
    public var queueChanges: Int
    /// The current entry's id.
    public var current: Int?
    public var shuffle: Bool
    public var repeatMode: RepeatMode
    public var playing: Bool
    /// Seconds into the current entry.
    public var position: Double

    public init(
      queueChanges: Int, current: Int?, shuffle: Bool, repeatMode: RepeatMode, playing: Bool,
      position: Double
    ) {
      self.queueChanges = queueChanges
      self.current = current
      self.shuffle = shuffle
      self.repeatMode = repeatMode
      self.playing = playing
      self.position = position
    }

    /// Differs from `saved` in what is saved at once (the position while playing is not).
    func differs(from saved: Seen) -> Bool {
      queueChanges != saved.queueChanges || current != saved.current || shuffle != saved.shuffle
        || repeatMode != saved.repeatMode || playing != saved.playing
        || (!playing && abs(position - saved.position) >= SaveSchedule.moved)
    }
  }

  /// From the first change not saved to its save, in nanoseconds.
  public static let settle: UInt64 = 2_000_000_000
  /// How often the position is saved while playing, in nanoseconds.
  public static let whilePlaying: UInt64 = 60_000_000_000
  /// Saves take at most one part in this many of the time while playing.
  public static let shareOfTime: UInt64 = 200
  /// From a failed save to the next try, in nanoseconds.
  public static let retryAfter: UInt64 = 60_000_000_000
  /// A move of the position, in seconds, that is a change while paused.
  static let moved = 1.0

  /// What the file holds, as far as this player knows; nil before anything was saved or read.
  public private(set) var saved: Seen?
  private var savedAt: UInt64
  /// When the first change not saved yet was seen.
  private var changedAt: UInt64?
  /// No save before this (the last one's share of the time, or a failure's wait).
  private var notBefore: UInt64 = 0

  /// `saved`: what the file holds `now` (restored from it), or nil (nothing there, a damaged
  /// file, or files given to play: the first change is saved).
  public init(saved: Seen?, at now: UInt64) {
    self.saved = saved
    savedAt = now
  }

  /// What is seen `now`: when the next save is due (now or later), or nil when there is
  /// nothing to save.
  public mutating func due(seeing seen: Seen, at now: UInt64) -> UInt64? {
    guard let saved else {
      let first = changedAt ?? now
      changedAt = first
      return max(first + Self.settle, notBefore)
    }
    var due: UInt64?
    if seen.differs(from: saved) {
      let first = changedAt ?? now
      changedAt = first
      due = first + Self.settle
    } else {
      changedAt = nil
    }
    if seen.playing && saved.playing && seen.position != saved.position {
      let periodic = savedAt &+ Self.whilePlaying
      due = due.map { min($0, periodic) } ?? periodic
    }
    return due.map { max($0, notBefore) }
  }

  /// `seen` was saved at `now`, in `took` nanoseconds.
  public mutating func didSave(_ seen: Seen, at now: UInt64, took: UInt64) {
    saved = seen
    savedAt = now
    changedAt = nil
    notBefore = now &+ took &+ Self.shareOfTime &* took
  }

  /// A save begun at `now` failed: what it was to save is still due, `retryAfter` later.
  public mutating func didFail(at now: UInt64, took: UInt64) {
    notBefore = now &+ took &+ max(Self.retryAfter, Self.shareOfTime &* took)
  }
}
