import Glibc
import Platform
import Testing

@testable import TerminalUI

/// The Playlists view ("playlists (M3U/M3U8/PLS files in the music folder and hark's own)", "save
/// as M3U8 (named; appears among playlists), load a playlist"): what it lists, how its rows are
/// named and ordered, and that they act as a playlist in a folder does.
@Suite(.timeLimit(.minutes(2))) struct PlaylistsViewTests {
  private func temporaryFolder() throws -> String {
    var template = Array("/tmp/hark-playlists-view.XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer {
      mkdtemp($0.baseAddress!).map { String(cString: $0) }
    }
    return try #require(made)
  }

  private func touch(_ path: String) {
    let slash = path.lastIndex(of: "/")!
    makeDirectories(String(path[..<slash]))
    close(open(path, O_WRONLY | O_CREAT, 0o600))
  }

  private func remove(_ folder: String) { _ = system("rm -rf '\(folder)'") }

  /// Every .m3u, .m3u8 and .pls below the music folder, whatever the case of the extension,
  /// named by its path relative to the music folder (two "favourites.m3u" told apart), in
  /// natural order with case folded; hidden ones, audio and other files, a FIFO and a link
  /// back up the tree add nothing; a link to a playlist is listed.
  @Test func theMusicFoldersPlaylistsAreFoundByTheirRelativePaths() throws {
    let music = try temporaryFolder()
    defer { remove(music) }
    for name in [
      "rock/favourites.m3u", "jazz/favourites.m3u", "jazz/Late/10 night.M3U8",
      "jazz/Late/2 night.pls", "Best.PLS", "alpha.m3u8", "rock/01.flac", "rock/cover.jpg",
      "rock/notes.m3u.txt", ".hidden.m3u", ".secret/in.m3u", "rock/.cache/x.m3u8",
    ] {
      touch(music + "/" + name)
    }
    #expect(mkfifo(music + "/pipe.m3u", 0o600) == 0)
    #expect(symlink(music, music + "/jazz/loop") == 0)
    #expect(symlink(music + "/alpha.m3u8", music + "/rock/linked.m3u8") == 0)
    let found = Playlists.found(under: music)
    #expect(
      found.map(\.name) == [
        "alpha.m3u8", "Best.PLS", "jazz/favourites.m3u", "jazz/Late/2 night.pls",
        "jazz/Late/10 night.M3U8", "rock/favourites.m3u", "rock/linked.m3u8",
      ])
    #expect(found.allSatisfy { $0.kind == .playlist })
    #expect(found.allSatisfy { $0.path == music + "/" + $0.name })
    #expect(Playlists.found(under: music + "/") == found, "a music folder given with its slash")
    #expect(Playlists.found(under: music + "/none").isEmpty)
  }

  /// hark's own come first, by their names without the extension, in natural order; what is
  /// not a playlist (a save under way, ".saving") is left out; one that is in both lists once.
  @Test func harksOwnComeFirstByName() throws {
    let own = try temporaryFolder()
    defer { remove(own) }
    for name in ["road trip.m3u8", "10 best.m3u8", "2 best.m3u", "Calm.pls", "x.m3u8.saving"] {
      touch(own + "/" + name)
    }
    #expect(!Playlists.anyOwn(in: own + "/none"))
    #expect(!Playlists.anyOwn(in: nil))
    #expect(Playlists.anyOwn(in: own))
    let found = [
      LibraryEntry(kind: .playlist, name: "a/b.m3u", path: "/music/a/b.m3u"),
      LibraryEntry(kind: .playlist, name: "Calm.pls", path: own + "/Calm.pls"),
    ]
    let rows = Playlists.rows(own: own, found: found)
    #expect(rows.map(\.name) == ["2 best", "10 best", "Calm", "road trip", "a/b.m3u"])
    #expect(rows.map(\.path).first == own + "/2 best.m3u")
    #expect(rows.allSatisfy { $0.kind == .playlist })
    #expect(Playlists.rows(own: nil, found: found) == found)
  }

  /// A playlist saved with w is among them the next time the view is listed.
  @Test func aSavedPlaylistIsListed() throws {
    let own = try temporaryFolder()
    defer { remove(own) }
    #expect(Playlists.rows(own: own, found: []).isEmpty)
    _ = try Playlists.save(["/music/a.flac"], as: "Road trip", in: own).get()
    #expect(
      Playlists.rows(own: own, found: [])
        == [LibraryEntry(kind: .playlist, name: "Road trip", path: own + "/Road trip.m3u8")])
  }

  /// Its own path and title; offered beside Artists, Albums and Genres, and alone when the
  /// index holds no tracks but hark has playlists of its own.
  @Test func theViewAndItsEntrance() {
    #expect(IndexView.playlists.path == "hark:index/playlists")
    #expect(IndexView(path: "hark:index/playlists") == .playlists)
    #expect(IndexView.playlists.title == "Playlists")
    #expect(
      IndexView.entrances(indexHoldsTracks: true, ownPlaylists: false).map(\.name) == [
        "Artists", "Albums", "Genres", "Playlists", "Most played", "Recently played",
      ])
    // The plays' views: their paths and titles, each its own way back.
    for view in [IndexView.mostPlayed, .recentlyPlayed] {
      #expect(IndexView(path: view.path) == view)
    }
    #expect(IndexView.mostPlayed.path == "hark:index/most-played")
    #expect(IndexView.recentlyPlayed.title == "Recently played")
    #expect(IndexView.mostPlayed.entranceNote == "library: your plays, the most first")
    #expect(
      IndexView.entrances(indexHoldsTracks: false, ownPlaylists: true)
        == [LibraryEntry(kind: .folder, name: "Playlists", path: "hark:index/playlists")])
    #expect(IndexView.entrances(indexHoldsTracks: false, ownPlaylists: false).isEmpty)
  }

  /// A music folder with a "Playlists" folder of its own shows two "Playlists/" rows: the
  /// index's view says what it is, the folder does not (they were the same line).
  @Test func theEntrancesSayTheyAreViewsBesideAFolderOfTheSameName() {
    var s = InterfaceState(
      folder: "/music", layout: Layout(rows: 24, columns: 100), bindings: .defaults)
    s.showFolder(
      "/music",
      .success(
        IndexView.entrances(indexHoldsTracks: true, ownPlaylists: false) + [
          LibraryEntry(kind: .folder, name: "Playlists", path: "/music/Playlists"),
          LibraryEntry(kind: .folder, name: "Abba", path: "/music/Abba"),
        ]), now: 0)
    let lines = screen(s).split(separator: "\n").map(String.init)
    let playlists = lines.filter { $0.contains("Playlists/") }
    #expect(playlists.count == 2)
    #expect(playlists.first?.contains("library: playlists") == true)
    #expect(playlists.last?.contains("library") == false)
    #expect(lines.contains { $0.contains("Artists/") && $0.contains("library: by artist") })
    #expect(lines.contains { $0.contains("Albums/") && $0.contains("library: albums A–Z") })
    #expect(lines.contains { $0.contains("Genres/") && $0.contains("library: by genre") })
    #expect(lines.contains { $0.contains("Abba/") && !$0.contains("library") })
  }

  private func playlistsView(_ rows: [LibraryEntry]) -> InterfaceState {
    var s = InterfaceState(
      folder: "/music", layout: Layout(rows: 24, columns: 100), bindings: .defaults)
    s.showFolder(
      IndexView.playlists.path,
      .success([LibraryEntry(kind: .parent, name: "..", path: "/music")] + rows), now: 0)
    return s
  }

  private func screen(_ s: InterfaceState) -> String {
    let c = TextCanvas(rows: s.layout.rows, columns: s.layout.columns)
    Screen.draw(s, on: c, now: 0)
    return c.lines.joined(separator: "\n")
  }

  /// Its rows act as a playlist in a folder does (Enter plays it, a adds it, e plays it next),
  /// and show their names in full: a relative path keeps its folders.
  @Test func itsRowsPlayAddAndPlayNext() throws {
    var s = playlistsView([
      LibraryEntry(kind: .playlist, name: "Road trip", path: "/own/Road trip.m3u8"),
      LibraryEntry(
        kind: .playlist, name: "jazz/favourites.m3u", path: "/music/jazz/favourites.m3u"),
    ])
    func press(_ names: String...) throws -> [InterfaceEffect] {
      var out: [InterfaceEffect] = []
      for n in names { out += s.handle(try Key(parsing: n), now: 0) }
      return out
    }
    #expect(try press("g", "j", "enter") == [.playPlaylist("/own/Road trip.m3u8")])
    #expect(try press("g", "j", "a") == [.addFolder("/own/Road trip.m3u8")])
    #expect(try press("G", "e") == [.addFolder("/music/jazz/favourites.m3u", next: true)])
    #expect(try press("backspace") == [.openFolder("/music")])
    let shown = screen(s)
    #expect(shown.contains("Playlists"))
    #expect(shown.contains("Road trip"))
    #expect(shown.contains("jazz/favourites.m3u"))
  }

  /// An empty view says so, as an empty folder does: what is being looked for while the walk
  /// runs, then that there are none and how to make one.
  @Test func anEmptyViewSaysSo() {
    var s = playlistsView([])
    s.lookingForPlaylists = true
    #expect(screen(s).contains("Looking for playlists in the music folder…"))
    s.lookingForPlaylists = false
    #expect(screen(s).contains("No playlists: w saves the queue as one"))
    let one = playlistsView([LibraryEntry(kind: .playlist, name: "a", path: "/own/a.m3u8")])
    #expect(!screen(one).contains("No playlists"))
  }
}
