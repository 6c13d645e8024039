import Glibc
import Platform
import StateFile
import UserText

/// hark's own log, `$XDG_STATE_HOME/hark/hark.log` (default `~/.local/state/hark/hark.log`),
/// for what matters but does not belong on the screen (docs/HACKING.md, "Messages for people"): no MPRIS without a
/// session bus, details of errors. Appends one timestamped line; never fails loudly. Rotated
/// like the session server's log (`RotatingLogFile`): past 1 MiB it moves to hark.log.1
/// (replacing the one before) and starts afresh.
enum HarkLog {
  static var path: String? { StatePaths.log() }

  static func write(_ line: String) {
    guard let path else { return }
    var now = time(nil)
    var parts = tm()
    localtime_r(&now, &parts)
    var stamp = [CChar](repeating: 0, count: 32)
    let length = strftime(&stamp, stamp.count, "%Y-%m-%dT%H:%M:%S", &parts)
    let text =
      String(decoding: stamp.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
      + " [\(getpid())] " + line.escapingControlCharacters + "\n"
    RotatingLogFile(path: path).append(text)
  }
}
