/// The library's views over the tag index (artists → albums → tracks, albums A–Z, genres),
/// and search across the whole library. The index itself (SQLite, TagLib) is the owner's: the
/// interface reaches it through `IndexAccess`, and names its views with paths of their own,
/// which the library browses like folders: "hark:index/artists", "hark:index/artist/NAME",
/// "hark:index/album/ARTIST␟ALBUM", "hark:index/albums", "hark:index/genres",
/// "hark:index/genre/NAME", "hark:index/playlists". A tag the files do not have is "␞" in a path.
public enum IndexView: Hashable, Sendable {
  case artists
  case albums
  case genres
  /// One artist's albums, by year.
  case artist(String?)
  /// One album's tracks, by disc and track.
  case album(artist: String?, title: String?)
  /// One genre's albums.
  case genre(String?)
  /// hark's own playlists and the playlist files in the music folder (`Playlists.rows`): not
  /// the index's, and so offered when hark has playlists of its own though the index is empty.
  case playlists
  /// The tracks listened to most (the index's play counts), the most first.
  case mostPlayed
  /// The tracks listened to last, the latest first.
  case recentlyPlayed

  static let prefix = "hark:index/"
  private static let none = "\u{1E}"
  private static let separator: Character = "\u{1F}"

  /// The view `path` names, or nil for a folder.
  public init?(path: String) {
    guard path.hasPrefix(Self.prefix) else { return nil }
    let rest = path.dropFirst(Self.prefix.count)
    func value(_ s: Substring) -> String? { s == Self.none ? nil : String(s) }
    switch rest {
    case "artists": self = .artists
    case "albums": self = .albums
    case "genres": self = .genres
    case "playlists": self = .playlists
    case "most-played": self = .mostPlayed
    case "recently-played": self = .recentlyPlayed
    default:
      if rest.hasPrefix("artist/") {
        self = .artist(value(rest.dropFirst("artist/".count)))
      } else if rest.hasPrefix("genre/") {
        self = .genre(value(rest.dropFirst("genre/".count)))
      } else if rest.hasPrefix("album/") {
        let both = rest.dropFirst("album/".count)
        guard let cut = both.firstIndex(of: Self.separator) else { return nil }
        self = .album(artist: value(both[..<cut]), title: value(both[both.index(after: cut)...]))
      } else {
        return nil
      }
    }
  }

  public var path: String {
    func part(_ s: String?) -> String { s ?? Self.none }
    switch self {
    case .artists: return Self.prefix + "artists"
    case .albums: return Self.prefix + "albums"
    case .genres: return Self.prefix + "genres"
    case .playlists: return Self.prefix + "playlists"
    case .mostPlayed: return Self.prefix + "most-played"
    case .recentlyPlayed: return Self.prefix + "recently-played"
    case .artist(let a): return Self.prefix + "artist/" + part(a)
    case .genre(let g): return Self.prefix + "genre/" + part(g)
    case .album(let a, let t):
      return Self.prefix + "album/" + part(a) + String(Self.separator) + part(t)
    }
  }

  /// What the header shows for it.
  public var title: String {
    switch self {
    case .artists: return "Artists"
    case .albums: return "Albums"
    case .genres: return "Genres"
    case .playlists: return "Playlists"
    case .mostPlayed: return "Most played"
    case .recentlyPlayed: return "Recently played"
    case .artist(let a): return "Artists › " + (a ?? Self.unknownArtist)
    case .genre(let g): return "Genres › " + (g ?? Self.unknownGenre)
    case .album(let a, let t):
      return (a ?? Self.unknownArtist) + " › " + (t ?? Self.unknownAlbum)
    }
  }

  /// What it is called in a line of the status line: the artist, the album, the genre.
  public var name: String {
    switch self {
    case .artists, .albums, .genres, .playlists, .mostPlayed, .recentlyPlayed: return title
    case .artist(let a): return a ?? Self.unknownArtist
    case .genre(let g): return g ?? Self.unknownGenre
    case .album(_, let t): return t ?? Self.unknownAlbum
    }
  }

  /// What an entrance's row says beside its name, so that it reads as a view of the whole
  /// library, not as a folder: a music folder often has a "Playlists" folder of its own, whose
  /// row sits right below the view's.
  public var entranceNote: String? {
    switch self {
    case .artists: return "library: by artist"
    case .albums: return "library: albums A–Z"
    case .genres: return "library: by genre"
    case .playlists: return "library: playlists"
    case .mostPlayed: return "library: your plays, the most first"
    case .recentlyPlayed: return "library: your plays, the latest first"
    case .artist, .genre, .album: return nil
    }
  }

  public static let unknownArtist = "Unknown artist"
  public static let unknownAlbum = "Unknown album"
  public static let unknownGenre = "No genre"

  /// The rows that lead into the views from the music folder: all of them when the index holds
  /// tracks; only Playlists when it does not but hark has playlists of its own (saved while the
  /// first scan runs, or with a music folder of no tracks), which are then still loaded from
  /// here; none otherwise, as before the index (the folder's own playlists are in the folder).
  public static func entrances(indexHoldsTracks: Bool, ownPlaylists: Bool) -> [LibraryEntry] {
    let playlists = LibraryEntry(kind: .folder, name: "Playlists", path: IndexView.playlists.path)
    guard indexHoldsTracks else { return ownPlaylists ? [playlists] : [] }
    return [
      LibraryEntry(kind: .folder, name: "Artists", path: IndexView.artists.path),
      LibraryEntry(kind: .folder, name: "Albums", path: IndexView.albums.path),
      LibraryEntry(kind: .folder, name: "Genres", path: IndexView.genres.path),
      playlists,
      LibraryEntry(kind: .folder, name: "Most played", path: IndexView.mostPlayed.path),
      LibraryEntry(kind: .folder, name: "Recently played", path: IndexView.recentlyPlayed.path),
    ]
  }
}

/// An index view's rows (folders for artists and albums, files for tracks), and the tags of
/// its tracks (so that nothing has to be read from the files to show them).
public struct IndexListing: Sendable {
  public var rows: [LibraryEntry]
  public var tags: [String: TrackInfo]
  /// A search's rows are its first matches only (at most `Library.searchLimit`): how many it
  /// found in all when they are cut, `.more` when it is not known how many more there are, nil
  /// when the rows are all of them.
  public var cut: Cut?

  public enum Cut: Equatable, Sendable {
    case of(Int)
    case more
  }

  public init(rows: [LibraryEntry], tags: [String: TrackInfo] = [:], cut: Cut? = nil) {
    self.rows = rows
    self.tags = tags
    self.cut = cut
  }
}

/// How the interface reaches the owner's tag index. Each is called on the thread named.
public struct IndexAccess: Sendable {
  /// UI thread: a view's rows; nil when the index cannot be read. (Not asked for `.playlists`,
  /// which the interface lists from the files themselves.)
  public var browse: @Sendable (IndexView) -> IndexListing?
  /// UI thread: the tracks matching every word of a query, by any field, case and accents
  /// folded; nil when the index cannot be read. Called at each keystroke, so it may leave out
  /// the tags: those of the rows drawn are then read through `tags`.
  public var search: @Sendable (String) -> IndexListing?
  /// A thread of its own, for as long as the interface runs: brings the index of the music
  /// folder up to date, saying how it goes (each line for the status line, and whether it is
  /// a problem), then keeps it current as files change; `updated` after each change of the
  /// index, with the paths read again or removed (whose tags the interface reads again).
  public var keepCurrent:
    @Sendable (
      _ progress: @escaping @Sendable (_ line: String, _ isProblem: Bool) -> Void,
      _ updated: @escaping @Sendable (_ changed: [String]) -> Void
    ) -> Void
  /// Any thread: what the index holds of a file's tags; nil when it is not indexed (or its tags
  /// could not be read). Read before the file itself, which for an .m4a means a helper process:
  /// a queue of 50,000 tracks is then labelled from the index, not by 50,000 reads.
  public var tags: @Sendable (String) -> TrackInfo? = { _ in nil }
  /// The interface's worker: the files of what a view lists, in its order (`a` and `e` on an
  /// artist, an album, a genre); nil when the index cannot be read.
  public var tracks: @Sendable (IndexView) -> [String]? = { _ in nil }
  /// UI thread: whether the index holds any track of the library (its views are offered only
  /// then); nil when the index cannot be read. By default, whether it lists any artist.
  public var holdsTracks: @Sendable () -> Bool?
  /// UI thread, once the first view is drawn: gets search ready for the first keystrokes (the
  /// owner's search table, built meanwhile on a thread of its own).
  public var prepareSearch: @Sendable () -> Void = {}
  /// UI thread: where long recordings were left (partway, or heard to their end), by path; nil
  /// when the index cannot be read. A few rows: read each time a list is opened.
  public var places: @Sendable () -> [String: PlaceMark]? = { nil }

  public init(
    browse: @escaping @Sendable (IndexView) -> IndexListing?,
    search: @escaping @Sendable (String) -> IndexListing?,
    keepCurrent:
      @escaping @Sendable (
        _ progress: @escaping @Sendable (_ line: String, _ isProblem: Bool) -> Void,
        _ updated: @escaping @Sendable (_ changed: [String]) -> Void
      ) -> Void
  ) {
    self.browse = browse
    self.search = search
    self.keepCurrent = keepCurrent
    holdsTracks = { browse(.artists).map { !$0.rows.isEmpty } }
  }
}
