/*
 hark-ffmpeg --serve: a fork server, so that a track costs a fork rather than an exec.

 Starting hark-ffmpeg loads FFmpeg and the 135 libraries Debian's build of it links (codecs,
 TLS, fonts): about 30 ms, 20 of them CPU, paid again for every track and every seek. Served,
 the libraries are loaded once, here, and each request gets a copy of this process (fork,
 without exec) that runs exactly what `hark-ffmpeg ARGUMENTS…` would, on the descriptors the
 request brings. A crash or hang on a hostile file still ends only that copy.

 stdin is a SOCK_SEQPACKET Unix socket to the player. A request is one message: its arguments,
 each ended by a NUL byte, with descriptors attached (SCM_RIGHTS), in this order:

   status     a pipe's write end: the child's wait status (4 bytes, as waitpid gives it) is
              written there when it ends, and the pipe closed
   stdin      the child's lifeline (see --lifeline)
   stdout     its frames
   stderr     its line
   [fd 3]     optional: a stream's events

 The answer is one message of 4 bytes: the child's pid, or minus an error number (a request
 that is not one, fork failing). The children are this process's, not the player's: it reaps
 them (a pidfd each, or a 20 ms poll on kernels without pidfd_open). It exits when the player
 closes its end, killing and reaping the children still running first, or when it has had no
 child and no request for 30 s (FFmpeg's memory goes back to the system; the player starts a
 new server when it needs one): the player waits for
 it as it exits (HelperServer), so that their CPU time is counted in the player's, as a
 spawned helper's is.

 The server has one thread, so that fork copies a process with nothing half done in it.
*/
import CHarkSys
import Glibc
import Platform

/// A child started for a request, until it is reaped.
private struct Child {
  var pid: pid_t
  /// Polls readable when it ends; -1 where the kernel has no pidfd_open.
  var pidfd: Int32
  /// Where its wait status goes.
  var status: Int32
}

/// How long the server waits with no child and no request before it exits, in milliseconds.
private let idleLimit: Int32 = 30_000

/// Serves requests on stdin until the player closes it, or nothing has come for `idleLimit`;
/// never returns.
func serve() -> Never {
  // A status pipe whose reader has gone (the player dropped that decoder) must fail the write,
  // not end the server.
  signal(SIGPIPE, SIG_IGN)
  var children: [Child] = []
  let message = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
  while true {
    var polled = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
    polled += children.map { pollfd(fd: $0.pidfd, events: Int16(POLLIN), revents: 0) }
    let withoutPidfd = children.contains { $0.pidfd < 0 }
    let timeout: Int32 = children.isEmpty ? idleLimit : withoutPidfd ? 20 : -1
    let ready = poll(&polled, nfds_t(polled.count), timeout)
    if ready < 0 && errno != EINTR { exit(1) }
    // Nothing to do for a while: FFmpeg's memory goes back (the player starts another server
    // when it next needs one).
    if ready == 0 && children.isEmpty { exit(0) }
    children.removeAll { reaped($0) }
    guard ready > 0, polled[0].revents != 0 else { continue }

    var fds = [Int32](repeating: -1, count: Int(CHS_MOST_DESCRIPTORS))
    var fdCount: Int32 = 0
    let got = chs_receive_with_descriptors(0, message.baseAddress, message.count, &fds, &fdCount)
    if got == 0 {
      // The player is ending (or has gone): so are the children it has not closed yet (their
      // lifelines would end them in a moment). Each is reaped, so that its time counts in the
      // player's when the player reaps this process.
      for child in children { _ = kill(child.pid, SIGKILL) }
      for child in children {
        var status: Int32 = 0
        while waitpid(child.pid, &status, 0) < 0 && errno == EINTR {}
      }
      exit(0)
    }
    if got < 0 {
      if errno == EMSGSIZE {
        answer(-EMSGSIZE)
        continue
      }
      exit(1)
    }
    let given = Array(fds.prefix(Int(fdCount)))
    guard given.count == 4 || given.count == 5,
      let arguments = requestArguments(UnsafeRawBufferPointer(rebasing: message[..<got]))
    else {
      for fd in given { close(fd) }
      answer(-EINVAL)
      continue
    }
    let pid = fork()
    if pid == 0 {
      becomeChild(given, arguments, leaving: children)
    }
    for fd in given.dropFirst() { close(fd) }
    if pid < 0 {
      let code = errno
      close(given[0])
      answer(-code)
      continue
    }
    children.append(Child(pid: pid, pidfd: chs_pidfd_open(pid), status: given[0]))
    answer(pid)
  }
}

/// Reaps `child` if it has ended, writing its status to its pipe; whether it was.
private func reaped(_ child: Child) -> Bool {
  var status: Int32 = 0
  var rc: pid_t
  repeat { rc = waitpid(child.pid, &status, WNOHANG) } while rc < 0 && errno == EINTR
  guard rc != 0 else { return false }
  // rc < 0 (ECHILD) cannot happen here, the only reaper of its children; said as "unknown" by
  // closing the pipe without a status.
  if rc == child.pid { _ = write(child.status, &status, MemoryLayout<Int32>.size) }
  close(child.status)
  if child.pidfd >= 0 { close(child.pidfd) }
  return true
}

/// The NUL-ended arguments of a request; nil when it has none or a byte follows the last NUL.
private func requestArguments(_ bytes: UnsafeRawBufferPointer) -> [String]? {
  guard let last = bytes.last, last == 0 else { return nil }
  let words = bytes.dropLast().split(separator: 0, omittingEmptySubsequences: false)
  return words.map { FileName.string(Array($0)) }
}

/// Sends the answer to a request: a pid, or minus an error number.
private func answer(_ value: Int32) {
  var value = value
  _ = send(0, &value, MemoryLayout<Int32>.size, Int32(MSG_NOSIGNAL))
}

/// In the forked child: puts the request's descriptors on 0, 1, 2 (and 3), lets go of the
/// server's, and runs the request as `hark-ffmpeg ARGUMENTS…` would; never returns.
private func becomeChild(_ given: [Int32], _ arguments: [String], leaving children: [Child])
  -> Never
{
  for child in children {
    close(child.status)
    if child.pidfd >= 0 { close(child.pidfd) }
  }
  close(given[0])
  // Moved above the targets first, so that no dup2 overwrites a descriptor still to be moved.
  let sources = given.dropFirst().map { fd in
    let moved = fcntl(fd, F_DUPFD, Int32(16))
    close(fd)
    return moved
  }
  for (target, fd) in sources.enumerated() {
    guard fd >= 0, dup2(fd, Int32(target)) >= 0 else { _exit(1) }
    close(fd)
  }
  // The request's process, as a spawn would have made it: a process group of its own (the
  // terminal's ^C and ^Z are the player's to handle), SIGPIPE as it comes.
  _ = setpgid(0, 0)
  signal(SIGPIPE, SIG_DFL)
  run(arguments)
}
