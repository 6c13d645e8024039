import Glibc
import MediaFiles
import Platform
import PlayerCore

/// One row of the library browser.
public struct LibraryEntry: Hashable, Sendable {
  public enum Kind: Hashable, Sendable {
    /// "..": the folder above.
    case parent
    case folder
    case file
    /// A file of no format hark plays (`QueueLoader.whyLeftOut`): listed, marked, and says why
    /// when chosen, rather than invisible.
    case unplayable(reason: String)
    /// An M3U, M3U8 or PLS playlist: Enter plays it (replacing the queue, which undo brings
    /// back), a adds it, e plays it next.
    case playlist
  }
  public var kind: Kind
  /// The name shown: the file or folder name.
  public var name: String
  public var path: String
  /// What the number column shows for this row rather than the track's number: Most played's
  /// count of plays. The row's own, not its track's tags (shared by every list the track is
  /// in, and read again from the file as it plays).
  public var count: Int?

  public init(kind: Kind, name: String, path: String, count: Int? = nil) {
    self.kind = kind
    self.name = name
    self.path = path
    self.count = count
  }
}

/// What the library shows of a file besides its name: its tags and length, read lazily (off
/// the UI thread) and cached.
public struct TrackInfo: Hashable, Sendable {
  public var title: String?
  public var artist: String?
  public var album: String?
  /// Seconds, when the file says.
  public var duration: Double? {
    get { seconds < 0 ? nil : Double(seconds) }
    set { seconds = newValue.map { $0 >= 0 && $0.isFinite ? Float($0) : -1 } ?? -1 }
  }
  /// The track's number on its album, and the album's year, when the tags say.
  public var track: Int? {
    get { trackNumber == Int32.min ? nil : Int(trackNumber) }
    set { trackNumber = Self.stored(newValue) }
  }
  public var year: Int? {
    get { yearNumber == Int32.min ? nil : Int(yearNumber) }
    set { yearNumber = Self.stored(newValue) }
  }

  // Stored small: the interface holds one for each track of a queue or a list (50,000 for a
  // whole library queued), in a table twice that size. -1 and Int32.min: not known.
  private var seconds: Float = -1
  private var trackNumber = Int32.min
  private var yearNumber = Int32.min

  private static func stored(_ value: Int?) -> Int32 {
    guard let value, value > Int(Int32.min), value <= Int(Int32.max) else { return Int32.min }
    return Int32(value)
  }

  public init(
    title: String? = nil, artist: String? = nil, album: String? = nil, duration: Double? = nil,
    track: Int? = nil, year: Int? = nil
  ) {
    self.title = title
    self.artist = artist
    self.album = album
    self.duration = duration
    self.track = track
    self.year = year
  }
}

/// Reading a folder for the library browser: sub-folders first, then audio files, each in the
/// order people expect ("2" before "10"), hidden files left out.
public enum Folder {
  /// The extensions the player's decoders read (libsndfile's and FFmpeg's).
  public static var audioExtensions: Set<String> { QueueLoader.audioExtensions }

  /// The rows for `path`, with ".." first unless it is "/"; or why it cannot be read.
  public static func list(_ path: String) -> Result<[LibraryEntry], FolderError> {
    guard let dir = opendir(FileName.c(path)) else {
      return .failure(FolderError(path: path, code: errno))
    }
    var folders: [LibraryEntry] = []
    var files: [LibraryEntry] = []
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        FileName.string(Array(raw.prefix { $0 != 0 }))
      }
      if !name.hasPrefix(".") { names.append(name) }
    }
    // An album ripped to one file with its cue sheet shows as its tracks, not as the file.
    let sheets = QueueLoader.cueSheets(in: path, names)
    let cut = Set(sheets.values.flatMap(\.files))
    for (sheetPath, sheet) in sheets {
      for track in sheet.tracks {
        let number = track.number < 10 ? "0\(track.number)" : "\(track.number)"
        files.append(
          LibraryEntry(
            kind: .file, name: "\(number) \(track.title ?? "Track \(track.number)")",
            path: CueSheet.Reference(sheet: sheetPath, track: track.number).path))
      }
    }
    rewinddir(dir)
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        FileName.string(Array(raw.prefix { $0 != 0 }))
      }
      if name.hasPrefix(".") { continue }
      let full = join(path, name)
      if cut.contains(full) { continue }
      var isFolder = Int32(entry.pointee.d_type) == Int32(DT_DIR)
      // Symbolic links and file systems that do not fill d_type need a stat.
      if Int32(entry.pointee.d_type) == Int32(DT_LNK)
        || Int32(entry.pointee.d_type) == Int32(DT_UNKNOWN)
      {
        var st = stat()
        guard stat(FileName.c(full), &st) == 0 else { continue }
        isFolder = (st.st_mode & S_IFMT) == S_IFDIR
      }
      if isFolder {
        folders.append(LibraryEntry(kind: .folder, name: name, path: full))
      } else if isAudio(name) {
        files.append(LibraryEntry(kind: .file, name: name, path: full))
      } else if QueueLoader.isPlaylist(name) {
        files.append(LibraryEntry(kind: .playlist, name: name, path: full))
      } else if let reason = QueueLoader.whyLeftOut(name) {
        files.append(LibraryEntry(kind: .unplayable(reason: reason), name: name, path: full))
      }
    }
    closedir(dir)
    folders = folders.sorted(byName: \.name)
    files = files.sorted(byName: \.name)
    let parent: [LibraryEntry] =
      path == "/" ? [] : [LibraryEntry(kind: .parent, name: "..", path: Self.parent(of: path))]
    return .success(parent + folders + files)
  }

  /// Whether the name has one of `audioExtensions`.
  public static func isAudio(_ name: String) -> Bool {
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
    return audioExtensions.contains(name[name.index(after: dot)...].lowercased())
  }

  /// "a/b" from "a" and "b", without doubling a slash.
  public static func join(_ folder: String, _ name: String) -> String {
    FileName.join(folder, name)
  }

  /// The folder above `path` ("/" above "/a").
  public static func parent(of path: String) -> String {
    var p = Substring(path)
    while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
    guard let slash = p.lastIndex(of: "/") else { return "." }
    return slash == p.startIndex ? "/" : String(p[..<slash])
  }

  /// `path` made absolute against the current directory (`QueueLoader.absolute`).
  public static func absolute(_ path: String) -> String { QueueLoader.absolute(path) }

  /// A title for a file without tags: its name without the extension.
  public static func title(fromName name: String) -> String {
    // The last part of a path (trailing slashes aside), found in its bytes ("/" and "." are
    // ASCII, so never inside a longer character's): the queue's filter asks this of each of
    // its entries.
    let bytes = name.utf8
    let slash = UInt8(ascii: "/")
    var end = bytes.endIndex
    while end > bytes.startIndex, bytes[bytes.index(before: end)] == slash {
      end = bytes.index(before: end)
    }
    var start = end
    while start > bytes.startIndex, bytes[bytes.index(before: start)] != slash {
      start = bytes.index(before: start)
    }
    if start == end { return name }
    // Without its extension: from its last dot, unless that dot starts the name.
    var cut = end
    var i = end
    while i > start {
      i = bytes.index(before: i)
      if bytes[i] == UInt8(ascii: ".") {
        if i > start { cut = i }
        break
      }
    }
    return String(name[start..<cut])
  }

  /// Name order as people expect, the queue's own (`String.localizedStandardLess`); a list of
  /// many is sorted with `sorted(byName:)`, which folds each name once.
  public static func naturalLess(_ a: String, _ b: String) -> Bool { a.localizedStandardLess(b) }
}

/// A folder that could not be read.
public struct FolderError: Error, Hashable, Sendable, CustomStringConvertible {
  public var path: String
  public var code: Int32
  public var description: String {
    "cannot open '\(path)': \(String(cString: strerror(code)).lowercased())"
  }
}
