import Glibc

/// A failed system call, described in terms of what we were doing.
public struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The errno value.
  public let code: Int32
  /// What we were doing: "connecting to '/run/user/1000/hark/session.sock'".
  public let operation: String

  public init(code: Int32, operation: String) {
    self.code = code
    self.operation = operation
  }

  /// The error of the call that just failed.
  public static func last(_ operation: @autoclosure () -> String) -> SystemError {
    SystemError(code: errno, operation: operation())
  }

  /// strerror's words for `code`.
  public var reason: String { String(cString: strerror(code)) }
  public var description: String { "\(operation) (\(reason))" }
}

/// Retries a call interrupted by a signal (-1 with EINTR).
@inline(__always)
public func retryingEINTR<T: BinaryInteger>(_ call: () -> T) -> T {
  while true {
    let r = call()
    if r >= 0 || errno != EINTR { return r }
  }
}
