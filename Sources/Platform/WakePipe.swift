import CHarkSys
import Glibc

/// A pipe that wakes a thread blocked in poll(2): `wake` from any thread, `drain` on the woken
/// one. Both ends are non-blocking (a full pipe already means "wake up", and a writer must
/// never block) and close-on-exec (a spawned process never holds them). Closed on release.
///
/// `wake` is one write(2): no allocation, no lock, so the render thread and signal handlers
/// may use it (a handler, which can capture nothing, writes to `writeFD` itself).
public final class WakePipe: Sendable {
  /// The end to poll for POLLIN.
  public let readFD: Int32
  /// The end `wake` writes to.
  public let writeFD: Int32

  /// A new pipe; throws when there is none (the process has no descriptors left).
  public init() throws(SystemError) {
    var ends: (Int32, Int32) = (-1, -1)
    let rc = withUnsafeMutablePointer(to: &ends) {
      $0.withMemoryRebound(to: Int32.self, capacity: 2) { chs_pipe2($0, O_NONBLOCK | O_CLOEXEC) }
    }
    guard rc == 0 else { throw .last("creating a pipe") }
    (readFD, writeFD) = ends
  }

  deinit {
    close(readFD)
    close(writeFD)
  }

  /// Any thread. Writes `byte` (what the woken thread reads with `drainBytes`, if it cares; 0,
  /// the default, is no signal's number, for pipes that signal handlers write to as well);
  /// a failed write is fine: the pipe is full, so a wake-up is pending already.
  public func wake(_ byte: UInt8 = 0) {
    var b = byte
    _ = write(writeFD, &b, 1)
  }

  /// Empties the pipe after poll said it is readable. No allocation (the render thread).
  public func drain() {
    var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    while withUnsafeMutableBytes(of: &bytes, { read(readFD, $0.baseAddress, $0.count) }) > 0 {}
  }

  /// Empties the pipe and returns every byte written since the last drain, in order.
  public func drainBytes() -> [UInt8] {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
      let n = buffer.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
      if n <= 0 { break }
      out += buffer[0..<n]
    }
    return out
  }
}
