import Glibc

/// A counting semaphore (sem_t) allocated once. `signal` is async-signal-safe and neither
/// allocates nor locks, so the render thread may use it to wake others.
final class Semaphore: @unchecked Sendable {
  private let sem: UnsafeMutablePointer<sem_t>

  init() {
    sem = .allocate(capacity: 1)
    sem_init(sem, 0, 0)
  }

  deinit {
    sem_destroy(sem)
    sem.deallocate()
  }

  func signal() { sem_post(sem) }

  /// Waits until signalled.
  func wait() {
    while sem_wait(sem) != 0 && errno == EINTR {}
  }

  /// Waits until signalled or `microseconds` pass; true if signalled.
  @discardableResult
  func wait(microseconds: Int) -> Bool {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    let ns = Int(ts.tv_nsec) + (microseconds % 1_000_000) * 1000
    ts.tv_sec += microseconds / 1_000_000 + ns / 1_000_000_000
    ts.tv_nsec = ns % 1_000_000_000
    while true {
      if sem_timedwait(sem, &ts) == 0 { return true }
      if errno != EINTR { return false }
    }
  }
}

/// A pipe that wakes a thread blocked in `poll`: `wake` from any thread (one write(2), no
/// allocation, no lock), `drain` on the woken thread. Both ends non-blocking.
final class WakePipe: @unchecked Sendable {
  let readFD: Int32
  private let writeFD: Int32

  init() {
    var ends: [Int32] = [-1, -1]
    if pipe(&ends) == 0 {
      for end in ends {
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      }
    }
    readFD = ends[0]
    writeFD = ends[1]
  }

  deinit {
    close(readFD)
    close(writeFD)
  }

  func wake() {
    var byte: UInt8 = 1
    _ = write(writeFD, &byte, 1)  // a full pipe already means "awake"
  }

  /// Reads what is there; no allocation.
  func drain() {
    var bytes: (UInt64, UInt64) = (0, 0)
    while withUnsafeMutableBytes(of: &bytes, { read(readFD, $0.baseAddress, $0.count) }) > 0 {}
  }
}

private final class ThreadMain {
  let body: () -> Void
  init(_ body: @escaping () -> Void) { self.body = body }
}

/// A POSIX thread that can be joined: the engine's decode and render threads.
final class JoinableThread {
  private var thread = pthread_t()
  /// The thread's identity (tests watch the render thread's allocations by it).
  var id: pthread_t { thread }

  init(_ body: @escaping @Sendable () -> Void) { thread = createThread(body) }

  func join() { pthread_join(thread, nil) }
}

/// Runs `body` on a detached POSIX thread of its own: blocking work (opening a mixer, the
/// interface's poll, reading tags) kept off the caller and the Swift concurrency pool. `name`
/// shows in top, ps -L and /proc/PID/task/*/comm (at most 15 bytes).
public func startThread(named name: String? = nil, _ body: @escaping @Sendable () -> Void) {
  pthread_detach(
    createThread {
      if let name { nameThisThread(name) }
      body()
    })
}

/// Names the calling thread through /proc (pthread_setname_np is a GNU extension Swift's
/// Glibc module does not show).
private func nameThisThread(_ name: String) {
  let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
  guard fd >= 0 else { return }
  var bytes = Array(name.utf8.prefix(15))
  _ = write(fd, &bytes, bytes.count)
  close(fd)
}

/// A new POSIX thread running `body`.
private func createThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
  var thread = pthread_t()
  let box = Unmanaged.passRetained(ThreadMain(body)).toOpaque()
  let rc = pthread_create(
    &thread, nil,
    { arg in
      guard let arg else { return nil }
      Unmanaged<ThreadMain>.fromOpaque(arg).takeRetainedValue().body()
      return nil
    }, box)
  precondition(rc == 0, "pthread_create failed: \(rc)")
  return thread
}
