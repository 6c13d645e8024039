import Platform

/// Rows of folded search text (`SearchText`) in one byte buffer, searched by a byte scan
/// (glibc's memmem) rather than a `String` comparison per row: the library's search table
/// (every track of the index) and the interface's filter over a queue or a folder, both up to
/// 50,000 rows searched at each keystroke.
///
/// A row is one or more fields, each followed by a 0 byte: a query (folded text holds no 0
/// byte) is found inside one field, never across two fields or two rows.
public struct FoldedRows: Sendable {
  private var bytes: [UInt8] = []
  /// Where each row starts in `bytes`, and one more: where the next row would start.
  private var starts: [UInt32] = [0]

  /// Room reserved for `rows` rows of `bytes` bytes in all (their 0 bytes included).
  public init(reservingRows rows: Int = 0, bytes count: Int = 0) {
    bytes.reserveCapacity(count)
    starts.reserveCapacity(rows + 1)
  }

  /// How many rows it holds.
  public var count: Int { starts.count - 1 }

  /// The bytes it holds, with what its arrays reserved: what it costs in memory.
  public var bytesUsed: Int { bytes.capacity + 4 * starts.capacity }

  /// Adds a field to the row being built: `text`, folded.
  public mutating func append(folding text: some StringProtocol) {
    SearchText.fold(text, into: &bytes)
    bytes.append(0)
  }

  /// Adds a field to the row being built: `text`, folded already.
  public mutating func append(folded text: UnsafeRawBufferPointer) {
    bytes.append(contentsOf: text)
    bytes.append(0)
  }

  /// Adds rows `rows` of `other`, their fields as they are there, as whole rows (none may be
  /// being built).
  public mutating func appendRows(_ rows: Range<Int>, of other: FoldedRows) {
    guard !rows.isEmpty else { return }
    let start = Int(other.starts[rows.lowerBound])
    let end = Int(other.starts[rows.upperBound])
    let shift = Int64(bytes.count) - Int64(start)
    other.bytes.withUnsafeBufferPointer { bytes.append(contentsOf: $0[start..<end]) }
    other.starts.withUnsafeBufferPointer { theirs in
      for row in rows { starts.append(UInt32(Int64(theirs[row + 1]) + shift)) }
    }
  }

  /// The bytes its rows take (their 0 bytes included).
  public var byteCount: Int { bytes.count }

  /// Ends the row being built (a row with no field matches nothing).
  public mutating func endRow() {
    starts.append(UInt32(bytes.count))
  }

  /// The words a query is searched by: folded, split at spaces.
  public static func words(_ query: String) -> [[UInt8]] {
    var folded: [UInt8] = []
    SearchText.fold(query, into: &folded)
    return folded.split(separator: UInt8(ascii: " ")).map { Array($0) }
  }

  /// The query folded, whole (spaces kept): what a filter looks for.
  public static func phrase(_ query: String) -> [UInt8] {
    var folded: [UInt8] = []
    SearchText.fold(query, into: &folded)
    return folded
  }

  /// Every row with a field holding `word`, in order: the whole buffer is scanned, and from
  /// each match on, the next row. An empty word is in every row that has a field; a word with
  /// a 0 byte in none.
  public func rows(containing word: [UInt8]) -> [Int32] {
    if word.isEmpty || word.contains(0) {
      return rows(Array(0..<Int32(count)), containingAll: [word])
    }
    var found: [Int32] = []
    bytes.withUnsafeBytes { text in
      word.withUnsafeBytes { w in
        starts.withUnsafeBufferPointer { starts in
          var from = 0
          var row = 0
          let last = starts.count - 2
          while from < text.count,
            let at = firstOffset(of: w, in: UnsafeRawBufferPointer(rebasing: text[from...]))
          {
            // The row it is in: the last whose start is at or before it (from `row` on).
            let offset = from + at
            var low = row
            var high = last
            while low < high {
              let middle = (low + high + 1) / 2
              if Int(starts[middle]) <= offset { low = middle } else { high = middle - 1 }
            }
            found.append(Int32(low))
            row = low + 1
            from = Int(starts[row])
          }
        }
      }
    }
    return found
  }

  /// The rows of `rows` with every one of `words` in one of their fields.
  public func rows(_ rows: [Int32], containingAll words: [[UInt8]]) -> [Int32] {
    if words.contains(where: { $0.contains(0) }) { return [] }
    var kept: [Int32] = []
    bytes.withUnsafeBytes { text in
      starts.withUnsafeBufferPointer { starts in
        for row in rows {
          let start = Int(starts[Int(row)])
          let end = Int(starts[Int(row) + 1])
          guard start < end else { continue }
          let own = UnsafeRawBufferPointer(rebasing: text[start..<end])
          var holdsAll = true
          for word in words {
            let found = word.withUnsafeBytes { firstOffset(of: $0, in: own) != nil }
            if !found {
              holdsAll = false
              break
            }
          }
          if holdsAll { kept.append(row) }
        }
      }
    }
    return kept
  }
}
