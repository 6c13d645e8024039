import CHarkSys
import Glibc

/// Runs `body` on a detached POSIX thread of its own: blocking work (socket reads, waitpid,
/// opening a mixer, the interface's poll) kept off the caller and the Swift concurrency pool.
/// `name` shows in top, ps -L and /proc/PID/task/*/comm (at most 15 bytes).
///
/// A process that cannot start a thread is out of resources; that stops it (a precondition),
/// as running out of memory would.
public func startThread(named name: String? = nil, _ body: @escaping @Sendable () -> Void) {
  let thread: pthread_t
  do { thread = try createThread(named: name, body) } catch { preconditionFailure("\(error)") }
  pthread_detach(thread)
}

/// Lowers the calling thread's priority (its nice value, which Linux keeps per thread, and
/// which the threads and processes it starts inherit) by 10: background work such as a library
/// scan then leaves the CPU to the interface's thread whenever both want it, rather than
/// sharing it evenly, and a keystroke is answered at once however busy the scan is. Best
/// effort: a refusal leaves the priority as it was.
public func lowerThreadPriority() {
  errno = 0
  let now = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
  guard errno == 0 else { return }
  // 0: the calling thread, on Linux (not the whole process, as POSIX would have it).
  _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(19, now + 10))
}

/// The calling thread's id (gettid): how /proc/self/task, ps -L and setpriority name it.
public func currentThreadID() -> pid_t { chs_gettid() }

/// The nice value the session server asks for: PipeWire's for its own threads (module-rt's
/// nice.level) and PulseAudio's for its daemon (nice-level, with high-priority).
public let mediaServerNice: Int32 = -11

/// Raises every thread of this process to `nice` (a lower nice value: more of the CPU, and
/// sooner, when other programs want it too); the threads started afterwards inherit it from
/// the thread that starts them. For a process whose threads only answer events and must answer
/// them at once however busy the machine is: the session server, which pauses the player when
/// an output goes (G5: what it takes to hear of the loss is what the speakers play meanwhile).
/// Linux keeps the value per thread, so each thread of /proc/self/task is set by its id.
/// Needs CAP_SYS_NICE or a nice limit (RLIMIT_NICE, as PipeWire's limits.d file gives its
/// group); without either nothing changes. Returns the error for the first refusal, nil when
/// every thread was raised (or already ran at `nice` or lower).
@discardableResult
public func raiseProcessPriority(to nice: Int32 = mediaServerNice) -> SystemError? {
  guard let dir = opendir("/proc/self/task") else {
    return SystemError(code: errno, operation: "reading /proc/self/task")
  }
  defer { closedir(dir) }
  var refusal: SystemError?
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    guard let tid = id_t(name) else { continue }
    errno = 0
    let now = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid)
    guard errno == 0 else { continue }  // a thread that ended meanwhile
    guard now > nice else { continue }
    if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid, nice) != 0, refusal == nil {
      refusal = SystemError(code: errno, operation: "setting the nice value \(nice)")
    }
  }
  return refusal
}

/// A POSIX thread that can be joined (or detached): threads whose owner waits for them to end.
public final class JoinableThread: @unchecked Sendable {
  /// The thread's identity (tests watch the render thread's allocations by it).
  public let id: pthread_t

  /// Starts `body` on a new thread named `name` (see `startThread(named:_:)`); throws when
  /// pthread_create fails (EAGAIN: no resources for a thread).
  public init(named name: String? = nil, _ body: @escaping @Sendable () -> Void)
    throws(SystemError)
  {
    id = try createThread(named: name, body)
  }

  /// Whether the caller is this thread.
  public var isCurrent: Bool { pthread_equal(pthread_self(), id) != 0 }

  /// Waits for the thread to end. Once, and never from the thread itself.
  public func join() { pthread_join(id, nil) }

  /// Lets the thread end on its own, for an owner that will not join it (one that ends from
  /// the thread itself). Once, instead of `join`.
  public func detach() { pthread_detach(id) }
}

/// A counting semaphore (sem_t) allocated once. (Glibc names `sem_t *` `Semaphore` too: modules
/// that import both write `Platform.Semaphore`.) `signal` is async-signal-safe and neither
/// allocates nor locks, so the render thread may use it to wake others.
public final class Semaphore: @unchecked Sendable {
  private let sem: UnsafeMutablePointer<sem_t>

  public init() {
    sem = .allocate(capacity: 1)
    sem_init(sem, 0, 0)
  }

  deinit {
    sem_destroy(sem)
    sem.deallocate()
  }

  /// Any thread, a signal handler too: one sem_post.
  public func signal() { sem_post(sem) }

  /// Waits until signalled.
  public func wait() {
    while sem_wait(sem) != 0 && errno == EINTR {}
  }

  /// Waits until signalled or `microseconds` pass; true if signalled.
  @discardableResult
  public func wait(microseconds: Int) -> Bool {
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
  let name: String?
  let body: () -> Void
  init(_ name: String?, _ body: @escaping () -> Void) {
    self.name = name
    self.body = body
  }
}

/// A new POSIX thread running `body`, named `name`.
private func createThread(named name: String?, _ body: @escaping @Sendable () -> Void)
  throws(SystemError) -> pthread_t
{
  var thread = pthread_t()
  let box = Unmanaged.passRetained(ThreadMain(name, body)).toOpaque()
  let rc = pthread_create(
    &thread, nil,
    { arg in
      guard let arg else { return nil }
      let main = Unmanaged<ThreadMain>.fromOpaque(arg).takeRetainedValue()
      if let name = main.name { nameThisThread(name) }
      main.body()
      return nil
    }, box)
  guard rc == 0 else {
    Unmanaged<ThreadMain>.fromOpaque(box).release()
    throw SystemError(code: rc, operation: "starting a thread")
  }
  return thread
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
