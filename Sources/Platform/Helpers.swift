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
  let out = try makePipe(nonBlockingRead: true)
  let err: (read: Int32, write: Int32)
  do { err = try makePipe(nonBlockingRead: true) } catch {
    close(out.read)
    close(out.write)
    throw error
  }
  // Ours do not block (one poll serves both); the helper's do, as a program's stdout does.
  let spawned = Result { () throws(SystemError) in
    try spawn(
      executable, arguments, descriptors: [1: .parent(out.write), 2: .parent(err.write)],
      detachment: .newProcessGroup)
  }
  close(out.write)
  close(err.write)
  defer {
    close(out.read)
    close(err.read)
  }
  let pid = try spawned.get()
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
      pollfd(fd: open.out ? out.read : -1, events: Int16(POLLIN), revents: 0),
      pollfd(fd: open.err ? err.read : -1, events: Int16(POLLIN), revents: 0),
    ]
    let wait = Int32(min(1_000, (deadline - now) / 1_000_000 + 1))
    if poll(&fds, 2, wait) < 0 && errno != EINTR {
      failed = true
      break
    }
    for (i, fd) in [out.read, err.read].enumerated() where fds[i].revents != 0 {
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
  // Nil: reaped elsewhere (SIGCHLD ignored, a waitpid(-1)), so how it ended is not known.
  let end = waitForChild(pid)
  let text = String(decoding: errors, as: UTF8.self)
  let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
  return HelperOutput(
    status: killed ? nil : end.flatMap { if case .exited(let s) = $0 { s } else { nil } },
    output: killed ? [] : output,
    errorLine: lines.last.map(String.init) ?? "", timedOut: timedOut, wroteTooMuch: tooMuch)
}
