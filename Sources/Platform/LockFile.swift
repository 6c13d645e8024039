import Glibc

/*
 The one process of a kind (the session server, the user's player) holds an flock(2) lock on a
 file of its own for as long as it runs, with its pid written in the file; the kernel lets go
 of it when the process ends, however it ends. Another process finds out whether one is running
 by trying the lock (`lockIsHeld`), and a process that would be the one takes it (`takeLock`).
*/

/// Why `takeLock` did not take the lock.
public enum LockRefusal: Error, Sendable, Hashable {
  /// Another process holds it: this pid, when the file says.
  case held(by: Int32?)
  /// The file could not be opened.
  case system(SystemError)
}

/// Takes the lock of the file at `path` (created 0600 when missing) without waiting, and
/// writes this process's pid in it. Returns the descriptor, which holds the lock until it is
/// closed or the process ends (it is close-on-exec: a child does not inherit it).
public func takeLock(_ path: String) throws(LockRefusal) -> Int32 {
  let fd = open(FileName.c(path), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
  guard fd >= 0 else { throw .system(.last("opening '\(path)'")) }
  guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
    let holder = lockHolder(fd)
    close(fd)
    throw .held(by: holder)
  }
  ftruncate(fd, 0)
  let pidText = Array("\(getpid())\n".utf8)
  _ = pidText.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
  return fd
}

/// Whether a process holds the lock of the file at `path`; false when there is no such file.
/// The probe takes the lock for an instant and gives it back: a process trying `takeLock` in
/// that instant is refused as if one were running, so a caller that starts one after a false
/// here copes with `.held` (the first one to take it is the one).
public func lockIsHeld(_ path: String) -> Bool {
  // Read-only is enough for flock, and works on a lock file of another's mode.
  let fd = open(FileName.c(path), O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { return false }
  defer { close(fd) }
  guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return true }
  flock(fd, LOCK_UN)
  return false
}

/// The pid a lock file holds (written by `takeLock`); nil when it holds none.
private func lockHolder(_ fd: Int32) -> Int32? {
  var buffer = [UInt8](repeating: 0, count: 32)
  let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
  guard n > 0 else { return nil }
  return Int32(String(decoding: buffer[0..<n], as: UTF8.self).filter(\.isNumber))
}
