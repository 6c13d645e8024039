import Glibc
import Logging
import Platform
import SessionCore
import SessionWire
import Testing

@testable import SessionClient
@testable import SessionServer

/// A session server running on a thread of the test process, in a directory of its own.
final class TestServer: Sendable {
  let root: String
  let paths: SessionPaths
  private let idleExit: Duration?
  private let maximumPendingOutputBytes: Int
  /// Where a test posts what a watcher would (the sound server, ALSA jacks).
  let external: ExternalEvents?
  private let maximumClients: Int?
  /// The desktop's other players, for the sleep timer.
  private let desktop: (any DesktopPlayerControl)?
  private let silencesJustPaused: Duration?

  init(
    idleExit: Duration? = nil, maximumPendingOutputBytes: Int = 1 << 20,
    external: ExternalEvents? = nil, maximumClients: Int? = nil,
    desktop: (any DesktopPlayerControl)? = nil, silencesJustPaused: Duration? = nil
  ) {
    var template = Array("/tmp/hark-server-test-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer {
      mkdtemp($0.baseAddress!).map { String(cString: $0) }
    }
    guard let made else { preconditionFailure("mkdtemp failed") }
    root = made
    paths = SessionPaths(directory: root + "/run/hark", stateDirectory: root + "/state")
    mkdir(root + "/run", 0o700)
    self.idleExit = idleExit
    self.maximumPendingOutputBytes = maximumPendingOutputBytes
    self.external = external
    self.maximumClients = maximumClients
    self.desktop = desktop
    self.silencesJustPaused = silencesJustPaused
  }

  /// Starts a server and waits until it answers.
  func start() async throws {
    var configuration = SessionServer.Configuration(paths: paths, idleExit: idleExit)
    configuration.maximumPendingOutputBytes = maximumPendingOutputBytes
    configuration.external = external
    if let maximumClients { configuration.maximumClients = maximumClients }
    configuration.desktop = desktop
    if let silencesJustPaused { configuration.silencesJustPaused = silencesJustPaused }
    var logger = Logger(label: "test-server")
    logger.logLevel = .warning
    let server = UncheckedBox(SessionServer(configuration: configuration, logger: logger))
    startThread { try? server.value.run() }
    for _ in 0..<500 {
      if let fd = try? UnixSocket.connect(to: paths.socket) {
        close(fd)
        return
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("the test server never answered")
  }

  /// Asks the server to stop and waits until it has let go of its lock.
  func stop() async throws {
    try await stop(through: try await client("stopper"))
  }

  /// Stops the server through a session it serves already: a server serving its most clients
  /// refuses a new one until it has seen one of them go, which a test cannot wait for.
  func stop(through control: AudioSession) async throws {
    try await control.stopServer()
    control.close()
    for _ in 0..<500 where SessionServer.isRunning(paths) {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(!SessionServer.isRunning(paths))
  }

  func client(_ name: String) async throws -> AudioSession {
    try await AudioSession.connect(.init(name: name, paths: paths, autospawn: false))
  }

  /// A raw connection, to send what no well-behaved client would.
  func rawConnection() throws -> RawConnection {
    RawConnection(fd: try UnixSocket.connect(to: paths.socket))
  }

  func cleanUp() {
    _ = system("rm -rf '\(root)'")
  }
}

struct UncheckedBox<T>: @unchecked Sendable {
  let value: T
  init(_ value: T) { self.value = value }
}

/// Collects a session's events so a test can wait for one with a deadline.
final class EventRecorder: Sendable {
  private let events = Locked<[SessionEvent]>([])

  init(_ session: AudioSession) {
    Task { [self] in
      for await e in session.events { self.events.withLock { $0.append(e) } }
    }
  }

  var all: [SessionEvent] { events.withLock { $0 } }

  /// Waits up to `timeout` for an event matching `predicate`; returns it or nil.
  func wait(
    for description: String, timeout: Duration = .seconds(5),
    _ predicate: @Sendable (SessionEvent) -> Bool
  ) async -> SessionEvent? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if let e = all.first(where: predicate) { return e }
      try? await Task.sleep(for: .milliseconds(10))
    }
    // One look after the deadline: this task may not have run for seconds (the parallel run's
    // fuzz loops hold the pool), and the event came meanwhile (a CI run failed so, with the
    // event in the list it printed).
    if let e = all.first(where: predicate) { return e }
    Issue.record("no event '\(description)' within \(timeout); got \(all)")
    return nil
  }
}

/// A hand-driven socket to the server.
struct RawConnection: Sendable {
  let fd: Int32

  func send(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  func send(bytes: [UInt8]) -> Int {
    bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  /// Reads lines until `count` have arrived, the peer closes, or 5 s pass.
  func readLines(_ count: Int) -> (lines: [String], closed: Bool) {
    var framer = LineFramer(limit: 1 << 24)
    var lines: [String] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    let deadline = ContinuousClock.now + .seconds(5)
    while lines.count < count, ContinuousClock.now < deadline {
      var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&p, 1, 100) > 0 else { continue }
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n <= 0 { return (lines, true) }
      framer.append(buffer[0..<n])
      while let line = try? framer.nextLine() {
        lines.append(String(decoding: line, as: UTF8.self))
      }
    }
    return (lines, false)
  }

  /// Whether the server has closed the connection (reading everything it still sent).
  func isClosedByPeer(within timeout: Duration = .seconds(5)) -> Bool {
    var buffer = [UInt8](repeating: 0, count: 65536)
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&p, 1, 100) > 0 else { continue }
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n <= 0 { return true }
    }
    return false
  }

  /// Whether the server has closed the connection, seen without reading anything (a client
  /// that never reads stays one that never reads).
  func isHungUp(within timeout: Duration = .seconds(5)) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      var p = pollfd(fd: fd, events: Int16(0x2000), revents: 0)  // POLLRDHUP (hidden by Glibc)
      if poll(&p, 1, 100) > 0, p.revents & Int16(0x2000 | POLLHUP | POLLERR) != 0 { return true }
    }
    return false
  }

  func close() { Glibc.close(fd) }
}

/// The server's error for a request that must fail; records an issue when it succeeds or
/// fails otherwise.
func serverError(_ body: () async throws -> Void) async -> WireError? {
  do {
    try await body()
    Issue.record("the request succeeded")
    return nil
  } catch let error as SessionClientError {
    guard case .server(let e) = error else {
      Issue.record("expected a server error, got \(error)")
      return nil
    }
    return e
  } catch {
    Issue.record("unexpected \(error)")
    return nil
  }
}
