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
