import AudioTestSupport
import Glibc
import Platform

/// Files and descriptors for the tests of this target.
enum Scratch {
  /// A new empty folder, removed with the others when the tests end.
  static func folder() -> String { ScratchFolders.make("platform") }

  /// Everything `fd` gives until its end (a blocking descriptor).
  static func readAll(_ fd: Int32) -> [UInt8] {
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return out }
      out += chunk[..<n]
    }
  }

  /// The text of the file at `path`; nil when it cannot be read.
  static func contents(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    return String(decoding: readAll(fd), as: UTF8.self)
  }

  /// The names in `folder`, sorted, without . and ..
  static func names(in folder: String) -> [String] { (folderEntries(folder) ?? []).sorted() }

  /// The permission bits of the file at `path`.
  static func mode(_ path: String) -> mode_t? {
    var st = stat()
    return stat(path, &st) == 0 ? st.st_mode & 0o777 : nil
  }
}
