import PlayerEngine
import Synchronization

/// The rows of a list (the queue, a folder) that a filter typed over it lets through, kept
/// between calls: a frame asks for them several times (the selection's bounds, the rows drawn,
/// the count), and a keystroke must not fold 50,000 queue entries' tags each time. The rows'
/// folded text (`FoldedRows`) is made once for a list and its tags, and searched at each
/// keystroke with a byte scan. When the list changes it is made again; when only tags change,
/// only the rows of the paths whose tags changed are folded again (`TagsVersion.changed`).
///
/// A cache: what it answers is what folding every row would, whatever it kept. Shared by the
/// copies of an `InterfaceState`, it tells their lists apart by comparing them, and their tags
/// by their version (`TagTable`).
final class RowFilter<Row: Equatable & Sendable>: Sendable {
  private struct Kept: Sendable {
    var rows: [Row]
    var tagsVersion: Int
    var text: FoldedRows
    var query: String
    var found: [Row]
    /// Where each of `found` is in `rows`.
    var places: [Int32]
    /// The rows' path hashes, once tags have changed under them.
    var hashes: PathHashes?
  }
  private let kept = Mutex<Kept?>(nil)

  /// The rows of `rows` with a field holding `query` (folded; not empty), in order. `fields`
  /// adds a row's fields, folded (none: a row no filter finds, such as ".."); it reads the tags
  /// of version `tagsVersion`. `path` is the path whose tags a row's fields read.
  func rows(
    _ rows: [Row], matching query: String, tagsVersion: Int, path: (Row) -> String,
    fields: (Row, inout FoldedRows) -> Void
  ) -> (found: [Row], places: [Int32]) {
    kept.withLock { kept in
      if let k = kept, k.query == query, k.tagsVersion == tagsVersion, k.rows == rows {
        return (k.found, k.places)
      }
      var text: FoldedRows
      var hashes: PathHashes?
      if let k = kept, k.rows == rows, k.tagsVersion == tagsVersion {
        text = k.text
        hashes = k.hashes
      } else if let k = kept, k.rows == rows,
        let changed = TagsVersion.changed(from: k.tagsVersion, to: tagsVersion)
      {
        // The same rows, some of their tags changed: those rows folded again, the others'
        // bytes copied.
        let known = k.hashes ?? PathHashes(rows, path: path)
        hashes = known
        let again = known.places(of: changed, in: rows, path: path)
        text = FoldedRows(reservingRows: rows.count, bytes: k.text.byteCount + 64 * again.count)
        var from = 0
        for i in again {
          text.appendRows(from..<i, of: k.text)
          fields(rows[i], &text)
          text.endRow()
          from = i + 1
        }
        text.appendRows(from..<rows.count, of: k.text)
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
        places: places, hashes: hashes)
      return (found, places)
    }
  }
}

/// The queue's length in all, as far as its tags are known, kept for the queue and tags it
/// was added up for: the queue's tab shows it in every frame, and a 50,000-entry queue took
/// 40 ms a frame to add up. When only tags change, only the lengths of the entries whose tags
/// changed are looked up again. A cache, as `RowFilter` is.
final class QueueLength: Sendable {
  private struct Kept: Sendable {
    var queue: [QueuedTrack]
    var tagsVersion: Int
    /// Each entry's length; NaN where it is not known.
    var lengths: [Double]
    var hashes: PathHashes?
  }
  private let kept = Mutex<Kept?>(nil)

  /// The seconds of `queue`'s entries whose length `tags` know; nil when none is known.
  func seconds(of queue: [QueuedTrack], tags: TagTable) -> Double? {
    kept.withLock { kept in
      func length(_ entry: QueuedTrack) -> Double {
        tags[entry.path]?.duration ?? .nan
      }
      if var k = kept, k.queue == queue {
        if k.tagsVersion != tags.version {
          if let changed = TagsVersion.changed(from: k.tagsVersion, to: tags.version) {
            let hashes = k.hashes ?? PathHashes(queue, path: \.path)
            for i in hashes.places(of: changed, in: queue, path: \.path) {
              k.lengths[i] = length(queue[i])
            }
            k.hashes = hashes
          } else {
            k.lengths = queue.map(length)
          }
          k.tagsVersion = tags.version
          kept = k
        }
        return Self.sum(k.lengths)
      }
      let k = Kept(queue: queue, tagsVersion: tags.version, lengths: queue.map(length))
      kept = k
      return Self.sum(k.lengths)
    }
  }

  /// The known lengths added up, in order; nil when none is known.
  private static func sum(_ lengths: [Double]) -> Double? {
    var sum = 0.0
    var any = false
    for d in lengths where !d.isNaN {
      sum += d
      any = true
    }
    return any ? sum : nil
  }
}
