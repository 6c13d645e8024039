import AudioCore
import SessionCore

/// What happens at the end of a track and of the queue.
public enum RepeatMode: String, Sendable, Hashable, Codable, CaseIterable {
  /// Play to the end of the queue, then stop.
  case off
  /// Start the queue again after its last track.
  case all
  /// Play the current track again and again (next and previous still move).
  case one

  /// The mode after this one, as a repeat key cycles: off → all → one → off.
  public var next: RepeatMode {
    switch self {
    case .off: .all
    case .all: .one
    case .one: .off
    }
  }
}

/// The player's queue: tracks in the user's order, the current one, shuffle and repeat.
///
/// Every entry has an id of its own (the same file may be queued twice), kept across edits, so
/// the engine, the UI and MPRIS can name a track while the queue changes under them. Shuffle
/// plays the entries in a shuffled order that starts with the current one and keeps the tracks
/// already played before it; a seed makes it reproducible in tests.
public struct PlayQueue: Sendable, Hashable {
  /// The entries in the user's order.
  public private(set) var entries: [QueuedTrack] = []
  /// The entry playing or paused, if any.
  public private(set) var currentID: Int?
  public private(set) var shuffle = false
  public var repeatMode: RepeatMode = .off
  /// Entry ids in the order they play: `entries` order, or the shuffled one.
  private var order: [Int] = []
  /// Lookups kept with every edit, so that asking what comes next (the decode thread does, for
  /// gapless playback) or taking a snapshot costs the same with 10 entries or 10,000.
  /// Where each id is in `entries` (an entry by its id is looked up through it).
  private var userPosition: [Int: Int] = [:]
  private var playPosition: [Int: Int] = [:]
  /// The entries in the order they will play.
  public private(set) var playOrder: [QueuedTrack] = []
  private var nextID = 0
  private var random: SplitMix64
  /// Entries handed over to play next (`QueuePlacement.next`) and not yet reached: the next
  /// ones go after them, so several play in the order they were asked for.
  private var upNext: Set<Int> = []

  public init(seed: UInt64 = 0x5EED) {
    random = SplitMix64(seed: seed)
  }

  public var isEmpty: Bool { entries.isEmpty }
  public var count: Int { entries.count }
  public var current: QueuedTrack? { currentID.flatMap(entry) }

  /// The entry with this id.
  public func entry(_ id: Int) -> QueuedTrack? { userPosition[id].map { entries[$0] } }

  /// Where the entry is in the user's order.
  public func index(of id: Int) -> Int? { userPosition[id] }

  /// Rebuilds the lookups; every edit ends with it. In the user's order (no shuffle), the play
  /// order is the entries themselves: the same arrays, which a snapshot's reader compares at
  /// once, and half the work for a queue of 50,000.
  private mutating func reindex() {
    // The old lookups go first: for 50,000 entries each is some megabytes.
    userPosition = [:]
    playPosition = [:]
    playOrder = []
    var userPosition = [Int: Int](minimumCapacity: entries.count)
    for (i, entry) in entries.enumerated() { userPosition[entry.id] = i }
    if order.elementsEqual(entries.lazy.map(\.id)) {
      playPosition = userPosition
      playOrder = entries
    } else {
      var playPosition = [Int: Int](minimumCapacity: order.count)
      for (i, id) in order.enumerated() { playPosition[id] = i }
      self.playPosition = playPosition
      playOrder = order.compactMap { id in userPosition[id].map { entries[$0] } }
    }
    self.userPosition = userPosition
  }

  // MARK: Moving through it

  /// What plays after `id`. `automatic` is the end of a track (repeat one plays it again);
  /// otherwise the user asked for the next track. nil at the end without repeat all.
  public func track(after id: Int, automatic: Bool) -> QueuedTrack? {
    guard let at = playPosition[id] else { return nil }
    if automatic && repeatMode == .one { return entry(id) }
    if at + 1 < order.count { return entry(order[at + 1]) }
    return repeatMode == .all ? order.first.flatMap(entry) : nil
  }

  /// What plays before `id`: nil at the start without repeat all.
  public func track(before id: Int) -> QueuedTrack? {
    guard let at = playPosition[id] else { return nil }
    if at > 0 { return entry(order[at - 1]) }
    return repeatMode == .all && order.count > 1 ? order.last.flatMap(entry) : nil
  }

  /// The first entry to play (in play order).
  public var first: QueuedTrack? { order.first.flatMap(entry) }

  /// Makes `id` the current entry; false when it is not in the queue.
  @discardableResult
  public mutating func setCurrent(_ id: Int?) -> Bool {
    guard let id else {
      currentID = nil
      return true
    }
    guard entry(id) != nil else { return false }
    currentID = id
    return true
  }

  // MARK: Editing

  /// Adds files at the end (or after entry `after`); returns the new entries.
  @discardableResult
  public mutating func add(_ paths: [String], after: Int? = nil) -> [QueuedTrack] {
    let added = paths.map { path -> QueuedTrack in
      defer { nextID += 1 }
      return QueuedTrack(id: nextID, path: path)
    }
    let at = after.flatMap(index(of:)).map { $0 + 1 } ?? entries.count
    entries.insert(contentsOf: added, at: at)
    if shuffle {
      // New entries go at random places among those not yet played, after what was handed
      // over to play next.
      var playedUpTo = currentID.flatMap { playPosition[$0] } ?? -1
      while playedUpTo >= 0, playedUpTo + 1 < order.count, upNext.contains(order[playedUpTo + 1]) {
        playedUpTo += 1
      }
      var shuffled = order
      for t in added {
        let slot = playedUpTo + 1 + Int(random.next() % UInt64(shuffled.count - playedUpTo))
        shuffled.insert(t.id, at: slot)
      }
      order = shuffled
    } else {
      order = entries.map(\.id)
    }
    reindex()
    return added
  }

  /// Adds files handed over (`hark play`, `hark add`) at `placement`; returns the new entries.
  /// `.now` and `.next` go right after the current entry in the order of play (shuffled or
  /// not) and in the user's order, `.next` after what was handed over to play next before and
  /// is still to come; with no current entry, or `.end`, at the end. Never reorders the rest.
  @discardableResult
  public mutating func insert(_ paths: [String], at placement: QueuePlacement) -> [QueuedTrack] {
    guard placement != .end, let current = currentID, let currentAt = playPosition[current] else {
      return add(paths)
    }
    let added = paths.map { path -> QueuedTrack in
      defer { nextID += 1 }
      return QueuedTrack(id: nextID, path: path)
    }
    // The anchor: the current entry, or (play next) the last of the run handed over to play
    // next that follows it without a break.
    var anchor = current
    var playAt = currentAt + 1
    upNext.remove(current)
    if placement == .next {
      while playAt < order.count, upNext.contains(order[playAt]) {
        anchor = order[playAt]
        playAt += 1
      }
      upNext.formUnion(added.map(\.id))
    } else {
      // Played now: the first becomes current, the rest of them are what plays next (a later
      // "play next" goes after them); what was to play next before stays where it is.
      upNext = Set(added.dropFirst().map(\.id))
    }
    order.insert(contentsOf: added.map(\.id), at: playAt)
    let userAt = (userPosition[anchor] ?? entries.count - 1) + 1
    entries.insert(contentsOf: added, at: userAt)
    if !shuffle { order = entries.map(\.id) }
    reindex()
    return added
  }

  /// Removes an entry; false when it is not there. Removing the current entry leaves no
  /// current entry: the owner decides what plays next (`track(after:)` asked before removing).
  @discardableResult
  public mutating func remove(_ id: Int) -> Bool {
    guard let at = index(of: id) else { return false }
    entries.remove(at: at)
    order.removeAll { $0 == id }
    if currentID == id { currentID = nil }
    reindex()
    return true
  }

  /// Moves an entry to `index` in the user's order.
  public mutating func move(_ id: Int, to index: Int) {
    guard let at = self.index(of: id) else { return }
    let t = entries.remove(at: at)
    entries.insert(t, at: max(0, min(index, entries.count)))
    if !shuffle { order = entries.map(\.id) }
    reindex()
  }

  /// Empties the queue.
  public mutating func clear() {
    entries = []
    order = []
    upNext = []
    reindex()
    currentID = nil
  }

  /// Shuffles the entries themselves, once (the user's order changes; shuffle mode stays as it
  /// is): the current entry goes first, the rest in a random order after it.
  public mutating func shuffleOnce() {
    var ids = entries.map(\.id).filter { $0 != currentID }
    if ids.count > 1 {
      for i in stride(from: ids.count - 1, to: 0, by: -1) {
        ids.swapAt(i, Int(random.next() % UInt64(i + 1)))
      }
    }
    if let c = currentID { ids.insert(c, at: 0) }
    entries = ids.compactMap { entry($0) }
    upNext = []
    if !shuffle { order = entries.map(\.id) }
    reindex()
  }

  /// This queue as `earlier` was (an undo), with ids never handed out again: entries added
  /// after it was taken must not share an id with one of its own.
  public mutating func restore(_ earlier: PlayQueue) {
    let next = max(nextID, earlier.nextID)
    let (nowShuffled, nowRepeating) = (shuffle, repeatMode)
    self = earlier
    nextID = next
    reindex()  // a kept copy drops its lookups (`kept`)
    // The entries come back; shuffle and repeat stay as the user has them now.
    repeatMode = nowRepeating
    if shuffle != nowShuffled { setShuffle(nowShuffled) }
  }

  /// This queue without its lookups, to be kept for an undo: a tenth of the memory of a whole
  /// copy for a long queue (the entries' paths are shared with the queue, not copied).
  public var kept: PlayQueue {
    var q = self
    q.userPosition = [:]
    q.playPosition = [:]
    q.playOrder = []
    return q
  }

  /// Turns shuffle on (a fresh order starting with the current entry) or off (the user's order).
  public mutating func setShuffle(_ on: Bool) {
    shuffle = on
    guard on else {
      order = entries.map(\.id)
      reindex()
      return
    }
    var ids = entries.map(\.id)
    // Fisher–Yates with our own generator, so a seed gives the same order.
    if ids.count > 1 {
      for i in stride(from: ids.count - 1, to: 0, by: -1) {
        let j = Int(random.next() % UInt64(i + 1))
        ids.swapAt(i, j)
      }
    }
    if let c = currentID, let at = ids.firstIndex(of: c) {
      ids.remove(at: at)
      ids.insert(c, at: 0)
    }
    order = ids
    reindex()
  }

}

/// A small, fast, seedable random generator (Steele, Lea and Flood's SplitMix64).
struct SplitMix64: Sendable, Hashable {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
