import CHarkSys
import Glibc

/// Thin wrappers over the socket calls the server and clients make. Every descriptor they
/// return is close-on-exec, so a spawned server never inherits a client's connection.
enum UnixSocket {
  /// A sockaddr_un for `path`; the caller has checked that it fits.
  private static func address(_ path: String) -> (sockaddr_un, socklen_t) {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
      let n = min(bytes.count, raw.count - 1)
      for i in 0..<n { raw[i] = bytes[i] }
      raw[n] = 0
    }
    // sun_path follows the 2-byte family; the length counts the path and its NUL.
    let pathOffset =
      MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? MemoryLayout<sa_family_t>.size
    let length = pathOffset + bytes.count + 1
    return (addr, socklen_t(length))
  }

  /// A listening socket at `path` (mode 0600), replacing a stale socket file.
  static func listen(at path: String, backlog: Int32 = 64) throws(SystemError) -> Int32 {
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

  /// A blocking connection to the socket at `path`.
  static func connect(to path: String) throws(SystemError) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw .last("creating a socket") }
    var (addr, length) = address(path)
    let rc = withUnsafePointer(to: &addr) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
        retryingEINTR { Glibc.connect(fd, p, length) }
      }
    }
    guard rc == 0 else {
      let e = SystemError.last("connecting to '\(path)'")
      close(fd)
      throw e
    }
    return fd
  }

  /// Accepts one pending connection, non-blocking; nil when none is pending.
  static func accept(_ listener: Int32) throws(SystemError) -> Int32? {
    let fd = retryingEINTR { chs_accept_nonblocking(listener) }
    if fd >= 0 { return fd }
    if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
    // A connection that died before we took it is the peer's problem, not the server's.
    if errno == ECONNABORTED || errno == EPROTO { return nil }
    throw .last("accepting a connection")
  }

  /// The peer's uid and pid (SO_PEERCRED).
  static func peer(_ fd: Int32) throws(SystemError) -> (uid: uid_t, pid: pid_t) {
    var uid: uid_t = 0
    var pid: pid_t = 0
    guard chs_peer_credentials(fd, &uid, &pid) == 0 else { throw .last("reading peer credentials") }
    return (uid, pid)
  }

  /// Writes as much as the socket takes without blocking (for non-blocking descriptors) or all
  /// of it (for blocking ones); returns the count written. Never raises SIGPIPE.
  static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
    guard let base = bytes.baseAddress else { return 0 }
    var done = 0
    while done < bytes.count {
      let n = Glibc.send(fd, base + done, bytes.count - done, Int32(MSG_NOSIGNAL))
      if n > 0 {
        done += n
      } else if n < 0 && errno == EINTR {
        continue
      } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
        return done
      } else {
        throw .last("writing to a session connection")
      }
    }
    return done
  }
}
