import Glibc
import Platform

/// Thin wrappers over the socket calls the server and clients make (the server adds listening
/// and accepting). Every descriptor they return is close-on-exec, so a spawned server never
/// inherits a client's connection.
package enum UnixSocket {
  /// A sockaddr_un for `path`; the caller has checked that it fits.
  package static func address(_ path: String) -> (sockaddr_un, socklen_t) {
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

  /// A blocking connection to the socket at `path`.
  package static func connect(to path: String) throws(SystemError) -> Int32 {
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

  /// Writes as much as the socket takes without blocking (for non-blocking descriptors) or all
  /// of it (for blocking ones); returns the count written. Never raises SIGPIPE.
  package static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int
  {
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
