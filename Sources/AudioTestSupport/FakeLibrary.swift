import AudioCore
import Glibc
import Platform

/// Made-up files by path, opened as `ToneDecoder`s the way an engine's `openDecoder` opens real
/// ones; a path it does not know throws, like a missing or unreadable file.
public final class ToneLibrary: Sendable {
  private let tracks: [String: ToneDecoder.Configuration]
  private let unreadable: [String: DecodeError]
  private let opened = Locked<[(path: String, decoder: ToneDecoder)]>([])
  private let slowOpens: [String: Duration]
  /// Slow opens under way, and whether the test has let them finish.
  private let slow = Locked((waiting: 0, released: false))

  /// `tracks` by path (their `path` is set to it); `unreadable` paths fail with the given reason.
  /// Opening a path in `slowOpens` takes that long (a slow disk, a network mount), unless
  /// `releaseSlowOpens()` lets it finish sooner.
  public init(
    _ tracks: [String: ToneDecoder.Configuration], unreadable: [String: String] = [:],
    slowOpens: [String: Duration] = [:]
  ) {
    self.slowOpens = slowOpens
    var named: [String: ToneDecoder.Configuration] = [:]
    for (path, var configuration) in tracks {
      configuration.path = path
      named[path] = configuration
    }
    self.tracks = named
    var failures: [String: DecodeError] = [:]
    for (path, reason) in unreadable {
      failures[path] = DecodeError(.unreadable, path: path, reason: reason, detail: "ToneLibrary")
    }
    self.unreadable = failures
  }

  /// Opens a fresh decoder at frame 0, or throws what opening `path` would.
  public func open(_ path: String) throws(DecodeError) -> ToneDecoder {
    if let delay = slowOpens[path] {
      let deadline = ContinuousClock.now + delay
      slow.withLock { $0.waiting += 1 }
      while ContinuousClock.now < deadline, !slow.withLock({ $0.released }) { usleep(1_000) }
      slow.withLock { $0.waiting -= 1 }
    }
    if let failure = unreadable[path] { throw failure }
    guard let configuration = tracks[path] else {
      throw DecodeError(.notFound, path: path, reason: "no such file", detail: "ToneLibrary")
    }
    let decoder = ToneDecoder(configuration)
    opened.withLock { $0.append((path, decoder)) }
    return decoder
  }

  /// The decoders opened for `path`, oldest first.
  public func decoders(for path: String) -> [ToneDecoder] {
    opened.withLock { $0.filter { $0.path == path }.map(\.decoder) }
  }

  /// How many slow opens are waiting now.
  public var slowOpensWaiting: Int { slow.withLock { $0.waiting } }

  /// Lets slow opens finish now (and those to come, at once).
  public func releaseSlowOpens() { slow.withLock { $0.released = true } }

  /// Every path opened successfully, in order.
  public var openedPaths: [String] { opened.withLock { $0.map(\.path) } }
}

/// Why `FakeDevices` would not open a device.
public struct FakeDeviceError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The device asked for.
  public var deviceName: String

  /// A refusal to open `deviceName`.
  public init(deviceName: String) { self.deviceName = deviceName }

  /// "no audio device 'name'".
  public var description: String { "no audio device '\(deviceName)'" }
}

/// Hands out `FakeOutput`s the way an engine's `openOutput` opens devices, and keeps them so a
/// test can see what each one was asked to play.
public final class FakeDevices: Sendable {
  private let options: FakeOutput.Options
  private let perOpening: [Int: FakeOutput.Options]
  private let failing: Set<Int>
  private let refusing: Set<PCMFormat>
  private let outputs = Locked<[FakeOutput]>([])
  private let attempts = Locked(0)

  /// Every output behaves as `options` says, except the n-th opening (from 0), which uses
  /// `perOpening[n]` or, if `failing` holds n, throws `FakeDeviceError`.
  public init(
    _ options: FakeOutput.Options = FakeOutput.Options(),
    perOpening: [Int: FakeOutput.Options] = [:], failing: Set<Int> = [],
    refusing: Set<PCMFormat> = []
  ) {
    self.options = options
    self.perOpening = perOpening
    self.failing = failing
    self.refusing = refusing
  }

  /// Opens the next output.
  /// Opens the next output; a format in `refusing` is refused (`FormatRefused`).
  public func open(_ deviceName: String, _ format: PCMFormat) throws -> FakeOutput {
    let attempt = attempts.withLock { n in
      defer { n += 1 }
      return n
    }
    if failing.contains(attempt) { throw FakeDeviceError(deviceName: deviceName) }
    if refusing.contains(format) {
      throw FormatRefused(device: deviceName, format: format, detail: "Invalid argument")
    }
    let output = FakeOutput(
      format: format, deviceName: deviceName, options: perOpening[attempt] ?? options)
    outputs.withLock { $0.append(output) }
    return output
  }

  /// The outputs opened, oldest first.
  public var opened: [FakeOutput] { outputs.withLock { $0 } }
}
