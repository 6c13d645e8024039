import CHarkSys
import Glibc

/*
 Starting processes: one way for every target (helpers, the session server, the player, a
 recorder), so that each gets the same guarantees.

 - A child has exactly the descriptors its caller names (`ChildDescriptor`, by the child's
   number), stdin, stdout and stderr on /dev/null unless named, and nothing else of ours:
   posix_spawn's file actions place them and close every other descriptor in the child
   (posix_spawn_file_actions_addclosefrom_np), whatever its close-on-exec flag.
 - Pipes are made close-on-exec from the start (`makePipe`: pipe2 with O_CLOEXEC): a process
   that another thread spawns meanwhile, through this function or any other (a library's),
   never inherits one. A pipe made with pipe(2) and marked close-on-exec after the spawn leaks
   into whatever another thread spawns in between, and a reader of that pipe then waits for a
   writer that is long done.
 - Signals as a fresh process has them: every disposition default (hark ignores SIGPIPE and
   takes SIGINT and SIGTERM as events; ignored signals would stay ignored through exec) and
   nothing blocked.
*/

/// How far a spawned process is cut off from the one that started it.
public enum Detachment: Sendable {
  /// A session of its own (setsid): no controlling terminal, so it survives the terminal
  /// closing. For daemons.
  case newSession
  /// A process group of its own: the terminal's Ctrl-C and Ctrl-Z do not reach it, but it
  /// keeps the terminal's session. For helpers that end when their work is done.
  case newProcessGroup
}

/// What one of a spawned child's descriptors is; `spawn` takes them by the child's number.
public enum ChildDescriptor: Sendable, Hashable {
  /// A copy of this process's descriptor (a pipe's end, a socket); ours stays ours to close.
  case parent(Int32)
  /// /dev/null, open for reading and writing.
  case null
  /// The file at `path`, opened in the child with open(2)'s `flags` and `mode`.
  case file(String, flags: Int32, mode: mode_t)
  /// The same open file as the child's descriptor `n` (stderr as stdout: `2: .sameAs(1)`);
  /// `n` must be named in the map, and not as `sameAs`.
  case sameAs(Int32)

  /// A log: the file at `path` opened for appending, created 0600 when missing.
  public static func appending(to path: String) -> ChildDescriptor {
    .file(path, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o600)
  }
}

/// A new pipe, both ends close-on-exec from the start (pipe2(2) with O_CLOEXEC): a child gets
/// an end only when `spawn` is told to give it one. With `nonBlockingRead`, the read end is
/// non-blocking (for a reader that polls); the write end blocks, as a program's stdout does.
public func makePipe(nonBlockingRead: Bool = false) throws(SystemError) -> (
  read: Int32, write: Int32
) {
  var ends: (Int32, Int32) = (-1, -1)
  let rc = withUnsafeMutablePointer(to: &ends) {
    $0.withMemoryRebound(to: Int32.self, capacity: 2) { chs_pipe2($0, O_CLOEXEC) }
  }
  guard rc == 0 else { throw .last("making a pipe") }
  if nonBlockingRead { _ = fcntl(ends.0, F_SETFL, fcntl(ends.0, F_GETFL) | O_NONBLOCK) }
  return ends
}

/// Starts `executable arguments…` (searched on PATH when the name has no slash) with the
/// descriptors `descriptors` names (child's number → what it is; 0, 1 and 2 are /dev/null when
/// not named) and no other, signals as a fresh process has them, in the caller's process
/// group or cut off from it (`detachment`), with `environment` ("NAME=value" each) or the
/// caller's. Arguments are passed as the bytes they stand for (`FileName`): a file name that
/// is not UTF-8 reaches the child as it is on disk. Returns the pid; the caller reaps it
/// (`waitForChild`), or has it reaped (`reapWhenEnded`). Throws when it cannot be started:
/// no such executable (ENOENT), not executable (EACCES), a file in the map that cannot be
/// opened, no process or descriptor left.
public func spawn(
  _ executable: String, _ arguments: [String], descriptors: [Int32: ChildDescriptor] = [:],
  detachment: Detachment? = nil, environment: [String]? = nil
) throws(SystemError) -> pid_t {
  var map = descriptors
  for fd: Int32 in 0...2 where map[fd] == nil { map[fd] = .null }
  let top = map.keys.max() ?? 2
  let targets = map.keys.sorted()
  precondition(targets[0] >= 0, "spawn: a negative child descriptor")
  for case .sameAs(let other) in map.values {
    switch map[other] {
    case .parent, .null, .file: break
    case .sameAs, nil:
      preconditionFailure("spawn: a copy of \(other), which is not a file of its own")
    }
  }

  // A descriptor of ours with a child's number (ours can be 0 to 2 in a process that closed
  // its stdio, or 3 when a caller passes its stdin as the child's descriptor 3) could be
  // overwritten by the placing of another before it is itself placed: such ones are copied
  // above every child number first. That also makes each placing a real dup2, which clears
  // close-on-exec (dup2 onto itself would leave the flag, and the child without it).
  var copies: [Int32] = []
  defer { for fd in copies { close(fd) } }
  var sources: [Int32: Int32] = [:]
  for (child, what) in map {
    guard case .parent(let fd) = what else { continue }
    guard fd <= top else {
      sources[child] = fd
      continue
    }
    let copy = fcntl(fd, F_DUPFD_CLOEXEC, top + 1)
    guard copy >= 0 else { throw .last("copying descriptor \(fd) for '\(executable)'") }
    copies.append(copy)
    sources[child] = copy
  }

  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  for child in targets {
    switch map[child] {
    case .parent: posix_spawn_file_actions_adddup2(&actions, sources[child] ?? -1, child)
    case .null: posix_spawn_file_actions_addopen(&actions, child, "/dev/null", O_RDWR, 0)
    case .file(let path, let flags, let mode):
      posix_spawn_file_actions_addopen(&actions, child, FileName.c(path), flags, mode)
    case .sameAs, nil: break
    }
  }
  for child in targets {
    if case .sameAs(let other) = map[child] {
      posix_spawn_file_actions_adddup2(&actions, other, child)
    }
  }
  // The gaps between the child's numbers, then everything above them (ours, close-on-exec or
  // not, and the copies made above).
  for fd in 3..<max(3, top) where map[fd] == nil { posix_spawn_file_actions_addclose(&actions, fd) }
  _ = chs_spawn_add_closefrom(&actions, top + 1)

  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }
  var all = sigset_t()
  sigfillset(&all)
  posix_spawnattr_setsigdefault(&attributes, &all)
  var none = sigset_t()
  sigemptyset(&none)
  posix_spawnattr_setsigmask(&attributes, &none)
  var flags = Int16(POSIX_SPAWN_SETSIGDEF) | Int16(POSIX_SPAWN_SETSIGMASK)
  switch detachment {
  case .newSession:
    flags |= chs_spawn_setsid_flag()
  case .newProcessGroup:
    posix_spawnattr_setpgroup(&attributes, 0)
    flags |= Int16(POSIX_SPAWN_SETPGROUP)
  case nil:
    break
  }
  posix_spawnattr_setflags(&attributes, flags)

  let argv = cStrings([executable] + arguments)
  defer { for p in argv { free(p) } }
  let envp = environment.map(cStrings)
  defer { for p in envp ?? [] { free(p) } }
  var pid: pid_t = 0
  let rc =
    if var envp {
      posix_spawnp(&pid, FileName.c(executable), &actions, &attributes, argv, &envp)
    } else {
      posix_spawnp(&pid, FileName.c(executable), &actions, &attributes, argv, environ)
    }
  guard rc == 0 else { throw SystemError(code: rc, operation: "starting '\(executable)'") }
  return pid
}

/// `strings` as a NULL-ended array of C strings (each the bytes it stands for), to be freed.
private func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] {
  strings.map { s in FileName.c(s).withUnsafeBufferPointer { $0.baseAddress.flatMap(strdup) } }
    + [nil]
}

/// Starts `executable arguments…` detached (`spawn`): stdin from /dev/null (or `stdin`),
/// stdout and stderr appended to `outputPath` (created 0600; /dev/null when nil). A thread
/// reaps it when it exits (`reapWhenEnded`), so it never lingers as a zombie of a long-lived
/// parent. Returns its pid.
public func spawnDetached(
  executable: String, arguments: [String], outputPath: String?,
  detachment: Detachment = .newSession, stdin: Int32? = nil
) throws(SystemError) -> pid_t {
  let pid = try spawn(
    executable, arguments,
    descriptors: [
      0: stdin.map { .parent($0) } ?? .null,
      1: outputPath.map { .appending(to: $0) } ?? .null,
      2: .sameAs(1),
    ], detachment: detachment)
  reapWhenEnded(pid)
  return pid
}

/// Reaps the child `pid` on a thread of its own when it ends, for a caller that will not wait
/// for it.
public func reapWhenEnded(_ pid: pid_t) {
  startThread { _ = waitForChild(pid) }
}

/// How a process ended.
public enum ProcessEnd: Sendable, Hashable {
  /// It exited with this status.
  case exited(Int32)
  /// This signal ended it.
  case signaled(Int32)

  /// The end a wait status (waitpid's) says.
  public init(waitStatus status: Int32) {
    // WIFEXITED, WEXITSTATUS and WTERMSIG are macros Swift does not import.
    let signal = status & 0x7F
    self = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
  }
}

/// Waits for this process's child `pid` to end and reaps it. With `killingAfter`, a child
/// still there after that long is killed (SIGKILL) and then reaped. Nil when there is no such
/// child to wait for: reaped already, elsewhere (SIGCHLD ignored, a waitpid(-1) of someone
/// else's). Blocks the calling thread.
public func waitForChild(_ pid: pid_t, killingAfter limit: Duration? = nil) -> ProcessEnd? {
  var status: Int32 = 0
  if let limit {
    let deadline = monotonicNanoseconds() + nanoseconds(limit)
    // A pidfd polls readable when the child ends (Linux 5.3); without one, a look a millisecond.
    let pidfd = chs_pidfd_open(pid)
    defer { if pidfd >= 0 { close(pidfd) } }
    while true {
      let rc = waitpid(pid, &status, WNOHANG)
      if rc == pid { return ProcessEnd(waitStatus: status) }
      if rc < 0 && errno != EINTR { return nil }
      let now = monotonicNanoseconds()
      if now >= deadline {
        kill(pid, SIGKILL)
        break
      }
      if pidfd >= 0 {
        var ended = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        _ = poll(&ended, 1, Int32(clamping: (deadline - now + 999_999) / 1_000_000))
      } else {
        usleep(1_000)
      }
    }
  }
  guard retryingEINTR({ waitpid(pid, &status, 0) }) == pid else { return nil }
  return ProcessEnd(waitStatus: status)
}
