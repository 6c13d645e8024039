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

private final class ThreadMain {
  let body: () -> Void
  init(_ body: @escaping () -> Void) { self.body = body }
}

/// A POSIX thread that can be joined: the engine's decode and render threads.
final class JoinableThread {
  private var thread = pthread_t()
  /// The thread's identity (tests watch the render thread's allocations by it).
  var id: pthread_t { thread }

  init(_ body: @escaping @Sendable () -> Void) {
    let box = Unmanaged.passRetained(ThreadMain(body)).toOpaque()
    let rc = pthread_create(
      &thread, nil,
      { arg in
        guard let arg else { return nil }
        Unmanaged<ThreadMain>.fromOpaque(arg).takeRetainedValue().body()
        return nil
      }, box)
    precondition(rc == 0, "pthread_create failed: \(rc)")
  }

  func join() { pthread_join(thread, nil) }
}
