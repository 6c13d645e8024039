import Glibc
import SystemPackage

/// mkdir -p: creates `path` and its parents, with mode 0700 for the ones it creates (state,
/// logs and sockets are the user's own). Failures show when the folder is used.
public func makeDirectories(_ path: String) {
  var built = path.hasPrefix("/") ? "" : "."
  for part in path.split(separator: "/") {
    built += "/" + part
    mkdir(built, 0o700)
  }
}

/// The names in the folder at `path` (readdir order, without "." and ".."), each as its bytes
/// (`FileName.string`); nil when it cannot be read.
public func folderEntries(_ path: String) -> [String]? {
  guard let dir = opendir(FileName.c(path)) else { return nil }
  defer { closedir(dir) }
  var names: [String] = []
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { FileName.string($0.prefix { $0 != 0 }) }
    if name != "." && name != ".." { names.append(name) }
  }
  return names
}

/// The running executable's path (/proc/self/exe).
public func executablePath() -> String? {
  var buffer = [CChar](repeating: 0, count: 4096)
  let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
  guard n > 0 else { return nil }
  return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// What a file that is not a regular one is, in the user's words ("a named pipe (FIFO)", "a
/// character device"...), or nil when `path` is a regular file or does not exist. Players
/// refuse these before opening: a FIFO would block the opener until a writer came (for ever),
/// and a device or a socket is no sound file.
public func nonRegularKind(_ path: String) -> String? {
  var st = stat()
  guard stat(FileName.c(path), &st) == 0 else { return nil }
  return kindName(st.st_mode)
}

/// What a stat mode is, in the user's words; nil for a regular file.
public func kindName(_ mode: mode_t) -> String? {
  switch mode & S_IFMT {
  case S_IFREG: nil
  case S_IFIFO: "a named pipe (FIFO)"
  case S_IFCHR: "a character device"
  case S_IFBLK: "a block device"
  case S_IFSOCK: "a socket"
  case S_IFDIR: "a folder"
  default: "not a regular file"
  }
}

/// Writes all of `bytes` to `fd`: write(2) again after a partial write or an interruption
/// (EINTR), as swift-system's `FileDescriptor.writeAll` does. Throws the error of the write
/// that failed, what went before it written: EPIPE, the reader has gone (where SIGPIPE is
/// ignored); EAGAIN, a non-blocking descriptor is full; ENOSPC, EFBIG, EIO.
public func writeAll(_ fd: Int32, _ bytes: some Sequence<UInt8>) throws(SystemError) {
  do { _ = try FileDescriptor(rawValue: fd).writeAll(bytes) } catch {
    throw SystemError(code: (error as? Errno)?.rawValue ?? EIO, operation: "writing")
  }
}
