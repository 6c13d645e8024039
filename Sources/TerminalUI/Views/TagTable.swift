import Glibc
import Platform
import Synchronization

/// The hash of each row's path (`PathKey`), kept with a list, so that the rows of the paths
/// whose tags changed are found without hashing 50,000 paths again: an integer set lookup a
/// row, then the paths compared where the hash is one of theirs.
struct PathHashes: Sendable {
  private let values: [Int]
  /// The rows in the order of their hashes: the rows of a path are found by a binary search
  /// (a few changed paths among 200,000 rows took a pass over all of them, in each frame while
  /// a queue's tags came in).
  private let byHash: [Int32]

  init<Row>(_ rows: [Row], path: (Row) -> String) {
    let values = rows.map { PathKey(path($0)).hashValue }
    self.values = values
    byHash = values.indices.map { Int32($0) }.sorted { values[Int($0)] < values[Int($1)] }
  }

  /// Where in `rows` (the rows these hashes were made for) the paths of `changed` are, in
  /// order.
  func places<Row>(of changed: Set<PathKey>, in rows: [Row], path: (Row) -> String) -> [Int] {
    guard !changed.isEmpty else { return [] }
    var found: [Int] = []
    for key in changed {
      let hash = key.hashValue
      // The first row whose hash is not below it, then each of that hash.
      var low = 0
      var high = byHash.count
      while low < high {
        let middle = (low + high) / 2
        if values[Int(byHash[middle])] < hash { low = middle + 1 } else { high = middle }
      }
      while low < byHash.count, values[Int(byHash[low])] == hash {
        let row = Int(byHash[low])
        if PathKey(path(rows[row])) == key { found.append(row) }
        low += 1
      }
    }
    return found.sorted()
  }
}

/// The tags and lengths the interface has read, by path, and which of them they are: each
/// change takes a version no copy of the table has had (`TagsVersion`), and says which paths
/// it changed, so that a filter's folded rows (`RowFilter`) fold again only the rows whose
/// tags changed. (Tags come in batches for a second or two after a 50,000-entry queue is
/// shown: folded again whole at each batch, a key typed in the queue's filter meanwhile took
/// 100–250 ms.)
public struct TagTable: Sendable {
  private var table: [PathKey: TrackInfo] = [:]
  /// Which tags these are.
  public private(set) var version = 0

  public init() {}

  /// How many paths have tags.
  public var count: Int { table.count }

  public subscript(path: String) -> TrackInfo? {
    get { table[PathKey(path)] }
    set {
      let key = PathKey(path)
      guard table[key] != newValue else { return }
      table[key] = newValue
      version = TagsVersion.next(after: version, changed: [path])
    }
  }

  /// Takes `other`'s tags where they differ from those held (the tags of a track read again,
  /// as each one starts, are mostly the same: no change, no new version).
  public mutating func merge(_ other: [String: TrackInfo]) {
    merge(other.count) { take in
      for (path, info) in other { take(path, info) }
    }
  }

  /// Takes `list`'s tags where they differ from those held; a path listed twice gets its
  /// later tags.
  public mutating func merge(_ list: some Collection<(path: String, info: TrackInfo)>) {
    merge(list.count) { take in
      for (path, info) in list { take(path, info) }
    }
  }

  /// One version for all that `each` gives to its argument.
  private mutating func merge(
    _ count: Int, _ each: ((String, TrackInfo) -> Void) -> Void
  ) {
    guard count > 0 else { return }
    var changed: [String] = []
    each { path, info in
      // One lookup: the tags put in place, and what they replaced compared after.
      if table.updateValue(info, forKey: PathKey(path)) != info { changed.append(path) }
    }
    if !changed.isEmpty { version = TagsVersion.next(after: version, changed: changed) }
  }

  /// Room for `count` paths in all, so that a queue's tags coming in batches are not hashed
  /// again at each doubling of the table. Changes no tags.
  public mutating func reserveCapacity(_ count: Int) {
    if table.capacity < count { table.reserveCapacity(count) }
  }
}

/// Versions of tag tables, and what changed from one to the next. A version is never taken
/// twice, by any copy of an `InterfaceState`'s tags, so a cache tells tags apart by it without
/// comparing them. The last changes are remembered: from a version it folded rows for, a
/// `RowFilter` learns which paths changed since, when the versions are one's ancestor.
enum TagsVersion {
  private struct Change {
    var parent: Int
    var paths: [String]
  }
  private struct Log {
    var last = 0
    var changes: [Int: Change] = [:]
    /// The versions remembered, oldest first, and their paths in all.
    var order: [Int] = []
    var paths = 0
  }
  private static let log = Mutex(Log())
  /// How much is remembered: older changes are forgotten (a cache that asks about them
  /// starts again), and a filter with this many changed rows may as well fold them all.
  static let rememberedChanges = 256
  static let rememberedPaths = 20_000

  /// A new version, `parent`'s tags with `paths` changed.
  static func next(after parent: Int, changed paths: [String]) -> Int {
    log.withLock { log in
      log.last += 1
      let version = log.last
      log.changes[version] = Change(parent: parent, paths: paths)
      log.order.append(version)
      log.paths += paths.count
      var forget = 0
      while log.order.count - forget > rememberedChanges
        || (log.paths > rememberedPaths && log.order.count - forget > 1)
      {
        let old = log.order[forget]
        log.paths -= log.changes.removeValue(forKey: old)?.paths.count ?? 0
        forget += 1
      }
      if forget > 0 { log.order.removeFirst(forget) }
      return version
    }
  }

  /// The paths whose tags changed from version `old` to version `new`; nil when that is not
  /// known (`old` is not an ancestor of `new`, or the changes between are forgotten).
  static func changed(from old: Int, to new: Int) -> Set<PathKey>? {
    log.withLock { log in
      var paths = Set<PathKey>()
      var at = new
      var count = 0
      while at != old {
        guard at > old, let change = log.changes[at] else { return nil }
        count += change.paths.count
        if count > rememberedPaths { return nil }
        for path in change.paths { paths.insert(PathKey(path)) }
        at = change.parent
      }
      return paths
    }
  }
}
