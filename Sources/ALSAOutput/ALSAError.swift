import CALSA

/// A failed ALSA call, described in terms of what we were doing.
public struct ALSAError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Negative errno, as ALSA returns it.
  public let code: Int32
  /// "opening ALSA device 'hw:1'".
  public let operation: String

  public var description: String { "\(operation) (\(String(cString: snd_strerror(code))))" }

  static func check(_ rc: Int32, _ operation: @autoclosure () -> String) throws(ALSAError) {
    if rc < 0 { throw ALSAError(code: rc, operation: operation()) }
  }
}

/// Keeps alsa-lib from printing its own messages over the terminal and into logs.
public func silenceALSALibraryErrors() { calsa_silence_library_errors() }
