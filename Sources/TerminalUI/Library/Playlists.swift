import Glibc
import MediaFiles
import Platform
import PlayerCore

/// hark's own playlists: the queue saved under a name, as M3U8 (a format every player reads),
/// in `$XDG_DATA_HOME/hark/playlists` (else `~/.local/share/hark/playlists`).
public enum Playlists {
  /// The folder, or nil without a home.
  public static func folder() -> String? { XDGDirectory.data.path.map { $0 + "/hark/playlists" } }

  /// Why `name` cannot name a playlist, or nil when it can.
  public static func problem(with name: String) -> String? {
    if name.trimmingSpaces.isEmpty { return "a playlist needs a name" }
    if name.contains("/") { return "a playlist's name cannot hold '/'" }
    if name.hasPrefix(".") { return "a playlist's name cannot start with '.'" }
    if name.utf8.count > 200 { return "the name is too long" }
    return nil
  }

  /// The file hark's playlist `name` is kept in (in `given`, else hark's playlists folder);
  /// nil without a home folder.
  public static func path(of name: String, in given: String? = nil) -> String? {
    (given ?? folder()).map { $0 + "/" + name.trimmingSpaces + ".m3u8" }
  }

  /// Writes `paths` (absolute) as the playlist `name`, replacing one of that name (atomically,
  /// `replaceFile`: a failure or a crash leaves the old one whole). The path
  /// written, and whether it replaced one; or why not, in plain words.
  public static func save(_ paths: [String], as name: String, in given: String? = nil)
    -> Result<(path: String, replaced: Bool), SaveError>
  {
    if let problem = problem(with: name) { return .failure(SaveError(message: problem)) }
    guard let folder = given ?? folder(), let path = path(of: name, in: folder) else {
      return .failure(SaveError(message: "no home folder to keep playlists in"))
    }
    let replaced = access(path, F_OK) == 0
    // Each name as the file system has it: one that is not UTF-8 is written as its bytes
    // (`FileName`), so that the playlist names that very file for hark and every other player.
    var bytes = Array("#EXTM3U\n".utf8)
    for p in paths { bytes += FileName.bytes(p) + [0x0A] }
    // Readable by the other players of the machine, as any document the user saves (0666 less
    // the umask).
    do { try replaceFile(path, with: bytes, mode: 0o666) } catch {
      return .failure(SaveError(message: "cannot write '\(path)': \(error.reason.lowercased())"))
    }
    return .success((path, replaced))
  }

  /// The Playlists view's rows: hark's own (those in `own`, by their names without the
  /// extension), then `found`, the playlist files of the music folder (`found(under:)`), less
  /// any that are hark's own too. Each row is a playlist, as in the folder view: Enter plays
  /// it, a adds it, e plays it next.
  public static func rows(own: String?, found: [LibraryEntry]) -> [LibraryEntry] {
    let mine = own.map { ownRows(in: $0) } ?? []
    let taken = Set(mine.map(\.path))
    return mine + found.filter { !taken.contains($0.path) }
  }

  /// hark's own playlists: every .m3u8, .m3u and .pls file in `folder`, named without the
  /// extension.
  public static func ownRows(in folder: String) -> [LibraryEntry] {
    guard let dir = opendir(FileName.c(folder)) else { return [] }
    defer { closedir(dir) }
    var rows: [LibraryEntry] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        FileName.string(Array(raw.prefix { $0 != 0 }))
      }
      guard !name.hasPrefix("."), QueueLoader.isPlaylist(name) else { continue }
      rows.append(
        LibraryEntry(
          kind: .playlist, name: Folder.title(fromName: name), path: Folder.join(folder, name)))
    }
    return rows.sorted(byName: \.name)
  }

  /// Whether `folder` holds any of hark's own playlists (a look at one folder).
  public static func anyOwn(in folder: String?) -> Bool {
    guard let folder else { return false }
    return !ownRows(in: folder).isEmpty
  }

  /// The playlist files (.m3u, .m3u8, .pls, whatever the case of the extension) anywhere below
  /// `root`, hidden files and folders left out as the folder view leaves them out, each folder
  /// visited once (a link back up the tree adds nothing); named by their paths relative to
  /// `root` (so that two "favourites.m3u" in different folders can be told apart), in natural
  /// order, case folded.
  ///
  /// A walk of the whole tree: off the UI thread (the interface's worker). 5,000 folders of
  /// 50,000 files took 0.2 s for `find` alone on a loaded two-core machine with the cache warm
  /// (the benchmark's library, `scripts/bench --library`), and a cold cache is slower still.
  public static func found(under root: String) -> [LibraryEntry] {
    let base = root.hasSuffix("/") ? root : root + "/"
    var rows: [LibraryEntry] = []
    var visited: Set<[UInt64]> = []
    var pending = [root]
    while let folder = pending.popLast() {
      var st = stat()
      guard stat(FileName.c(folder), &st) == 0,
        visited.insert([UInt64(st.st_dev), UInt64(st.st_ino)]).inserted,
        let dir = opendir(FileName.c(folder))
      else { continue }
      while let entry = readdir(dir) {
        let type = Int32(entry.pointee.d_type)
        // A name is made only for a folder or a playlist: 50,000 tracks' names are looked at as
        // the bytes they are.
        let name: String? = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          guard let start = raw.baseAddress else { return nil }
          let bytes = raw[..<strnlen(start.assumingMemoryBound(to: CChar.self), raw.count)]
          guard bytes.first != UInt8(ascii: "."),
            type != Int32(DT_REG) || hasPlaylistExtension(bytes)
          else { return nil }
          return FileName.string(Array(bytes))
        }
        guard let name else { continue }
        let path = Folder.join(folder, name)
        var isFolder = type == Int32(DT_DIR)
        if type == Int32(DT_LNK) || type == Int32(DT_UNKNOWN) {
          // Links, and file systems that do not fill d_type, need a stat.
          var st = stat()
          guard stat(FileName.c(path), &st) == 0 else { continue }
          isFolder = (st.st_mode & S_IFMT) == S_IFDIR
          guard isFolder || (st.st_mode & S_IFMT) == S_IFREG else { continue }
        } else if !isFolder && type != Int32(DT_REG) {
          continue  // a FIFO, a device, a socket
        }
        if isFolder {
          pending.append(path)
        } else if QueueLoader.isPlaylist(name) {
          rows.append(
            LibraryEntry(kind: .playlist, name: String(path.dropFirst(base.count)), path: path))
        }
      }
      closedir(dir)
    }
    return rows.sorted(byName: \.name)
  }

  /// Whether a file name's bytes end in ".m3u", ".m3u8" or ".pls", in any case.
  private static func hasPlaylistExtension(_ name: Slice<UnsafeRawBufferPointer>) -> Bool {
    guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else {
      return false
    }
    // Byte by byte, ASCII letters lowered: an array made for each of 50,000 names cost more
    // than the rest of the look at them.
    func lowered(_ b: UInt8) -> UInt8 { b >= 65 && b <= 90 ? b | 0x20 : b }
    func named(_ ext: StaticString) -> Bool {
      guard name.endIndex - dot - 1 == ext.utf8CodeUnitCount else { return false }
      for i in 0..<ext.utf8CodeUnitCount
      where lowered(name[dot + 1 + i]) != ext.utf8Start[i] { return false }
      return true
    }
    return named("m3u") || named("m3u8") || named("pls")
  }

  public struct SaveError: Error, Equatable, Sendable {
    public var message: String
  }
}

extension String {
  fileprivate var trimmingSpaces: String {
    var s = Substring(self)
    while s.first == " " { s = s.dropFirst() }
    while s.last == " " { s = s.dropLast() }
    return String(s)
  }
}
