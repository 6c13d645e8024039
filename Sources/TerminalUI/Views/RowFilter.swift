import PlayerEngine
import Synchronization

/// The rows of a list (the queue, a folder) that a filter typed over it lets through, kept
/// between calls: a frame asks for them several times (the selection's bounds, the rows drawn,
/// the count), and a keystroke must not fold 50,000 queue entries' tags each time. The rows'
/// folded text (`FoldedRows`) is made once for a list and its tags, and searched at each
/// keystroke with a byte scan; it is made again when the list or the tags change.
///
/// A cache: what it answers is what folding every row would, whatever it kept. Shared by the
/// copies of an `InterfaceState`, it tells their lists apart by comparing them, and their tags
/// by a version no two changes share (`TagsVersion`).
final class RowFilter<Row: Equatable & Sendable>: Sendable {
  private struct Kept: Sendable {
    var rows: [Row]
    var tagsVersion: Int
    var text: FoldedRows
    var query: String
    var found: [Row]
    /// Where each of `found` is in `rows`.
    var places: [Int32]
  }
  private let kept = Mutex<Kept?>(nil)

  /// The rows of `rows` with a field holding `query` (folded; not empty), in order. `fields`
  /// adds a row's fields, folded (none: a row no filter finds, such as ".."); it reads the tags
  /// of version `tagsVersion`.
  func rows(
    _ rows: [Row], matching query: String, tagsVersion: Int,
    fields: (Row, inout FoldedRows) -> Void
  ) -> (found: [Row], places: [Int32]) {
    kept.withLock { kept in
      if let k = kept, k.query == query, k.tagsVersion == tagsVersion, k.rows == rows {
        return (k.found, k.places)
      }
      var text: FoldedRows
      if let k = kept, k.tagsVersion == tagsVersion, k.rows == rows {
        text = k.text
      } else {
        text = FoldedRows(reservingRows: rows.count, bytes: 64 * rows.count)
        for row in rows {
          fields(row, &text)
          text.endRow()
        }
      }
      let places = text.rows(containing: FoldedRows.phrase(query))
      let found = places.map { rows[Int($0)] }
      kept = Kept(
        rows: rows, tagsVersion: tagsVersion, text: text, query: query, found: found,
        places: places)
      return (found, places)
    }
  }
}

/// The queue's length in all, as far as its tags are known, kept for the queue and tags it
/// was added up for: the queue's tab shows it in every frame, and a 50,000-entry queue took
/// 40 ms a frame to add up. A cache, as `RowFilter` is.
final class QueueLength: Sendable {
  private struct Kept: Sendable {
    var queue: [QueuedTrack]
    var tagsVersion: Int
    var seconds: Double?
  }
  private let kept = Mutex<Kept?>(nil)

  /// The seconds of `queue`'s entries whose length `tags` (of version `tagsVersion`) know;
  /// nil when none is known.
  func seconds(of queue: [QueuedTrack], tags: [String: TrackInfo], tagsVersion: Int) -> Double? {
    kept.withLock { kept in
      if let k = kept, k.tagsVersion == tagsVersion, k.queue == queue { return k.seconds }
      var sum = 0.0
      var any = false
      for entry in queue {
        guard let d = tags[entry.path]?.duration else { continue }
        sum += d
        any = true
      }
      let seconds = any ? sum : nil
      kept = Kept(queue: queue, tagsVersion: tagsVersion, seconds: seconds)
      return seconds
    }
  }
}

/// Versions of an `InterfaceState`'s tags: each change takes a new one, never used before by
/// any copy of the state, so that a `RowFilter` tells tags apart without comparing them.
enum TagsVersion {
  private static let last = Atomic<Int>(0)
  static func next() -> Int { last.add(1, ordering: .relaxed).newValue }
}
