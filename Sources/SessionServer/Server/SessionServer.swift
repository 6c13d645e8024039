import Glibc
import Logging
import Platform
import SessionClient
import SessionCore
import SessionWire

/// Why the server could not start.
public enum ServerStartError: Error, Sendable, CustomStringConvertible {
  /// Another server holds the lock: it serves this user already.
  case alreadyRunning(pid: Int32?)
  case paths(SessionPathError)
  case system(SystemError)

  public var description: String {
    switch self {
    case .alreadyRunning(let pid):
      "a session server is already running" + (pid.map { " (pid \($0))" } ?? "")
    case .paths(let e): e.description
    case .system(let e): e.description
    }
  }
}

/// The per-user session server: one Unix socket, one thread, `poll(2)`.
///
/// Socket code only moves messages; every decision comes from `SessionPolicy`. A client is
/// registered with the policy on its first session request (category, activation, publishing),
/// so tools such as `hark status` never appear as sessions.
public final class SessionServer {
  public struct Configuration: Sendable {
    public var paths: SessionPaths
    /// How long to wait after the last client leaves before exiting; nil never exits.
    public var idleExit: Duration?
    /// How long an app has to answer a forwarded remote command.
    public var commandTimeout: Duration = .seconds(2)
    /// The most a client may leave unread before it is disconnected.
    public var maximumPendingOutputBytes = 1 << 20
    /// Where watchers (ALSA jacks, the sound server) post what they see; nil: none.
    public var external: ExternalEvents?
    /// The most connections served at once. Past it a new connection takes the place of the
    /// oldest one that has not said hello yet (a silent client), or is closed at once: a user's
    /// own hark processes are a handful, and a flood must not take the descriptors the player
    /// and `hark ctl` need.
    public var maximumClients = SessionServer.defaultMaximumClients()
    /// Requests handled from one client before the others get their turn: a client flooding
    /// valid requests does not delay the player's.
    public var requestsPerTurn = 8
    /// The desktop's other media players, for the sleep timer (`MPRISDesktop`); nil: none (the
    /// timer then pauses hark's sessions only).
    public var desktop: (any DesktopPlayerControl)?
    /// How soon after an app's pause the loss of its output still ends its stream (G5): a
    /// pause is heard to its end only after its ramp and what the sound server keeps (on
    /// PipeWire's pulse service up to a graph quantum more), and WirePlumber's own MPRIS Pause
    /// for a sink that goes reaches the player before the sink's removal is reported, by 6–78
    /// ms beside a busy core (where 50–60 ms of hark reached the speakers, 2 headset losses in
    /// 10). Shorter than the player's own window for such a pause (PlayerCore's
    /// `pauseBeforeLossWindow`, 150 ms): the player then takes the pause for the output's, and
    /// opens its device afresh on play.
    public var silencesJustPaused: Duration = .milliseconds(100)

    public init(paths: SessionPaths, idleExit: Duration?) {
      self.paths = paths
      self.idleExit = idleExit
    }
  }

  private struct Client {
    let fd: Int32
    let pid: Int32
    /// The order it was accepted in: the oldest silent client gives way first.
    let accepted: UInt64
    var name = "client"
    /// What it said it is in its hello (an alarm, an assistant…), if it did.
    var role: AppRole?
    var session: SessionID
    var greeted = false
    var registered = false
    /// A hark player: files handed over by `hark play` and `hark add` go to the newest of these.
    var acceptsFiles = false
    var input = LineFramer()
    var output: [UInt8] = []
    var closing = false
    /// It has complete requests waiting beyond its turn: handled next turn, and nothing more is
    /// read from it meanwhile (its own socket buffer then holds it back).
    var backlog = false
  }

  private struct PendingCommand {
    let requester: Int32  // fd
    let request: RequestID
    let target: Int32  // fd
    let deadline: UInt64
    let limit: Duration
  }

  private let configuration: Configuration
  private let logger: Logger
  private var policy: SessionPolicy
  private var clients: [Int32: Client] = [:]
  private var sessionsToFD: [SessionID: Int32] = [:]
  private var pending: [CommandID: PendingCommand] = [:]
  /// When each session last published, to move a playing position on to now.
  private var publishedAt: [SessionID: UInt64] = [:]
  /// When each session last stopped being active (monotonic ns), for a loss of its output that
  /// comes just after (`silencesJustPaused`).
  private var deactivatedAt: [SessionID: UInt64] = [:]
  private var nextSession: UInt64 = 1
  /// The sessions standing in for calls in other programs, by the sound server's stream index.
  private var phoneStreams = PhoneStreamSessions()
  /// The sound server's playback streams by process, and the output each plays on: a session's
  /// output is that of its process's newest stream.
  private var streamsByPid: [Int32: [UInt32: Route]] = [:]
  /// What the sound server holds back (role policies' corks), by process and stream: the
  /// holding stream, its process and name. Kept for processes with no session yet too (a
  /// player's stream opens before it registers), and given to their sessions when they do.
  private var heldStreams:
    [Int32: [UInt32: (by: UInt32, byPid: Int32?, name: String, role: String?)]] = [:]
  /// The sessions standing for what holds sessions back: holding streams, by their index, and
  /// headsets switching profile, by card.
  private var streamHolders: [UInt32: SessionID] = [:]
  private var headsetHolders: [String: SessionID] = [:]
  /// The streams the sound server ducks by itself, by process.
  private var duckedStreams: [Int32: Set<UInt32>] = [:]
  /// Outputs that real devices put in the route table: not saved, since they may be gone by
  /// the time a server reads the file again.
  private var realRoutes: Set<String> = []
  private var nextCommand: CommandID = 1
  private var listener: Int32 = -1
  private var lockFD: Int32 = -1
  private var stopRequested = false
  /// When the server exits if no client comes; nil while clients are connected.
  private var idleDeadline: UInt64? = nil
  /// A new server waits at least this long for its first client, whatever the idle setting:
  /// the client that started it is still on its way.
  private let startupGrace: UInt64 = 5_000_000_000
  /// Reused for every read: the loop is single-threaded.
  private var readBuffer = [UInt8](repeating: 0, count: 16 * 1024)
  private let pid = getpid()
  private var acceptedCount: UInt64 = 0
  /// A descriptor held in reserve: when the process has none left, it is given up to accept
  /// and close a waiting connection, so that the listener does not stay readable (a busy loop).
  private var reserveFD: Int32 = -1
  /// While set, the listener is not polled: descriptors ran out and none could be freed.
  private var listenerPausedUntil: UInt64 = 0
  /// Repeated warnings: when each was last logged and how many were left out since.
  private var repeatedLogs: [String: (at: UInt64, suppressed: Int)] = [:]
  /// The desktop's sleep timer: decisions in `SleepTimer`, carried out here.
  private var timer = SleepTimer()
  /// Where the desktop's players answer the timer (`desktop`'s thread posts there).
  private let desktopAnswers = ExternalEvents()

  public init(configuration: Configuration, logger: Logger) {
    self.configuration = configuration
    self.logger = logger
    self.policy = SessionPolicy()
  }

  // MARK: Lifecycle

  /// Whether a server holds the lock for these paths (it may not be answering yet, or any more).
  public static func isRunning(_ paths: SessionPaths) -> Bool { lockIsHeld(paths.lock) }

  /// Takes the lock, binds the socket and serves until stopped, signalled or idle.
  public func run() throws(ServerStartError) {
    let paths = configuration.paths
    do { try paths.prepareDirectory() } catch { throw .paths(error) }

    // The lock decides which of several racing servers serves; the losers exit.
    do { lockFD = try takeLock(paths.lock) } catch {
      switch error {
      case .held(let holder): throw .alreadyRunning(pid: holder)
      case .system(let failure): throw .system(failure)
      }
    }

    do { listener = try UnixSocket.listen(at: paths.socket) } catch {
      close(lockFD)
      throw .system(error)
    }
    policy = SessionPolicy(silentMode: loadSilentMode(), routes: loadRoutes())
    reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
    let answers = desktopAnswers
    configuration.desktop?.start(answering: { answers.post($0) })
    ServerSignals.install()
    logger.info(
      "serving",
      metadata: ["socket": "\(paths.socket)", "pid": "\(pid)", "version": "\(protocolVersion)"])
    if let idle = configuration.idleExit {
      idleDeadline = monotonicNanoseconds() + max(nanoseconds(idle), startupGrace)
    }
    loop()
    shutdown()
  }

  private func shutdown() {
    configuration.desktop?.close()
    for fd in Array(clients.keys) {
      flush(fd)
      close(fd)
    }
    clients.removeAll()
    // Unlink before unlocking: a new server that wins the lock binds a fresh socket.
    unlink(configuration.paths.socket)
    close(listener)
    if reserveFD >= 0 { close(reserveFD) }
    ftruncate(lockFD, 0)
    close(lockFD)
    logger.info("stopped")
  }

  private func loop() {
    var fds: [pollfd] = []
    while !stopRequested {
      fds.removeAll(keepingCapacity: true)
      let listening = monotonicNanoseconds() >= listenerPausedUntil
      fds.append(pollfd(fd: listening ? listener : -1, events: Int16(POLLIN), revents: 0))
      fds.append(pollfd(fd: ServerSignals.readFD, events: Int16(POLLIN), revents: 0))
      fds.append(pollfd(fd: configuration.external?.fd ?? -1, events: Int16(POLLIN), revents: 0))
      fds.append(pollfd(fd: desktopAnswers.fd, events: Int16(POLLIN), revents: 0))
      var backlogged: [Int32] = []
      // In the order they came, so that who goes first does not depend on a hash.
      for c in clients.values.sorted(by: { $0.accepted < $1.accepted }) {
        var events = c.backlog ? Int16(0) : Int16(POLLIN)
        if !c.output.isEmpty { events |= Int16(POLLOUT) }
        fds.append(pollfd(fd: c.fd, events: events, revents: 0))
        if c.backlog { backlogged.append(c.fd) }
      }
      let rc = poll(
        &fds, nfds_t(fds.count), backlogged.isEmpty ? pollTimeoutMilliseconds() : 0)
      if rc < 0 && errno != EINTR {
        logger.error("poll failed: \(SystemError.last("polling").reason)")
        return
      }
      let now = monotonicNanoseconds()
      if rc > 0 {
        if fds[1].revents != 0, ServerSignals.drain() {
          logger.info("terminating on a signal")
          return
        }
        if fds[2].revents != 0, let external = configuration.external {
          for event in external.drain() { apply(event) }
        }
        if fds[3].revents != 0 {
          for event in desktopAnswers.drain() { apply(event) }
        }
        for p in fds.dropFirst(4) where p.revents != 0 {
          guard clients[p.fd] != nil else { continue }
          if p.revents & Int16(POLLOUT) != 0 { flush(p.fd) }
          if p.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readFrom(p.fd) }
        }
        if fds[0].revents & Int16(POLLIN) != 0 { acceptClients() }
      }
      // Clients that had requests left after their last turn get one more turn each (not one
      // that had its turn in this round already: a new request of another client read in this
      // round is answered before the flood goes on).
      for fd in backlogged where clients[fd].map({ $0.backlog && !$0.closing }) ?? false {
        handleLines(fd)
      }
      expireCommands(now: now)
      for fd in clients.filter({ $0.value.closing }).map(\.key) { disconnect(fd) }
      // What plays may have changed (a publish, an app gone), or the timer's time has come.
      if !timer.isOff { carryOut(timer.update(timerListening())) }
      if clients.isEmpty, let idle = configuration.idleExit {
        if idleDeadline == nil { idleDeadline = now + nanoseconds(idle) }
        if let deadline = idleDeadline, now >= deadline {
          logger.info("no clients for \(idle); exiting")
          return
        }
      } else {
        idleDeadline = nil
      }
    }
  }

  private func pollTimeoutMilliseconds() -> Int32 {
    let now = monotonicNanoseconds()
    var deadline: UInt64? = pending.values.map(\.deadline).min()
    if clients.isEmpty, let idle = idleDeadline {
      deadline = min(deadline ?? .max, idle)
    }
    if listenerPausedUntil > now { deadline = min(deadline ?? .max, listenerPausedUntil) }
    if let due = timer.wakeAt { deadline = min(deadline ?? .max, due) }
    guard let deadline else { return -1 }
    if deadline <= now { return 0 }
    return Int32(min((deadline - now) / 1_000_000 + 1, 60_000))
  }

  // MARK: Connections

  private func acceptClients() {
    while true {
      let fd: Int32?
      do { fd = try UnixSocket.accept(listener) } catch {
        guard error.code == EMFILE || error.code == ENFILE else {
          logRepeated("accept", .warning, "\(error)")
          return
        }
        // Out of descriptors: give up the reserve to take one waiting connection and close
        // it, so the listener is not left readable; if even that fails, stop listening a while.
        logRepeated(
          "descriptors", .warning,
          "out of file descriptors with \(clients.count) clients; closing new connections")
        if reserveFD >= 0 {
          close(reserveFD)
          reserveFD = -1
        }
        let shed = (try? UnixSocket.accept(listener)) ?? nil
        if let shed { close(shed) }
        reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        if shed == nil || reserveFD < 0 {
          listenerPausedUntil = monotonicNanoseconds() + 100_000_000
          return
        }
        continue
      }
      guard let fd else { return }
      let peer: (uid: uid_t, pid: pid_t)
      do { peer = try UnixSocket.peer(fd) } catch {
        logRepeated("peer", .warning, "\(error); closing the connection")
        close(fd)
        continue
      }
      guard peer.uid == geteuid() else {
        logRepeated("uid", .warning, "refused a connection from uid \(peer.uid), pid \(peer.pid)")
        close(fd)
        continue
      }
      if clients.count >= configuration.maximumClients {
        // Room for it at a silent client's expense, else none.
        let silent = clients.values.filter { !$0.greeted }.min { $0.accepted < $1.accepted }
        if let silent {
          logRepeated(
            "full", .warning,
            "\(clients.count) connections (the most served at once); closing the oldest that "
              + "has not said hello")
          disconnect(silent.fd)
        } else {
          logRepeated(
            "full", .warning,
            "\(clients.count) connections (the most served at once); refusing a new one")
          close(fd)
          continue
        }
      }
      let id = SessionID(nextSession)
      nextSession += 1
      acceptedCount += 1
      clients[fd] = Client(fd: fd, pid: peer.pid, accepted: acceptedCount, session: id)
    }
  }

  /// Logs a warning that may repeat under load at most once every 10 s, saying how many like
  /// it were left out: a flood must not fill the user's disk with the same line.
  private func logRepeated(_ key: String, _ level: Logger.Level, _ message: String) {
    let now = monotonicNanoseconds()
    if let last = repeatedLogs[key], now - last.at < 10_000_000_000 {
      repeatedLogs[key]?.suppressed += 1
      return
    }
    let more = repeatedLogs[key]?.suppressed ?? 0
    let tail = more > 0 ? " (and \(more) more like it)" : ""
    logger.log(level: level, "\(message)\(tail)")
    repeatedLogs[key] = (now, 0)
  }

  /// The most clients by default: a few hundred, and never more than the descriptors the
  /// process may open leave room for beside its own (socket, lock, pipes, log, watchers).
  public static func defaultMaximumClients() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max
    else { return 256 }
    return max(8, min(256, Int(limit.rlim_cur) - 64))
  }

  private func readFrom(_ fd: Int32) {
    let n = readBuffer.withUnsafeMutableBytes { raw in
      retryingEINTR { recv(fd, raw.baseAddress, raw.count, 0) }
    }
    if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      clients[fd]?.closing = true
      return
    }
    guard n > 0 else { return }
    clients[fd]?.input.append(readBuffer[0..<n])
    handleLines(fd)
  }

  /// Handles the complete requests a client has sent, up to `requestsPerTurn`; the rest wait
  /// for its next turn (see `Client.backlog`).
  private func handleLines(_ fd: Int32) {
    clients[fd]?.backlog = false
    var handled = 0
    while let c = clients[fd], !c.closing {
      if handled == configuration.requestsPerTurn {
        clients[fd]?.backlog = true
        return
      }
      let line: ArraySlice<UInt8>?
      do { line = try clients[fd]?.input.nextLine() } catch {
        logger.warning(
          "\(describe(fd)) sent a line over \(maximumMessageBytes) bytes; disconnecting")
        send(
          .error(
            WireError(code: "tooLarge", message: "message longer than \(maximumMessageBytes) bytes")
          ), to: fd)
        clients[fd]?.closing = true
        return
      }
      guard let line else { return }
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
      handled += 1
      handle(line, from: fd)
    }
  }

  private func disconnect(_ fd: Int32) {
    guard let c = clients.removeValue(forKey: fd) else { return }
    flush(c)
    close(fd)
    if c.registered {
      sessionsToFD[c.session] = nil
      publishedAt[c.session] = nil
      deactivatedAt[c.session] = nil
      configuration.external?.sessionWent(pid: c.pid)
      logger.info("\(c.name) (pid \(c.pid)) left")
      let outcome = policy.apply(.disconnect(c.session))
      deliver(outcome.notifications)
    }
    // Commands waiting on this app fail now rather than at their deadline.
    for (id, p) in pending where p.target == fd {
      pending[id] = nil
      reply(
        p.request,
        .failure(
          WireError(code: "commandFailed", message: "'\(c.name)' went away before answering")),
        to: p.requester)
    }
    for (id, p) in pending where p.requester == fd { pending[id] = nil }
  }

  // MARK: Messages

  private func handle(_ line: ArraySlice<UInt8>, from fd: Int32) {
    let message: ClientMessage
    do { message = try WireCodec.decodeClient(line) } catch {
      logger.notice("\(describe(fd)): \(error.error.message)")
      if let id = error.requestID {
        reply(id, .failure(error.error), to: fd)
      } else {
        send(.error(error.error), to: fd)
      }
      return
    }
    guard let client = clients[fd] else { return }
    if !client.greeted {
      guard case .hello(let version, let name, let role) = message else {
        send(
          .error(WireError(code: "helloFirst", message: "the first message must be 'hello'")),
          to: fd)
        clients[fd]?.closing = true
        return
      }
      guard version == protocolVersion else {
        send(
          .error(
            WireError(
              code: "versionMismatch",
              message: "this server speaks protocol version \(protocolVersion), not \(version)")),
          to: fd)
        clients[fd]?.closing = true
        return
      }
      clients[fd]?.greeted = true
      clients[fd]?.name = String(name.prefix(64))
      clients[fd]?.role = role
      send(
        .welcome(
          Welcome(
            version: protocolVersion, session: client.session, serverPid: pid,
            silent: policy.silentMode,
            route: policy.routes.current, player: filesPlayer()?.pid)), to: fd)
      return
    }
    switch message {
    case .hello:
      send(.error(WireError(code: "badRequest", message: "'hello' was already sent")), to: fd)
    case .commandResult(let id, let status):
      guard let p = pending[id], p.target == fd else { return }
      pending[id] = nil
      reply(p.request, .success(.commandStatus(status)), to: p.requester)
    case .request(let id, let request):
      handle(request, id: id, from: fd)
    }
  }

  private func handle(_ request: ClientRequest, id: RequestID, from fd: Int32) {
    guard let client = clients[fd] else { return }
    switch request {
    case .setCategory(let category, let mode, let options):
      register(fd)
      logger.info(
        "\(client.name) (pid \(client.pid)): category \(category.rawValue) \(options.names) \(mode.rawValue)"
      )
      applyAndReply(
        .setCategory(client.session, category, mode: mode, options: options), id: id, to: fd)
    case .setActive(let active, let options):
      register(fd)
      let event: PolicyEvent =
        active ? .activate(client.session) : .deactivate(client.session, options)
      if !active, policy.sessions[client.session]?.isActive == true {
        deactivatedAt[client.session] = monotonicNanoseconds()
      }
      logger.info(
        "\(client.name) (pid \(client.pid)): \(active ? "activate" : "deactivate")\(options.contains(.notifyOthersOnDeactivation) ? " notifying others" : "")"
      )
      applyAndReply(event, id: id, to: fd)
    case .publish(let playback, let commands):
      register(fd)
      publishedAt[client.session] = monotonicNanoseconds()
      applyAndReply(.publish(client.session, playback, enabledCommands: commands), id: id, to: fd)
    case .otherAudioPlaying:
      let mine: SessionID? = client.registered ? client.session : nil
      reply(id, .success(.otherAudioPlaying(policy.isOtherAudioPlaying(besides: mine))), to: fd)
    case .status:
      reply(id, .success(.status(statusReport())), to: fd)
    case .setSilent(let on):
      logger.info("silent mode \(on ? "on" : "off")")
      applyAndReply(.setSilentMode(on), id: id, to: fd)
      saveSilentMode()
    case .route(let action):
      applyAndReply(.route(action), id: id, to: fd)
      saveRoutes()
    case .command(let command, let app):
      forward(command, to: app, id: id, from: fd)
    case .acceptFiles:
      clients[fd]?.acceptsFiles = true
      reply(id, .success(.none), to: fd)
    case .handOver(let paths, let placement):
      handOver(paths, placement, id: id, from: fd)
    case .outputLost(let route):
      register(fd)
      logger.info("\(client.name) (pid \(client.pid)) lost its output '\(route.name)'")
      applyAndReply(.outputLost(client.session, lost: route), id: id, to: fd)
    case .setTimer(let setting):
      reply(id, .success(.none), to: fd)
      if let setting {
        logger.info(
          "\(client.name) (pid \(client.pid)) sets the sleep timer: \(Self.words(setting))")
        carryOut(timer.set(setting, timerListening()))
      } else {
        logger.info("\(client.name) (pid \(client.pid)) cancels the sleep timer")
        carryOut(timer.cancel(timerListening()))
      }
    case .stopServer:
      logger.info("stop requested by \(client.name) (pid \(client.pid))")
      reply(id, .success(.none), to: fd)
      stopRequested = true
    }
  }

  private func register(_ fd: Int32) {
    guard let c = clients[fd], !c.registered else { return }
    clients[fd]?.registered = true
    sessionsToFD[c.session] = fd
    configuration.external?.sessionCame(pid: c.pid)
    logger.info("\(c.name) (pid \(c.pid)) registered as session \(c.session)")
    deliver(
      policy.apply(.connect(c.session, AppIdentity(name: c.name, pid: c.pid, role: c.role)))
        .notifications)
    // A timer set before it came: it shows it too.
    if let status = timer.status(at: monotonicNanoseconds()) {
      send(.event(.sleepTimer(status)), to: fd)
    }
    // Its stream may have reached the sound server before it registered.
    updateOutput(ofPid: c.pid)
    updateDuck(ofPid: c.pid)
    for (_, h) in (heldStreams[c.pid] ?? [:]).sorted(by: { $0.key < $1.key }) {
      hold(pid: c.pid, by: h.by, byPid: h.byPid, name: h.name, role: h.role)
    }
  }

  /// Tells the policy whether the sound server ducks the sessions of `pid` by itself.
  private func updateDuck(ofPid pid: Int32) {
    let ducked = !(duckedStreams[pid]?.isEmpty ?? true)
    for c in clients.values.sorted(by: { $0.fd < $1.fd }) where c.pid == pid && c.registered {
      guard policy.sessions[c.session].map({ $0.duckedBySoundServer != ducked }) ?? false else {
        continue
      }
      logger.info(
        "\(c.name) (pid \(pid)): the sound server \(ducked ? "ducks" : "no longer ducks") its stream"
      )
      deliver(policy.apply(.duckedBySoundServer(c.session, ducked)).notifications)
    }
  }

  /// The sound server holds the stream of `pid` back for the stream `by`: an interruption of
  /// its sessions, by the session standing for `by`. Not when `by` is a hark app's own: the
  /// policy arbitrates between hark's sessions already.
  private func hold(pid: Int32, by: UInt32, byPid: Int32?, name: String, role: String?) {
    if let byPid, clients.values.contains(where: { $0.pid == byPid && $0.registered }) { return }
    let mine = clients.values.filter { $0.pid == pid && $0.registered }.sorted { $0.fd < $1.fd }
    guard !mine.isEmpty else { return }
    let holder = streamHolders[by] ?? newStandIn()
    streamHolders[by] = holder
    for c in mine {
      logger.info("\(c.name) (pid \(pid)): the sound server holds its stream back for '\(name)'")
      let cause = InterruptionCause(kind: .init(mediaRole: role), by: name)
      deliver(policy.apply(.holdStream(c.session, holder: holder, cause: cause)).notifications)
    }
  }

  /// A session id for something outside hark that interrupts hark's sessions.
  private func newStandIn() -> SessionID {
    defer { nextSession += 1 }
    return SessionID(nextSession)
  }

  /// Tells the policy where the sessions of `pid` are heard now: on the output of its newest
  /// sound-server stream, or nowhere in particular once it has none.
  private func updateOutput(ofPid pid: Int32) {
    let output = streamsByPid[pid]?.max { $0.key < $1.key }?.value
    for c in clients.values.sorted(by: { $0.fd < $1.fd }) where c.pid == pid && c.registered {
      guard policy.sessions[c.session].map({ $0.output != output }) ?? false else { continue }
      if let output { logger.debug("\(c.name) (pid \(pid)) plays on '\(output.name)'") }
      deliver(policy.apply(.streamOutput(c.session, output)).notifications)
    }
  }

  private func applyAndReply(_ event: PolicyEvent, id: RequestID, to fd: Int32) {
    let outcome = policy.apply(event)
    if let failure = outcome.failure {
      reply(id, .failure(WireError(failure)), to: fd)
    } else {
      reply(id, .success(.none), to: fd)
    }
    deliver(outcome.notifications)
  }

  /// Why a disabled command was refused, in plain words (G19), naming the output when it is
  /// a volume command on an output with no volume control (G3).
  static func refusal(_ kind: RemoteCommandKind, by app: String, playing: PlaybackInfo?) -> String {
    if kind.isVolume, let playing, playing.volume == nil, let output = playing.output {
      return "'\(app)' cannot change the volume: its output '\(output)' has no volume control"
    }
    return "'\(app)' does not take '\(kind.words)' right now"
  }

  /// To the now-playing app (G17, G18), or to the app the user named: the newest registered
  /// session whose name is `app`, or whose pid it is. Either way a disabled command is refused
  /// and the app is not disturbed (G19).
  private func forward(_ command: RemoteCommand, to app: String?, id: RequestID, from fd: Int32) {
    let target: SessionID?
    if let app {
      target = namedSession(app)
      guard target != nil else {
        let message =
          Int32(app) != nil ? "no session has pid \(app)" : "no app named '\(app)' is connected"
        reply(id, .failure(WireError(code: "noSuchApp", message: message)), to: fd)
        return
      }
    } else {
      target = policy.nowPlaying
    }
    guard let target, let targetFD = sessionsToFD[target], let record = policy.sessions[target]
    else {
      reply(
        id, .failure(WireError(code: "noNowPlayingApp", message: "no app is playing or paused")),
        to: fd)
      return
    }
    guard record.enabledCommands.contains(command.kind) else {
      reply(
        id,
        .failure(
          WireError(
            code: "commandDisabled",
            message: Self.refusal(command.kind, by: record.identity.name, playing: record.playback))
        ),
        to: fd)
      return
    }
    send(.command(pend(id, from: fd, to: targetFD), command), to: targetFD)
  }

  /// The newest registered session of the app named `app` (its name, or its pid).
  private func namedSession(_ app: String) -> SessionID? {
    let pid = Int32(app)
    return clients.values
      .filter { $0.registered && ($0.name == app || $0.pid == pid) }
      .max { $0.session < $1.session }?.session
  }

  /// The hark player files handed over go to: the newest connection that accepts them.
  private func filesPlayer() -> Client? {
    clients.values.filter({ $0.acceptsFiles && !$0.closing }).max(by: { $0.accepted < $1.accepted })
  }

  /// Files for a hark player (`filesPlayer`).
  private func handOver(
    _ paths: [String], _ placement: QueuePlacement, id: RequestID, from fd: Int32
  ) {
    guard let player = filesPlayer() else {
      reply(
        id, .failure(WireError(code: "noPlayer", message: "no hark player is running")), to: fd)
      return
    }
    logger.info(
      "\(clients[fd]?.name ?? "client") hands \(paths.count) file(s) to \(player.name) (pid \(player.pid)), \(placement.rawValue)"
    )
    // Longer than a command's answer: the player reads the folders and playlists named.
    let commandID = pend(id, from: fd, to: player.fd, within: .seconds(10))
    send(.handOver(commandID, paths: paths, placement: placement), to: player.fd)
  }

  /// Numbers a message forwarded to `target` whose answer goes back to request `id` of `fd`.
  private func pend(
    _ id: RequestID, from fd: Int32, to target: Int32, within limit: Duration? = nil
  ) -> CommandID {
    let commandID = nextCommand
    nextCommand += 1
    pending[commandID] = PendingCommand(
      requester: fd, request: id, target: target,
      deadline: monotonicNanoseconds() + nanoseconds(limit ?? configuration.commandTimeout),
      limit: limit ?? configuration.commandTimeout)
    return commandID
  }

  private func expireCommands(now: UInt64) {
    for (id, p) in pending where p.deadline <= now {
      pending[id] = nil
      let name = clients[p.target]?.name ?? "the app"
      reply(
        p.request,
        .failure(
          WireError(
            code: "commandFailed",
            message: "'\(name)' did not answer in \(p.limit)")),
        to: p.requester)
    }
  }

  private func deliver(_ notifications: [SessionNotification]) {
    for n in notifications {
      guard let fd = sessionsToFD[n.session] else { continue }
      send(.event(n.event), to: fd)
    }
  }

  private func statusReport() -> StatusReport {
    let np = policy.nowPlaying
    let sessions = policy.sessions.keys.sorted().compactMap { id -> SessionStatus? in
      guard let s = policy.sessions[id] else { return nil }
      return SessionStatus(
        session: id, pid: s.identity.pid, name: s.identity.name, category: s.category, mode: s.mode,
        options: s.options.names, active: s.isActive, interrupted: s.isInterrupted,
        ducked: policy.isDucked(id), muted: policy.isMuted(id), nowPlaying: np == id,
        playback: extrapolated(s.playback, since: publishedAt[id]),
        commands: s.enabledCommands.sorted { $0.rawValue < $1.rawValue },
        route: policy.route(of: id))
    }
    return StatusReport(
      version: protocolVersion, serverPid: pid, silent: policy.silentMode,
      route: policy.routes.current,
      routes: policy.routes.available, sessions: sessions,
      nowPlaying: np.flatMap { policy.sessions[$0]?.identity.pid },
      timer: timer.status(at: monotonicNanoseconds()))
  }

  // MARK: The sleep timer

  /// What the timer looks at now: hark's now-playing app (its position brought to now), which
  /// sessions play, and which processes have one.
  private func timerListening() -> SleepTimer.Listening {
    let now = monotonicNanoseconds()
    var nowPlaying: SleepTimer.NowPlaying?
    if let id = policy.nowPlaying, let s = policy.sessions[id],
      let playback = extrapolated(s.playback, since: publishedAt[id])
    {
      nowPlaying = SleepTimer.NowPlaying(session: id, name: s.identity.name, playback: playback)
    }
    let playing = Set(policy.sessions.filter { $0.value.playback?.state == .playing }.keys)
    let pids = Set(clients.values.filter(\.registered).map(\.pid))
    return SleepTimer.Listening(
      now: now, nowPlaying: nowPlaying, playing: playing, sessionPids: pids)
  }

  /// Carries out what the timer decided.
  private func carryOut(_ effects: [SleepTimer.Effect]) {
    for effect in effects {
      switch effect {
      case .endSession(let id, let fade):
        guard let fd = sessionsToFD[id] else { continue }
        logger.info("the sleep timer ended: \(describe(fd)) fades out over \(fade) s and pauses")
        send(.event(.sleepTimerEnded(fade: fade)), to: fd)
      case .surveyDesktop:
        if let desktop = configuration.desktop {
          desktop.survey()
        } else {
          desktopAnswers.post(.desktopSurveyed([]))
        }
      case .pauseDesktop(let players, let fade):
        let names = players.map { "'\($0.name)'" }.joined(separator: ", ")
        logger.info("the sleep timer ended: \(names) fade out over \(fade) s and pause (MPRIS)")
        if let desktop = configuration.desktop {
          desktop.fadeAndPause(players, fade: fade)
        } else {
          desktopAnswers.post(.desktopPaused)
        }
      case .stopDesktopFade:
        configuration.desktop?.stopFades()
      case .announce:
        let status = timer.status(at: monotonicNanoseconds())
        if let status, status.state == .ended {
          let paused =
            status.apps.isEmpty ? "nothing (nothing played)" : status.apps.joined(separator: ", ")
          logger.info("the sleep timer has ended; it paused \(paused)")
        }
        for fd in sessionsToFD.values.sorted() { send(.event(.sleepTimer(status)), to: fd) }
      }
    }
  }

  /// "30 min, fading over 5 s", for the log.
  static func words(_ setting: SleepTimerSetting) -> String {
    let fade = "fading over \(setting.fade) s"
    switch setting.mode {
    case .duration(let seconds): return "\(seconds) s, \(fade)"
    case .endOfTrack: return "the end of the track, \(fade)"
    case .endOfChapter: return "the end of the chapter, \(fade)"
    }
  }

  /// Now-playing info says where playback was when it was published and at what rate; the
  /// position now is that plus rate × the time since (as MPNowPlayingInfoCenter's readers do).
  private func extrapolated(_ p: PlaybackInfo?, since: UInt64?) -> PlaybackInfo? {
    guard var p, p.state == .playing, let position = p.position, let rate = p.rate, rate > 0,
      let since
    else { return p }
    let elapsed = Double(monotonicNanoseconds() - since) / 1e9
    var now = position + rate * elapsed
    if let d = p.duration { now = min(now, d) }
    p.position = (now * 1000).rounded() / 1000
    return p
  }

  // MARK: Output

  private func reply(_ id: RequestID, _ result: Result<ReplyPayload, WireError>, to fd: Int32) {
    send(.reply(id, result), to: fd)
  }

  private func send(_ message: ServerMessage, to fd: Int32) {
    guard clients[fd] != nil else { return }
    let bytes: [UInt8]
    do { bytes = try WireCodec.encode(message) } catch {
      logger.error("\(error)")
      return
    }
    clients[fd]?.output.append(contentsOf: bytes)
    flush(fd)
    if let c = clients[fd], c.output.count > configuration.maximumPendingOutputBytes {
      logger.warning("\(describe(fd)) is not reading its messages; disconnecting it")
      clients[fd]?.output.removeAll()
      clients[fd]?.closing = true
    }
  }

  private func flush(_ fd: Int32) {
    guard let c = clients[fd], !c.output.isEmpty else { return }
    do {
      let n = try c.output.withUnsafeBytes { raw throws(SystemError) in try UnixSocket.send(fd, raw)
      }
      clients[fd]?.output.removeFirst(n)
    } catch {
      clients[fd]?.output.removeAll()
      clients[fd]?.closing = true
    }
  }

  private func flush(_ c: Client) {
    guard !c.output.isEmpty else { return }
    _ = try? c.output.withUnsafeBytes { raw throws(SystemError) in try UnixSocket.send(c.fd, raw) }
  }

  private func describe(_ fd: Int32) -> String {
    guard let c = clients[fd] else { return "a client" }
    return "\(c.name) (pid \(c.pid))"
  }

  // MARK: Persistence

  private func loadSilentMode() -> Bool {
    guard let data = readFile(configuration.paths.settings) else { return false }
    do { return try decodeJSON(SavedSettings.self, from: data).silent } catch {
      logger.warning("ignoring unreadable settings '\(configuration.paths.settings)': \(error)")
      return false
    }
  }

  private func saveSilentMode() {
    makeDirectories(configuration.paths.stateDirectory)
    save(SavedSettings(silent: policy.silentMode), to: configuration.paths.settings)
  }

  private func loadRoutes() -> RouteTable {
    guard let data = readFile(configuration.paths.routes) else { return RouteTable() }
    do {
      let saved = try decodeJSON(RouteTable.self, from: data)
      guard saved.available.contains(saved.current) else { return RouteTable() }
      return saved
    } catch {
      logger.warning("ignoring unreadable routes '\(configuration.paths.routes)': \(error)")
      return RouteTable()
    }
  }

  private func saveRoutes() {
    var table = policy.routes
    for name in realRoutes {
      if let route = table.available.first(where: { $0.name == name }) {
        _ = try? table.apply(.detach(route))
      }
    }
    save(table, to: configuration.paths.routes)
  }

  // MARK: Watchers

  private func apply(_ event: ExternalEvent) {
    switch event {
    case .route(let action), .sinkRoute(let action):
      let outcome =
        if case .sinkRoute = event { policy.apply(.sinkRoute(action)) } else {
          policy.apply(.route(action))
        }
      if let failure = outcome.failure {
        logger.debug("device: \(failure)")
        return
      }
      switch action {
      case .attach(let route), .add(let route):
        realRoutes.insert(route.name)
        logger.info("output '\(route.name)' (\(route.kind.rawValue)) appeared")
      case .detach(let route):
        realRoutes.remove(route.name)
        logger.info("output '\(route.name)' went away")
      case .select(let name) where !outcome.notifications.isEmpty:
        logger.info("output '\(name)' is the default now")
      case .plug, .unplug, .select: break
      }
      deliver(outcome.notifications)
    case .outputLost(let pid, let stream, let lost):
      let mine = clients.values.filter { $0.pid == pid && $0.registered }.sorted { $0.fd < $1.fd }
      guard !mine.isEmpty else { return }  // other programs' streams are theirs to manage
      let now = monotonicNanoseconds()
      let justPaused = nanoseconds(configuration.silencesJustPaused)
      let playing = mine.contains {
        policy.sessions[$0.session]?.isActive == true
          || deactivatedAt[$0.session].map { now &- $0 <= justPaused } == true
      }
      for c in mine {
        logger.info("\(c.name) (pid \(pid)) lost its output '\(lost.name)'")
        deliver(policy.apply(.outputLost(c.session, lost: lost)).notifications)
      }
      // The sound server has moved the stream to another output by itself: end it there, now
      // that its app has been told why (it pauses, G5; its output failing is no news to it).
      // `deliver` has written the news to the app's socket already. Not a paused app's (paused
      // by the user): nothing is heard from it, it plays on the current output when the user
      // plays again, and PipeWire's ALSA plugin, whose stream had been ended meanwhile, failed
      // that play ("'default' went away"). But an app that paused just before is still heard
      // (`Configuration.silencesJustPaused`).
      if playing { configuration.external?.silence(stream: stream) }
    case .streamOutput(let pid, let stream, let output):
      streamsByPid[pid, default: [:]][stream] = output
      updateOutput(ofPid: pid)
    case .streamGone(let pid, let stream):
      streamsByPid[pid]?[stream] = nil
      if streamsByPid[pid]?.isEmpty ?? false { streamsByPid[pid] = nil }
      // What held it back holds its sessions still (they resume when it ends); only the
      // stream is forgotten.
      heldStreams[pid]?[stream] = nil
      if heldStreams[pid]?.isEmpty ?? false { heldStreams[pid] = nil }
      if duckedStreams[pid]?.remove(stream) != nil {
        if duckedStreams[pid]?.isEmpty ?? false { duckedStreams[pid] = nil }
        updateDuck(ofPid: pid)
      }
      updateOutput(ofPid: pid)
    case .streamHeld(let pid, let stream, let by, let byPid, let name, let role):
      heldStreams[pid, default: [:]][stream] = (by, byPid, name, role)
      hold(pid: pid, by: by, byPid: byPid, name: name, role: role)
    case .holdEnded(let by):
      for pid in Array(heldStreams.keys) {
        heldStreams[pid] = heldStreams[pid]?.filter { $0.value.by != by }
        if heldStreams[pid]?.isEmpty ?? false { heldStreams[pid] = nil }
      }
      guard let holder = streamHolders.removeValue(forKey: by) else { return }
      logger.info("the sound server no longer holds streams back")
      deliver(policy.apply(.releaseHold(holder: holder, lost: nil)).notifications)
    case .streamDucked(let pid, let stream, let ducked):
      if ducked {
        duckedStreams[pid, default: []].insert(stream)
      } else {
        duckedStreams[pid]?.remove(stream)
        if duckedStreams[pid]?.isEmpty ?? false { duckedStreams[pid] = nil }
      }
      updateDuck(ofPid: pid)
    case .headsetSwitching(let card, let output):
      let holder = newStandIn()
      headsetHolders[card] = holder
      logger.info("output '\(output.name)' switches to its call profile; what plays there waits")
      let cause = InterruptionCause(kind: .call, by: "\(output.name) (call profile)")
      deliver(policy.apply(.holdOutput(output, holder: holder, cause: cause)).notifications)
    case .outputHeld(let pid, let stream, let output):
      // Moved off the headset by the sound server. A stream still playing is ended there, as a
      // lost stream is (G5): its app is held back by the switch next, and opens a new one when
      // it resumes. A paused one (a call paused it: the usual case) is left alone: the sound
      // server moves it back with the headset's music sink, and its app resumes on it (ended,
      // PipeWire's ALSA plugin would find it broken then, and take it for a lost output).
      let playing = clients.values.contains {
        $0.pid == pid && $0.registered && policy.sessions[$0.session]?.isActive == true
      }
      guard playing else { return }
      logger.info("pid \(pid): its stream on '\(output.name)' ends while the headset switches")
      configuration.external?.silence(stream: stream)
    case .headsetBack(let card, let output):
      guard let holder = headsetHolders.removeValue(forKey: card) else { return }
      logger.info("output '\(output.name)' is back from its call profile")
      deliver(policy.apply(.releaseHold(holder: holder, lost: nil)).notifications)
    case .headsetGone(let card, let output):
      guard let holder = headsetHolders.removeValue(forKey: card) else { return }
      logger.info("output '\(output.name)' went away during its profile switch")
      deliver(policy.apply(.releaseHold(holder: holder, lost: output)).notifications)
    case .soundServer(let name):
      if let name {
        logger.info("sound server '\(name)' connected")
      } else {
        logger.notice("lost the sound server; waiting for it to come back")
      }
    case .desktopSurveyed(let players):
      carryOut(timer.surveyed(players, timerListening()))
    case .desktopPaused:
      carryOut(timer.desktopPaused(timerListening()))
    case .phoneStream(let began, let key, let name, let pid):
      if began {
        let connected = clients.values.lazy.map(\.pid)
        guard phoneStreams.needsSession(stream: key, pid: pid, connectedPids: connected) else {
          return
        }
        let id = SessionID(nextSession)
        nextSession += 1
        logger.info("a call began in another program: '\(name)'")
        var notes: [SessionNotification] = []
        for e in phoneStreams.began(stream: key, as: id, name: name, pid: pid) {
          notes += policy.apply(e).notifications
        }
        deliver(notes)
      } else {
        let events = phoneStreams.ended(stream: key)
        guard !events.isEmpty else { return }
        logger.info("the call in another program ended")
        var notes: [SessionNotification] = []
        for e in events { notes += policy.apply(e).notifications }
        deliver(notes)
      }
    }
  }

  private func save(_ value: some Encodable, to path: String) {
    do { try replaceFile(path, with: try encodeJSON(value)) } catch {
      logger.warning("cannot save '\(path)': \(error)")
    }
  }
}

private struct SavedSettings: Codable { var silent: Bool }

extension WireError {
  init(_ failure: PolicyFailure) {
    switch failure {
    case .activationRefused(let r): self.init(code: r.rawValue, message: r.description)
    case .route(let e): self.init(code: "route", message: e.description)
    case .unknownSession, .optionsNotAllowed:
      self.init(code: "badRequest", message: failure.description)
    }
  }
}

/// SIGTERM, SIGINT and SIGHUP wake the poll loop through a pipe (the self-pipe trick); the
/// handler only writes one byte, which is async-signal-safe.
enum ServerSignals {
  /// Made once, the first time it is needed (a static let: made once even when two servers
  /// start at the same time, as tests start them), and kept for the process's life: a handler
  /// may run at any time after, so its descriptor must never be closed (and its number reused).
  private static let pipe: WakePipe? = try? WakePipe()
  /// The pipe's write end, for the handlers (which can capture nothing); made before they are
  /// installed (a handler must not be the first to touch a lazily made global).
  private static let writeFD: Int32 = pipe?.writeFD ?? -1
  static var readFD: Int32 { pipe?.readFD ?? -1 }

  /// Routes the signals to the pipe; a server run before in this process (tests) left it
  /// empty of what it was sent.
  static func install() {
    guard writeFD >= 0 else { return }
    pipe?.drain()
    signal(SIGPIPE, SIG_IGN)
    for s in [SIGTERM, SIGINT, SIGHUP] {
      signal(s) { _ in
        var b: UInt8 = 1
        _ = write(ServerSignals.writeFD, &b, 1)
      }
    }
  }

  /// Empties the pipe; true if a signal arrived.
  static func drain() -> Bool { !(pipe?.drainBytes().isEmpty ?? true) }
}
