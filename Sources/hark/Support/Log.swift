import Glibc
import PlayerEngine
import TerminalUI

/// hark's own log, `$XDG_STATE_HOME/hark/hark.log` (default `~/.local/state/hark/hark.log`),
/// for what matters but does not belong on the screen (STYLE.md §5): no MPRIS without a
/// session bus, details of errors. Appends one timestamped line; never fails loudly. Past
/// 1 MiB the log moves to hark.log.1 (replacing the one before) and starts afresh.
enum HarkLog {
  static var path: String? { StatePaths.log() }

  static func write(_ line: String) {
    guard let path else { return }
    let dir = String(path.dropLast("/hark.log".count))
    mkdir(String(dir.dropLast("/hark".count)), 0o700)
    mkdir(dir, 0o700)
    // Like the session server's log: one older log is kept, and past 1 MiB it starts afresh.
    var st = stat()
    if stat(path, &st) == 0, st.st_size > 1 << 20 { rename(path, path + ".1") }
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return }
    defer { close(fd) }
    var now = time(nil)
    var parts = tm()
    localtime_r(&now, &parts)
    var stamp = [CChar](repeating: 0, count: 32)
    let length = strftime(&stamp, stamp.count, "%Y-%m-%dT%H:%M:%S", &parts)
    let text =
      String(decoding: stamp.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
      + " [\(getpid())] " + line.escapingControlCharacters + "\n"
    var bytes = Array(text.utf8)
    _ = Glibc.write(fd, &bytes, bytes.count)
  }
}
