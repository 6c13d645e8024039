import MediaFiles
import Platform
import Synchronization
import UserText

/// Library-wide search in memory, for an interface that searches at each keystroke: every
/// track's folded search text (the index's `folded` column: title, artist, album artist, album,
/// genre, file name and year, lowercased, diacritics removed) in one byte buffer, with its path
/// and the title a list shows, in the order `Library.search` gives. A search is a byte scan of
/// the buffer (glibc's memmem), about 1 ms for 50,000 tracks where the index's query takes 10
/// to 15; a longer query (one more letter) scans only what the shorter one matched.
///
/// A snapshot: built from the index by `Library.searchTable(under:)` (off the interface's
/// thread: about 0.1 s for 50,000 tracks), it does not see later changes; build another.
/// Immutable, so any thread may search it.
public struct SearchTable: Sendable {
  /// Each row's folded text, one field a row (so that a word lies inside one row).
  private let folded: FoldedRows
  /// Each row's path (without `folder`) and then its title, in UTF-8, one after another.
  private let names: [UInt8]
  /// Where row i's path (at 2i) and title (at 2i + 1) start in `names`; one more at the end.
  private let nameStarts: [UInt32]
  /// The folder the table was built for, with its slash: the start of every path.
  private let folder: String
  /// Tells tables apart: matches found in one are refined only in that one.
  private let id: Int

  private static let lastID = Atomic<Int>(0)

  /// How many tracks it holds.
  public var count: Int { folded.count }

  /// The words a query is searched by: folded as the index folds, split at spaces.
  static func words(_ query: String) -> [[UInt8]] { FoldedRows.words(query) }

  /// The rows (in the table's order, the order `Library.search` gives) whose folded text holds
  /// every word of `query`, as `Library.search` would find them, all of them (no limit).
  /// `previous`, this table's matches for an earlier query, is searched instead of every row
  /// when it holds all that `query` can match: when each of its words is part of one of
  /// `query`'s ("lov" after "lo", "lo v" after "lo").
  public func matches(_ query: String, refining previous: SearchMatches? = nil) -> SearchMatches {
    let words = Self.words(query)
    if let previous, previous.table == id,
      previous.words.allSatisfy({ old in words.contains { Self.bytes($0, contain: old) } })
    {
      // The rows it matched hold its words already; only the others are looked for.
      let others = words.filter { !previous.words.contains($0) }
      let rows = others.isEmpty ? previous.rows : folded.rows(previous.rows, containingAll: others)
      return SearchMatches(rows: rows, words: words, table: id)
    }
    // The longest word first: the rarest, as a rule, and so the fewest rows left to filter.
    let sorted = words.sorted { $0.count > $1.count }
    guard let first = sorted.first else {
      return SearchMatches(rows: Array(0..<Int32(count)), words: words, table: id)
    }
    var rows = folded.rows(containing: first)
    if sorted.count > 1 { rows = folded.rows(rows, containingAll: Array(sorted.dropFirst())) }
    return SearchMatches(rows: rows, words: words, table: id)
  }

  /// Row `row`'s path.
  public func path(_ row: Int32) -> String {
    var path = folder
    path += text(names, from: nameStarts, at: 2 * Int(row))
    return path
  }

  /// Row `row`'s title as a list shows it: its title tag, else its file name made readable.
  public func title(_ row: Int32) -> String {
    text(names, from: nameStarts, at: 2 * Int(row) + 1)
  }

  /// The bytes the table holds, with what its arrays reserved: what it costs in memory.
  public var bytesUsed: Int {
    folded.bytesUsed + names.capacity + 4 * nameStarts.capacity
  }

  private func text(_ buffer: [UInt8], from starts: [UInt32], at i: Int) -> String {
    buffer.withUnsafeBufferPointer {
      String(decoding: $0[Int(starts[i])..<Int(starts[i + 1])], as: UTF8.self)
    }
  }

  /// Whether `text` holds `part` (both folded words).
  private static func bytes(_ text: [UInt8], contain part: [UInt8]) -> Bool {
    text.withUnsafeBytes { t in part.withUnsafeBytes { firstOffset(of: $0, in: t) != nil } }
  }

  // MARK: Building

  /// Fills a table row by row, its buffers reserved to the sizes the index gives beforehand.
  struct Builder {
    private var folded: FoldedRows
    private var names: [UInt8] = []
    private var nameStarts: [UInt32] = []
    private let folder: String
    private let folderBytes: Int

    init(folder: String, rows: Int, foldedBytes: Int, nameBytes: Int) {
      self.folder = folder
      folderBytes = folder.utf8.count
      folded = FoldedRows(reservingRows: rows, bytes: foldedBytes + rows)
      names.reserveCapacity(nameBytes)
      nameStarts.reserveCapacity(2 * rows + 1)
    }

    /// Adds a track: its folded text, its path (which starts with the folder) and its title
    /// tag (nil: the file name made readable, as `Library.search`'s callers show it).
    mutating func add(
      folded text: UnsafeRawBufferPointer, path: UnsafeRawBufferPointer,
      title: UnsafeRawBufferPointer?
    ) {
      folded.append(folded: text)
      folded.endRow()
      nameStarts.append(UInt32(names.count))
      names.append(
        contentsOf: UnsafeRawBufferPointer(rebasing: path[min(folderBytes, path.count)...]))
      nameStarts.append(UInt32(names.count))
      if let title {
        names.append(contentsOf: title)
      } else {
        let whole = String(decoding: path, as: UTF8.self)
        names.append(contentsOf: QueueLoader.title(fromPath: whole).utf8)
      }
    }

    /// The table, once every track is added.
    mutating func table() -> SearchTable {
      nameStarts.append(UInt32(names.count))
      return SearchTable(
        folded: folded, names: names, nameStarts: nameStarts,
        folder: folder, id: SearchTable.lastID.add(1, ordering: .relaxed).newValue)
    }
  }
}

/// The rows of a `SearchTable` that matched a query, in the table's order, with the query's
/// words: a query that can only match fewer (one more letter) is searched among them.
public struct SearchMatches: Sendable {
  public let rows: [Int32]
  let words: [[UInt8]]
  let table: Int
}
