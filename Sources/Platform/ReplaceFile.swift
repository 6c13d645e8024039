import Glibc

/// Replaces the file at `path` with `bytes` so that a reader sees the old content or the new,
/// never a torn one, and a crash or a power cut leaves one of them: the bytes go to a
/// temporary file beside it, `<path>.tmp.<pid>` (created with `mode`, less the umask), which is
/// synced to the disk (fsync) before it is renamed over `path`, and the folder is synced after,
/// so that the rename survives too. Creates the folder (0700) when it is missing.
///
/// On failure (a full disk, a folder that cannot be written) the old file is untouched, the
/// temporary is removed, and the error names the step: "creating '<path>.tmp.<pid>'", "writing
/// '<path>.tmp.<pid>'", "replacing '<path>'". Two replaces of one path at once in one process
/// would share the temporary: such callers take turns.
public func replaceFile(_ path: String, with bytes: some Sequence<UInt8>, mode: mode_t = 0o600)
  throws(SystemError)
{
  try replaceFile(path, mode: mode) { fd throws(SystemError) in try writeAll(fd, bytes) }
}

/// `replaceFile(_:with:mode:)` for content written a part at a time: `write` writes it to the
/// temporary's descriptor (`writeAll`), so that a large file is never whole in memory.
public func replaceFile(
  _ path: String, mode: mode_t = 0o600, writing write: (Int32) throws(SystemError) -> Void
) throws(SystemError) {
  let folder = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) }
  if let folder { makeDirectories(folder) }
  let temporary = path + ".tmp.\(getpid())"
  let fd = open(FileName.c(temporary), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
  guard fd >= 0 else { throw .last("creating '\(temporary)'") }
  func fail(_ error: SystemError) -> SystemError {
    close(fd)
    unlink(FileName.c(temporary))
    return error
  }
  do { try write(fd) } catch {
    throw fail(SystemError(code: error.code, operation: "writing '\(temporary)'"))
  }
  // The data must be on the disk before the rename makes it the file: otherwise a crash can
  // leave the new name on an empty file (ext4 and XFS delay allocating the blocks).
  guard fsync(fd) == 0 else { throw fail(.last("writing '\(temporary)'")) }
  // close(2) reports a write-back error on some file systems (NFS).
  guard close(fd) == 0 else {
    let error = SystemError.last("writing '\(temporary)'")
    unlink(FileName.c(temporary))
    throw error
  }
  guard rename(FileName.c(temporary), FileName.c(path)) == 0 else {
    let error = SystemError.last("replacing '\(path)'")
    unlink(FileName.c(temporary))
    throw error
  }
  // And the rename itself must reach the disk. The file is replaced by now whatever this
  // says: a folder that cannot be synced (some file systems refuse) is not a failure.
  syncFolder(of: path)
}

/// fsyncs the folder that holds `path`, so that a rename or a new name in it lasts a crash.
public func syncFolder(of path: String) {
  let folder = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) }
  let dir = open(FileName.c(folder ?? "."), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
  guard dir >= 0 else { return }
  fsync(dir)
  close(dir)
}

/// What reading a whole file found.
public enum FileContents: Sendable, Equatable {
  case missing
  case failed(SystemError)
  /// Larger than the limit asked for.
  case tooLarge
  case bytes([UInt8])
}

/// The whole of the file at `path`, up to `limit` bytes.
public func readWholeFile(_ path: String, limit: Int = 16 << 20) -> FileContents {
  let fd = open(FileName.c(path), O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else {
    return errno == ENOENT ? .missing : .failed(.last("opening '\(path)'"))
  }
  defer { close(fd) }
  // Read into a buffer of the file's size where fstat gives one (a byte more, to meet its end):
  // grown 64 KiB at a time, a saved queue of 50,000 paths (4.5 MB) took 8.7 MB for a moment.
  // A file that grows meanwhile, or has no size (a pipe), is read on in steps of 64 KiB or more.
  var info = stat()
  let size = fstat(fd, &info) == 0 ? max(Int(info.st_size), 0) : 0
  if size > limit { return .tooLarge }
  var out = [UInt8](repeating: 0, count: size + 1)
  var got = 0
  while true {
    if got == out.count {
      out.append(contentsOf: repeatElement(0, count: max(65_536, out.count / 2)))
    }
    let n = out.withUnsafeMutableBytes { raw -> Int in
      guard let base = raw.baseAddress else { return 0 }  // never empty: a byte more
      return retryingEINTR { read(fd, base + got, raw.count - got) }
    }
    if n < 0 { return .failed(.last("reading '\(path)'")) }
    if n == 0 {
      out.removeLast(out.count - got)
      return .bytes(out)
    }
    got += n
    if got > limit { return .tooLarge }
  }
}
