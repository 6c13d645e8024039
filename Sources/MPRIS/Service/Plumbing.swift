import Glibc
import Synchronization

/// What the owner has told the server, waiting for the service thread.
enum OwnerEvent {
  case stateChanged(MPRISState)
  case seeked(Duration)
  case eligible(Bool)
  case stop
}

/// The state the owner's threads and the service thread share, behind one lock.
final class Mailbox: Sendable {
  struct Contents {
    /// The owner's latest state: what Get and the command checks read.
    var state: MPRISState
    /// In order; the service thread takes them all at once.
    var events: [OwnerEvent] = []
    /// The well-known name owned now.
    var busName: String?
    /// close() was called.
    var closed = false
    /// The service thread has ended (closed, or the bus went away).
    var ended = false
  }

  let contents: Mutex<Contents>

  init(state: MPRISState) { contents = Mutex(Contents(state: state)) }

  /// Queues an event unless the server is closed or its thread has ended; true if queued.
  func post(_ event: OwnerEvent) -> Bool {
    contents.withLock { c in
      guard !c.closed && !c.ended else { return false }
      c.events.append(event)
      return true
    }
  }
}

/// A non-blocking pipe that wakes the service thread's poll when the owner posts an event.
final class WakePipe: Sendable {
  let readEnd: Int32
  private let writeEnd: Int32

  /// A new pipe, or why there is none (the process has no descriptors left).
  static func make() -> Result<WakePipe, MPRISError> {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else {
      let reason = String(cString: strerror(errno))
      return .failure(.cannotStart(reason: "no pipe: \(reason)"))
    }
    for fd in fds {
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    return .success(WakePipe(readEnd: fds[0], writeEnd: fds[1]))
  }

  private init(readEnd: Int32, writeEnd: Int32) {
    self.readEnd = readEnd
    self.writeEnd = writeEnd
  }

  deinit {
    close(readEnd)
    close(writeEnd)
  }

  /// Any thread. A full pipe already means "wake up", so a failed write is fine.
  func wake() {
    var byte: UInt8 = 1
    _ = write(writeEnd, &byte, 1)
  }

  /// Service thread: empties the pipe after poll said it is readable.
  func drain() {
    var buffer = [UInt8](repeating: 0, count: 64)
    while read(readEnd, &buffer, buffer.count) > 0 {}
  }
}

private final class ThreadBody {
  let body: () -> Void
  init(_ body: @escaping () -> Void) { self.body = body }
}

/// Starts a joinable POSIX thread running `body`, or says why it cannot.
func startThread(_ body: @escaping @Sendable () -> Void) -> Result<pthread_t, MPRISError> {
  var thread = pthread_t()
  let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
  let rc = pthread_create(
    &thread, nil,
    { arg in
      guard let arg else { return nil }
      Unmanaged<ThreadBody>.fromOpaque(arg).takeRetainedValue().body()
      return nil
    }, box)
  guard rc == 0 else {
    Unmanaged<ThreadBody>.fromOpaque(box).release()
    let reason = String(cString: strerror(rc))
    return .failure(.cannotStart(reason: "no thread: \(reason)"))
  }
  return .success(thread)
}
