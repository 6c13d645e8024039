import AudioCore
import Platform
import PlayerCore
import Synchronization
import UserText

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
    /// The query `found` is for; nil when the text was folded ahead (`prepare`).
    var query: String?
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
      let (text, hashes) = Self.fold(
        rows, tagsVersion: tagsVersion, from: kept, path: path, fields: fields)
      let phrase = FoldedRows.phrase(query)
      let places: [Int32]
      if let k = kept, k.rows == rows, k.tagsVersion == tagsVersion, let before = k.query,
        Self.bytes(phrase, contain: FoldedRows.phrase(before))
      {
        // One more letter typed ("lov" after "lo"): only the rows the shorter one found can
        // hold it.
        places = text.rows(k.places, containingAll: [phrase])
      } else {
        places = text.rows(containing: phrase)
      }
      let found = places.map { rows[Int($0)] }
      kept = Kept(
        rows: rows, tagsVersion: tagsVersion, text: text, query: query, found: found,
        places: places, hashes: hashes)
      return (found, places)
    }
  }

  /// Whether `text` holds `part`.
  private static func bytes(_ text: [UInt8], contain part: [UInt8]) -> Bool {
    text.withUnsafeBytes { t in part.withUnsafeBytes { firstOffset(of: $0, in: t) != nil } }
  }

  /// Folds `rows`' fields (of tags version `tagsVersion`) ahead of a filter typed over them,
  /// so that its first key only searches: a queue of 50,000 entries took 80–330 ms to fold at
  /// that key. Any thread: the folding is done outside the lock (a key typed meanwhile folds
  /// for itself rather than wait), from what is kept, and what it made is kept only if nothing
  /// was kept meanwhile; nothing is done for tags older than those kept.
  func prepare(
    _ rows: [Row], tagsVersion: Int, path: (Row) -> String,
    fields: (Row, inout FoldedRows) -> Void
  ) {
    let before = kept.withLock { $0 }
    if let k = before, k.rows == rows, k.tagsVersion == tagsVersion { return }
    // Newer tags were folded meanwhile (a version is never taken twice, and each is above every
    // earlier one): what is asked is already out of date.
    if let k = before, k.tagsVersion > tagsVersion { return }
    let (text, hashes) = Self.fold(
      rows, tagsVersion: tagsVersion, from: before, path: path, fields: fields)
    kept.withLock { kept in
      guard kept?.tagsVersion == before?.tagsVersion, kept?.query == before?.query,
        kept?.rows.count == before?.rows.count, kept.map({ $0.rows == before?.rows }) ?? true
      else { return }
      kept = Kept(
        rows: rows, tagsVersion: tagsVersion, text: text, query: nil, found: [], places: [],
        hashes: hashes)
    }
  }

  /// The folded text of `rows` for tags of version `tagsVersion`: what `kept` holds when it is
  /// of those rows and tags; its bytes, with only the rows whose tags changed folded again,
  /// when only tags changed; else every row folded.
  private static func fold(
    _ rows: [Row], tagsVersion: Int, from kept: Kept?, path: (Row) -> String,
    fields: (Row, inout FoldedRows) -> Void
  ) -> (FoldedRows, PathHashes?) {
    if let k = kept, k.rows == rows, k.tagsVersion == tagsVersion {
      return (k.text, k.hashes)
    }
    if let k = kept, k.rows == rows,
      let changed = TagsVersion.changed(from: k.tagsVersion, to: tagsVersion)
    {
      // The same rows, some of their tags changed: those rows folded again, the others'
      // bytes copied.
      let known = k.hashes ?? PathHashes(rows, path: path)
      let again = known.places(of: changed, in: rows, path: path)
      var text = FoldedRows(
        reservingRows: rows.count, bytes: k.text.byteCount + 96 * again.count)
      var from = 0
      for i in again {
        text.appendRows(from..<i, of: k.text)
        fields(rows[i], &text)
        text.endRow()
        from = i + 1
      }
      text.appendRows(from..<rows.count, of: k.text)
      return (text, known)
    }
    // About what a row's name, title, artist and album take folded, so that a queue's text is
    // not grown (and copied) twice over as it is made.
    var text = FoldedRows(reservingRows: rows.count, bytes: 96 * rows.count)
    for row in rows {
      fields(row, &text)
      text.endRow()
    }
    return (text, nil)
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
