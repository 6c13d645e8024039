import CHarkSys
import Glibc

/// Starts `executable arguments…` fully detached: a process session of its own (so it has no
/// controlling terminal and survives the terminal closing), stdin from /dev/null, stdout and
/// stderr appended to `logPath` (or /dev/null), and no other descriptor of ours. A thread reaps
/// it when it exits, so it never lingers as a zombie of a long-lived client.
func spawnDetached(
  executable: String, arguments: [String], logPath: String?
) throws(SystemError) -> pid_t {
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }

  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  let log = logPath ?? "/dev/null"
  posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
  posix_spawn_file_actions_adddup2(&actions, 1, 2)
  _ = chs_spawn_add_closefrom(&actions, 3)

  // Signals the caller ignores or blocks must not stay ignored or blocked in the daemon.
  var defaults = sigset_t()
  sigemptyset(&defaults)
  for s in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT] { sigaddset(&defaults, s) }
  posix_spawnattr_setsigdefault(&attributes, &defaults)
  var empty = sigset_t()
  sigemptyset(&empty)
  posix_spawnattr_setsigmask(&attributes, &empty)
  posix_spawnattr_setflags(
    &attributes,
    chs_spawn_setsid_flag() | Int16(POSIX_SPAWN_SETSIGDEF) | Int16(POSIX_SPAWN_SETSIGMASK))

  let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
  defer { for p in argv { free(p) } }
  var pid: pid_t = 0
  let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
  guard rc == 0 else { throw SystemError(code: rc, operation: "starting '\(executable)'") }
  let child = pid
  startDetachedThread {
    var status: Int32 = 0
    _ = retryingEINTR { waitpid(child, &status, 0) }
  }
  return pid
}

/// The path of the running executable.
func currentExecutable() -> String? {
  var buffer = [CChar](repeating: 0, count: 4096)
  let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
  guard n > 0 else { return nil }
  return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
