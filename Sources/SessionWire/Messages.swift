import SessionCore

/// The wire protocol's version. A client's `hello` carries it; the server refuses any other.
/// docs/PROTOCOL.md describes every message.
public let protocolVersion = 1

/// The longest line the server accepts from a client, newline included; longer lines are
/// refused and the connection closed.
public let maximumMessageBytes = 64 * 1024

/// The longest line a client accepts from the server (a status report of many sessions is
/// long); past it the client drops the connection and reconnects.
public let maximumServerMessageBytes = 16 << 20

/// A request's number, chosen by the client and echoed in the server's reply.
public typealias RequestID = Int

/// A remote command forwarded to an app, numbered by the server.
public typealias CommandID = Int

/// What a client may ask of the server.
public enum ClientRequest: Sendable, Hashable {
  case setCategory(Category, mode: SessionMode, options: CategoryOptions)
  case setActive(Bool, options: SetActiveOptions)
  case publish(PlaybackInfo?, commands: Set<RemoteCommandKind>)
  case otherAudioPlaying
  case status
  case setSilent(Bool)
  case route(RouteAction)
  /// Send a remote command to the now-playing app (`hark ctl`), or, when `app` names one (a
  /// name or a pid), to the newest session of that app, now-playing or not: the user asked
  /// for it by name. A disabled command is refused either way (G19).
  case command(RemoteCommand, app: String? = nil)
  /// This session is a hark player: files other hark processes hand over (`handOver`) come to
  /// it. Sent once after `hello`.
  case acceptFiles
  /// Hand files to the newest session that accepts them, to be queued at `placement`; fails
  /// with `noPlayer` when there is none. Paths are absolute (the player runs elsewhere).
  case handOver(paths: [String], placement: QueuePlacement)
  case stopServer
  /// The client's own output went away under it (its ALSA device failed with ENODEV and kin):
  /// the server tells it, as it tells of every output that goes (G5).
  case outputLost(Route)
  /// Sets the desktop's sleep timer (`hark timer 30m`), in place of any before it; nil cancels
  /// it.
  case setTimer(SleepTimerSetting?)
}

/// Every message a client sends.
public enum ClientMessage: Sendable, Hashable {
  /// The first message of every connection.
  /// `role`: what the app is (an alarm, an assistant…), which other apps' pauses name; nil
  /// (the field absent) for what its category makes it.
  case hello(version: Int, name: String, role: AppRole?)
  case request(RequestID, ClientRequest)
  /// The app's answer to a remote command the server forwarded to it.
  case commandResult(CommandID, CommandStatus)
}

/// What a successful reply carries, depending on the request.
public enum ReplyPayload: Sendable, Hashable {
  case none
  case otherAudioPlaying(Bool)
  case status(StatusReport)
  case commandStatus(CommandStatus)
}

/// Why the server did not do what a request asked.
public struct WireError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
  /// A stable name tests and programs may match: `callInProgress`, `badRequest`,
  /// `noNowPlayingApp`, `commandDisabled`, `route`, `versionMismatch`, `tooLarge`, ...
  public var code: String
  /// Plain words for people.
  public var message: String
  public init(code: String, message: String) {
    self.code = code
    self.message = message
  }
  public var description: String { message }
}

/// Every message the server sends.
public enum ServerMessage: Sendable, Hashable {
  case welcome(Welcome)
  case reply(RequestID, Result<ReplyPayload, WireError>)
  case event(SessionEvent)
  /// A remote command for this app, which answers with `commandResult`.
  case command(CommandID, RemoteCommand)
  /// Files another hark process handed over (the app accepted files); answered with
  /// `commandResult`.
  case handOver(CommandID, paths: [String], placement: QueuePlacement)
  /// A protocol error not tied to a request (a line that could not be read at all).
  case error(WireError)
}

/// The server's answer to `hello`.
public struct Welcome: Sendable, Hashable, Codable {
  public var version: Int
  public var session: SessionID
  public var serverPid: Int32
  public var silent: Bool
  public var route: Route
  /// The pid of the hark player that takes files handed over (the connection that sent
  /// `acceptFiles` last), or nil when none is connected: `hark play` learns from its own
  /// session's welcome whether to hand its files over, without a question of its own.
  public var player: Int32?
  public init(
    version: Int, session: SessionID, serverPid: Int32, silent: Bool, route: Route,
    player: Int32? = nil
  ) {
    self.version = version
    self.session = session
    self.serverPid = serverPid
    self.silent = silent
    self.route = route
    self.player = player
  }
}

/// `hark status --json`: the server's whole state, for people, tools and tests.
public struct StatusReport: Sendable, Hashable, Codable {
  public var version: Int
  public var serverPid: Int32
  public var silent: Bool
  public var route: Route
  public var routes: [Route]
  public var sessions: [SessionStatus]
  /// The pid of the now-playing app, or null.
  public var nowPlaying: Int32?
  /// The sleep timer, or null while none is set.
  public var timer: SleepTimerStatus?

  public init(
    version: Int, serverPid: Int32, silent: Bool, route: Route, routes: [Route],
    sessions: [SessionStatus], nowPlaying: Int32?, timer: SleepTimerStatus? = nil
  ) {
    self.version = version
    self.serverPid = serverPid
    self.silent = silent
    self.route = route
    self.routes = routes
    self.sessions = sessions
    self.nowPlaying = nowPlaying
    self.timer = timer
  }

  private enum CodingKeys: String, CodingKey {
    case version, serverPid, silent, route, routes, sessions, nowPlaying, timer
  }
  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(version, forKey: .version)
    try c.encode(serverPid, forKey: .serverPid)
    try c.encode(silent, forKey: .silent)
    try c.encode(route, forKey: .route)
    try c.encode(routes, forKey: .routes)
    try c.encode(sessions, forKey: .sessions)
    try c.encode(nowPlaying, forKey: .nowPlaying)  // null, not absent
    try c.encode(timer, forKey: .timer)  // null, not absent
  }
}

/// One session in a `StatusReport`.
public struct SessionStatus: Sendable, Hashable, Codable {
  public var session: SessionID
  public var pid: Int32
  public var name: String
  public var category: Category
  public var mode: SessionMode
  public var options: [String]
  public var active: Bool
  public var interrupted: Bool
  public var ducked: Bool
  public var muted: Bool
  public var nowPlaying: Bool
  public var playback: PlaybackInfo?
  public var commands: [RemoteCommandKind]
  /// Where its sound goes: the sound server's sink its stream is on, else the current output.
  public var route: Route

  public init(
    session: SessionID, pid: Int32, name: String, category: Category, mode: SessionMode,
    options: [String], active: Bool, interrupted: Bool, ducked: Bool, muted: Bool,
    nowPlaying: Bool, playback: PlaybackInfo?, commands: [RemoteCommandKind],
    route: Route = .speakers
  ) {
    self.session = session
    self.pid = pid
    self.name = name
    self.category = category
    self.mode = mode
    self.options = options
    self.active = active
    self.interrupted = interrupted
    self.ducked = ducked
    self.muted = muted
    self.nowPlaying = nowPlaying
    self.playback = playback
    self.commands = commands
    self.route = route
  }

  private enum CodingKeys: String, CodingKey {
    case session, pid, name, category, mode, options, active, interrupted, ducked, muted
    case nowPlaying, playback, commands, route
  }
  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(session, forKey: .session)
    try c.encode(pid, forKey: .pid)
    try c.encode(name, forKey: .name)
    try c.encode(category, forKey: .category)
    try c.encode(mode, forKey: .mode)
    try c.encode(options, forKey: .options)
    try c.encode(active, forKey: .active)
    try c.encode(interrupted, forKey: .interrupted)
    try c.encode(ducked, forKey: .ducked)
    try c.encode(muted, forKey: .muted)
    try c.encode(nowPlaying, forKey: .nowPlaying)
    try c.encode(playback, forKey: .playback)  // null, not absent
    try c.encode(commands, forKey: .commands)
    try c.encode(route, forKey: .route)
  }
}
