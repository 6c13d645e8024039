import Glibc

/// Watches /dev/snd with inotify for cards' control nodes (controlC0, controlC1, ...) appearing
/// and disappearing: how a USB audio device plugged in later is noticed without polling on a
/// timer. When /dev/snd does not exist yet (a machine with no sound card), watches /dev for it.
/// Owns the inotify descriptor. Watcher thread only.
final class CardNodes {
  /// A change seen in /dev/snd.
  enum Change: Equatable {
    /// controlC`card` was created; udev may not have granted access to it yet.
    case created(card: Int)
    /// controlC`card`'s permissions changed (udev granting access): worth opening again.
    case permissionsChanged(card: Int)
    /// controlC`card` was deleted: the card is gone.
    case vanished(card: Int)
    /// /dev/snd itself appeared: enumerate the cards, some may already be there.
    case directoryAppeared
  }

  /// The inotify descriptor to poll for reading.
  let fd: Int32
  private let directory: String
  private let parent: String
  private var directoryWatch: Int32 = -1
  private var parentWatch: Int32 = -1

  /// Starts watching `directory` (or its parent, until it exists); nil when inotify is
  /// unavailable, and the caller rescans the cards now and then instead.
  init?(directory: String = "/dev/snd") {
    let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
    guard fd >= 0 else { return nil }
    self.fd = fd
    self.directory = directory
    var parent = String(directory.split(separator: "/").dropLast().joined(separator: "/"))
    parent = "/" + parent
    self.parent = parent
    guard watchDirectory() else {
      Glibc.close(fd)
      return nil
    }
  }

  deinit { Glibc.close(fd) }

  /// Watches the directory if it exists, else its parent for it; false if neither works.
  private func watchDirectory() -> Bool {
    let wanted = UInt32(IN_CREATE | IN_ATTRIB | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM)
    directoryWatch = inotify_add_watch(fd, directory, wanted | UInt32(IN_ONLYDIR))
    if directoryWatch >= 0 {
      if parentWatch >= 0 { inotify_rm_watch(fd, parentWatch) }
      parentWatch = -1
      return true
    }
    if parentWatch < 0 {
      parentWatch = inotify_add_watch(fd, parent, UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR))
    }
    return parentWatch >= 0
  }

  /// Reads what inotify has queued (the descriptor is non-blocking) and returns the changes.
  func readChanges() -> [Change] {
    var changes: [Change] = []
    // Room for many events; inotify never splits one across reads.
    let capacity = 4096
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
    defer { buffer.deallocate() }
    while true {
      let n = read(fd, buffer.baseAddress, capacity)
      if n <= 0 { break }
      var offset = 0
      let header = MemoryLayout<inotify_event>.size
      while offset + header <= n {
        let watch = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
        let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
        let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
        let nameBytes = UnsafeRawBufferPointer(
          rebasing: buffer[offset + header..<offset + header + length])
        let name = String(decoding: nameBytes.prefix(while: { $0 != 0 }), as: UTF8.self)
        offset += header + length
        if let change = change(watch: watch, mask: mask, name: name) { changes.append(change) }
      }
    }
    return changes
  }

  private func change(watch: Int32, mask: UInt32, name: String) -> Change? {
    if watch == directoryWatch, mask & UInt32(IN_IGNORED) != 0 {
      // /dev/snd was removed (the last card went on a system that removes it): wait for it anew.
      directoryWatch = -1
      _ = watchDirectory()
      return nil
    }
    if watch == parentWatch {
      guard directory.hasSuffix("/" + name) else { return nil }
      return watchDirectory() && directoryWatch >= 0 ? .directoryAppeared : nil
    }
    guard watch == directoryWatch, name.hasPrefix("controlC"), let card = Int(name.dropFirst(8))
    else { return nil }
    if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { return .vanished(card: card) }
    if mask & UInt32(IN_ATTRIB) != 0 { return .permissionsChanged(card: card) }
    return .created(card: card)
  }
}
