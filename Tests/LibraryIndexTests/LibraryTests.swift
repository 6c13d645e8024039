import Glibc
import MediaFiles
import Platform
import Testing

@testable import LibraryIndex

/// The library index on files made at test time by ffmpeg, read through the real hark-tags
/// (built next to the test bundle): what a scan reads, what a rescan reads again (only what
/// changed), files deleted and renamed, a damaged or foreign database set aside and rebuilt,
/// a tag reader that crashes on one file, and search with case and diacritics folded.
@Suite(.timeLimit(.minutes(2))) final class LibraryTests {
  let folder: String = {
    var template = Array("/tmp/hark-library-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()
  var music: String { folder + "/music" }
  var index: String { folder + "/cache/hark/library.sqlite3" }

  deinit { _ = system("rm -rf '\(folder)'") }

  /// A second of sine at `name` under the music folder, with `tags`.
  func make(_ name: String, _ tags: [String: String], codec: String = "flac") throws {
    let path = music + "/" + name
    _ = system("mkdir -p \"$(dirname '\(path)')\"")
    var command = "ffmpeg -nostdin -v error -y -f lavfi -i sine=d=1 -c:a \(codec)"
    for (k, v) in tags.sorted(by: { $0.key < $1.key }) { command += " -metadata '\(k)=\(v)'" }
    try #require(system(command + " '\(path)'") == 0, "ffmpeg could not make \(name)")
  }

  func makeLibrary() throws -> Library {
    try make(
      "Sigur Rós/1999 Ágætis byrjun/01 Svefn.flac",
      [
        "title": "Svefn-g-englar", "artist": "Sigur Rós", "album": "Ágætis byrjun", "date": "1999",
        "track": "1", "genre": "Post-rock",
      ])
    try make(
      "Zoë/Songs/03 Song 3.mp3",
      [
        "title": "Song 3", "artist": "Zoë", "album": "Songs", "album_artist": "Zoë Keating",
        "track": "3", "disc": "2/2",
      ], codec: "libmp3lame")
    try make("Misc/100% Pure.m4a", ["title": "100% Pure", "artist": "Under_score"], codec: "aac")
    return try Library(path: index)
  }

  /// Opening an index that is up to date takes no write lock, checked (as a scan opens it) or
  /// not (the interface's readers): each opening wrote the application id again, so a reader
  /// opened while a scan held the write lock for its next 500 tracks waited for their commit,
  /// and failed after SQLite's 5 s. A new index is still made hark's.
  @Test func openingAnIndexThatIsUpToDateTakesNoWriteLock() throws {
    let made = try Library(path: index)
    #expect(try made.database.scalar("PRAGMA application_id") == "\(Library.applicationID)")
    let scan = try Database(path: index)
    try scan.execute("BEGIN IMMEDIATE")
    defer { try? scan.execute("ROLLBACK") }
    let reader = try Library(path: index, checked: false)
    #expect(try reader.count() == 0)
    let checked = try Library(path: index)
    #expect(checked.setAside == nil)
  }

  @Test func aScanReadsEveryFileAndARescanOnlyWhatChanged() throws {
    let library = try makeLibrary()
    #expect(library.setAside == nil)
    let first = try library.scan(music)
    #expect(first == ScanReport(found: 3, read: 3, removed: 0, unreadable: 0))
    #expect(try library.count() == 3)
    let song = try #require(try library.search("song 3").first)
    #expect(song.title == "Song 3" && song.artist == "Zoë" && song.albumArtist == "Zoë Keating")
    #expect(song.trackNumber == 3 && song.disc == 2 && song.album == "Songs")
    #expect(song.seconds == 1)
    let svefn = try #require(try library.search("svefn").first)
    #expect(svefn.year == 1999 && svefn.genre == "Post-rock")

    #expect(try library.scan(music) == ScanReport(found: 3, read: 0, removed: 0, unreadable: 0))

    // Changed (retagged), deleted, renamed.
    try make("Sigur Rós/1999 Ágætis byrjun/01 Svefn.flac", ["title": "Svefn (remaster)"])
    unlink(music + "/Misc/100% Pure.m4a")
    rename(music + "/Zoë/Songs/03 Song 3.mp3", music + "/Zoë/Songs/03 Song Three.mp3")
    let rescan = try library.scan(music)
    #expect(rescan == ScanReport(found: 2, read: 2, removed: 2, unreadable: 0))
    #expect(try library.search("remaster").map(\.title) == ["Svefn (remaster)"])
    #expect(try library.search("englar").isEmpty, "the old title is gone from the search index")
    #expect(try library.search("pure").isEmpty)
    #expect(try library.search("song three").count == 1, "found by its new file name")
  }

  /// A walk begun before the index is opened (`walkAhead`, as `hark library scan` and the
  /// interface begin it) finds what the scan's own walk would; a walk of another folder is
  /// not taken for this one.
  @Test func aScanTakesTheWalkBegunAheadOfItsFolderOnly() throws {
    let library = try makeLibrary()
    let ahead = Library.walkAhead(music + "/")
    #expect(
      try library.scan(music, walked: ahead)
        == ScanReport(found: 3, read: 3, removed: 0, unreadable: 0))
    unlink(music + "/Misc/100% Pure.m4a")
    let other = Library.walkAhead(music + "/Zoë")
    #expect(
      try library.scan(music, walked: other)
        == ScanReport(found: 2, read: 0, removed: 1, unreadable: 0))
    // One never waited for ends with its owner.
    _ = Library.walkAhead(music)
  }

  /// A file whose name is not UTF-8 (a Latin-1 "Café" from an old disk) is indexed under its
  /// escaped name (`FileName`), and a rescan finds it where it was: not read again, not gone.
  @Test func aNameThatIsNotUTF8IsFoundUnchangedByARescan() throws {
    let library = try makeLibrary()
    let latin1 = music + "/Misc/" + FileName.string(Array("Caf".utf8) + [0xE9] + Array(".m4a".utf8))
    #expect(rename(music + "/Misc/100% Pure.m4a", FileName.c(latin1)) == 0)
    #expect(try library.scan(music) == ScanReport(found: 3, read: 3, removed: 0, unreadable: 0))
    #expect(try library.track(at: latin1)?.title == "100% Pure")
    #expect(try library.scan(music) == ScanReport(found: 3, read: 0, removed: 0, unreadable: 0))
    unlink(FileName.c(latin1))
    #expect(try library.scan(music) == ScanReport(found: 2, read: 0, removed: 1, unreadable: 0))
  }

  /// The interface labels its queue from the index by path (no file opened for it).
  @Test func aTrackIsFoundByItsPath() throws {
    let library = try makeLibrary()
    _ = try library.scan(music)
    let svefn = try #require(
      try library.track(at: music + "/Sigur Rós/1999 Ágætis byrjun/01 Svefn.flac"))
    #expect(svefn.title == "Svefn-g-englar" && svefn.year == 1999)
    #expect(try library.track(at: music + "/Sigur Rós/nothing.flac") == nil)
    #expect(try library.track(at: music + "/Sigur Rós") == nil, "a folder is no track")
    // What a list shows, read alone: the same tags; nothing for a file whose tags could not
    // be read (it is listed by its name).
    for track in try library.search("") {
      #expect(
        try library.listed(at: track.path)
          == Library.Listed(
            title: track.title, artist: track.artist, album: track.album,
            trackNumber: track.trackNumber, year: track.year, seconds: track.seconds))
    }
    #expect(try library.listed(at: music + "/Sigur Rós/nothing.flac") == nil)
    // Reads in one read transaction (the interface's worker reads a queue's tags so) see the
    // index as it was when it began, until it ends.
    let reader = try Library(path: index, checked: false)
    try reader.beginRead()
    #expect(try reader.listed(at: music + "/Misc/new.flac") == nil)
    try make("Misc/new.flac", ["title": "New"])
    _ = try library.scan(music)
    #expect(try reader.listed(at: music + "/Misc/new.flac") == nil)
    try reader.endRead()
    #expect(try reader.listed(at: music + "/Misc/new.flac")?.title == "New")
    let svefnPath = music + "/Sigur Rós/1999 Ágætis byrjun/01 Svefn.flac"
    try library.database.execute(
      "UPDATE tracks SET problem = 'the tag reader crashed on it' WHERE path = '\(svefnPath)'")
    #expect(try library.listed(at: svefnPath) == nil)
  }

  @Test func searchFoldsCaseAndDiacriticsAndTakesEveryWord() throws {
    let library = try makeLibrary()
    _ = try library.scan(music)
    #expect(try library.search("zoe").map(\.artist) == ["Zoë"])
    #expect(try library.search("SIGUR ROS").map(\.title) == ["Svefn-g-englar"])
    #expect(try library.search("agaetis 1999").count == 1)
    #expect(try library.search("sigur songs").isEmpty, "every word must match")
    #expect(try library.search("100%").map(\.title) == ["100% Pure"], "% is a character")
    #expect(try library.search("under_").count == 1)
    #expect(try library.search("under%").isEmpty)
    // Words under three letters are looked for without the trigram index, alone or beside one.
    #expect(try library.search("rós").map(\.artist) == ["Sigur Rós"])
    #expect(try library.search("zo").map(\.artist) == ["Zoë"])
    #expect(try library.search("zo song").map(\.title) == ["Song 3"])
    #expect(try library.search("zo svefn").isEmpty)
    #expect(try library.search("").count == 3)
    #expect(try library.tracks(under: music + "/Zoë").map(\.title) == ["Song 3"])
    // Albums A–Z as names are ordered: Á among the A's, not after Z; no album last.
    #expect(try library.albums(under: music).map(\.title) == ["Ágætis byrjun", "Songs", nil])
    #expect(
      try library.artists(under: music).map(\.name) == ["Sigur Rós", "Under_score", "Zoë Keating"])
    // A folder whose name is not ASCII, scanned on its own: nothing read again, nothing lost.
    #expect(try library.scan(music + "/Zoë") == ScanReport(found: 1, read: 0, removed: 0))
    #expect(try library.count() == 3)
  }

  /// The artist view, "Artists → albums (by year) → tracks": an artist whose track is on a
  /// compilation is listed among the artists, the compilation after their own albums, and their
  /// tracks (what `a` on the artist adds) are their own albums' and theirs on it, not the rest of
  /// the compilation. A guest on another's album ("A feat. B" on A's) and an album whose tracks all
  /// name one artist other than its album artist add no artist.
  @Test func anArtistOnACompilationIsListedWithIt() throws {
    func track(
      _ file: String, _ title: String, _ artist: String, _ album: String,
      albumArtist: String? = nil, year: String = "2001", track: Int
    ) throws {
      var tags = [
        "title": title, "artist": artist, "album": album, "date": year, "track": "\(track)",
      ]
      if let albumArtist { tags["album_artist"] = albumArtist }
      try make(file, tags)
    }
    try track("Alpha/A1/1.flac", "Alpha 1", "Alpha", "Alpha One", year: "2003", track: 1)
    try track("Alpha/A2/1.flac", "Alpha 2", "Alpha", "Alpha Two", year: "2001", track: 1)
    try track(
      "Alpha/A2/2.flac", "With a guest", "Alpha feat. Beta", "Alpha Two",
      albumArtist: "Alpha", year: "2001", track: 2)
    try track(
      "VA/Comp/1.flac", "Alpha on comp", "Alpha", "Comp", albumArtist: "Various Artists",
      year: "2002", track: 2)
    try track(
      "VA/Comp/2.flac", "Gamma on comp", "Gamma", "Comp", albumArtist: "Various Artists",
      year: "2002", track: 1)
    try track("Beatles/1.flac", "Help", "Beatles", "Help!", albumArtist: "The Beatles", track: 1)
    try track(
      "Beatles/2.flac", "Yesterday", "Beatles", "Help!", albumArtist: "The Beatles",
      track: 2)
    let library = try Library(path: index)
    _ = try library.scan(music)
    let artists = try library.artists(under: music)
    #expect(artists.map(\.name) == ["Alpha", "Gamma", "The Beatles", "Various Artists"])
    #expect(artists.map(\.tracks) == [4, 1, 2, 2])
    let albums = try library.albums(under: music, artist: .some("Alpha"))
    #expect(albums.map(\.title) == ["Alpha Two", "Alpha One", "Comp"], "theirs by year, then on")
    #expect(albums.map(\.artist) == ["Alpha", "Alpha", "Various Artists"])
    #expect(
      try library.tracks(under: music, artist: .some("Alpha")).map(\.title) == [
        "Alpha 2", "With a guest", "Alpha 1", "Alpha on comp",
      ])
    #expect(try library.albums(under: music, artist: .some("Gamma")).map(\.title) == ["Comp"])
    // The compilation itself is whole, in its order, under its own album artist.
    #expect(
      try library.tracks(under: music, artist: "Various Artists", album: "Comp").map(\.title) == [
        "Gamma on comp", "Alpha on comp",
      ])
    // Every album's tracks, albums A–Z (what `a` on the Albums row adds).
    #expect(try library.tracks(under: music, artist: nil, genre: nil).count == 7)
  }

  /// An index of schema 1 (before the search index) is brought up to date in place: nothing
  /// set aside, no file read again, and search finds its tracks.
  @Test func anIndexOfSchemaOneIsUpgradedInPlace() throws {
    _ = try makeLibrary()
    let old = folder + "/old.sqlite3"
    let made = system(
      """
      sqlite3 '\(old)' "PRAGMA application_id = \(Library.applicationID); \
      CREATE TABLE tracks (path TEXT PRIMARY KEY NOT NULL, size INTEGER NOT NULL, \
      mtime INTEGER NOT NULL, title TEXT, artist TEXT, album_artist TEXT, album TEXT, \
      track INTEGER, disc INTEGER, year INTEGER, genre TEXT, seconds REAL, track_gain REAL, \
      album_gain REAL, cover INTEGER NOT NULL DEFAULT 0, problem TEXT, \
      folded TEXT NOT NULL DEFAULT ''); \
      CREATE INDEX tracks_by_artist ON tracks (artist, album, disc, track); \
      INSERT INTO tracks (path, size, mtime, title, folded) \
      VALUES ('/m/a.flac', 1, 1, 'Quetzalcoatl Rising', 'quetzalcoatl rising a.flac'); \
      PRAGMA user_version = 1;"
      """)
    try #require(made == 0, "sqlite3 could not make a schema-1 index")
    let library = try Library(path: old)
    #expect(library.setAside == nil, "\(library.setAside ?? "")")
    #expect(try library.search("quetzal").map(\.title) == ["Quetzalcoatl Rising"])
    #expect(try library.count() == 1)
  }

  /// An index of schema 2 (before the index in search order, and folding Latin letters only)
  /// is brought up to date in place: nothing set aside or read again, the index by artist no
  /// query used gone, the one in order made, every track's text folded again ("nguyen" finds
  /// "Nguyễn"), and search finds its tracks either way it takes.
  @Test func anIndexOfSchemaTwoIsUpgradedInPlace() throws {
    let library = try makeLibrary()
    _ = try library.scan(music)
    let made = system(
      """
      sqlite3 '\(index)' "DROP INDEX tracks_in_order; \
      CREATE INDEX tracks_by_artist ON tracks (artist, album, disc, track); \
      INSERT INTO tracks (path, size, mtime, title, artist, folded) VALUES \
      ('/elsewhere/01.flac', 1, 1, 'Bài ca', 'Nguyễn Văn Tý', 'bài ca nguyễn văn tý 01'); \
      PRAGMA user_version = 2;"
      """)
    try #require(made == 0, "sqlite3 could not make a schema-2 index")
    let upgraded = try Library(path: index)
    #expect(upgraded.setAside == nil, "\(upgraded.setAside ?? "")")
    #expect(try upgraded.scan(music) == ScanReport(found: 3, read: 0, removed: 0, unreadable: 0))
    let schema = try #require(
      try Database(path: index).scalar(
        "SELECT group_concat(name) FROM sqlite_master WHERE type = 'index' AND name LIKE 'tracks_%'"
      ))
    #expect(
      Set(schema.split(separator: ","))
        == ["tracks_in_order", "tracks_on_others_albums", "tracks_to_measure"])
    #expect(try Database(path: index).scalar("PRAGMA user_version") == "\(Library.schemaVersion)")
    for crowded in [3000, 0] {
      upgraded.crowded = crowded
      #expect(try upgraded.search("zoe").map(\.artist) == ["Zoë"])
      #expect(try upgraded.search("s").map(\.title) == ["Svefn-g-englar", "100% Pure", "Song 3"])
      #expect(try upgraded.search("nguyen van").map(\.title) == ["Bài ca"], "folded again")
    }
  }

  /// A damaged index is said in one line: the first problem SQLite's check lists, and how many
  /// more (the check lists one a line, after a line naming the database).
  @Test func aDamagedIndexIsSaidInOneLine() {
    let check = """
      *** in database main ***
      Page 8: btreeInitPage() returns error code 11
      Page 31: btreeInitPage() returns error code 11
      Page 32: btreeInitPage() returns error code 11
      """
    #expect(
      Library.firstProblem(check) == "Page 8: btreeInitPage() returns error code 11 (and 2 more)")
    #expect(Library.firstProblem("row 3 missing from index x") == "row 3 missing from index x")
  }

  /// A scan's progress line (the command's and the interface's): files done, the rate and the time
  /// left once there is a rate.
  @Test func aScansProgressSaysFilesRateAndTimeLeft() {
    let p = ScanProgress(done: 0, total: 50_000, read: 1_200, toRead: 50_000, elapsed: 1.5)
    #expect(p.summary == "1200 of 50000 files read, 800 a second, about 1:01 left")
    let start = ScanProgress(done: 0, total: 9, read: 0, toRead: 9, elapsed: 0)
    #expect(start.summary == "0 of 9 files read")
    let end = ScanProgress(done: 9, total: 9, read: 9, toRead: 9, elapsed: 0.5)
    #expect(end.summary == "9 of 9 files read, 18 a second")
    let long = ScanProgress(done: 0, total: 2_000_000, read: 500, toRead: 2_000_000, elapsed: 1)
    #expect(long.summary == "500 of 2000000 files read, 500 a second, about 1:06:39 left")
  }

  /// A search without a limit lists every match, in the library's order, either way it goes.
  @Test func aSearchWithoutALimitListsEveryMatch() throws {
    let library = try makeLibrary()
    _ = try library.scan(music)
    for crowded in [3000, 0] {
      library.crowded = crowded
      #expect(try library.search("s", limit: 2).count == 2)
      #expect(try library.search("s", limit: Int.max).count == 3)
      #expect(try library.search("pure", limit: Int.max).map(\.title) == ["100% Pure"])
    }
  }

  @Test func aDamagedOrForeignIndexIsSetAsideAndRebuilt() throws {
    _ = try makeLibrary()
    _ = system("mkdir -p \"$(dirname '\(index)')\" && head -c 8192 /dev/urandom > '\(index)'")
    let rebuilt = try Library(path: index)
    let said = try #require(rebuilt.setAside)
    #expect(said.contains("was set aside as"), "\(said)")
    #expect(try rebuilt.scan(music).read == 3)
    _ = system("ls '\(index)'.broken-* > /dev/null")
    // Another program's database in its place: set aside, not written into.
    let other = folder + "/other.sqlite3"
    _ = system(
      "sqlite3 '\(other)' 'CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES (1);' 2>/dev/null")
    if access(other, F_OK) == 0 {
      let again = try Library(path: other)
      #expect(again.setAside?.contains("it is not hark's") == true, "\(again.setAside ?? "")")
    }
  }

  /// The interface's look as it opens, without reading every page (`checked: false`): whether
  /// the library under its folder holds anything; an index that is no database or not hark's
  /// is left in place for the scan, which sets it aside and says so (set aside by the
  /// interface's reader, it was replaced without a word).
  @Test func theInterfacesQuickOpenStillKnowsWhatItOpened() throws {
    let library = try makeLibrary()
    #expect(try library.holdsTracks(under: music) == false)
    _ = try library.scan(music)
    #expect(try library.holdsTracks(under: music))
    #expect(try library.holdsTracks(under: music + "/Zoë"))
    #expect(try library.holdsTracks(under: music + "/Nobody") == false)
    #expect(try library.holdsTracks(under: folder + "/elsewhere") == false)
    let quick = try Library(path: index, checked: false)
    #expect(quick.setAside == nil)
    #expect(try quick.holdsTracks(under: music))

    let noise = folder + "/noise.sqlite3"
    _ = system("head -c 8192 /dev/urandom > '\(noise)'")
    #expect(throws: SQLiteError.self) { try Library(path: noise, checked: false) }
    #expect(access(noise, F_OK) == 0 && access(noise + ".broken-\(time(nil))", F_OK) != 0)
    let rebuilt = try Library(path: noise)
    #expect(rebuilt.setAside?.contains("was set aside as") == true, "\(rebuilt.setAside ?? "")")
    let other = folder + "/other.sqlite3"
    _ = system(
      "sqlite3 '\(other)' 'CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES (1);' 2>/dev/null")
    if access(other, F_OK) == 0 {
      #expect(throws: SQLiteError.self) { try Library(path: other, checked: false) }
      let again = try Library(path: other)
      #expect(again.setAside?.contains("it is not hark's") == true, "\(again.setAside ?? "")")
    }
  }

  /// Two damaged indexes set aside in the same second are both kept: the second does not
  /// replace the first (the user's notes written over the index, say). Files already there
  /// under this second's name and the next few keep the test from passing by the clock alone.
  @Test func twoIndexesSetAsideAtOnceAreBothKept() throws {
    _ = try makeLibrary()
    _ = system("mkdir -p \"$(dirname '\(index)')\"")
    let now = time(nil)
    let earlier = (now..<now + 5).map { "\(index).broken-\($0)" }
    for path in earlier { _ = system("echo earlier > '\(path)'") }
    defer { for path in earlier { unlink(path) } }
    var asides: [String] = []
    for text in ["notes one", "notes two"] {
      _ = system("rm -f '\(index)'-wal '\(index)'-shm; echo '\(text)' > '\(index)'")
      let library = try Library(path: index)
      let said = try #require(library.setAside)
      let aside = try #require(said.split(separator: "'").dropFirst(3).first.map(String.init))
      asides.append(aside)
    }
    #expect(Set(asides).count == 2, "\(asides)")
    for (aside, text) in zip(asides, ["notes one", "notes two"]) {
      #expect(system("grep -qx '\(text)' '\(aside)'") == 0, "\(aside) does not hold '\(text)'")
    }
    for path in earlier {
      #expect(system("grep -qx earlier '\(path)'") == 0, "\(path) was written over")
    }
  }

  /// A tag reader that dies on one file: that file is kept with the reason, the rest are read.
  @Test func aTagReaderCrashingOnAFileCostsOnlyThatFile() throws {
    try make("a.flac", ["title": "A"])
    try make("crash.flac", ["title": "C"])
    try make("z.flac", ["title": "Z"])
    let script = folder + "/fake-tags"
    writeScript(
      script,
      """
      #!/bin/bash
      while IFS= read -r -d '' p; do
        case "$p" in *crash*) kill -SEGV $$ ;; esac
        printf 'ok\\ntitle\\t%s\\n\\n' "${p##*/}"
      done
      """)
    let library = try Library(path: index)
    let report = try library.scan(music, tagHelper: script)
    #expect(report == ScanReport(found: 3, read: 3, removed: 0, unreadable: 1))
    let all = try library.search("")
    #expect(all.count == 3)
    let crashed = try #require(all.first { $0.path.hasSuffix("crash.flac") })
    #expect(crashed.problem == "the tag reader crashed on it")
    #expect(all.filter { $0.problem == nil }.count == 2)
  }

  /// The interface's readers (opened unchecked) keep a small page cache; a scan's connection
  /// keeps SQLite's own.
  @Test func readersKeepASmallPageCache() throws {
    let scanner = try Library(path: index)
    let reader = try Library(path: index, checked: false)
    #expect(try reader.database.scalar("PRAGMA cache_size") == "-\(Library.readerCacheKiB)")
    #expect(try scanner.database.scalar("PRAGMA cache_size") == "-2000")
  }

  /// A fake hark-tags that names each file's track after the file, and dies on any file whose
  /// name holds "crash".
  func namingHelper() -> String {
    let script = folder + "/fake-tags"
    writeScript(
      script,
      """
      #!/bin/bash
      while IFS= read -r -d '' p; do
        case "$p" in *crash*) kill -SEGV $$ ;; esac
        n="${p##*/}"
        printf 'ok\\ntitle\\t%s\\n\\n' "${n%.flac}"
      done
      """)
    return script
  }

  /// Empty files `name0.flac`… under the music folder (the fake helper reads none of them).
  func emptyFiles(_ names: [String]) {
    _ = system("mkdir -p '\(music)'")
    for name in names { close(open(music + "/" + name + ".flac", O_WRONLY | O_CREAT, 0o644)) }
  }

  /// Several helpers read ahead: every record comes back to its own file, a helper that dies
  /// costs only the file it died on (the files sent to it after that one are read by its
  /// successor), and the search index a scan of many files builds whole at its end finds them.
  @Test func helpersReadingAheadGiveEachFileItsOwnTags() throws {
    let names = (0..<150).map { "t" + String(1000 + $0).dropFirst() } + ["crash-a", "crash-b"]
    emptyFiles(names)
    let library = try Library(path: index)
    library.tagReaders = 3
    library.bulkScan = 10
    let report = try library.scan(music, tagHelper: namingHelper())
    #expect(report == ScanReport(found: 152, read: 152, removed: 0, unreadable: 2))
    let all = try library.search("")
    #expect(all.count == 152)
    for track in all where !track.path.contains("crash") {
      #expect(track.title.map { music + "/" + $0 + ".flac" } == track.path)
    }
    #expect(all.filter { $0.problem == "the tag reader crashed on it" }.count == 2)
    #expect(try !library.searchIndexIsStale())
    #expect(try library.search("t042").map(\.title) == ["t042"])
    // Fed a row at a time again after it: a file added is found by the same index.
    emptyFiles(["u999"])
    _ = try library.scan(music, tagHelper: namingHelper())
    #expect(try library.search("u999").map(\.title) == ["u999"])
  }

  /// An index of schema 6 (before the mark of a search index being built whole) is kept: it
  /// gains the mark's table, unmarked, its triggers stay, and it is of this schema after.
  @Test func anIndexOfSchemaSixGainsTheStaleMark() throws {
    emptyFiles(["alpha"])
    _ = try Library(path: index).scan(music, tagHelper: namingHelper())
    let made = system(
      "sqlite3 '\(index)' 'DROP TABLE tracks_search_stale; PRAGMA user_version = 6;' 2>/dev/null")
    try #require(made == 0, "sqlite3 could not make a schema-6 index")
    let upgraded = try Library(path: index)
    #expect(upgraded.setAside == nil, "\(upgraded.setAside ?? "")")
    #expect(try !upgraded.searchIndexIsStale())
    #expect(try Database(path: index).scalar("PRAGMA user_version") == "\(Library.schemaVersion)")
    emptyFiles(["beta"])
    _ = try upgraded.scan(music, tagHelper: namingHelper())
    #expect(try upgraded.search("alpha").map(\.title) == ["alpha"])
    #expect(try upgraded.search("beta").map(\.title) == ["beta"])
  }

  /// A scan that was to build the search index whole and was interrupted (its tracks written,
  /// the index left stale): searches still find every track, through the tracks themselves,
  /// and the next scan, however small, builds the index and keeps it in step again.
  @Test func anInterruptedBulkScanStillSearchesAndTheNextScanBuildsTheIndex() throws {
    emptyFiles(["alpha", "beta"])
    do {
      let library = try Library(path: index)
      _ = try library.scan(music, tagHelper: namingHelper())
      // As a bulk scan leaves it before its end; then a track written without the index.
      try library.leaveSearchIndexStale()
      emptyFiles(["gamma"])
    }
    let reopened = try Library(path: index)
    #expect(try reopened.searchIndexIsStale())
    emptyFiles(["delta"])
    try reopened.database.execute(
      "INSERT INTO tracks (path, size, mtime, title, folded) VALUES ('\(music)/gamma.flac', 0, 0,"
        + " 'gamma', 'gamma')")
    #expect(try reopened.search("gamma").map(\.title) == ["gamma"])
    #expect(try reopened.search("alpha").map(\.title) == ["alpha"])
    reopened.bulkScan = .max
    _ = try reopened.scan(music, tagHelper: namingHelper())
    #expect(try !reopened.searchIndexIsStale())
    for word in ["alpha", "beta", "gamma", "delta"] {
      #expect(try reopened.search(word).map(\.title) == [word])
    }
    // In step again: a file added after is found through the index.
    emptyFiles(["epsilon"])
    _ = try reopened.scan(music, tagHelper: namingHelper())
    #expect(try reopened.search("epsilon").map(\.title) == ["epsilon"])
  }
}

/// inotify: what changed below the music folder is said per folder, once quiet, and a new
/// folder is watched from then on.
@Suite(.timeLimit(.minutes(2))) struct LibraryWatcherTests {
  /// A new folder under /tmp (mkdtemp), for a test to remove.
  private func scratchFolder() throws -> String {
    var template = Array("/tmp/hark-watch-tests.XXXXXX".utf8CString)
    return try #require(
      template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }
        .map { String(cString: $0) })
  }

  @Test func changesAreSaidPerFolderAndNewFoldersAreWatched() throws {
    let root = try scratchFolder()
    defer { _ = system("rm -rf '\(root)'") }
    mkdir(root + "/A", 0o755)
    let watcher = try #require(LibraryWatcher(root: root))
    #expect(watcher.problem == nil)

    _ = system("touch '\(root)/A/one.flac'")
    #expect(watcher.nextChanges(quiet: .milliseconds(200)) == [root + "/A"])

    mkdir(root + "/B", 0o755)
    #expect(watcher.nextChanges(quiet: .milliseconds(200)) == [root])
    // B is watched now: a file written in it is said as B.
    _ = system("echo x > '\(root)/B/two.mp3'")
    #expect(watcher.nextChanges(quiet: .milliseconds(200)) == [root + "/B"])
    // Several changes in a burst: one answer, every folder in it.
    _ = system("touch '\(root)/A/3.flac' '\(root)/B/4.flac'; rm '\(root)/A/one.flac'")
    #expect(watcher.nextChanges(quiet: .milliseconds(300)) == [root + "/A", root + "/B"])
  }

  /// A folder renamed twice while watched (with one below it) is still watched under its new
  /// name, as is the one below it; one moved out of the tree is said no more. (The second
  /// rename's IN_MOVE_SELF used to drop the watch the IN_MOVED_TO before it had just made.)
  @Test func aFolderRenamedWhileWatchedIsStillWatched() throws {
    let base = try scratchFolder()
    defer { _ = system("rm -rf '\(base)'") }
    let root = base + "/music"
    _ = system("mkdir -p '\(root)/Ren A/Disc 1' '\(base)/elsewhere'")
    let watcher = try #require(LibraryWatcher(root: root))
    for name in ["Ren B", "Ren C"] {
      _ = system("mv '\(root)/Ren \(name == "Ren B" ? "A" : "B")' '\(root)/\(name)'")
      _ = watcher.nextChanges(quiet: .milliseconds(200))
      _ = system("touch '\(root)/\(name)/new.flac'")
      #expect(watcher.nextChanges(quiet: .milliseconds(200)) == [root + "/" + name])
      _ = system("touch '\(root)/\(name)/Disc 1/new.flac'")
      #expect(watcher.nextChanges(quiet: .milliseconds(200)) == [root + "/\(name)/Disc 1"])
    }
    _ = system("mv '\(root)/Ren C' '\(base)/elsewhere/'")
    #expect(watcher.nextChanges(quiet: .milliseconds(200)) == [root])
    // Gone from the tree: a change there, then one in the tree; only the tree's is said.
    _ = system("touch '\(base)/elsewhere/Ren C/x.flac' '\(base)/elsewhere/Ren C/Disc 1/y.flac'")
    _ = system("touch '\(root)/z.flac'")
    #expect(watcher.nextChanges(quiet: .milliseconds(200)) == [root])
  }
}
