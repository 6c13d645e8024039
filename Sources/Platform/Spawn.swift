import CHarkSys
import Glibc

/// How far a spawned process is cut off from the one that started it.
public enum Detachment: Sendable {
  /// A session of its own (setsid): no controlling terminal, so it survives the terminal
  /// closing. For daemons.
  case newSession
  /// A process group of its own: the terminal's Ctrl-C and Ctrl-Z do not reach it, but it
  /// keeps the terminal's session. For helpers that end when their work is done.
  case newProcessGroup
}

/// Starts `executable arguments…` detached: stdin from /dev/null (or `stdin`), stdout and stderr appended to
/// `outputPath` (created 0600; /dev/null when nil), no other descriptor of ours, signal
/// dispositions and mask as a fresh process has them. A thread reaps it when it exits, so it
/// never lingers as a zombie of a long-lived parent. Returns its pid.
public func spawnDetached(
  executable: String, arguments: [String], outputPath: String?,
  detachment: Detachment = .newSession, stdin: Int32? = nil
) throws(SystemError) -> pid_t {
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }

  if let stdin {
    posix_spawn_file_actions_adddup2(&actions, stdin, 0)
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  }
  let output = outputPath ?? "/dev/null"
  posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
  posix_spawn_file_actions_adddup2(&actions, 1, 2)
  _ = chs_spawn_add_closefrom(&actions, 3)

  // Signals the caller ignores or blocks must not stay ignored or blocked in the child.
  var defaults = sigset_t()
  sigemptyset(&defaults)
  for s in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGTSTP] { sigaddset(&defaults, s) }
  posix_spawnattr_setsigdefault(&attributes, &defaults)
  var empty = sigset_t()
  sigemptyset(&empty)
  posix_spawnattr_setsigmask(&attributes, &empty)
  var flags = Int16(POSIX_SPAWN_SETSIGDEF) | Int16(POSIX_SPAWN_SETSIGMASK)
  switch detachment {
  case .newSession:
    flags |= chs_spawn_setsid_flag()
  case .newProcessGroup:
    posix_spawnattr_setpgroup(&attributes, 0)
    flags |= Int16(POSIX_SPAWN_SETPGROUP)
  }
  posix_spawnattr_setflags(&attributes, flags)

  let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
  defer { for p in argv { free(p) } }
  var pid: pid_t = 0
  let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
  guard rc == 0 else { throw SystemError(code: rc, operation: "starting '\(executable)'") }
  let child = pid
  startThread {
    var status: Int32 = 0
    _ = retryingEINTR { waitpid(child, &status, 0) }
  }
  return pid
}
