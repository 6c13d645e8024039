import CSQLite
import Glibc
import MediaFiles
import Platform
import UserText

/// One track in the index.
public struct IndexedTrack: Equatable, Sendable {
  /// The file (or a cue sheet's track, "Live.cue#3").
  public var path: String
  public var title: String?
  public var artist: String?
  public var albumArtist: String?
  public var album: String?
  public var trackNumber: Int?
  public var disc: Int?
  public var year: Int?
  public var genre: String?
  public var seconds: Double?
  public var trackGain: Double?
  public var albumGain: Double?
  public var hasCover = false
  /// Why its tags could not be read; it is still listed (by its file name).
  public var problem: String?

  public init(path: String) { self.path = path }
}

/// How a scan went.
public struct ScanReport: Equatable, Sendable {
  /// Files found under the folder.
  public var found = 0
  /// Read afresh: new, or changed since the last scan (size or modification time).
  public var read = 0
  /// Gone from the folder since the last scan, and from the index.
  public var removed = 0
  /// Read, but their tags could not be: listed by file name.
  public var unreadable = 0
}

/// Where a scan is, for a progress line.
public struct ScanProgress: Sendable {
  public var done: Int
  public var total: Int
  /// Files read so far (the slow part): what the rate and the time left are counted on.
  public var read: Int
  public var toRead: Int
  public var elapsed: Double

  /// How the scan goes, for a progress line (the command's and the interface's): "1200 of
  /// 50000 files read, 850 a second, about 0:57 left"; the rate and the time left once a file
  /// has been read.
  public var summary: String {
    var line = "\(read) of \(toRead) files read"
    guard elapsed > 0, read > 0 else { return line }
    let rate = Double(read) / elapsed
    line += ", \(Int(rate.rounded())) a second"
    if read < toRead {
      let left = Int((Double(toRead - read) / rate).rounded(.up))
      line += ", about \(clockTime(seconds: left)) left"
    }
    return line
  }
}

/// The library index: every track's tags in an SQLite database (by default
/// `$XDG_CACHE_HOME/hark/library.sqlite3`), read by TagLib in the hark-tags helper, kept
/// current by incremental scans (only files whose size or modification time changed are read
/// again). It is a cache: a damaged or foreign database is set aside (renamed, with a message)
/// and rebuilt, and nothing in it is the only copy of anything, but for the places long
/// recordings were left (`places`) and the speeds podcasts and books play at (`speeds`), which
/// are copied from an index set aside into the new one as far as they can be read.
public final class Library {
  /// The paths the last `scan` read afresh or removed: what an interface that shows their tags
  /// reads again (a retagged file's new title).
  public private(set) var lastChanged: [String] = []
  let database: Database
  public let path: String
  /// Said when the database at `path` could not be used and was set aside, for a program that
  /// indexes the music folder again: "the library index '…' was set aside as '…' (why);
  /// rebuilding it".
  public var setAside: String? { setAsideAs.map { $0 + "; rebuilding it" } }
  /// The same without what is done next: "the library index '…' was set aside as '…' (why)".
  public private(set) var setAsideAs: String?

  /// The schema's version (PRAGMA user_version) and an application id ("hark").
  /// 2: the search index (tracks_search). 3: the tracks in search order (tracks_in_order), in
  /// place of an index by artist that no query used; Greek, Cyrillic and Vietnamese letters
  /// folded (SearchText). 4: loudness measured (Sound Check for untagged files) and plays
  /// counted. 5: the places long recordings were left (`places`). 6: the speeds podcasts and
  /// books play at (`speeds`). 7: the search index built whole by a scan of many files, its
  /// triggers dropped meanwhile (`tracks_search_stale`): a hark before it would write rows
  /// past a search index left stale, and never build it.
  static let schemaVersion = 7

  /// The columns schema 4 added to `tracks`, after `folded`: the measured loudness (LUFS, the
  /// true peak as a linear ratio, the gating blocks an album is gated from, whether it was
  /// measured: 0 not yet, 1 measured, 2 could not be, and why not), and the album's, with how
  /// many tracks it was gated over (so that an album that gained or lost a track is measured
  /// again).
  static let loudnessColumns = [
    ("loudness", "REAL"), ("true_peak", "REAL"), ("loudness_blocks", "BLOB"),
    ("measured", "INTEGER NOT NULL DEFAULT 0"), ("measure_problem", "TEXT"),
    ("album_loudness", "REAL"), ("album_peak", "REAL"), ("album_tracks", "INTEGER"),
  ]
  static let applicationID: Int32 = 0x6861_726B

  /// The page cache of a reader's connection, KiB.
  static let readerCacheKiB = 512

  /// The index's usual place, or nil without a home.
  public static func defaultPath() -> String? {
    XDGDirectory.cache.path.map { $0 + "/hark/library.sqlite3" }
  }

  /// Opens the index at `path` (creating it and its folder); sets aside one that is damaged,
  /// of another program, or of another schema, and starts afresh. `checked`: every page read
  /// for damage first (PRAGMA quick_check: 0.1 s at 50,000 tracks), as the scan does as it
  /// starts; the interface's reader, opened as it draws its first view, only looks at whose
  /// and which version it is, and leaves damage to the scan (its reads then fail, and it
  /// opens the index again at its next read). Unchecked, an index that cannot be used is not
  /// set aside either: that is thrown, and left to the scan, which says so (set aside by a
  /// reader, it was replaced without a word in the interface).
  public init(path: String, checked: Bool = true) throws(SQLiteError) {
    self.path = path
    if let slash = path.lastIndex(of: "/") { makeDirectories(String(path[..<slash])) }
    var problem: String?
    if let db = try? Database(path: path), let why = Self.whyUnusable(db, checked: checked) {
      problem = why
    } else if access(FileName.c(path), F_OK) == 0, (try? Database(path: path)) == nil {
      problem = "it cannot be opened"
    }
    var salvaged: [KeptPlace] = []
    var salvagedSpeeds: [KeptSpeed] = []
    if let problem {
      guard checked else { throw SQLiteError(code: SQLITE_CANTOPEN, message: problem) }
      // Before it is moved and its log dropped: what the log holds is read with it.
      salvaged = Self.placesToSalvage(at: path)
      salvagedSpeeds = Self.speedsToSalvage(at: path)
      // Never over an earlier one: two set aside in the same second kept only the second.
      var aside = path + ".broken-\(time(nil))"
      var other = 2
      while access(FileName.c(aside), F_OK) == 0 {
        aside = path + ".broken-\(time(nil))-\(other)"
        other += 1
      }
      rename(FileName.c(path), FileName.c(aside))
      for suffix in ["-wal", "-shm"] { unlink(FileName.c(path + suffix)) }
      setAsideAs = "the library index '\(path)' was set aside as '\(aside)' (\(problem))"
    }
    database = try Database(path: path)
    // Schemas 1 (before the search index) and 2 (before the index in order and the folding of
    // every script) are brought up to date in place (`upgrade`): their tracks stay, and the
    // indexes are built from them, rather than every file read again.
    let before = (try? database.scalar("PRAGMA user_version")).flatMap { Int($0) } ?? 0
    // The application id set only where it is not yet: setting it is a write, so every
    // opening took the write lock, and the interface's readers, opened while a scan wrote its
    // next 500 tracks, waited for that commit (or failed after the 5 s SQLite waits). An index
    // that is up to date is opened without a write (its tables, indexes and triggers exist).
    let id = (try? database.scalar("PRAGMA application_id")).flatMap { Int32($0) } ?? 0
    let setID = id == Self.applicationID ? "" : "PRAGMA application_id = \(Self.applicationID);"
    try database.execute(
      """
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      PRAGMA recursive_triggers = ON;
      \(setID)
      CREATE TABLE IF NOT EXISTS tracks (
        path TEXT PRIMARY KEY NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
        title TEXT, artist TEXT, album_artist TEXT, album TEXT, track INTEGER, disc INTEGER,
        year INTEGER, genre TEXT, seconds REAL, track_gain REAL, album_gain REAL,
        cover INTEGER NOT NULL DEFAULT 0, problem TEXT, folded TEXT NOT NULL DEFAULT '',
        \(Self.loudnessColumns.map { $0.0 + " " + $0.1 }.joined(separator: ", "))
      );
      -- Plays counted (a listen by Last.fm's rule: half the track or 4 minutes), by path, kept
      -- apart from the tracks so that a rescan of a changed file keeps its count. The listens'
      -- own log ($XDG_STATE_HOME/hark/listens.log) is the record: a rebuilt index counts again
      -- from it.
      CREATE TABLE IF NOT EXISTS plays (
        path TEXT PRIMARY KEY NOT NULL, count INTEGER NOT NULL, last REAL NOT NULL
      );
      -- How far into the listens' log the plays are counted (bytes): counting is catching up
      -- with the log, in one transaction with the plays, so a listen is counted once however
      -- a crash falls.
      CREATE TABLE IF NOT EXISTS plays_log (
        id INTEGER PRIMARY KEY CHECK (id = 1), offset INTEGER NOT NULL
      );
      -- Where long recordings were left (audiobooks, podcasts, lectures), by path: seconds in,
      -- or played (heard to the end). Written by the player as it plays them; kept apart from
      -- the tracks, as the plays are, so that a rescan keeps them.
      CREATE TABLE IF NOT EXISTS places (
        path TEXT PRIMARY KEY NOT NULL, position REAL, played INTEGER NOT NULL DEFAULT 0,
        duration REAL, updated REAL NOT NULL
      );
      -- The speed each podcast or book plays at (spoken word), by the folder its files are in,
      -- as the user last chose it; kept apart from the tracks, as the places are.
      CREATE TABLE IF NOT EXISTS speeds (
        folder TEXT PRIMARY KEY NOT NULL, rate REAL NOT NULL, updated REAL NOT NULL
      );
      CREATE INDEX IF NOT EXISTS plays_by_count ON plays (count, last);
      CREATE INDEX IF NOT EXISTS plays_by_last ON plays (last);
      DROP INDEX IF EXISTS tracks_by_artist;
      -- The tracks in the order searches and folders list them, with the folded text, so that
      -- a search that finds many can read them in order and stop at its limit, and one that
      -- finds none reads this index rather than every row (15 ms at 50,000 tracks, not 25 to
      -- 37). About 170 bytes a track.
      CREATE INDEX IF NOT EXISTS tracks_in_order
        ON tracks (coalesce(album_artist, artist), album, disc, track, path, folded);
      -- The tracks on others' albums (a compilation's), whose artists the Artists view lists
      -- beside the album artists: few, so that listing them reads few (15 ms, not 40, for
      -- 2,500 among 50,000 tracks).
      CREATE INDEX IF NOT EXISTS tracks_on_others_albums ON tracks (artist, album_artist, album)
        WHERE \(Self.onOthersAlbum);
      -- Search: the folded text's trigrams (FTS5), so that a word of three letters or more is
      -- found through an index rather than by reading every row (1 ms at 50,000 tracks, not
      -- 10 to 30). Kept in step by triggers; the scan's INSERT OR REPLACE deletes the old row
      -- first, which fires the delete trigger only with recursive_triggers on (above).
      CREATE VIRTUAL TABLE IF NOT EXISTS tracks_search
        USING fts5(folded, content = 'tracks', content_rowid = 'rowid', tokenize = 'trigram');
      -- A row here: the search index is not in step with the tracks (a scan that reads many
      -- files writes them without it, and builds it whole at its end: `scan`), and searches go
      -- without it until a scan has built it.
      CREATE TABLE IF NOT EXISTS tracks_search_stale (id INTEGER PRIMARY KEY CHECK (id = 1));
      """)
    // The triggers that keep the search index in step, unless it is being built whole.
    if try !searchIndexIsStale() { try database.execute(Self.searchTriggers) }
    // The interface's readers (opened unchecked) read a page at a time, mostly by path: a
    // small cache of pages (the file's are in the kernel's cache anyway) rather than SQLite's
    // 2 MiB each, of which the interface has three or four open.
    if !checked { try database.execute("PRAGMA cache_size = -\(Self.readerCacheKiB)") }
    if (1..<Self.schemaVersion).contains(before) {
      try upgrade()
    } else if before == 0 {
      try database.execute("PRAGMA user_version = \(Self.schemaVersion)")
    }
    for p in salvaged {
      try? keepPlace(of: p.path, at: p.position, duration: p.duration, time: p.updated)
    }
    for s in salvagedSpeeds { try? keepSpeed(s.rate, ofFolder: s.folder, time: s.updated) }
    // Over columns an upgrade may just have added.
    try database.execute(
      """
      -- The tracks still to measure, in album order: few once the first pass is done, so the
      -- index is small, and the background thread finds its next album without reading every
      -- row.
      CREATE INDEX IF NOT EXISTS tracks_to_measure
        ON tracks (coalesce(album_artist, artist), album, disc, track, path)
        WHERE measured = 0 AND track_gain IS NULL AND problem IS NULL;
      """)
  }

  /// The triggers that keep the search index (`tracks_search`) in step with the tracks, one
  /// row at a time. The scan's INSERT OR REPLACE deletes the old row first, which fires the
  /// delete trigger only with recursive_triggers on (`init`).
  static let searchTriggers = """
    CREATE TRIGGER IF NOT EXISTS tracks_search_insert AFTER INSERT ON tracks BEGIN
      INSERT INTO tracks_search (rowid, folded) VALUES (new.rowid, new.folded);
    END;
    CREATE TRIGGER IF NOT EXISTS tracks_search_delete AFTER DELETE ON tracks BEGIN
      INSERT INTO tracks_search (tracks_search, rowid, folded)
        VALUES ('delete', old.rowid, old.folded);
    END;
    CREATE TRIGGER IF NOT EXISTS tracks_search_update AFTER UPDATE ON tracks BEGIN
      INSERT INTO tracks_search (tracks_search, rowid, folded)
        VALUES ('delete', old.rowid, old.folded);
      INSERT INTO tracks_search (rowid, folded) VALUES (new.rowid, new.folded);
    END;
    """

  /// Whether the search index is out of step with the tracks (a scan is building it whole, or
  /// one that was to was interrupted): `search` then goes without it.
  func searchIndexIsStale() throws(SQLiteError) -> Bool {
    try database.scalar("SELECT count(*) FROM tracks_search_stale") != "0"
  }

  /// Before a scan writes many tracks: the search index is left out of step (its triggers
  /// dropped, and said so, in one transaction), to be built whole at the end
  /// (`rebuildSearchIndex`). Fed a row at a time, FTS5's trigram index took 2.5 of the 3 s
  /// SQLite spent on 50,000 new tracks; built whole it takes 0.8.
  func leaveSearchIndexStale() throws(SQLiteError) {
    try database.execute(
      """
      BEGIN IMMEDIATE;
      INSERT OR IGNORE INTO tracks_search_stale (id) VALUES (1);
      DROP TRIGGER IF EXISTS tracks_search_insert;
      DROP TRIGGER IF EXISTS tracks_search_delete;
      DROP TRIGGER IF EXISTS tracks_search_update;
      COMMIT;
      """)
  }

  /// The search index built whole from the tracks, and kept in step again, in one transaction:
  /// interrupted, the index stays stale, and the next scan builds it.
  func rebuildSearchIndex() throws(SQLiteError) {
    try database.execute("BEGIN IMMEDIATE")
    do throws(SQLiteError) {
      try database.execute(
        "INSERT INTO tracks_search (tracks_search) VALUES ('rebuild');" + Self.searchTriggers
          + "DELETE FROM tracks_search_stale; COMMIT;")
    } catch {
      try? database.execute("ROLLBACK")
      throw error
    }
  }

  /// Brings an index of an earlier schema up to date, in one transaction with its version (a
  /// connection that opened it meanwhile, such as the interface's beside its scan, finds the
  /// work done): schema 4's loudness columns are added (each track to be measured); the
  /// folding of schemas 1 and 2 knew Latin letters only, so every track's
  /// folded text is made again from its tags, and the changed ones written (the triggers
  /// keep the search index in step); schema 1's search index is built.
  private func upgrade() throws(SQLiteError) {
    try database.execute("BEGIN IMMEDIATE")
    do throws(SQLiteError) {
      let version = Int(try database.scalar("PRAGMA user_version") ?? "0") ?? 0
      // Schema 5's places, 6's speeds and 7's mark of a stale search index are made by `init`
      // (CREATE TABLE IF NOT EXISTS), before this.
      if version < 4 {
        let existing = try columnNames("tracks")
        for (name, kind) in Self.loudnessColumns where !existing.contains(name) {
          try database.execute("ALTER TABLE tracks ADD COLUMN \(name) \(kind)")
        }
      }
      if version < 3 {
        // First, as the triggers that keep it in step with the folded text below expect it.
        if version == 1 {
          try database.execute("INSERT INTO tracks_search (tracks_search) VALUES ('rebuild')")
        }
        // Every track read first, then each written where its folded text is not the same (the
        // search index's triggers fire for those only).
        let all = try tracks(of: try database.prepare("SELECT * FROM tracks"))
        let update = try database.prepare(
          "UPDATE tracks SET folded = ?2 WHERE path = ?1 AND folded IS NOT ?2")
        for t in all { try update.run([.text(t.path), .text(Self.folded(t))]) }
      }
      if version < Self.schemaVersion {
        try database.execute("PRAGMA user_version = \(Self.schemaVersion)")
      }
      try database.execute("COMMIT")
    } catch {
      try? database.execute("ROLLBACK")
      throw error
    }
  }

  private func columnNames(_ table: String) throws(SQLiteError) -> Set<String> {
    let s = try database.prepare("SELECT name FROM pragma_table_info('\(table)')")
    var names: Set<String> = []
    while try s.step() { if let n = s.text(0) { names.insert(n) } }
    return names
  }

  /// Why an existing database will not do; nil when it will (or is new and empty).
  static func whyUnusable(_ db: Database, checked: Bool = true) -> String? {
    if checked {
      guard let check = try? db.scalar("PRAGMA quick_check") else {
        return "it is not a database"
      }
      guard check == "ok" else { return "it is damaged: " + Self.firstProblem(check) }
    } else if (try? db.scalar("PRAGMA schema_version")) == nil {
      return "it is not a database"
    }
    let version = (try? db.scalar("PRAGMA user_version")).flatMap { Int($0) } ?? 0
    let id = (try? db.scalar("PRAGMA application_id")).flatMap { Int32($0) } ?? 0
    let tables =
      (try? db.scalar("SELECT count(*) FROM sqlite_master")).flatMap { Int($0) } ?? 0
    if tables == 0 && version == 0 && id == 0 { return nil }  // new
    if id != applicationID { return "it is not hark's" }
    // 1 and 2 are brought up to date in place (init).
    if ![1, 2, 3, 4, 5, 6, schemaVersion].contains(version) {
      return "it is of another version (\(version))"
    }
    return nil
  }

  /// The first of the problems `PRAGMA quick_check` lists, one per line after a line naming
  /// the database, and how many more: "Page 8: btreeInitPage() returns error code 11 (and 11
  /// more)", for a message of one line.
  static func firstProblem(_ check: String) -> String {
    let lines = check.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("*** ") }
    guard let first = lines.first else { return check }
    return first + (lines.count > 1 ? " (and \(lines.count - 1) more)" : "")
  }

  // MARK: Scanning

  /// Brings the index of `folder` up to date: new and changed files read (through
  /// `tagHelper`, hark-tags), files gone removed. `progress` is called now and then. `ahead`:
  /// the folder's walk begun before the index was opened (`walkAhead`), taken when it is of
  /// this folder.
  public func scan(
    _ folder: String, walked ahead: WalkAhead? = nil, tagHelper: String? = nil,
    progress: (ScanProgress) -> Void = { _ in }
  ) throws(SQLiteError) -> ScanReport {
    // A helper that dies mid-write must not take the scanner with it.
    signal(SIGPIPE, SIG_IGN)
    let root = Self.scanRoot(folder)
    let started = monotonicNanoseconds()
    var report = ScanReport()
    let files =
      if let ahead, ahead.directory == root { ahead.files() } else { QueueLoader.walkStamped(root) }
    report.found = files.count
    // What the index holds under the folder, compared with what was found by the paths'
    // bytes where SQLite has them: each found file is looked up in a table of the walk's own
    // buffer, not hashed into a dictionary of 50,000 Strings made of the index's rows (that
    // took about a third of a rescan's time, and 10 MB more at the interface's peak).
    let lookup = files.lookup()
    var seen = [Bool](repeating: false, count: files.count)
    var changed: [Int] = []
    var gone: [String] = []
    let existing = try database.prepare(
      "SELECT path, size, mtime FROM tracks WHERE path = ?1 OR substr(path, 1, ?2) = ?3")
    try existing.bind([.text(root), .integer((root + "/").unicodeScalars.count), .text(root + "/")])
    while try existing.step() {
      guard let p = existing.bytes(0) else { continue }
      guard let i = lookup.find(p) else {
        gone.append(String(decoding: p, as: UTF8.self))
        continue
      }
      seen[i] = true
      let stamp = files.stamp(i)
      if (existing.integer(1) ?? -1, existing.integer(2) ?? -1) != (stamp.size, stamp.mtime) {
        changed.append(i)
      }
    }
    // What to read: new or changed, in the index's order (the paths' bytes): written in the
    // order the folders list them, each row went to another page of the index by path (1 s
    // more CPU at 50,000 tracks).
    let toRead = files.sortedByPath(changed + seen.indices.filter { !seen[$0] }).map {
      i -> (String, Int, Int) in
      let stamp = files.stamp(i)
      return (files.path(i), stamp.size, stamp.mtime)
    }
    // Many to read (a first scan, a folder added): the search index is built whole at the end
    // rather than fed a row at a time; also when an earlier scan that was to build it whole
    // was interrupted.
    var bulk = try searchIndexIsStale()
    if !bulk, toRead.count >= bulkScan {
      // (Counted only then: a rescan of one folder of 200,000 tracks need not count them.)
      bulk = toRead.count * 3 >= max(files.count, try count())
    }
    if bulk { try leaveSearchIndexStale() }
    let upsert = try database.prepare(
      """
      INSERT OR REPLACE INTO tracks (path, size, mtime, title, artist, album_artist, album,
        track, disc, year, genre, seconds, track_gain, album_gain, cover, problem, folded)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
      """)
    let delete = try database.prepare("DELETE FROM tracks WHERE path = ?1")
    try database.execute("BEGIN")
    for path in gone {
      try delete.run([.text(path)])
      report.removed += 1
    }
    var lastSaid = started
    var written = 0
    func write(_ track: IndexedTrack, size: Int, mtime: Int) throws(SQLiteError) {
      if track.problem != nil { report.unreadable += 1 }
      try upsert.run(Self.values(track, size: size, mtime: mtime))
      report.read += 1
      written += 1
      // A commit now and then: an interrupted scan keeps what it read.
      if written % 500 == 0 { try database.execute("COMMIT; BEGIN") }
      let now = monotonicNanoseconds()
      if now - lastSaid > 200_000_000 {
        lastSaid = now
        progress(
          ScanProgress(
            done: files.count - toRead.count + written, total: files.count, read: written,
            toRead: toRead.count, elapsed: Double(now - started) / 1e9))
      }
    }
    // A cue sheet's tracks from their sheets, here; the files through hark-tags, one helper a
    // processor, reading ahead.
    var sheets: [String: CueSheet] = [:]
    var fromFiles: [(String, Int, Int)] = []
    for item in toRead {
      guard let reference = CueSheet.Reference(item.0) else {
        fromFiles.append(item)
        continue
      }
      try write(Self.track(item.0, of: reference, sheets: &sheets), size: item.1, mtime: item.2)
    }
    if !fromFiles.isEmpty {
      let readers = TagReaders(
        executable: tagHelper ?? TagHelper.installed() ?? "hark-tags",
        count: min(tagReaders, (fromFiles.count + 99) / 100))
      defer { readers.stop() }
      try readers.read(fromFiles.map(\.0)) { i, record throws(SQLiteError) in
        let (path, size, mtime) = fromFiles[i]
        try write(Self.track(path, from: record), size: size, mtime: mtime)
      }
    }
    try database.execute("COMMIT")
    if bulk { try rebuildSearchIndex() }
    lastChanged = toRead.map(\.0) + gone
    progress(
      ScanProgress(
        done: files.count, total: files.count, read: toRead.count, toRead: toRead.count,
        elapsed: Double(monotonicNanoseconds() - started) / 1e9))
    return report
  }

  /// Begins the walk a scan of `folder` makes, on a thread of its own, so that it goes on
  /// while the index is opened (and checked): give it to `scan`.
  public static func walkAhead(_ folder: String) -> WalkAhead { WalkAhead(scanRoot(folder)) }

  /// The folder a scan walks: `folder` without a slash at its end.
  private static func scanRoot(_ folder: String) -> String {
    folder.count > 1 && folder.hasSuffix("/") ? String(folder.dropLast()) : folder
  }

  /// How many hark-tags helpers a scan runs at most: one a processor. (A scan of fewer than
  /// a hundred files starts one.)
  var tagReaders = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))

  /// From how many files to read a scan builds the search index whole at its end, when they
  /// are a third of the folder's or more (`leaveSearchIndexStale`): a row fed to FTS5 costs
  /// about 50 µs, a row of a whole build about 16. A variable for the tests.
  var bulkScan = 1000

  /// A cue sheet's track, from its sheet (each sheet read once a scan).
  private static func track(
    _ path: String, of reference: CueSheet.Reference, sheets: inout [String: CueSheet]
  ) -> IndexedTrack {
    var track = IndexedTrack(path: path)
    if sheets[reference.sheet] == nil, case .success(let s) = CueSheet.read(reference.sheet) {
      sheets[reference.sheet] = s
    }
    guard let sheet = sheets[reference.sheet],
      let t = sheet.tracks.first(where: { $0.number == reference.track })
    else {
      track.problem = "its cue sheet cannot be read"
      return track
    }
    track.title = t.title
    track.artist = t.performer ?? sheet.performer
    track.albumArtist = sheet.performer
    track.album = sheet.title
    track.trackNumber = t.number
    return track
  }

  /// A file's track, from what hark-tags said of it.
  private static func track(_ path: String, from record: TagRecord) -> IndexedTrack {
    var track = IndexedTrack(path: path)
    let f = record.fields
    track.problem = record.problem
    track.title = f["title"]
    track.artist = f["artist"]
    track.albumArtist = f["albumartist"]
    track.album = f["album"]
    track.trackNumber = f["track"].flatMap { Int($0) }
    track.disc = f["disc"].flatMap { Int($0) }
    track.year = f["year"].flatMap { Int($0) }
    track.genre = f["genre"]
    track.seconds = f["seconds"].flatMap { Double($0) }
    track.trackGain = f["trackgain"].flatMap { Double($0) }
    track.albumGain = f["albumgain"].flatMap { Double($0) }
    track.hasCover = f["cover"] == "1"
    return track
  }

  /// What search looks in, folded: the title (else the file's name), artist, album artist,
  /// album, genre, the file's name and the year.
  static func folded(_ t: IndexedTrack) -> String {
    String(decoding: foldedBytes(t), as: UTF8.self)
  }

  /// `folded`'s text in UTF-8, each part folded into one buffer (folding is letter by letter,
  /// so the parts folded apart and joined are the parts joined and folded), without the
  /// joined string and its fold into another: a scan folds every track it reads.
  static func foldedBytes(_ t: IndexedTrack) -> [UInt8] {
    let name = QueueLoader.title(fromPath: t.path)
    var out: [UInt8] = []
    out.reserveCapacity(192)
    var first = true
    for part in [t.title ?? name, t.artist, t.albumArtist, t.album, t.genre, name] {
      guard let part else { continue }
      if !first { out.append(UInt8(ascii: " ")) }
      first = false
      SearchText.fold(part, into: &out)
    }
    if let year = t.year { out += " \(year)".utf8 }
    return out
  }

  static func values(_ t: IndexedTrack, size: Int, mtime: Int) -> [Statement.Value?] {
    [
      .text(t.path), .integer(size), .integer(mtime), t.title.map { .text($0) },
      t.artist.map { .text($0) }, t.albumArtist.map { .text($0) }, t.album.map { .text($0) },
      t.trackNumber.map { .integer($0) }, t.disc.map { .integer($0) }, t.year.map { .integer($0) },
      t.genre.map { .text($0) }, t.seconds.map { .real($0) }, t.trackGain.map { .real($0) },
      t.albumGain.map { .real($0) }, .integer(t.hasCover ? 1 : 0), t.problem.map { .text($0) },
      .utf8(foldedBytes(t)),
    ]
  }

  // MARK: Reading

  /// How many tracks the index holds.
  public func count() throws(SQLiteError) -> Int {
    Int(try database.scalar("SELECT count(*) FROM tracks") ?? "0") ?? 0
  }

  /// How many tracks a search lists at most.
  public static let searchLimit = 500

  /// The order of search results and of a folder's tracks: album artist (else artist), album,
  /// disc, track, path.
  static let searchOrder = "coalesce(album_artist, artist), album, disc, track, path"

  /// A word found by this many tracks or more makes a search read `tracks_in_order` until it
  /// has its limit, rather than sort every track found: at 50,000 tracks, sorting 3,000 takes
  /// about 7 ms, and reading in order to the 500th of 3,000 or more, spread as an artist's or
  /// a genre's are, 4 to 15 ms (the whole index, when none is found before its end). A
  /// variable for the tests, which take either way on a small library.
  var crowded = 3000

  /// The tracks whose title, artist, album artist, album, genre, file name or year hold every
  /// word of `query`, case and diacritics folded ("zoe" finds "Zoë"); by artist, album, disc,
  /// track. At most `limit`.
  public func search(_ query: String, limit: Int = searchLimit) throws(SQLiteError)
    -> [IndexedTrack]
  {
    let words = SearchText.folded(query).split(separator: " ").map(String.init)
    // Every word as LIKE sees it (the folded text is lower case already, as the query is).
    var values: [Statement.Value?] = []
    var likes: [String] = []
    func like(_ words: [String], in table: String) {
      for word in words {
        let escaped = word.replacingEvery(["\\": "\\\\", "%": "\\%", "_": "\\_"])
        values.append(.text("%" + escaped + "%"))
        likes.append("\(table).folded LIKE ?\(values.count) ESCAPE '\\'")
      }
    }
    let order = " ORDER BY \(Self.searchOrder) LIMIT \(limit)"
    // Words of three characters or more through the trigram index: a word as a phrase of
    // trigrams matches exactly the texts that hold it (no row is read to check, as LIKE
    // through the same index would: 13 ms, not 20 to 35, for 6,000 of 50,000).
    let long = words.filter { $0.unicodeScalars.count >= 3 }
    // (While a scan builds the search index whole, every track is read instead.)
    if !long.isEmpty, try !searchIndexIsStale() {
      let phrase = long.map { "\"" + $0.replacingEvery(["\"": "\"\""]) + "\"" }
        .joined(separator: " ")
      let count = try database.prepare(
        "SELECT count(*) FROM (SELECT 1 FROM tracks_search WHERE tracks_search MATCH ?1"
          + " LIMIT \(crowded))")
      try count.bind([.text(phrase)])
      _ = try count.step()
      if (count.integer(0) ?? 0) < crowded {
        values.append(.text(phrase))
        like(words.filter { !long.contains($0) }, in: "tracks")
        return try tracks(
          "SELECT tracks.* FROM tracks_search JOIN tracks ON tracks.rowid = tracks_search.rowid"
            + " WHERE tracks_search MATCH ?1" + likes.map { " AND " + $0 }.joined() + order,
          values)
      }
    }
    // No word, only short ones, or a crowded one: the tracks in order, until `limit` are found.
    like(words, in: "tracks")
    return try tracks(
      "SELECT * FROM tracks INDEXED BY tracks_in_order"
        + (likes.isEmpty ? "" : " WHERE " + likes.joined(separator: " AND ")) + order, values)
  }

  /// The search table of the tracks under `root`: what `search` finds among them, found in
  /// memory (`SearchTable`). Reads every row once: about 0.15 s for 50,000 tracks, so not on
  /// an interface's thread.
  public func searchTable(under root: String) throws(SQLiteError) -> SearchTable {
    try Self.searchTable(of: database, under: root)
  }

  /// The search table of the index at `path`, read through a connection of its own, without
  /// the checks and the schema `init` sees to: for an index another connection has opened, so
  /// that the table is built on a thread of its own while that connection serves the
  /// interface.
  public static func searchTable(ofIndexAt path: String, under root: String)
    throws(SQLiteError) -> SearchTable
  {
    let database = try Database(path: path, create: false)
    // Read once, in order: no page is wanted twice.
    try database.execute("PRAGMA cache_size = -\(readerCacheKiB)")
    return try searchTable(of: database, under: root)
  }

  private static func searchTable(of database: Database, under root: String)
    throws(SQLiteError) -> SearchTable
  {
    let folder = root.hasSuffix("/") ? root : root + "/"
    // One snapshot of the index for both reads, so that the sizes reserved are the sizes read.
    try database.execute("BEGIN")
    defer { try? database.execute("COMMIT") }
    let sizes = try database.prepare(
      "SELECT count(*), sum(length(CAST(folded AS BLOB))),"
        + " sum(length(CAST(coalesce(title, path) AS BLOB)) + length(CAST(path AS BLOB)))"
        + " FROM tracks WHERE \(Self.under)")
    try sizes.bind(Self.underValues(folder))
    _ = try sizes.step()
    var builder = SearchTable.Builder(
      folder: folder, rows: sizes.integer(0) ?? 0, foldedBytes: sizes.integer(1) ?? 0,
      nameBytes: sizes.integer(2) ?? 0)
    let rows = try database.prepare(
      "SELECT folded, path, title FROM tracks WHERE \(Self.under) ORDER BY \(Self.searchOrder)")
    try rows.bind(Self.underValues(folder))
    while try rows.step() {
      guard let folded = rows.bytes(0), let path = rows.bytes(1) else { continue }
      builder.add(folded: folded, path: path, title: rows.bytes(2))
    }
    return builder.table()
  }

  /// The track indexed for `path`, if any.
  public func track(at path: String) throws(SQLiteError) -> IndexedTrack? {
    // Prepared once: the interface asks for each search result it draws.
    let s: Statement
    if let prepared = trackAtPath {
      s = prepared
    } else {
      s = try database.prepare("SELECT * FROM tracks WHERE path = ?1")
      trackAtPath = s
    }
    try s.bind([.text(path)])
    return try tracks(of: s).first
  }

  private var trackAtPath: Statement?

  /// What a list shows of a track: its tags but the album artist and genre, its length.
  public struct Listed: Equatable, Sendable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var trackNumber: Int?
    public var year: Int?
    public var seconds: Double?
  }

  /// What a list shows of the track indexed for `path`; nil when it is not indexed or its tags
  /// could not be read. Only those columns are read, through a statement prepared once: the
  /// interface asks this of each of a queue's 50,000 entries, where reading whole rows (every
  /// tag, the loudness measured, into an `IndexedTrack` of a dozen strings) took most of a
  /// second of its worker's time while the user typed.
  public func listed(at path: String) throws(SQLiteError) -> Listed? {
    let s: Statement
    if let prepared = listedAtPath {
      s = prepared
    } else {
      s = try database.prepare(
        "SELECT title, artist, album, track, year, seconds FROM tracks"
          + " WHERE path = ?1 AND problem IS NULL")
      listedAtPath = s
    }
    try s.bind([.text(path)])
    guard try s.step() else { return nil }
    let found = Listed(
      title: s.text(0), artist: s.text(1), album: s.text(2), trackNumber: s.integer(3),
      year: s.integer(4), seconds: s.real(5))
    // Read to its end, which ends its read of the database.
    while try s.step() {}
    return found
  }

  private var listedAtPath: Statement?

  /// Begins a read transaction: the reads until `endRead` see the index as it is now, and
  /// take SQLite's locks once, not at each read.
  public func beginRead() throws(SQLiteError) { try database.execute("BEGIN") }

  /// Ends the read transaction `beginRead` began.
  public func endRead() throws(SQLiteError) { try database.execute("COMMIT") }

  /// Every track under `folder`, in the order `search` gives.
  public func tracks(under folder: String) throws(SQLiteError) -> [IndexedTrack] {
    let root = folder.hasSuffix("/") ? folder : folder + "/"
    return try tracks(
      // substr counts characters (code points), as unicodeScalars does.
      "SELECT * FROM tracks WHERE substr(path, 1, ?1) = ?2"
        + " ORDER BY \(Self.searchOrder)", [.integer(root.unicodeScalars.count), .text(root)])
  }

  // MARK: Browsing (artists, albums, genres)

  /// An album as the views list it.
  public struct Album: Equatable, Sendable {
    /// The album artist, else the artist; nil when the tags name neither.
    public var artist: String?
    public var title: String?
    /// The earliest year of its tracks.
    public var year: Int?
    public var tracks: Int
  }

  /// Whether any track under `root` is indexed: the first one found ends the look (the
  /// interface asks as it opens, where listing the artists of 50,000 tracks took 0.1 s).
  public func holdsTracks(under root: String) throws(SQLiteError) -> Bool {
    let s = try database.prepare("SELECT 1 FROM tracks WHERE \(Self.under) LIMIT 1")
    try s.bind(Self.underValues(root))
    return try s.step()
  }

  /// The album artists (else artists) under `root`, and the artists of tracks on others'
  /// albums (a compilation's, `appearance`), A–Z in name order (without case or accents,
  /// numbers by value: `NameOrder`), with their track counts; no artist last.
  public func artists(under root: String) throws(SQLiteError) -> [(name: String?, tracks: Int)] {
    let s = try database.prepare(
      "SELECT coalesce(album_artist, artist) AS a, count(*) FROM tracks WHERE \(Self.under)"
        + " GROUP BY a")
    try s.bind(Self.underValues(root))
    var out: [(name: String?, tracks: Int)] = []
    var at: [String: Int] = [:]
    while try s.step() {
      let name = s.text(0)
      if let name { at[name] = out.count }
      out.append((name, s.integer(1) ?? 0))
    }
    for a in try appearances(under: root) {
      if let i = at[a.artist] {
        out[i].tracks += a.tracks
      } else {
        at[a.artist] = out.count
        out.append((a.artist, a.tracks))
      }
    }
    return Self.inNameOrder(out)
  }

  /// A track whose artist is not its album's artist, nor the album artist with a guest ("A
  /// feat. B" on A's album): on a compilation, or an album tagged "The Beatles" whose tracks
  /// say "Beatles". The index `tracks_on_others_albums` holds these only.
  static let onOthersAlbum =
    "album_artist IS NOT NULL AND artist IS NOT NULL"
    + " AND substr(artist, 1, length(album_artist)) <> album_artist"

  /// An artist's tracks on an album of many artists (a compilation) whose album artist is
  /// another's: the artist is listed among the artists, and the album among theirs.
  struct Appearance {
    var artist: String
    var albumArtist: String
    var album: String?
    var year: Int?
    var tracks: Int
  }

  /// The appearances under `root` (of one artist, or of all): tracks on others' albums
  /// (`onOthersAlbum`, read through their own small index), on albums that hold another
  /// artist's tracks too, so that an album whose tracks all name one artist other than its
  /// album artist is not taken for a compilation.
  func appearances(under root: String, artist: String? = nil) throws(SQLiteError)
    -> [Appearance]
  {
    var sql =
      "SELECT artist, album_artist, album, min(year), count(*) FROM tracks"
      + " INDEXED BY tracks_on_others_albums WHERE \(Self.onOthersAlbum) AND \(Self.under)"
    var values = Self.underValues(root)
    if let artist {
      sql += " AND artist = ?3"
      values.append(.text(artist))
    }
    let s = try database.prepare(sql + " GROUP BY album_artist, album, artist")
    try s.bind(values)
    var found: [Appearance] = []
    while try s.step() {
      guard let artist = s.text(0), let albumArtist = s.text(1) else { continue }
      found.append(
        Appearance(
          artist: artist, albumArtist: albumArtist, album: s.text(2), year: s.integer(3),
          tracks: s.integer(4) ?? 0))
    }
    // Grouped by album: two artists or more on others' album, it is of many; one, it is if
    // the album holds a track of another artist (its album artist's, most often).
    let other = try database.prepare(
      "SELECT 1 FROM tracks WHERE coalesce(album_artist, artist) = ?1 AND album IS ?2"
        + " AND artist IS NOT ?3 LIMIT 1")
    var out: [Appearance] = []
    var i = 0
    while i < found.count {
      var j = i + 1
      while j < found.count, found[j].albumArtist == found[i].albumArtist,
        found[j].album == found[i].album
      {
        j += 1
      }
      var many = j - i > 1
      if !many {
        try other.bind([
          .text(found[i].albumArtist), found[i].album.map { .text($0) }, .text(found[i].artist),
        ])
        many = try other.step()
      }
      if many { out += found[i..<j] }
      i = j
    }
    return out
  }

  /// `rows` by their names in name order, those without a name last.
  private static func inNameOrder(_ rows: [(name: String?, tracks: Int)]) -> [(
    name: String?, tracks: Int
  )] {
    rows.filter { $0.name != nil }.sorted(byName: { $0.name ?? "" })
      + rows.filter { $0.name == nil }
  }

  /// Albums under `root`: of one artist (by year; then those they appear on, `appearances`,
  /// by year, with only their tracks counted), of one genre, or all (A–Z).
  public func albums(
    under root: String, artist: String?? = nil, genre: String?? = nil
  ) throws(SQLiteError) -> [Album] {
    var sql =
      "SELECT coalesce(album_artist, artist) AS a, album, min(year), count(*) FROM tracks"
      + " WHERE \(Self.under)"
    var values = Self.underValues(root)
    if let artist {
      sql += " AND coalesce(album_artist, artist) IS ?3"
      values.append(artist.map { .text($0) })
    }
    if let genre {
      sql += " AND genre IS ?\(values.count + 1)"
      values.append(genre.map { .text($0) })
    }
    sql += " GROUP BY a, album"
    let s = try database.prepare(sql)
    try s.bind(values)
    var albums: [Album] = []
    while try s.step() {
      albums.append(
        Album(artist: s.text(0), title: s.text(1), year: s.integer(2), tracks: s.integer(3) ?? 0))
    }
    // An artist's: the compilations they are on too, after their own (below).
    if let artist = artist ?? nil, genre == nil {
      albums += try appearances(under: root, artist: artist).map {
        Album(artist: $0.albumArtist, title: $0.album, year: $0.year, tracks: $0.tracks)
      }
    }
    // In name order (`NameOrder`: "Ágætis byrjun" among the A's, "Vol. 2" before "Vol. 10"),
    // each name folded once; an artist's by year first, those without a year after.
    let keyed = albums.map {
      (album: $0, title: $0.title.map(NameOrder.init), artist: $0.artist.map(NameOrder.init))
    }
    func less(_ a: NameOrder?, _ b: NameOrder?) -> Bool? {
      switch (a, b) {
      case (nil, nil): return nil
      case (nil, _): return false
      case (_, nil): return true
      case (let a?, let b?): return a == b ? nil : a < b
      }
    }
    return keyed.sorted { x, y in
      if let artist, (x.album.artist == artist) != (y.album.artist == artist) {
        return x.album.artist == artist  // their own albums before those they appear on
      }
      if artist != nil, x.album.year != y.album.year {
        guard let a = x.album.year else { return false }
        guard let b = y.album.year else { return true }
        return a < b
      }
      return less(x.title, y.title) ?? less(x.artist, y.artist) ?? false
    }.map(\.album)
  }

  /// The genres under `root`, A–Z in name order, with their track counts; no genre last.
  public func genres(under root: String) throws(SQLiteError) -> [(name: String?, tracks: Int)] {
    let s = try database.prepare(
      "SELECT genre, count(*) FROM tracks WHERE \(Self.under) GROUP BY genre")
    try s.bind(Self.underValues(root))
    var out: [(name: String?, tracks: Int)] = []
    while try s.step() { out.append((s.text(0), s.integer(1) ?? 0)) }
    return Self.inNameOrder(out)
  }

  /// The tracks a view of albums holds, in its order, each album's by disc and track: an
  /// artist's (their albums, then their tracks on the albums they appear on), a genre's (only
  /// its tracks of each album), or every album's (A–Z).
  public func tracks(
    under root: String, artist: String?? = nil, genre: String?? = nil
  ) throws(SQLiteError) -> [IndexedTrack] {
    var out: [IndexedTrack] = []
    for album in try albums(under: root, artist: artist, genre: genre) {
      var sql =
        "SELECT * FROM tracks WHERE \(Self.under) AND coalesce(album_artist, artist) IS ?3"
        + " AND album IS ?4"
      var values =
        Self.underValues(root) + [album.artist.map { .text($0) }, album.title.map { .text($0) }]
      if let artist, album.artist != artist {
        sql += " AND artist IS ?\(values.count + 1)"
        values.append(artist.map { .text($0) })
      }
      if let genre {
        sql += " AND genre IS ?\(values.count + 1)"
        values.append(genre.map { .text($0) })
      }
      out += try tracks(sql + " ORDER BY disc, track, path", values)
    }
    return out
  }

  /// One album's tracks, by disc and track number.
  public func tracks(under root: String, artist: String?, album: String?) throws(SQLiteError)
    -> [IndexedTrack]
  {
    try tracks(
      "SELECT * FROM tracks WHERE \(Self.under) AND coalesce(album_artist, artist) IS ?3"
        + " AND album IS ?4 ORDER BY disc, track, path",
      Self.underValues(root) + [artist.map { .text($0) }, album.map { .text($0) }])
  }

  /// Paths under a folder: ?1 its length with the slash, in characters; ?2 it with the slash.
  static let under = "substr(path, 1, ?1) = ?2"

  static func underValues(_ root: String) -> [Statement.Value?] {
    let slashed = root.hasSuffix("/") ? root : root + "/"
    return [.integer(slashed.unicodeScalars.count), .text(slashed)]
  }

  func tracks(_ sql: String, _ values: [Statement.Value?]) throws(SQLiteError)
    -> [IndexedTrack]
  {
    let s = try database.prepare(sql)
    try s.bind(values)
    return try tracks(of: s)
  }

  /// The tracks a statement selecting `*` from `tracks` gives, read to its end (which ends its
  /// read of the database).
  func tracks(of s: Statement) throws(SQLiteError) -> [IndexedTrack] {
    var out: [IndexedTrack] = []
    while try s.step() {
      if let t = try tracks(ofRow: s) { out.append(t) }
    }
    return out
  }

  /// The track in the row `s` is on, of a statement selecting `*` from `tracks` first.
  func tracks(ofRow s: Statement) throws(SQLiteError) -> IndexedTrack? {
    var t = IndexedTrack(path: s.text(0) ?? "")
    t.title = s.text(3)
    t.artist = s.text(4)
    t.albumArtist = s.text(5)
    t.album = s.text(6)
    t.trackNumber = s.integer(7)
    t.disc = s.integer(8)
    t.year = s.integer(9)
    t.genre = s.text(10)
    t.seconds = s.real(11)
    t.trackGain = s.real(12)
    t.albumGain = s.real(13)
    t.hasCover = s.integer(14) == 1
    t.problem = s.text(15)
    return t
  }

}

extension String {
  fileprivate func replacingEvery(_ table: [Character: String]) -> String {
    var out = ""
    for c in self { out += table[c] ?? String(c) }
    return out
  }
}
