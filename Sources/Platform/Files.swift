import Glibc

/// mkdir -p: creates `path` and its parents, with mode 0700 for the ones it creates (state,
/// logs and sockets are the user's own). Failures show when the folder is used.
public func makeDirectories(_ path: String) {
  var built = path.hasPrefix("/") ? "" : "."
  for part in path.split(separator: "/") {
    built += "/" + part
    mkdir(built, 0o700)
  }
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
