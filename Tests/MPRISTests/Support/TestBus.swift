import Glibc
import MPRIS
import Platform
import Synchronization
import Testing

/// A private session bus: a dbus-daemon of its own, listening in a fresh directory, killed by
/// its pid when the test is over (through `withTestBus`, also when the test fails).
final class TestBus: Sendable {
  let address: String
  let directory: String
  private let daemon: ChildProcess
  private let children = Locked<[ChildProcess]>([])
  private let stopped = Atomic<Bool>(false)

  private init(address: String, directory: String, daemon: ChildProcess) {
    self.address = address
    self.directory = directory
    self.daemon = daemon
  }

  /// Starts dbus-daemon and reads the address it prints.
  static func start() -> TestBus? {
    let directory = makeTemporaryDirectory("hark-mpris-test")
    let out = Pipe()
    guard
      let daemon = ChildProcess.spawn(
        [
          "dbus-daemon", "--session", "--nofork", "--print-address",
          "--address=unix:dir=\(directory)",
        ],
        environment: ["PATH": "/usr/bin:/bin", "HOME": directory], stdout: out.writeEnd,
        stderr: nil)
    else {
      close(out.readEnd)
      close(out.writeEnd)
      removeDirectory(directory)
      return nil
    }
    close(out.writeEnd)
    defer { close(out.readEnd) }
    var line: [UInt8] = []
    let deadline = ContinuousClock.now + .seconds(10)
    var byte: UInt8 = 0
    while ContinuousClock.now < deadline, line.last != UInt8(ascii: "\n") {
      var p = pollfd(fd: out.readEnd, events: Int16(POLLIN), revents: 0)
      guard poll(&p, 1, 100) > 0 else { continue }
      guard read(out.readEnd, &byte, 1) == 1 else { break }
      line.append(byte)
    }
    let address = String(decoding: line, as: UTF8.self).trimmingNewline
    guard address.hasPrefix("unix:") else {
      Issue.record("dbus-daemon printed no address (got '\(address)')")
      daemon.terminate()
      removeDirectory(directory)
      return nil
    }
    return TestBus(address: address, directory: directory, daemon: daemon)
  }

  /// The environment the command-line clients run in: this bus, nothing of the real session.
  var environment: [String: String] {
    [
      "DBUS_SESSION_BUS_ADDRESS": address, "HOME": directory,
      "PATH": getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin",
    ]
  }

  /// Runs `playerctl ARGS` on this bus.
  func playerctl(_ arguments: String...) -> CommandOutput {
    runCommand(["playerctl"] + arguments, environment: environment)
  }

  /// Runs `dbus-send --print-reply` with these arguments on this bus.
  func dbusSend(_ arguments: String...) -> CommandOutput {
    runCommand(
      ["dbus-send", "--session", "--print-reply"] + arguments, environment: environment)
  }

  /// Calls `method` (interface.member) on the MPRIS object of org.mpris.MediaPlayer2.hark with
  /// dbus-send; `arguments` in dbus-send's notation (`int64:5`, `variant:double:0.5`).
  func call(
    _ method: String, _ arguments: String..., destination: String = "org.mpris.MediaPlayer2.hark"
  )
    -> CommandOutput
  {
    runCommand(
      [
        "dbus-send", "--session", "--print-reply", "--dest=\(destination)",
        "/org/mpris/MediaPlayer2",
        method,
      ] + arguments, environment: environment)
  }

  /// Starts a long-running client whose output goes to a file; killed with the bus.
  func startWatcher(_ name: String, _ arguments: [String]) -> Watcher? {
    let path = directory + "/" + name + ".out"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    guard
      let child = ChildProcess.spawn(arguments, environment: environment, stdout: fd, stderr: fd)
    else { return nil }
    children.withLock { $0.append(child) }
    return Watcher(path: path)
  }

  /// Kills everything this bus started, then the daemon, and removes its directory. Once.
  func stop() {
    guard !stopped.exchange(true, ordering: .relaxed) else { return }
    for child in children.withLock({ $0 }) { child.terminate() }
    daemon.terminate()
    removeDirectory(directory)
  }
}

/// What a long-running client (dbus-monitor, playerctl --follow) has printed so far.
struct Watcher: Sendable {
  let path: String
  var output: String { readFile(path) }
}

/// Runs `body` with a fresh private bus, stopped afterwards whatever happens.
func withTestBus(_ body: (TestBus) async throws -> Void) async throws {
  let bus = try #require(TestBus.start())
  defer { bus.stop() }
  try await body(bus)
}

extension String {
  var trimmingNewline: String {
    var s = self
    while s.hasSuffix("\n") { s.removeLast() }
    return s
  }
}

/// What the fake player's clients asked for, in order.
final class RequestLog: Sendable {
  private let requests = Locked<[MPRISRequest]>([])
  private let ended = Atomic<Bool>(false)

  func append(_ request: MPRISRequest) { requests.withLock { $0.append(request) } }
  var all: [MPRISRequest] { requests.withLock { $0 } }

  /// The server's request stream has ended.
  var streamEnded: Bool { ended.load(ordering: .acquiring) }
  func endStream() { ended.store(true, ordering: .releasing) }
}

/// The position the fake player reports; moved by the test.
final class PositionBox: Sendable {
  private let value = Locked<Duration>(.zero)

  var current: Duration {
    get { value.withLock { $0 } }
    set { value.withLock { $0 = newValue } }
  }
}

/// A player that records what it is asked and does nothing else: the server's owner in tests.
final class FakePlayer: Sendable {
  let server: MPRISServer
  let log = RequestLog()
  let position = PositionBox()

  /// Creates the server on `bus` showing `state`; eligible (holding its name) unless told not.
  init(
    bus: TestBus, state: MPRISState, eligible: Bool = true,
    rates: ClosedRange<Double> = 1...1
  ) async throws {
    let position = position
    var configuration = MPRISConfiguration(busAddress: bus.address)
    configuration.minimumRate = rates.lowerBound
    configuration.maximumRate = rates.upperBound
    server = try MPRISServer(
      configuration: configuration, state: state, position: { position.current })
    let (server, log) = (server, log)
    Task {
      for await request in server.requests { log.append(request) }
      log.endStream()
    }
    if eligible {
      server.setEligible(true)
      await waitUntil("taking a bus name") { server.busName != nil }
    }
  }

  /// Waits until `count` requests have arrived; returns all of them.
  func requests(count: Int) async -> [MPRISRequest] {
    await waitUntil("\(count) requests", describe: { "Got \(self.log.all)." }) {
      log.all.count >= count
    }
    return log.all
  }
}

/// A playing album track in the middle of a queue, every command enabled.
let playingState = MPRISState(
  playbackStatus: .playing, loopStatus: .none, shuffle: false,
  track: MPRISTrack(
    id: "3", title: "Blue in Green", artists: ["Miles Davis", "Bill Evans"], album: "Kind of Blue",
    url: MPRISTrack.fileURL(path: "/music/Kind of Blue/03 Blue in Green.flac"),
    length: .seconds(337), trackNumber: 3),
  volume: 0.5, canGoNext: true, canGoPrevious: true, canPlay: true, canPause: true,
  canSeek: true, canControl: true)

/// One signal as dbus-monitor printed it.
struct MonitoredSignal: Sendable {
  var member: String
  var lines: [String]

  /// The keys of the changed-properties dictionary of a PropertiesChanged, in order.
  var changedProperties: [String] {
    var keys: [String] = []
    for (i, line) in lines.enumerated() where i > 0 && lines[i - 1] == "      dict entry(" {
      let prefix = "         string \""
      guard line.hasPrefix(prefix), line.hasSuffix("\"") else { continue }
      keys.append(String(line.dropFirst(prefix.count).dropLast()))
    }
    return keys
  }

  var text: String { lines.joined(separator: "\n") }
}

extension Watcher {
  /// The signals a `dbus-monitor` watcher has printed, with the given member name.
  func signals(_ member: String) -> [MonitoredSignal] {
    var signals: [MonitoredSignal] = []
    for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("signal ") || line.hasPrefix("method ") || line.hasPrefix("error ") {
        let name = line.split(separator: " ").first { $0.hasPrefix("member=") }
        signals.append(
          MonitoredSignal(
            member: name.map { String($0.dropFirst("member=".count)) } ?? "", lines: []))
      } else if !signals.isEmpty {
        signals[signals.count - 1].lines.append(String(line))
      }
    }
    return signals.filter { $0.member == member }
  }
}

extension TestBus {
  /// Starts dbus-monitor on the MPRIS object's signals and waits until it is listening.
  func startSignalMonitor() async throws -> Watcher {
    let monitor = try #require(
      startWatcher(
        "monitor",
        ["dbus-monitor", "--address", address, "type='signal',path='/org/mpris/MediaPlayer2'"]))
    // dbus-monitor reports losing its own name once it has become a monitor.
    await waitUntil("dbus-monitor starting", describe: { monitor.output }) {
      monitor.output.contains("member=NameLost")
    }
    return monitor
  }
}
