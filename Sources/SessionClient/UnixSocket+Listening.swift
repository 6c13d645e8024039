import CHarkSys
import Glibc
import Platform

/// The serving side of a socket (the session server's, a player's for the interfaces attached to
/// it): listening, accepting, and who is at the other end.
extension UnixSocket {
  /// A listening socket at `path` (mode 0600), replacing a stale socket file.
  package static func listen(at path: String, backlog: Int32 = 64) throws(SystemError) -> Int32 {
    let fd = socket(
      AF_UNIX,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { throw .last("creating the server socket") }
    unlink(path)
    var (addr, length) = address(path)
    let bound = withUnsafePointer(to: &addr) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else {
      let e = SystemError.last("binding '\(path)'")
      close(fd)
      throw e
    }
    chmod(path, 0o600)
    guard Glibc.listen(fd, backlog) == 0 else {
      let e = SystemError.last("listening on '\(path)'")
      close(fd)
      throw e
    }
    return fd
  }

  /// Accepts one pending connection, non-blocking; nil when none is pending.
  package static func accept(_ listener: Int32) throws(SystemError) -> Int32? {
    let fd = retryingEINTR { chs_accept_nonblocking(listener) }
    if fd >= 0 { return fd }
    if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
    // A connection that died before we took it is the peer's problem, not the server's.
    if errno == ECONNABORTED || errno == EPROTO { return nil }
    throw .last("accepting a connection")
  }

  /// The peer's uid and pid (SO_PEERCRED).
  package static func peer(_ fd: Int32) throws(SystemError) -> (uid: uid_t, pid: pid_t) {
    var uid: uid_t = 0
    var pid: pid_t = 0
    guard chs_peer_credentials(fd, &uid, &pid) == 0 else { throw .last("reading peer credentials") }
    return (uid, pid)
  }
}
