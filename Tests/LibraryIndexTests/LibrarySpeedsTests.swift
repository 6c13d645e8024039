import Glibc
import Testing

@testable import LibraryIndex

/// The speeds podcasts and books play at, in the index, by folder: kept, changed, listed, kept
/// across an upgrade, and copied from an index set aside into the one built in its place.
@Suite(.timeLimit(.minutes(1))) final class LibrarySpeedsTests {
  let folder: String = {
    var template = Array("/tmp/hark-speeds-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()
  var index: String { folder + "/cache/hark/library.sqlite3" }

  deinit { _ = system("rm -rf '\(folder)'") }

  @Test func aSpeedIsKeptByFolderChangedAndListedLatestFirst() throws {
    let library = try Library(path: index)
    #expect(try library.speed(ofFolder: "/pods/Lectures") == nil)
    try library.keepSpeed(1.5, ofFolder: "/pods/Lectures", time: 1)
    try library.keepSpeed(2, ofFolder: "/books/Dune", time: 2)
    try library.keepSpeed(1.75, ofFolder: "/pods/Lectures", time: 3)
    #expect(try library.speed(ofFolder: "/pods/Lectures") == 1.75)
    #expect(try library.speed(ofFolder: "/pods") == nil, "a folder's, not its parent's")
    #expect(
      try library.speeds()
        == [
          KeptSpeed(folder: "/pods/Lectures", rate: 1.75, updated: 3),
          KeptSpeed(folder: "/books/Dune", rate: 2, updated: 2),
        ])
  }

  /// An index of schema 5 gets the speeds table, and keeps its places.
  @Test func anIndexOfSchemaFiveGainsSpeeds() throws {
    let library = try Library(path: index)
    try library.keepPlace(of: "/m/b.m4b", at: 3, duration: nil, time: 1)
    let made = system(
      "sqlite3 '\(index)' 'DROP TABLE speeds; PRAGMA user_version = 5;' 2>/dev/null")
    try #require(made == 0, "sqlite3 could not make a schema-5 index")
    let upgraded = try Library(path: index)
    #expect(upgraded.setAside == nil, "\(upgraded.setAside ?? "")")
    #expect(try upgraded.place(of: "/m/b.m4b")?.position == 3)
    try upgraded.keepSpeed(1.25, ofFolder: "/m", time: 2)
    #expect(try upgraded.speed(ofFolder: "/m") == 1.25)
    #expect(try Database(path: index).scalar("PRAGMA user_version") == "\(Library.schemaVersion)")
  }

  /// The speeds are the user's choices, as the places are: an index rebuilt gets them.
  @Test func speedsOutliveAnIndexSetAside() throws {
    let library = try Library(path: index)
    try library.keepSpeed(2.5, ofFolder: "/pods/News", time: 9)
    try #require(system("sqlite3 '\(index)' 'PRAGMA user_version = 99;' 2>/dev/null") == 0)
    let rebuilt = try Library(path: index)
    #expect(rebuilt.setAside?.contains("another version") == true, "\(rebuilt.setAside ?? "")")
    #expect(try rebuilt.speed(ofFolder: "/pods/News") == 2.5)
  }
}
