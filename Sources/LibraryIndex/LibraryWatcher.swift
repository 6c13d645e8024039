import Glibc
import Platform

/// Watches a music folder and every folder below it with inotify, and says which folders
/// changed (a file written, added, removed or moved in or out; a folder made or gone), once
/// they have been quiet for a moment: what an open library rescans to stay current.
public final class LibraryWatcher {
  private let fd: Int32
  private var folders: [Int32: String] = [:]
  /// Why not every folder is watched (the system's limit on watches), once.
  public private(set) var problem: String?

  private static let mask = UInt32(
    IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF
      | IN_MOVE_SELF | IN_ATTRIB)

  /// Watches `root` and the folders below it; nil when inotify cannot be had.
  public init?(root: String) {
    let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
    guard fd >= 0 else { return nil }
    self.fd = fd
    watchTree(root)
  }

  deinit { close(fd) }

  /// Adds a watch on `folder` and each folder below it (hidden ones skipped, as scans do).
  private func watchTree(_ folder: String) {
    var pending = [folder]
    while let next = pending.popLast() {
      let wd = inotify_add_watch(fd, FileName.c(next), Self.mask)
      if wd < 0 {
        if errno == ENOSPC && problem == nil {
          problem =
            "the system's limit on watched folders (fs.inotify.max_user_watches) is reached: "
            + "changes below some folders are seen at the next start"
        }
        continue
      }
      folders[wd] = next
      guard let dir = opendir(FileName.c(next)) else { continue }
      while let entry = readdir(dir) {
        guard Int32(entry.pointee.d_type) == Int32(DT_DIR) else { continue }
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          FileName.string(Array(raw.prefix { $0 != 0 }))
        }
        if name.hasPrefix(".") { continue }
        pending.append(next == "/" ? "/" + name : next + "/" + name)
      }
      closedir(dir)
    }
  }

  /// A watched folder was renamed or moved. Moved within the tree, the IN_MOVED_TO before
  /// this (the rename's events come in that order) has watched it under its new path already:
  /// the watch on that path is this one, and is kept. (Dropped, as it was, nothing written in
  /// a folder renamed while the library was open was seen again.) Moved out of the tree, it
  /// and the folders below it are no longer watched.
  private func movedAway(_ wd: Int32, from folder: String) {
    let there = inotify_add_watch(fd, FileName.c(folder), Self.mask)
    if there == wd { return }
    if there >= 0 { folders[there] = folder }  // another folder now has its old name
    inotify_rm_watch(fd, wd)
    folders[wd] = nil
    let below = folder + "/"
    for (other, path) in folders where path.hasPrefix(below) {
      inotify_rm_watch(fd, other)
      folders[other] = nil
    }
  }

  /// Waits for changes and returns the folders they were in, once nothing has changed for
  /// `quiet` (a copy of an album is one batch, not a rescan per file). Blocks the calling
  /// thread; returns an empty list only if the watch itself failed.
  public func nextChanges(quiet: Duration = .seconds(1)) -> Set<String> {
    var changed: Set<String> = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    let quietMS = Int32(
      quiet.components.seconds * 1000 + quiet.components.attoseconds / 1_000_000_000_000_000)
    while true {
      var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&p, 1, changed.isEmpty ? -1 : quietMS)
      if ready < 0 {
        if errno == EINTR { continue }
        return changed
      }
      if ready == 0 { return changed }  // quiet for long enough
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n <= 0 { continue }
      var at = 0
      while at + MemoryLayout<inotify_event>.size <= n {
        let (wd, mask, length) = buffer.withUnsafeBytes { raw -> (Int32, UInt32, Int) in
          let event = raw.loadUnaligned(fromByteOffset: at, as: inotify_event.self)
          return (event.wd, event.mask, Int(event.len))
        }
        let nameStart = at + MemoryLayout<inotify_event>.size
        let name = FileName.string(buffer[nameStart..<(nameStart + length)].prefix { $0 != 0 })
        at = nameStart + length
        guard let folder = folders[wd] else { continue }
        // A folder moved is news of the folders it left and joined (their MOVED_FROM and
        // MOVED_TO), not of itself: moved out of the tree, its old path is nothing to scan.
        if mask & UInt32(IN_MOVE_SELF) == 0 { changed.insert(folder) }
        if mask & UInt32(IN_ISDIR) != 0 && mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0,
          !name.hasPrefix(".")
        {
          // A new folder: watched too, and scanned with its parent.
          watchTree(folder == "/" ? "/" + name : folder + "/" + name)
        }
        if mask & UInt32(IN_IGNORED | IN_DELETE_SELF) != 0 {
          folders[wd] = nil
        } else if mask & UInt32(IN_MOVE_SELF) != 0 {
          movedAway(wd, from: folder)
        }
      }
    }
  }
}
