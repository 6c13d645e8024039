import Glibc

private final class ThreadBody {
  let run: () -> Void
  init(_ run: @escaping () -> Void) { self.run = run }
}

/// Starts a detached POSIX thread running `body`. For blocking calls (socket reads, waitpid)
/// that must not occupy the Swift concurrency pool.
public func startDetachedThread(_ body: @escaping @Sendable () -> Void) {
  let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
  var thread = pthread_t()
  let rc = pthread_create(
    &thread, nil,
    { arg in
      guard let arg else { return nil }
      Unmanaged<ThreadBody>.fromOpaque(arg).takeRetainedValue().run()
      return nil
    }, box)
  precondition(rc == 0, "pthread_create failed: \(rc)")
  pthread_detach(thread)
}

/// The monotonic clock, in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
