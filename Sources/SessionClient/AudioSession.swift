import Glibc
import Platform
import SessionCore
import SessionWire

/// Why a session request failed.
public enum SessionClientError: Error, Sendable, Hashable, CustomStringConvertible {
  /// `$XDG_RUNTIME_DIR` is missing or unusable.
  case paths(SessionPathError)
  /// No server answers and starting one is not allowed (`HARK_SESSION_AUTOSPAWN=0`).
  case noServer(socket: String, reason: String)
  /// A server was started but never answered.
  case serverDidNotStart(socket: String, log: String)
  /// The server speaks another protocol version, or broke the protocol.
  case protocolError(String)
  /// The server refused to activate the session (G10).
  case refused(ActivationRefusal)
  /// The server answered the request with an error.
  case server(WireError)
  /// The connection to the server was lost; the session is reconnecting (G16).
  case disconnected
  /// `close()` was called.
  case closed

  public var description: String {
    switch self {
    case .paths(let e): e.description
    case .noServer(let socket, let reason):
      "cannot reach the session server at '\(socket)' (\(reason)); start it with 'hark session-server'"
    case .serverDidNotStart(let socket, let log):
      "started a session server but it never answered at '\(socket)'; see its log '\(log)'"
    case .protocolError(let m): "session server: \(m)"
    case .refused(let r): r.description
    case .server(let e): e.message
    case .disconnected: "lost the connection to the session server"
    case .closed: "the session is closed"
    }
  }
}

/// A remote command for this app (G17); answer it with `respond(_:)`.
public struct IncomingCommand: Sendable {
  public let command: RemoteCommand
  let id: CommandID
  let session: AudioSession

  /// Tells the sender how the command went; a command left unanswered fails after 2 s.
  public func respond(_ status: CommandStatus) {
    session.sendUnrequested(.commandResult(id, status))
  }
}

/// Files another hark process handed to this player (`hark play`, `hark add`): answer with
/// `respond(_:)` once they are queued.
public struct IncomingFiles: Sendable {
  /// Absolute paths: files, folders and playlists, as the user named them.
  public let paths: [String]
  public let placement: QueuePlacement
  let id: CommandID
  let session: AudioSession

  /// Tells the sender how it went; unanswered, it fails after 10 s.
  public func respond(_ status: CommandStatus) {
    session.sendUnrequested(.commandResult(id, status))
  }
}

/// A process's audio session: its category, whether it is active, and what it is told.
///
/// Every hark process uses one. It connects to the per-user session server, starting it when
/// none answers. If the server goes away, the session reconnects (starting a new server),
/// registers its category, activation and now-playing info again, and then delivers
/// `.mediaServicesWereReset` (G16). Requests made while it is reconnecting fail with
/// `.disconnected`, except deactivation and publishing, which are remembered and sent on
/// reconnection.
public final class AudioSession: Sendable {
  /// How to reach the server.
  public struct Configuration: Sendable {
    /// The app's name as `hark status` shows it.
    public var name: String
    /// nil: from the environment.
    public var paths: SessionPaths?
    /// Start a server when none answers; `HARK_SESSION_AUTOSPAWN=0` turns it off by default.
    public var autospawn: Bool
    /// The program started as `<executable> session-server`; nil: this process's executable.
    public var serverExecutable: String?
    /// How long to wait for a server to answer, including starting one.
    public var connectTimeout: Duration = .seconds(5)
    /// When no server runs and one has to be started, return at once and connect while it
    /// starts. With no server there is no other session, so until it answers the session's
    /// requests are granted on the spot (category, activation, publishing: what a player needs
    /// to start playing) and told to the server when it does; the app then gets
    /// `.mediaServicesWereReset`, with the server's welcome. For players, whose first sound
    /// should not wait for a server's start-up; never for control commands.
    public var startWithoutWaiting = false
    /// A hark player: files handed over by other hark processes come to it (`files`).
    public var acceptsFiles = false
    /// What the app is (an alarm, an assistant…), said in its hello: what other apps' pauses
    /// name. Nil: what its category makes it.
    public var role: AppRole?

    public init(
      name: String, paths: SessionPaths? = nil, autospawn: Bool? = nil,
      serverExecutable: String? = nil
    ) {
      self.name = name
      self.paths = paths
      self.autospawn = autospawn ?? (environment("HARK_SESSION_AUTOSPAWN") != "0")
      self.serverExecutable = serverExecutable
    }
  }

  private typealias Completion = @Sendable (Result<ReplyPayload, SessionClientError>) -> Void

  /// What the session has told the server, to tell a new server again.
  private struct Registration {
    var category: (Category, SessionMode, CategoryOptions)?
    var active = false
    var published: (PlaybackInfo?, Set<RemoteCommandKind>)?
    var acceptsFiles = false

    /// Keeps what `request` registers; other requests register nothing (`acceptsFiles` is set
    /// from the configuration).
    mutating func remember(_ request: ClientRequest) {
      switch request {
      case .setCategory(let c, let m, let o): category = (c, m, o)
      case .setActive(let a, _): active = a
      case .publish(let playback, let commands): published = (playback, commands)
      case .otherAudioPlaying, .acceptFiles, .status, .setSilent, .route, .command, .stopServer,
        .outputLost, .handOver, .setTimer:
        break
      }
    }
  }

  private struct State {
    var fd: Int32
    var welcome: Welcome
    var nextRequest: RequestID = 1
    var waiting: [RequestID: Completion] = [:]
    var registration = Registration()
    var closed = false
    /// No connection yet: a server is being started for this session (`startWithoutWaiting`).
    var starting = false
  }

  private let configuration: Configuration
  private let paths: SessionPaths
  private let state: Locked<State>
  private let eventContinuation: AsyncStream<SessionEvent>.Continuation
  private let commandContinuation: AsyncStream<IncomingCommand>.Continuation
  private let filesContinuation: AsyncStream<IncomingFiles>.Continuation

  /// Everything the server tells this session, in order. One consumer.
  public let events: AsyncStream<SessionEvent>
  /// Remote commands for this app, when it is the now-playing app. One consumer.
  public let commands: AsyncStream<IncomingCommand>
  /// Files handed over to this player (with `acceptsFiles`). One consumer.
  public let files: AsyncStream<IncomingFiles>

  private init(configuration: Configuration, paths: SessionPaths, connection: Connection) {
    self.configuration = configuration
    self.paths = paths
    var s = State(fd: connection.fd, welcome: connection.welcome)
    s.registration.acceptsFiles = configuration.acceptsFiles
    self.state = Locked(s)
    (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    (commands, commandContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    (files, filesContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
  }

  /// A session whose server is starting: nothing connected yet.
  private init(startingWith configuration: Configuration, paths: SessionPaths) {
    self.configuration = configuration
    self.paths = paths
    let placeholder = Welcome(
      version: protocolVersion, session: SessionID(0), serverPid: 0, silent: false,
      route: .speakers)
    var s = State(fd: -1, welcome: placeholder)
    s.starting = true
    s.registration.acceptsFiles = configuration.acceptsFiles
    self.state = Locked(s)
    (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    (commands, commandContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    (files, filesContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
  }

  /// Connects to the session server, starting it if none answers.
  public static func connect(_ configuration: Configuration) async throws(SessionClientError)
    -> AudioSession
  {
    let paths: SessionPaths
    if let given = configuration.paths {
      paths = given
    } else {
      do { paths = try SessionPaths.fromEnvironment() } catch { throw .paths(error) }
    }
    let result = await onThread { () throws(SessionClientError) -> Connection? in
      if configuration.startWithoutWaiting && configuration.autospawn {
        if let running = try Connection.existing(configuration, paths: paths) { return running }
        try Connection.spawnServer(configuration, paths: paths)
        return nil
      }
      return try Connection.open(configuration, paths: paths)
    }
    guard let connection = try result.get() else {
      // A server is starting: the session connects to it in the background, giving the one
      // just spawned its second to answer before starting another (two were started, and the
      // second's whole start-up came out of the first sound's CPU on two cores).
      let spawnedAt = monotonicNanoseconds()
      let session = AudioSession(startingWith: configuration, paths: paths)
      startThread { [session] in
        var framer = LineFramer(limit: maximumServerMessageBytes)
        if session.reconnect(&framer, spawnedAt: spawnedAt) {
          session.readLoop(framer)
        } else {
          session.finishStreams()
        }
      }
      return session
    }
    let session = AudioSession(configuration: configuration, paths: paths, connection: connection)
    // Before anything else is asked: a `hark play` right after this one's start finds it.
    if configuration.acceptsFiles { session.send(.acceptFiles) { _ in } }
    session.startReader(connection.framer)
    return session
  }

  /// Runs a blocking body on a thread of its own (connecting must not hold a cooperative one).
  private static func onThread<T: Sendable>(
    _ body: @escaping @Sendable () throws(SessionClientError) -> T
  ) async -> Result<T, SessionClientError> {
    await withCheckedContinuation { continuation in
      startThread { continuation.resume(returning: Result(catching: body)) }
    }
  }

  /// What the server said when this session (re)connected.
  public var welcome: Welcome { state.withLock { $0.welcome } }

  // MARK: Session requests

  /// Says what the app's audio means (G7).
  public func setCategory(
    _ category: Category, mode: SessionMode = .default, options: CategoryOptions = []
  ) async throws(SessionClientError) {
    _ = try await request(.setCategory(category, mode: mode, options: options))
    state.withLock { $0.registration.category = (category, mode, options) }
  }

  /// Activates or deactivates the session. Activation fails with `.refused` when the server
  /// says no (G10); deactivation with `.notifyOthersOnDeactivation` lets the sessions this one
  /// interrupted resume (G13).
  public func setActive(_ active: Bool, options: SetActiveOptions = [])
    async throws(SessionClientError)
  {
    if !active { state.withLock { $0.registration.active = false } }
    do {
      _ = try await request(.setActive(active, options: options))
    } catch .server(let e) {
      if let refusal = ActivationRefusal(rawValue: e.code) { throw .refused(refusal) }
      throw .server(e)
    }
    if active { state.withLock { $0.registration.active = true } }
  }

  /// Publishes what the app plays and which remote commands are enabled (G17–G19).
  public func publish(_ playback: PlaybackInfo?, commands: Set<RemoteCommandKind>)
    async throws(SessionClientError)
  {
    let clean = playback.map(Self.sanitized)
    state.withLock { $0.registration.published = (clean, commands) }
    _ = try await request(.publish(clean, commands: commands))
  }

  /// As `publish`, without waiting for the server's answer: the request is written at once, in
  /// order with every other, and its reply is let go. For a caller that must not wait on the
  /// server for news it cannot act on (the player's loop, which publishes at every track: a
  /// round trip each held up a queue played faster than real time). A server that is away
  /// gets what was published last when the session reconnects, as with `publish`.
  public func post(_ playback: PlaybackInfo?, commands: Set<RemoteCommandKind>) {
    let clean = playback.map(Self.sanitized)
    state.withLock { $0.registration.published = (clean, commands) }
    send(.publish(clean, commands: commands)) { _ in }
  }

  /// Whether another app's audio is heard now (G8).
  public func isOtherAudioPlaying() async throws(SessionClientError) -> Bool {
    guard case .otherAudioPlaying(let playing) = try await request(.otherAudioPlaying) else {
      throw .protocolError("unexpected reply to 'otherAudioPlaying'")
    }
    return playing
  }

  // MARK: Control requests (hark status, silent, route, ctl, session-server --stop)

  /// The server's whole state.
  public func status() async throws(SessionClientError) -> StatusReport {
    guard case .status(let report) = try await request(.status) else {
      throw .protocolError("unexpected reply to 'status'")
    }
    return report
  }

  /// Turns silent mode (G2) on or off.
  public func setSilentMode(_ on: Bool) async throws(SessionClientError) {
    _ = try await request(.setSilent(on))
  }

  /// Sets the desktop's sleep timer, in place of any before it; nil cancels it.
  public func setTimer(_ setting: SleepTimerSetting?) async throws(SessionClientError) {
    _ = try await request(.setTimer(setting))
  }

  /// Plugs, unplugs or selects an output, as the real devices will.
  public func route(_ action: RouteAction) async throws(SessionClientError) {
    _ = try await request(.route(action))
  }

  /// Sends a remote command to the now-playing app, or to the app named `app` (its name or
  /// pid) when given, and returns its answer.
  public func send(_ command: RemoteCommand, to app: String? = nil)
    async throws(SessionClientError) -> CommandStatus
  {
    guard case .commandStatus(let status) = try await request(.command(command, app: app)) else {
      throw .protocolError("unexpected reply to 'command'")
    }
    return status
  }

  /// Takes the files other hark processes hand over from now on (`acceptFiles`), here and after
  /// every reconnection: for a session connected without `acceptsFiles`, once it knows that it
  /// is to be the user's player (`hark play` looks at its welcome's `player` first).
  public func acceptFiles() {
    state.withLock { $0.registration.acceptsFiles = true }
    send(.acceptFiles) { _ in }
  }

  /// Hands files (absolute paths) to the running hark player, queued at `placement`; fails
  /// with the server's `noPlayer` when none runs.
  /// More files than one message holds (64 KB) go in several, in order: after the first,
  /// `.now`'s go as `.next` (after the first's), `.end`'s at the end.
  public func handOver(_ paths: [String], placement: QueuePlacement)
    async throws(SessionClientError) -> CommandStatus
  {
    var answers: [CommandStatus] = []
    var placement = placement
    for batch in Self.batches(paths, placement) {
      guard
        case .commandStatus(let s) = try await request(
          .handOver(paths: batch, placement: placement))
      else { throw .protocolError("unexpected reply to 'handOver'") }
      answers.append(s)
      if placement == .now { placement = .next }
    }
    // Taken if any part was; else the first refusal other than "nothing in it".
    if answers.contains(.success) { return .success }
    return answers.first { $0 != .noSuchContent } ?? .noSuchContent
  }

  /// `paths` cut into runs whose `handOver` lines each fit in a message.
  static func batches(_ paths: [String], _ placement: QueuePlacement) -> [[String]] {
    let fits = { (batch: ArraySlice<String>) -> Bool in
      let line = try? WireCodec.encode(
        .request(Int.max, .handOver(paths: Array(batch), placement: placement)))
      return (line?.count ?? .max) <= maximumMessageBytes
    }
    guard !paths.isEmpty else { return [[]] }  // asks whether a player runs
    var runs: [[String]] = []
    var rest = paths[...]
    while !rest.isEmpty {
      var n = rest.count
      while n > 1 && !fits(rest.prefix(n)) { n /= 2 }
      runs.append(Array(rest.prefix(n)))
      rest = rest.dropFirst(n)
    }
    return runs
  }

  /// Reports that this client's own output went away; the server answers with a route change
  /// for it (oldDeviceUnavailable), as for any output that goes.
  public func outputLost(_ route: Route) async throws(SessionClientError) {
    _ = try await request(.outputLost(route))
  }

  /// Asks the server to exit.
  public func stopServer() async throws(SessionClientError) {
    _ = try await request(.stopServer)
  }

  /// Disconnects. The server deactivates the session as if it had crashed, so deactivate first
  /// when there is something to resume.
  public func close() {
    let fd = state.withLock { s -> Int32 in
      s.closed = true
      return s.fd
    }
    if fd >= 0 { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
  }

  // MARK: Plumbing

  private func request(_ request: ClientRequest) async throws(SessionClientError) -> ReplyPayload {
    let result = await withCheckedContinuation { continuation in
      send(request) { continuation.resume(returning: $0) }
    }
    return try result.get()
  }

  /// Sends a request; `completion` runs on the reader thread with the reply, or at once with
  /// the error when nothing could be sent.
  private func send(_ request: ClientRequest, completion: @escaping Completion) {
    var granted: ReplyPayload?
    let failure: SessionClientError? = state.withLock { s in
      if s.closed { return .closed }
      if s.fd < 0 && s.starting {
        // No server yet: SessionCore's rule says what is answered now; what is granted is told
        // to the server once it answers (reconnect re-registers).
        switch AnswerWhileServerStarts(request.kind) {
        case .grant:
          s.registration.remember(request)
          granted = ReplyPayload.none
        case .noOtherAudio:
          granted = .otherAudioPlaying(false)
        case .refuse:
          return .disconnected
        }
        return nil
      }
      if s.fd < 0 { return .disconnected }
      let id = s.nextRequest
      s.nextRequest += 1
      let bytes: [UInt8]
      do throws(WireError) { bytes = try WireCodec.encode(.request(id, request)) } catch {
        return .protocolError(error.message)
      }
      s.waiting[id] = completion
      if !Self.write(bytes, to: s.fd) {
        s.waiting[id] = nil
        return .disconnected
      }
      return nil
    }
    if let failure { completion(.failure(failure)) }
    if let granted { completion(.success(granted)) }
  }

  fileprivate func sendUnrequested(_ message: ClientMessage) {
    guard let bytes = try? WireCodec.encode(message) else { return }
    state.withLock { s in
      if s.fd >= 0 { _ = Self.write(bytes, to: s.fd) }
    }
  }

  private static func write(_ bytes: [UInt8], to fd: Int32) -> Bool {
    do {
      return try bytes.withUnsafeBytes { raw throws(SystemError) in try UnixSocket.send(fd, raw) }
        == bytes.count
    } catch { return false }
  }

  /// JSON has no NaN or infinity; an unknown value is better sent as absent.
  private static func sanitized(_ p: PlaybackInfo) -> PlaybackInfo {
    var p = p
    func clean(_ v: Double?) -> Double? { v.flatMap { $0.isFinite ? $0 : nil } }
    p.duration = clean(p.duration)
    p.position = clean(p.position)
    p.rate = clean(p.rate)
    p.volume = clean(p.volume)
    return p
  }

  private func startReader(_ framer: LineFramer) {
    startThread { [self] in readLoop(framer) }
  }

  /// Reader thread: dispatches what the server sends; on a lost connection, reconnects.
  private func readLoop(_ initial: LineFramer) {
    var framer = initial
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      let fd = state.withLock { $0.fd }
      var overflow = false
      while true {
        do {
          guard let line = try framer.nextLine() else { break }
          dispatch(line)
        } catch {
          overflow = true  // a broken server; treat the connection as lost
          break
        }
      }
      let n =
        overflow
        ? 0
        : buffer.withUnsafeMutableBytes { raw in
          retryingEINTR { recv(fd, raw.baseAddress, raw.count, 0) }
        }
      if n > 0 {
        framer.append(buffer[0..<n])
        continue
      }
      // The connection is gone: the server exited or crashed, or we closed it.
      let (closed, waiting) = state.withLock { s in
        let w = s.waiting
        s.waiting = [:]
        s.fd = -1
        return (s.closed, w)
      }
      Glibc.close(fd)
      for completion in waiting.values { completion(.failure(closed ? .closed : .disconnected)) }
      if closed || !reconnect(&framer) {
        finishStreams()
        return
      }
    }
  }

  private func dispatch(_ line: ArraySlice<UInt8>) {
    let message: ServerMessage
    do { message = try WireCodec.decodeServer(line) } catch { return }
    switch message {
    case .reply(let id, let result):
      let completion = state.withLock { $0.waiting.removeValue(forKey: id) }
      completion?(result.mapError { .server($0) })
    case .event(let event):
      // The server deactivated us; a new server must not be told we are active.
      if case .interruption(.began) = event { state.withLock { $0.registration.active = false } }
      eventContinuation.yield(event)
    case .command(let id, let command):
      commandContinuation.yield(IncomingCommand(command: command, id: id, session: self))
    case .handOver(let id, let paths, let placement):
      filesContinuation.yield(
        IncomingFiles(paths: paths, placement: placement, id: id, session: self))
    case .welcome, .error:
      break
    }
  }

  /// Connects to a server again (starting one), registers what this session had told the old
  /// one, and delivers `.mediaServicesWereReset`. False when the session was closed meanwhile.
  /// `spawnedAt`: when this client started a server itself, so that the first try waits for
  /// that one instead of starting another.
  private func reconnect(_ framer: inout LineFramer, spawnedAt: UInt64? = nil) -> Bool {
    var delay: UInt32 = 20_000
    var spawnedAt = spawnedAt
    while true {
      if state.withLock({ $0.closed }) { return false }
      let opened = try? Connection.open(configuration, paths: paths, spawnedAt: spawnedAt)
      spawnedAt = nil
      if let connection = opened {
        let registration = state.withLock { s -> Registration? in
          if s.closed { return nil }
          s.fd = connection.fd
          s.welcome = connection.welcome
          s.starting = false
          return s.registration
        }
        guard let registration else {
          Glibc.close(connection.fd)
          return false
        }
        framer = connection.framer
        reregister(registration)
        eventContinuation.yield(.mediaServicesWereReset)
        return true
      }
      usleep(delay)
      delay = min(delay * 2, 1_000_000)
    }
  }

  private func finishStreams() {
    eventContinuation.finish()
    commandContinuation.finish()
    filesContinuation.finish()
  }

  private func reregister(_ r: Registration) {
    if r.acceptsFiles { send(.acceptFiles) { _ in } }
    if let (category, mode, options) = r.category {
      send(.setCategory(category, mode: mode, options: options)) { _ in }
    }
    if let (playback, commands) = r.published {
      send(.publish(playback, commands: commands)) { _ in }
    }
    if r.active {
      send(.setActive(true, options: [])) { [self] result in
        if case .failure = result { state.withLock { $0.registration.active = false } }
      }
    }
  }
}

/// A fresh connection that has said hello and got its welcome.
private struct Connection {
  let fd: Int32
  let welcome: Welcome
  let framer: LineFramer

  /// `spawnedAt`: when the caller started a server (it is given its second to answer before
  /// another is started).
  static func open(
    _ configuration: AudioSession.Configuration, paths: SessionPaths, spawnedAt: UInt64? = nil
  ) throws(SessionClientError) -> Connection {
    let deadline = monotonicNanoseconds() + nanoseconds(configuration.connectTimeout)
    var lastSpawn = spawnedAt
    // A server just started answers a few milliseconds later: look often at first.
    var pause: UInt32 = 1_000
    while true {
      do {
        let fd = try UnixSocket.connect(to: paths.socket)
        if let connection = try handshake(
          fd, name: configuration.name, role: configuration.role, deadline: deadline)
        {
          return connection
        }
        // The server closed on us: it is shutting down. Try again as if none were there.
      } catch let e as SystemError {
        guard e.code == ENOENT || e.code == ECONNREFUSED else {
          throw .noServer(socket: paths.socket, reason: e.reason)
        }
        guard configuration.autospawn else {
          throw .noServer(socket: paths.socket, reason: e.reason)
        }
      } catch let e as SessionClientError {
        throw e
      } catch {
        throw .protocolError("\(error)")
      }
      let now = monotonicNanoseconds()
      if now >= deadline { throw .serverDidNotStart(socket: paths.socket, log: paths.log) }
      // Start a server, and again each second: one that lost a lock race to a server that was
      // just then exiting gives up, and someone must try again.
      if configuration.autospawn, lastSpawn.map({ now - $0 > 1_000_000_000 }) ?? true {
        lastSpawn = now
        try spawnServer(configuration, paths: paths)
      }
      usleep(pause)
      pause = min(pause * 2, 50_000)
    }
  }

  /// One try to reach a running server, starting none: nil when no server answers.
  static func existing(_ configuration: AudioSession.Configuration, paths: SessionPaths)
    throws(SessionClientError) -> Connection?
  {
    let deadline = monotonicNanoseconds() + nanoseconds(configuration.connectTimeout)
    do {
      let fd = try UnixSocket.connect(to: paths.socket)
      return try handshake(
        fd, name: configuration.name, role: configuration.role, deadline: deadline)
    } catch let e as SystemError {
      guard e.code == ENOENT || e.code == ECONNREFUSED else {
        throw .noServer(socket: paths.socket, reason: e.reason)
      }
      return nil
    } catch let e as SessionClientError {
      throw e
    } catch {
      throw .protocolError("\(error)")
    }
  }

  static func spawnServer(_ configuration: AudioSession.Configuration, paths: SessionPaths)
    throws(SessionClientError)
  {
    do { try paths.prepareDirectory() } catch { throw .paths(error) }
    guard let executable = configuration.serverExecutable ?? executablePath() else {
      throw .noServer(socket: paths.socket, reason: "cannot find the hark executable to start it")
    }
    makeDirectories(paths.stateDirectory)
    let log = access(paths.stateDirectory, W_OK) == 0 ? paths.log : nil
    // The server's stdout and stderr are its log: rotated here, before it opens it, so that it
    // never grows without bound (one older log is kept).
    if let log { RotatingLogFile(path: log).rotateIfFull() }
    do {
      _ = try spawnDetached(
        executable: executable, arguments: ["session-server"], outputPath: log,
        detachment: .newSession)
    } catch {
      throw .noServer(socket: paths.socket, reason: error.description)
    }
  }

  /// Says hello and reads the welcome; nil when the server hung up first.
  private static func handshake(_ fd: Int32, name: String, role: AppRole?, deadline: UInt64)
    throws -> Connection?
  {
    var ok = false
    defer { if !ok { Glibc.close(fd) } }
    let hello = try WireCodec.encode(
      ClientMessage.hello(version: protocolVersion, name: name, role: role))
    guard
      try hello.withUnsafeBytes({ raw throws(SystemError) in try UnixSocket.send(fd, raw) })
        == hello.count
    else { return nil }
    var framer = LineFramer(limit: maximumServerMessageBytes)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      if let line = try framer.nextLine() {
        switch try WireCodec.decodeServer(line) {
        case .welcome(let welcome):
          ok = true
          return Connection(fd: fd, welcome: welcome, framer: framer)
        case .error(let e):
          throw SessionClientError.protocolError(e.message)
        case .reply, .event, .command, .handOver:
          throw SessionClientError.protocolError("the server did not answer 'hello' with 'welcome'")
        }
      }
      let now = monotonicNanoseconds()
      guard now < deadline else { return nil }
      var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      _ = poll(&p, 1, Int32((deadline - now) / 1_000_000 + 1))
      let n = buffer.withUnsafeMutableBytes { raw in
        retryingEINTR { recv(fd, raw.baseAddress, raw.count, 0) }
      }
      if n <= 0 { return nil }
      framer.append(buffer[0..<n])
    }
  }
}

extension ClientRequest {
  /// The request without its payload, as SessionCore's rules see it.
  var kind: SessionRequestKind {
    switch self {
    case .setCategory: .setCategory
    case .setActive: .setActive
    case .publish: .publish
    case .otherAudioPlaying: .otherAudioPlaying
    case .status: .status
    case .setSilent: .setSilent
    case .route: .route
    case .command: .command
    case .acceptFiles: .acceptFiles
    case .handOver: .handOver
    case .stopServer: .stopServer
    case .outputLost: .outputLost
    case .setTimer: .setTimer
    }
  }
}
