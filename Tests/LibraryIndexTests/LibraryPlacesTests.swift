import Glibc
import Testing

@testable import LibraryIndex

/// Where long recordings were left, in the index: kept, found, marked played, listed, cleared
/// by file and by folder, kept across a rescan and an upgrade, and copied from an index set
/// aside into the one built in its place.
@Suite(.timeLimit(.minutes(1))) final class LibraryPlacesTests {
  let folder: String = {
    var template = Array("/tmp/hark-places-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()
  var index: String { folder + "/cache/hark/library.sqlite3" }

  deinit { _ = system("rm -rf '\(folder)'") }

  @Test func aPlaceIsKeptFoundAndMarkedPlayed() throws {
    let library = try Library(path: index)
    try library.syncEachWrite()
    #expect(try library.place(of: "/books/Dune.m4b") == nil)
    try library.keepPlace(of: "/books/Dune.m4b", at: 754.5, duration: 76_000, time: 100)
    #expect(
      try library.place(of: "/books/Dune.m4b")
        == KeptPlace(path: "/books/Dune.m4b", position: 754.5, duration: 76_000, updated: 100))
    try library.keepPlace(of: "/books/Dune.m4b", at: nil, duration: nil, time: 200)
    let played = try #require(try library.place(of: "/books/Dune.m4b"))
    #expect(played.isPlayed)
    #expect(played.duration == 76_000, "a length not given keeps the one known")
    #expect(try Database(path: index).scalar("PRAGMA synchronous") == "2", "FULL")
  }

  @Test func placesAreListedLatestFirstAndClearedByFileOrFolder() throws {
    let library = try Library(path: index)
    try library.keepPlace(of: "/pods/a.mp3", at: 10, duration: nil, time: 1)
    try library.keepPlace(of: "/pods/b.mp3", at: nil, duration: 60, time: 3)
    try library.keepPlace(of: "/podsandmore/c.mp3", at: 5, duration: nil, time: 2)
    try library.keepPlace(of: "/books/d.m4b", at: 7, duration: nil, time: 4)
    #expect(
      try library.places().map(\.path)
        == ["/books/d.m4b", "/pods/b.mp3", "/podsandmore/c.mp3", "/pods/a.mp3"])
    #expect(try library.places(under: "/pods").map(\.path) == ["/pods/b.mp3", "/pods/a.mp3"])
    #expect(try library.clearPlaces(under: "/pods/a.mp3") == 1)
    #expect(try library.clearPlaces(under: "/pods/") == 1, "a folder, not its namesakes")
    #expect(try library.places().map(\.path) == ["/books/d.m4b", "/podsandmore/c.mp3"])
    #expect(try library.clearPlaces() == 2)
    #expect(try library.places().isEmpty)
  }

  /// An index of schema 4 gets the places table, and keeps its tracks and plays.
  @Test func anIndexOfSchemaFourGainsPlaces() throws {
    let library = try Library(path: index)
    try library.recordPlay(of: "/m/a.flac", at: 5)
    let made = system(
      "sqlite3 '\(index)' 'DROP TABLE places; PRAGMA user_version = 4;' 2>/dev/null")
    try #require(made == 0, "sqlite3 could not make a schema-4 index")
    let upgraded = try Library(path: index)
    #expect(upgraded.setAside == nil, "\(upgraded.setAside ?? "")")
    #expect(try upgraded.plays(of: "/m/a.flac")?.count == 1)
    try upgraded.keepPlace(of: "/m/b.m4b", at: 3, duration: nil, time: 1)
    #expect(try upgraded.place(of: "/m/b.m4b")?.position == 3)
    #expect(try Database(path: index).scalar("PRAGMA user_version") == "\(Library.schemaVersion)")
  }

  /// The index is a cache that is rebuilt when it cannot be used, but the places are the
  /// user's: the new index gets them from the one set aside.
  @Test func placesOutliveAnIndexSetAside() throws {
    let library = try Library(path: index)
    try library.keepPlace(of: "/books/e.m4b", at: 1_234, duration: 5_000, time: 9)
    try library.keepPlace(of: "/pods/f.mp3", at: nil, duration: nil, time: 8)
    // Of a version hark does not know: set aside and rebuilt.
    try #require(system("sqlite3 '\(index)' 'PRAGMA user_version = 99;' 2>/dev/null") == 0)
    let rebuilt = try Library(path: index)
    #expect(rebuilt.setAside?.contains("another version") == true, "\(rebuilt.setAside ?? "")")
    #expect(try rebuilt.place(of: "/books/e.m4b")?.position == 1_234)
    #expect(try rebuilt.place(of: "/pods/f.mp3")?.isPlayed == true)
  }
}
