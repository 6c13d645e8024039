import CHarkSys
import Glibc

/// hark's helper `name` (hark-ffmpeg, hark-tags, hark-cover) as this process would run it: the
/// path in the environment variable `variable` when set, else the one in the folder of the
/// running executable (installed next to hark; next to the test bundle under `swift test`),
/// else the first on PATH. Nil when there is none.
public func installedHelper(_ name: String, variable: String) -> String? {
  if let named = environment(variable), !named.isEmpty { return named }
  var folders: [String] = []
  if let executable = executablePath(), let slash = executable.lastIndex(of: "/") {
    folders.append(String(executable[..<slash]))
  }
  folders += (environment("PATH") ?? "").split(separator: ":").map(String.init)
  for folder in folders where !folder.isEmpty {
    let candidate = folder + "/" + name
    var st = stat()
    if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
      return candidate
    }
  }
  return nil
}

/// How a helper run by `runHelper` ended, and what it wrote.
public struct HelperOutput: Sendable, Hashable {
  /// Its exit status; nil when a signal ended it or it was killed for taking too long.
  public var status: Int32?
  /// Everything it wrote to stdout (at most the limit asked for).
  public var output: [UInt8]
  /// The last line it wrote to stderr, without its newline.
  public var errorLine: String
  /// It was killed for running past its time.
  public var timedOut: Bool
  /// It was killed for writing more than the limit.
  public var wroteTooMuch = false
}

/// Runs `executable arguments…` to its end and collects what it writes: stdin /dev/null, no
/// descriptor of ours, signals as a fresh process has them, a process group of its own (the
/// terminal's Ctrl-C is the caller's to handle). Killed (SIGKILL) when it runs past `timeout`
/// or writes more than `limit` bytes. Blocks the calling thread: never call it on the UI
/// thread or a Swift concurrency thread. Throws only when it cannot be started.
public func runHelper(
  _ executable: String, _ arguments: [String], timeout: Duration, limit: Int = 1 << 20
) throws(SystemError) -> HelperOutput {
  var out: (Int32, Int32) = (-1, -1)
  var err: (Int32, Int32) = (-1, -1)
  func makePipe(_ fds: inout (Int32, Int32)) -> Int32 {
    withUnsafeMutablePointer(to: &fds) {
      $0.withMemoryRebound(to: Int32.self, capacity: 2) { chs_pipe_nonblocking_cloexec($0) }
    }
  }
  guard makePipe(&out) == 0 else { throw SystemError(code: errno, operation: "making a pipe") }
  guard makePipe(&err) == 0 else {
    let code = errno
    close(out.0)
    close(out.1)
    throw SystemError(code: code, operation: "making a pipe")
  }
  // The helper's ends block, as a program's stdout does; ours do not (one poll serves both).
  _ = fcntl(out.1, F_SETFL, 0)
  _ = fcntl(err.1, F_SETFL, 0)
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_adddup2(&actions, out.1, 1)
  posix_spawn_file_actions_adddup2(&actions, err.1, 2)
  _ = chs_spawn_add_closefrom(&actions, 3)
  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }
  var defaults = sigset_t()
  sigemptyset(&defaults)
  for s in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGTSTP] { sigaddset(&defaults, s) }
  posix_spawnattr_setsigdefault(&attributes, &defaults)
  var empty = sigset_t()
  sigemptyset(&empty)
  posix_spawnattr_setsigmask(&attributes, &empty)
  posix_spawnattr_setpgroup(&attributes, 0)
  posix_spawnattr_setflags(
    &attributes,
    Int16(POSIX_SPAWN_SETSIGDEF) | Int16(POSIX_SPAWN_SETSIGMASK) | Int16(POSIX_SPAWN_SETPGROUP))
  // Names as their bytes: a file name that is not UTF-8 reaches the helper as it is on disk.
  let argv: [UnsafeMutablePointer<CChar>?] =
    ([executable] + arguments).map { a in
      FileName.c(a).withUnsafeBufferPointer { $0.baseAddress.flatMap { strdup($0) } }
    }
    + [nil]
  defer { for p in argv { free(p) } }
  var pid: pid_t = 0
  let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
  close(out.1)
  close(err.1)
  guard rc == 0 else {
    close(out.0)
    close(err.0)
    throw SystemError(code: rc, operation: "starting '\(executable)'")
  }
  defer {
    close(out.0)
    close(err.0)
  }
  var output: [UInt8] = []
  var errors: [UInt8] = []
  var timedOut = false
  var tooMuch = false
  var failed = false
  let deadline = monotonicNanoseconds() + nanoseconds(timeout)
  var open = (out: true, err: true)
  var chunk = [UInt8](repeating: 0, count: 16_384)
  while open.out || open.err {
    let now = monotonicNanoseconds()
    if now >= deadline {
      timedOut = true
      break
    }
    var fds = [
      pollfd(fd: open.out ? out.0 : -1, events: Int16(POLLIN), revents: 0),
      pollfd(fd: open.err ? err.0 : -1, events: Int16(POLLIN), revents: 0),
    ]
    let wait = Int32(min(1_000, (deadline - now) / 1_000_000 + 1))
    if poll(&fds, 2, wait) < 0 && errno != EINTR {
      failed = true
      break
    }
    for (i, fd) in [out.0, err.0].enumerated() where fds[i].revents != 0 {
      let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
      if n <= 0 {
        if i == 0 { open.out = false } else { open.err = false }
        continue
      }
      if i == 0 {
        output += chunk[..<n]
        if output.count > limit { tooMuch = true }
      } else {
        errors = Array((errors + chunk[..<n]).suffix(4_096))
      }
    }
    if tooMuch { break }
  }
  let killed = timedOut || tooMuch || failed
  if killed {
    // Its process group: whatever it started goes with it.
    kill(-pid, SIGKILL)
    kill(pid, SIGKILL)
  }
  var status: Int32 = 0
  // Reaped elsewhere (SIGCHLD ignored, a waitpid(-1)): how it ended is not known.
  let reaped = retryingEINTR { waitpid(pid, &status, 0) } == pid
  let exited = reaped && status & 0x7F == 0  // WIFEXITED is a macro Swift does not import
  let text = String(decoding: errors, as: UTF8.self)
  let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
  return HelperOutput(
    status: exited && !killed ? (status >> 8) & 0xFF : nil, output: killed ? [] : output,
    errorLine: lines.last.map(String.init) ?? "", timedOut: timedOut, wroteTooMuch: tooMuch)
}
