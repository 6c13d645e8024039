import Glibc

/// A value behind a lock: hark's one lock type, used where `Synchronization.Mutex` would be.
/// Being a class, it can be captured by closures and shared as it is.
///
/// Why not `Mutex`: on Linux a contended `Mutex` is a priority-inheriting futex, handed from
/// thread to thread inside the kernel, and ThreadSanitizer, which sees only what it
/// intercepts, cannot tell that a lock ordered two accesses: every value behind a `Mutex`
/// touched on two threads was now and then reported as a race, one suppression after another
/// (a clean-clone CI run's: `ExternalEvents`' queue, posted by a watcher and drained by the
/// session server's loop). A POSIX mutex is what TSan intercepts, so it sees the order, and a
/// race it reports is one. The cost is the same where it matters: one atomic instruction to
/// take and give back a free lock (glibc's fast path), a futex wait under contention.
///
/// Never taken on the render thread: the real-time path does not lock (the render loop uses
/// atomics only).
///
/// Its calls are inlinable, as `Mutex`'s are, so that each caller's is specialised for its
/// value rather than going through the generic one in this module.
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
  @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
  @usableFromInline var value: Value

  public init(_ value: consuming sending Value) {
    mutex = .allocate(capacity: 1)
    // Error-checking, so that a thread taking the lock it holds stops with a message (as a
    // `Mutex` does) instead of waiting for itself for ever; as cheap as a normal one untaken.
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
    pthread_mutex_init(mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
    self.value = value
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Runs `body` on the value with the lock held; blocks while another thread holds it.
  /// `body` must not take this lock again: that stops the process (EDEADLK), as a `Mutex`'s
  /// does.
  @inlinable
  public func withLock<Result: ~Copyable, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    let taken = pthread_mutex_lock(mutex)
    precondition(taken == 0, "Locked: the lock taken again by the thread holding it")
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }

  /// Runs `body` as `withLock` does when the lock is free; nil, at once, when it is held (by
  /// this thread too, where a `Mutex` would stop the process).
  @inlinable
  public func withLockIfAvailable<Result: ~Copyable, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result? {
    guard pthread_mutex_trylock(mutex) == 0 else { return nil }
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }
}
