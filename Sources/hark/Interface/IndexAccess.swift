import LibraryIndex
import MediaFiles
import Platform
import PlayerEngine
import Synchronization
import TerminalUI

/// The interface's way into the tag index of `root` (the folder its library opened on): views
/// and search read through one connection, on the UI thread; the scan writes through its own,
/// on a thread of its own (SQLite's WAL lets them go on together), and so does the loudness
/// measurement after it (`measureLoudness`). Nil without a home folder.
func indexAccess(root: String, measureLoudness: Bool = true) -> IndexAccess? {
  guard let path = Library.defaultPath() else { return nil }
  let reader = IndexReader(path: path, root: root)
  var access = IndexAccess(
    browse: { reader.browse($0) },
    search: { reader.search($0) },
    keepCurrent: { progress, updated in
      let measurer =
        measureLoudness ? LoudnessMeasurer(root: root, path: path, progress: progress) : nil
      keepCurrent(
        root: root, path: path, progress: progress,
        updated: updated, indexed: { reader.rebuildSearchTable(from: $0) },
        scanned: { measurer?.wake() })
    })
  access.tags = { reader.tags($0) }
  // For the interface's worker (`a` and `e` on an artist or an album): a connection of its own,
  // as `indexTagReader`'s, opened when first asked.
  let worker = IndexReader(path: path, root: root)
  access.tracks = { worker.tracks(of: $0) }
  access.holdsTracks = { reader.holdsTracks() }
  access.prepareSearch = { reader.startBuildingSearchTable() }
  access.places = { reader.places() }
  return access
}

/// The index's tags for the interface's worker thread (a queue's 50,000 labels), through a
/// connection of its own: sharing the UI thread's, the worker (which runs at a lower priority)
/// held its lock when it was preempted, and the UI thread's reads for the rows it drew waited.
/// The reads are made in read transactions of up to `IndexReader.readsATransaction` each,
/// ended by `done` when the worker has read what it was asked for: a transaction a read took
/// SQLite's file locks (fcntl) twice a track, a tenth of the worker's time.
func indexTagReader(root: String)
  -> (read: @Sendable (String) -> TrackInfo?, done: @Sendable () -> Void)?
{
  guard let path = Library.defaultPath() else { return nil }
  let reader = IndexReader(path: path, root: root)
  return ({ reader.tags($0, batched: true) }, { reader.endReads() })
}

/// Scans `root` into the index at `path`, then rescans each folder below it that inotify says
/// changed (once it is quiet for a second), for as long as the process runs. `indexed` is
/// given the index (this thread's connection) after each scan that changed it, before
/// `updated`, which is given the paths that scan read again or removed (none after the first
/// scan when it changed nothing).
private func keepCurrent(
  root: String, path: String, progress: @escaping @Sendable (String, Bool) -> Void,
  updated: @escaping @Sendable ([String]) -> Void, indexed: (Library) -> Void,
  scanned: () -> Void
) {
  // Watched before the first scan's walk, so that nothing written meanwhile is missed; walked
  // while the index is opened and checked.
  let watcher = LibraryWatcher(root: root)
  var first: WalkAhead? = Library.walkAhead(root)
  let library: Library
  do { library = try Library(path: path) } catch {
    progress("Cannot open the library index: \(error)", true)
    return
  }
  if let aside = library.setAside { progress(aside.capitalisedFirst, true) }
  func scan(_ folder: String, sayingDone: Bool) {
    do {
      let walked = first
      first = nil
      let report = try library.scan(folder, walked: walked) { p in
        guard p.toRead > 0, p.read < p.toRead else { return }
        progress("Indexing the library: " + p.summary, false)
      }
      // News only when the index changed: an unchanged library at start is not worth a line.
      if sayingDone, report.read > 0 || report.removed > 0 {
        progress(
          "Library indexed: \(report.found) track\(report.found == 1 ? "" : "s") "
            + "(\(report.read) read, \(report.removed) gone)",
          false)
      }
      let changed = report.read > 0 || report.removed > 0
      if changed { indexed(library) }
      if sayingDone || changed { updated(changed ? library.lastChanged : []) }
      if sayingDone || changed { scanned() }
    } catch {
      progress("Cannot index the library: \(error)", true)
    }
  }
  scan(root, sayingDone: true)
  guard let watcher else { return }
  if let problem = watcher.problem { progress(problem.capitalisedFirst, true) }
  while true {
    let changed = watcher.nextChanges()
    if changed.isEmpty { return }
    // A folder and one below it: the outer scan covers both.
    for folder in changed
    where !changed.contains(where: { $0 != folder && folder.hasPrefix($0 + "/") }) {
      scan(folder, sayingDone: false)
    }
  }
}

/// Measures the loudness of the tracks under the music folder that need it, on a thread of its
/// own at the lowest priority (the interface, the player and the scan come first: nice 19,
/// inherited by FFmpeg's helper when it decodes), after each scan that changed the
/// index: the first time, every untagged track; later, only those new or changed. Its
/// progress goes to the status line once a second (tracks, speed, time left), and a line at the
/// end of a pass that showed progress. A pass that a scan wakes while it runs is run again after it,
/// for what that scan changed.
private final class LoudnessMeasurer: @unchecked Sendable {
  private let wakeUp = Platform.Semaphore()

  init(root: String, path: String, progress: @escaping @Sendable (String, Bool) -> Void) {
    startThread(named: "hark-loudness") { [wakeUp] in
      // Started from the scan's thread (10 below the interface): 19, the lowest.
      lowerThreadPriority()
      var library: Library?
      while true {
        wakeUp.wait()
        // Every wake-up that came meanwhile is this pass's.
        while wakeUp.wait(microseconds: 0) {}
        if library == nil { library = try? Library(path: path, checked: false) }
        guard let library else { continue }
        // The first progress line after a second: a pass that short (a file or two changed)
        // says nothing, and leaves the scan's own line up.
        var lastSaid = monotonicNanoseconds()
        var said = false
        do {
          // One a processor: at nice 19, they take only what the rest leaves.
          let report = try library.measureLoudness(
            under: root, parallel: processorCount(), measure: { Decoders.measureLoudness($0) },
            progress: { p in
              let now = monotonicNanoseconds()
              guard now - lastSaid >= 1_000_000_000, p.measured < p.toMeasure else { return }
              lastSaid = now
              said = true
              progress("Measuring loudness: " + p.summary, false)
            })
          if said, report.measured + report.failed > 0 {
            var line =
              "Loudness measured: \(report.measured) track\(report.measured == 1 ? "" : "s")"
            if report.failed > 0 { line += " (\(report.failed) could not be)" }
            progress(line, false)
          }
        } catch {
          progress("Cannot measure the library's loudness: \(error)", true)
        }
      }
    }
  }

  /// After a scan: measure what it left to measure.
  func wake() { wakeUp.signal() }
}

/// The index, read from the UI thread; opened on first use. (The lock keeps it to one thread
/// at a time: the connection is SQLite's, opened without its own mutex.) Search goes through
/// the index's search table in memory once one is built (`rebuildSearchTable`, on the index's
/// own thread), through SQL until then.
private final class IndexReader: @unchecked Sendable {
  private let lock = Locked(())
  private var library: Library?
  private let path: String
  private let root: String
  /// The search table, and the last search's matches in it (which the next keystroke's
  /// search refines).
  private let searching = Locked<(table: SearchTable?, last: SearchMatches?)>((nil, nil))

  init(path: String, root: String) {
    self.path = path
    self.root = root
  }

  /// Whether the search table has been asked for.
  private let searchTableStarted = Atomic<Bool>(false)

  private func withLibrary<T>(_ body: (Library) throws(SQLiteError) -> T) -> T? {
    lock.withLock { _ -> T? in
      if library == nil { library = try? Library(path: path, checked: false) }
      guard let open = library else { return nil }
      do { return try body(open) } catch {
        // Damaged, say: the scan sets it aside and builds another, which the next read opens.
        library = nil
        readsInTransaction = 0
        return nil
      }
    }
  }

  /// Builds the first search table, from what earlier runs indexed, on a thread of its own once
  /// the interface has drawn its first view (started as the index opened, the build competed
  /// with that view and made it come 30–50 ms later at 50,000 tracks on two cores). At the
  /// interface's priority (the scan's thread and the tags' worker run below it), so that it is
  /// there for the first keystrokes: 0.15 s at 50,000 tracks; searches meanwhile go to SQL. A
  /// table the scan built meanwhile, newer, is kept. Once.
  func startBuildingSearchTable() {
    guard !searchTableStarted.exchange(true, ordering: .acquiringAndReleasing) else { return }
    let path = path
    let root = root
    startThread(named: "hark-search") { [self] in
      guard let table = try? Library.searchTable(ofIndexAt: path, under: root), table.count > 0
      else { return }
      searching.withLock { state in
        if state.table == nil { state.table = table }
      }
    }
  }

  func browse(_ view: IndexView) -> IndexListing? {
    withLibrary { library throws(SQLiteError) -> IndexListing in
      switch view {
      case .artists:
        return IndexListing(
          rows: try library.artists(under: root).map {
            LibraryEntry(
              kind: .folder, name: $0.name ?? IndexView.unknownArtist,
              path: IndexView.artist($0.name).path)
          })
      case .genres:
        return IndexListing(
          rows: try library.genres(under: root).map {
            LibraryEntry(
              kind: .folder, name: $0.name ?? IndexView.unknownGenre,
              path: IndexView.genre($0.name).path)
          })
      case .albums:
        return albumRows(try library.albums(under: root), withArtist: true)
      case .artist(let artist):
        // Theirs, then those they appear on, whose artist is said ("Comp — Various Artists").
        return albumRows(
          try library.albums(under: root, artist: .some(artist)), withArtist: false,
          besides: artist)
      case .genre(let genre):
        return albumRows(try library.albums(under: root, genre: .some(genre)), withArtist: true)
      case .album(let artist, let title):
        return trackRows(try library.tracks(under: root, artist: artist, album: title))
      case .playlists:
        // Files, not the index's: the interface lists them itself (`Playlists`), walking the
        // music folder off its thread.
        return IndexListing(rows: [])
      case .mostPlayed:
        // The play count in the number column.
        let played = try library.mostPlayed(under: root, limit: Self.playedLimit)
        var listing = trackRows(played.map(\.track))
        for (i, p) in played.enumerated() { listing.rows[i].count = p.count }
        return listing
      case .recentlyPlayed:
        return trackRows(
          try library.recentlyPlayed(under: root, limit: Self.playedLimit).map(\.track))
      }
    }
  }

  /// The tracks of what a view lists, in its order (what `a` and `e` on its row add); nil when
  /// the index cannot be read. A playlist file's are its own (the caller reads it).
  func tracks(of view: IndexView) -> [String]? {
    withLibrary { library throws(SQLiteError) -> [IndexedTrack] in
      switch view {
      case .artists, .genres: return try library.tracks(under: root)
      case .albums: return try library.tracks(under: root, artist: nil, genre: nil)
      case .artist(let artist): return try library.tracks(under: root, artist: .some(artist))
      case .genre(let genre): return try library.tracks(under: root, genre: .some(genre))
      case .album(let artist, let title):
        return try library.tracks(under: root, artist: artist, album: title)
      case .playlists: return []
      case .mostPlayed:
        return try library.mostPlayed(under: root, limit: Self.playedLimit).map(\.track)
      case .recentlyPlayed:
        return try library.recentlyPlayed(under: root, limit: Self.playedLimit).map(\.track)
      }
    }.map { $0.map(\.path) }
  }

  /// How many tracks the played views list.
  static let playedLimit = 200

  /// Where long recordings were left, by path.
  func places() -> [String: PlaceMark]? {
    withLibrary { library throws(SQLiteError) -> [String: PlaceMark] in
      var marks: [String: PlaceMark] = [:]
      for p in try library.places() { marks[p.path] = p.isPlayed ? .played : .inProgress }
      return marks
    }
  }

  func holdsTracks() -> Bool? {
    withLibrary { library throws(SQLiteError) -> Bool in try library.holdsTracks(under: root) }
  }

  /// Reads made in the read transaction open (`tags(_:batched:)`).
  private var readsInTransaction = 0
  /// How many reads one read transaction holds at most: it keeps the index as it was when it
  /// began, so not for long.
  static let readsATransaction = 500

  /// Ends the read transaction `tags(_:batched:)` left open, if any.
  func endReads() {
    _ = withLibrary { library throws(SQLiteError) in
      if readsInTransaction > 0 { try library.endRead() }
      readsInTransaction = 0
    }
  }

  /// `batched`: made in a read transaction left open for the next reads (`endReads`).
  func tags(_ path: String, batched: Bool = false) -> TrackInfo? {
    withLibrary { library throws(SQLiteError) -> TrackInfo? in
      if batched {
        if readsInTransaction == Self.readsATransaction {
          try library.endRead()
          readsInTransaction = 0
        }
        if readsInTransaction == 0 { try library.beginRead() }
        readsInTransaction += 1
      }
      guard let t = try library.listed(at: path) else { return nil }
      return TrackInfo(
        title: t.title ?? QueueLoader.title(fromPath: path), artist: t.artist, album: t.album,
        duration: t.seconds, track: t.trackNumber, year: t.year)
    } ?? nil
  }

  private func info(_ t: IndexedTrack) -> TrackInfo {
    TrackInfo(
      title: t.title ?? QueueLoader.title(fromPath: t.path), artist: t.artist, album: t.album,
      duration: t.seconds, track: t.trackNumber, year: t.year)
  }

  /// UI thread: the tracks matching `query`, at most `Library.searchLimit`, and how many were
  /// found when there are more. From the search table, their paths and titles only: the tags
  /// of the rows shown are read as they are drawn (`tags`), not those of every match at every
  /// keystroke.
  func search(_ query: String) -> IndexListing? {
    let found = searching.withLock { state -> (SearchTable, SearchMatches)? in
      guard let table = state.table else { return nil }
      let matches = table.matches(query, refining: state.last)
      state.last = matches
      return (table, matches)
    }
    let limit = Library.searchLimit
    guard let (table, matches) = found else {
      // (One more than shown, to know whether there are more.)
      return withLibrary { library throws(SQLiteError) -> IndexListing in
        let tracks = try library.search(query, limit: limit + 1)
        var listing = trackRows(tracks.prefix(limit).filter { $0.path.hasPrefix(rootSlash) })
        if tracks.count > limit { listing.cut = .more }
        return listing
      }
    }
    return IndexListing(
      rows: matches.rows.prefix(limit).map {
        LibraryEntry(kind: .file, name: table.title($0), path: table.path($0))
      }, cut: matches.rows.count > limit ? .of(matches.rows.count) : nil)
  }

  /// The index's thread, after a scan changed the index: builds the search table from
  /// `library` (that thread's connection) and puts it in place of the last. When the index has
  /// no tracks under the music folder yet, search stays with SQL.
  func rebuildSearchTable(from library: Library) {
    var table = (try? library.searchTable(under: root)).flatMap { $0.count > 0 ? $0 : nil }
    searching.withLock { state in
      swap(&state.table, &table)
      state.last = nil
    }
    // `table` is the old one now, freed here: outside the lock the UI thread's search takes.
  }

  private var rootSlash: String { root.hasSuffix("/") ? root : root + "/" }

  /// "1999  Ágætis byrjun", and "— Sigur Rós" where the list has many artists, or for an album
  /// of another artist's than the one whose albums these are (`besides`).
  private func albumRows(
    _ albums: [Library.Album], withArtist: Bool, besides artist: String?? = nil
  ) -> IndexListing {
    IndexListing(
      rows: albums.map { a in
        var name = (a.year.map { "\($0)  " } ?? "") + (a.title ?? IndexView.unknownAlbum)
        if withArtist || (artist != nil && a.artist != artist) {
          name += " — " + (a.artist ?? IndexView.unknownArtist)
        }
        return LibraryEntry(
          kind: .folder, name: name, path: IndexView.album(artist: a.artist, title: a.title).path)
      })
  }

  private func trackRows(_ tracks: some Sequence<IndexedTrack>) -> IndexListing {
    var tags: [String: TrackInfo] = [:]
    let rows = tracks.map { t -> LibraryEntry in
      let info = info(t)
      tags[t.path] = info
      // The track number has a column of its own.
      return LibraryEntry(kind: .file, name: info.title ?? t.path, path: t.path)
    }
    return IndexListing(rows: rows, tags: tags)
  }
}
