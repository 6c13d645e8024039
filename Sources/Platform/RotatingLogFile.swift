import Glibc
import SystemPackage

/// A log file that never grows without bound: past `limit` bytes it moves to `<path>.1`
/// (replacing the one before) and starts afresh, so one older log is kept.
///
/// `append` opens, writes and closes each time (a log written now and then by several
/// processes); a process whose stdout and stderr are the log (a spawned daemon) has the caller
/// call `rotateIfFull` before it starts. Nothing here fails loudly: a log that cannot be
/// written is not written.
public struct RotatingLogFile: Sendable, Hashable {
  /// The log's path.
  public let path: String
  /// The size past which the log is rotated, in bytes.
  public let limit: Int64

  public init(path: String, limit: Int64 = 1 << 20) {
    self.path = path
    self.limit = limit
  }

  /// Moves the log to `<path>.1` when it is larger than `limit`.
  public func rotateIfFull() {
    guard let size = try? Stat(FilePath(path)).size, size > limit else { return }
    rename(path, path + ".1")
  }

  /// Appends `text` (whole lines, each ending in a newline) after rotating if the log is full;
  /// creates the log (0600) and its folder (0700) when they are missing.
  public func append(_ text: String) {
    if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
      makeDirectories(String(path[..<slash]))
    }
    rotateIfFull()
    guard
      let fd = try? FileDescriptor.open(
        FilePath(path), .writeOnly, options: [.create, .append, .closeOnExec],
        permissions: [.ownerReadWrite])
    else { return }
    _ = try? fd.closeAfter { try fd.writeAll(text.utf8) }
  }
}
