import Glibc
import Platform

/// The files a scan's walk found (`QueueLoader.walkStamped`), each with the size and
/// modification time (ns) of what it was read from, held compactly: every path's UTF-8 one
/// after another in a few large blocks, the stamps in arrays. A library of 50,000 files held
/// as 50,000 Strings in an array of tuples took about 10 MB of the interface's peak (its
/// rescan at start runs beside everything else it loads); this holds the same in about 6.
///
/// A collection of `(path, size, mtime)`, as the walk's array was; `find` looks a path up by
/// its bytes (`lookup`), so that a scan compares the index's paths with these without making
/// a String of each.
public struct StampedFiles: RandomAccessCollection, Sendable {
  /// The paths' bytes, in blocks of `blockSize` (a path lies whole in one block; a longer path
  /// has a block of its own): a buffer grown by doubling as the walk goes held up to twice the
  /// room it needs, 11 MB for the 4.7 MB of a 50,000-track library's paths, at the interface's
  /// peak.
  private var blocks: [[UInt8]] = []
  /// Where each path lies: its block, and where it starts and ends there.
  private var block: [UInt32] = []
  private var starts: [UInt32] = []
  private var ends: [UInt32] = []
  private var sizes: [Int] = []
  private var mtimes: [Int] = []

  /// Large enough to be mapped by malloc apart (and given back whole when freed).
  static let blockSize = 256 << 10

  public init() {}

  public var startIndex: Int { 0 }
  public var endIndex: Int { ends.count }

  public subscript(i: Int) -> (path: String, size: Int, mtime: Int) {
    (path(i), sizes[i], mtimes[i])
  }

  /// File `i`'s path.
  public func path(_ i: Int) -> String {
    withPathBytes(i) { String(decoding: $0, as: UTF8.self) }
  }

  /// File `i`'s size and modification time.
  public func stamp(_ i: Int) -> (size: Int, mtime: Int) { (sizes[i], mtimes[i]) }

  /// Calls `body` with file `i`'s path, its UTF-8 bytes where they lie.
  public func withPathBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    blocks[Int(block[i])].withUnsafeBytes {
      body(UnsafeRawBufferPointer(rebasing: $0[Int(starts[i])..<Int(ends[i])]))
    }
  }

  public mutating func append(path: String, size: Int, mtime: Int) {
    var path = path
    path.withUTF8 { utf8 in
      if blocks.isEmpty || blocks[blocks.count - 1].count + utf8.count > Self.blockSize {
        var new: [UInt8] = []
        new.reserveCapacity(Swift.max(Self.blockSize, utf8.count))
        blocks.append(new)
      }
      let last = blocks.count - 1
      block.append(UInt32(last))
      starts.append(UInt32(blocks[last].count))
      blocks[last].append(contentsOf: utf8)
      ends.append(UInt32(blocks[last].count))
    }
    sizes.append(size)
    mtimes.append(mtime)
  }

  /// `parts` one after another: their blocks taken as they are, not copied.
  public init(joining parts: [StampedFiles]) {
    let count = parts.reduce(0) { $0 + $1.count }
    block.reserveCapacity(count)
    starts.reserveCapacity(count)
    ends.reserveCapacity(count)
    sizes.reserveCapacity(count)
    mtimes.reserveCapacity(count)
    for part in parts {
      let base = UInt32(blocks.count)
      blocks += part.blocks
      block += part.block.lazy.map { $0 + base }
      starts += part.starts
      ends += part.ends
      sizes += part.sizes
      mtimes += part.mtimes
    }
  }

  /// The files' order by their paths' bytes (memcmp's, as SQLite's BINARY collation and
  /// `PathKey` compare): `indices` sorted.
  public func sortedByPath(_ indices: [Int]) -> [Int] {
    indices.sorted { a, b in
      withPathBytes(a) { x in
        withPathBytes(b) { y in
          guard let p = x.baseAddress, let q = y.baseAddress else { return x.count < y.count }
          let order = memcmp(p, q, Swift.min(x.count, y.count))
          return order != 0 ? order < 0 : x.count < y.count
        }
      }
    }
  }

  /// A table of the files by path, for `find`.
  public func lookup() -> Lookup { Lookup(self) }

  /// The files by path: an open-addressing table of their indices, twice their number of
  /// slots or more, hashed by the paths' bytes eight at a time.
  public struct Lookup: Sendable {
    private let files: StampedFiles
    private let slots: [Int32]
    private let mask: Int

    fileprivate init(_ files: StampedFiles) {
      self.files = files
      var size = 16
      while size < 2 * files.count { size <<= 1 }
      mask = size - 1
      var slots = [Int32](repeating: -1, count: size)
      for i in files.indices {
        var at = files.withPathBytes(i) { Self.hash($0) } & (size - 1)
        while slots[at] >= 0 { at = (at + 1) & (size - 1) }
        slots[at] = Int32(i)
      }
      self.slots = slots
    }

    /// The index of the file whose path is `path` (UTF-8), or nil.
    public func find(_ path: UnsafeRawBufferPointer) -> Int? {
      var at = Self.hash(path) & mask
      while slots[at] >= 0 {
        let i = Int(slots[at])
        let same = files.withPathBytes(i) { p in
          guard p.count == path.count else { return false }
          guard let a = p.baseAddress, let b = path.baseAddress else { return true }  // both empty
          return memcmp(a, b, p.count) == 0
        }
        if same { return i }
        at = (at + 1) & mask
      }
      return nil
    }

    /// A hash of `bytes` for the table (not for anything an attacker chooses: a library's own
    /// paths), multiplied and folded a word at a time.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
      var h: UInt64 = 0x243F_6A88_85A3_08D3 ^ UInt64(bytes.count)
      var i = 0
      while i + 8 <= bytes.count {
        h =
          (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
          &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        i += 8
      }
      var tail: UInt64 = 0
      var shift: UInt64 = 0
      while i < bytes.count {
        tail |= UInt64(bytes[i]) << shift
        shift += 8
        i += 1
      }
      h = (h ^ tail) &* 0x9E37_79B9_7F4A_7C15
      h ^= h >> 32
      return Int(truncatingIfNeeded: h)
    }
  }
}

/// A scan's walk (`QueueLoader.walkStamped`) begun on a thread of its own, so that it goes on
/// while the index is opened and checked: `PRAGMA quick_check` reads every page, 70–100 ms of
/// a 50,000-track index, which a rescan spent before it began to walk. `files` waits for it.
public final class WalkAhead: Sendable {
  /// The folder walked.
  public let directory: String
  private let thread: JoinableThread?
  /// The files found, once the thread is joined.
  private let found = Locked<(joined: Bool, files: StampedFiles?)>((false, nil))

  public init(_ directory: String) {
    self.directory = directory
    let found = found
    // No thread to be had: `files` walks on the caller's.
    thread = try? JoinableThread(named: "hark-walk") {
      let files = QueueLoader.walkStamped(directory)
      found.withLock { $0.files = files }
    }
  }

  /// What the walk found: waits for it to end (walks here when no thread could be started).
  /// Once.
  public func files() -> StampedFiles {
    join()
    return found.withLock { $0.files.take() } ?? QueueLoader.walkStamped(directory)
  }

  private func join() {
    let first = found.withLock { f in
      defer { f.joined = true }
      return !f.joined
    }
    if first { thread?.join() }
  }

  /// A walk not waited for (the index could not be opened) ends before its owner.
  deinit { join() }
}
