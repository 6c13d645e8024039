import Glibc
import Synchronization

private final class Flag: Sendable {
  let value = Atomic<Bool>(false)
}

private final class ThreadBody {
  let run: @Sendable () -> Void
  init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// A POSIX thread for tests that need a real second thread (a writer against a reader, a call
/// that might hang), so they never block Swift's cooperative pool.
public final class TestThread: @unchecked Sendable {
  private var thread = pthread_t()
  private let finished = Flag()
  private let joined = Atomic<Bool>(false)

  /// Starts `body` on a new thread.
  public init(_ body: @escaping @Sendable () -> Void) {
    let box = Unmanaged.passRetained(
      ThreadBody { [finished] in
        body()
        finished.value.store(true, ordering: .releasing)
      }
    ).toOpaque()
    let rc = pthread_create(
      &thread, nil,
      { argument in
        guard let argument else { return nil }
        Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue().run()
        return nil
      }, box)
    precondition(rc == 0, "pthread_create failed: \(rc)")
  }

  /// Whether `body` has returned.
  public var isFinished: Bool { finished.value.load(ordering: .acquiring) }

  /// Waits for `body` to return. Call once.
  public func join() {
    guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
    pthread_join(thread, nil)
  }
}
