import FoundationEssentials
import SessionCore

/// A line that could not be turned into a message, with the request number when the line had
/// one, so the server can answer that request instead of the connection.
public struct WireDecodeError: Error, Sendable, Hashable {
  public var requestID: RequestID?
  public var error: WireError
}

/// Turns messages into single JSON lines and back. Field names are docs/PROTOCOL.md's.
public enum WireCodec {
  // MARK: Client → server

  /// One JSON object followed by a newline.
  public static func encode(_ message: ClientMessage) throws(WireError) -> [UInt8] {
    var e = ClientEnvelope(type: "")
    switch message {
    case .hello(let version, let name, let role):
      e.type = "hello"
      e.version = version
      e.name = name
      e.role = role?.rawValue
    case .commandResult(let command, let status):
      e.type = "commandResult"
      e.command = command
      e.status = status.rawValue
    case .request(let id, let request):
      e.id = id
      switch request {
      case .setCategory(let category, let mode, let options):
        e.type = "setCategory"
        e.category = category.rawValue
        e.mode = mode.rawValue
        e.options = options.names
      case .setActive(let active, let options):
        e.type = "setActive"
        e.active = active
        e.options =
          options.contains(.notifyOthersOnDeactivation) ? ["notifyOthersOnDeactivation"] : []
      case .publish(let playback, let commands):
        e.type = "publish"
        e.playback = playback
        e.commands = commands.map(\.rawValue).sorted()
      case .otherAudioPlaying: e.type = "otherAudioPlaying"
      case .status: e.type = "status"
      case .setSilent(let on):
        e.type = "setSilent"
        e.on = on
      case .route(let action):
        e.type = "route"
        switch action {
        case .plug(let kind):
          e.action = "plug"
          e.kind = kind.rawValue
        case .unplug(let kind):
          e.action = "unplug"
          e.kind = kind.rawValue
        case .select(let name):
          e.action = "select"
          e.name = name
        case .attach(let route):
          e.action = "attach"
          e.name = route.name
          e.kind = route.kind.rawValue
        case .add(let route):
          e.action = "add"
          e.name = route.name
          e.kind = route.kind.rawValue
        case .detach(let route):
          e.action = "detach"
          e.name = route.name
          e.kind = route.kind.rawValue
        }
      case .command(let command, let app):
        e.type = "command"
        e.kind = command.kind.rawValue
        e.argument = command.argument
        e.app = app
      case .acceptFiles: e.type = "acceptFiles"
      case .handOver(let paths, let placement):
        e.type = "handOver"
        e.paths = paths
        e.placement = placement.rawValue
      case .stopServer: e.type = "stopServer"
      case .outputLost(let route):
        e.type = "outputLost"
        e.name = route.name
        e.kind = route.kind.rawValue
      case .setTimer(let setting):
        e.type = "setTimer"
        guard let setting else {
          e.mode = "off"
          break
        }
        switch setting.mode {
        case .duration(let seconds):
          e.mode = "duration"
          e.seconds = seconds
        case .endOfTrack: e.mode = "endOfTrack"
        case .endOfChapter: e.mode = "endOfChapter"
        }
        e.fade = setting.fade
      }
    }
    return try line(e)
  }

  /// Reads one line (without its newline) from a client.
  public static func decodeClient(_ bytes: some Collection<UInt8>) throws(WireDecodeError)
    -> ClientMessage
  {
    let e: ClientEnvelope
    do {
      e = try JSONDecoder().decode(ClientEnvelope.self, from: Data(bytes))
    } catch {
      // A well-formed object with one bad field still names its request: answer that request,
      // or its sender would wait for ever.
      let id = try? JSONDecoder().decode(RequestNumber.self, from: Data(bytes)).id
      throw WireDecodeError(requestID: id, error: malformed(error))
    }
    func fail(_ message: String, code: String = "badRequest") -> WireDecodeError {
      WireDecodeError(requestID: e.id, error: WireError(code: code, message: message))
    }
    func need<T>(_ value: T?, _ field: String) throws(WireDecodeError) -> T {
      guard let value else { throw fail("'\(e.type)' needs the field '\(field)'") }
      return value
    }
    func parse<T: RawRepresentable<String>>(_ raw: String?, _ field: String) throws(WireDecodeError)
      -> T
    {
      let raw = try need(raw, field)
      guard let value = T(rawValue: raw) else { throw fail("unknown \(field) '\(raw)'") }
      return value
    }

    switch e.type {
    case "hello":
      let role: AppRole? = e.role == nil ? nil : try parse(e.role, "role")
      return .hello(
        version: try need(e.version, "version"), name: try need(e.name, "name"), role: role)
    case "commandResult":
      let status: CommandStatus = try parse(e.status, "status")
      return .commandResult(try need(e.command, "command"), status)
    default: break
    }

    let known = [
      "setCategory", "setActive", "publish", "otherAudioPlaying", "status", "setSilent", "route",
      "command", "stopServer", "outputLost", "acceptFiles", "handOver", "setTimer",
    ]
    guard known.contains(e.type) else {
      throw fail("unknown message type '\(e.type)'", code: "unknownMessage")
    }
    let id = try need(e.id, "id")
    let request: ClientRequest
    switch e.type {
    case "setCategory":
      let category: Category = try parse(e.category, "category")
      let mode: SessionMode = e.mode == nil ? .default : try parse(e.mode, "mode")
      guard let options = CategoryOptions(names: e.options ?? []) else {
        throw fail("unknown category option in \(e.options ?? [])")
      }
      request = .setCategory(category, mode: mode, options: options)
    case "setActive":
      var options: SetActiveOptions = []
      for name in e.options ?? [] {
        guard name == "notifyOthersOnDeactivation" else {
          throw fail("unknown setActive option '\(name)'")
        }
        options.insert(.notifyOthersOnDeactivation)
      }
      request = .setActive(try need(e.active, "active"), options: options)
    case "publish":
      var commands: Set<RemoteCommandKind> = []
      for name in e.commands ?? [] {
        guard let kind = RemoteCommandKind(rawValue: name) else {
          throw fail("unknown command '\(name)'")
        }
        commands.insert(kind)
      }
      request = .publish(e.playback, commands: commands)
    case "otherAudioPlaying": request = .otherAudioPlaying
    case "status": request = .status
    case "setSilent": request = .setSilent(try need(e.on, "on"))
    case "route":
      switch try need(e.action, "action") {
      case "plug": request = .route(.plug(try parse(e.kind, "kind")))
      case "unplug": request = .route(.unplug(try parse(e.kind, "kind")))
      case "select": request = .route(.select(try need(e.name, "name")))
      case "attach":
        request = .route(
          .attach(Route(name: try need(e.name, "name"), kind: try parse(e.kind, "kind"))))
      case "add":
        request = .route(
          .add(Route(name: try need(e.name, "name"), kind: try parse(e.kind, "kind"))))
      case "detach":
        request = .route(
          .detach(Route(name: try need(e.name, "name"), kind: try parse(e.kind, "kind"))))
      case let other: throw fail("unknown route action '\(other)'")
      }
    case "command":
      let kind: RemoteCommandKind = try parse(e.kind, "kind")
      guard let command = RemoteCommand(kind: kind, argument: e.argument) else {
        throw fail("'\(kind.rawValue)' needs a finite, non-negative 'argument'")
      }
      request = .command(command, app: e.app)
    case "acceptFiles": request = .acceptFiles
    case "handOver":
      request = .handOver(
        paths: try need(e.paths, "paths"), placement: try parse(e.placement, "placement"))
    case "stopServer": request = .stopServer
    case "outputLost":
      request = .outputLost(Route(name: try need(e.name, "name"), kind: try parse(e.kind, "kind")))
    case "setTimer":
      let mode: SleepTimerMode
      switch try need(e.mode, "mode") {
      case "off":
        request = .setTimer(nil)
        return .request(id, request)
      case "duration": mode = .duration(seconds: try need(e.seconds, "seconds"))
      case "endOfTrack": mode = .endOfTrack
      case "endOfChapter": mode = .endOfChapter
      case let other: throw fail("unknown timer mode '\(other)'")
      }
      let setting = SleepTimerSetting(mode, fade: e.fade ?? SleepTimerSetting.defaultFade)
      if let problem = setting.problem { throw fail("'setTimer': \(problem)") }
      request = .setTimer(setting)
    case let other: throw fail("unknown message type '\(other)'", code: "unknownMessage")
    }
    return .request(id, request)
  }

  // MARK: Server → client

  /// One JSON object followed by a newline.
  public static func encode(_ message: ServerMessage) throws(WireError) -> [UInt8] {
    var e = ServerEnvelope(type: "")
    switch message {
    case .welcome(let w):
      e.type = "welcome"
      e.version = w.version
      e.session = w.session
      e.serverPid = w.serverPid
      e.silent = w.silent
      e.route = w.route
      e.player = w.player
    case .reply(let id, let result):
      e.type = "reply"
      e.id = id
      switch result {
      case .success(let payload):
        e.ok = true
        switch payload {
        case .none: break
        case .otherAudioPlaying(let playing): e.otherAudioPlaying = playing
        case .status(let report): e.report = report
        case .commandStatus(let status): e.status = status.rawValue
        }
      case .failure(let error):
        e.ok = false
        e.error = error
      }
    case .error(let error):
      e.type = "error"
      e.error = error
    case .command(let id, let command):
      e.type = "command"
      e.command = id
      e.kind = command.kind.rawValue
      e.argument = command.argument
    case .handOver(let id, let paths, let placement):
      e.type = "handOver"
      e.command = id
      e.paths = paths
      e.placement = placement.rawValue
    case .event(let event):
      e.type = "event"
      switch event {
      case .interruption(.began(let cause)):
        e.event = "interruptionBegan"
        e.cause = cause
      case .interruption(.ended(let shouldResume, let reason)):
        e.event = "interruptionEnded"
        e.shouldResume = shouldResume
        e.reason = reason.rawValue
      case .routeChange(let change):
        e.event = "routeChange"
        e.reason = change.reason.rawValue
        e.previous = change.previous
        e.current = change.current
      case .silenceSecondaryAudioHint(let hint):
        e.event = "silenceSecondaryAudioHint"
        e.hint = hint.rawValue
      case .ducking(let ducked):
        e.event = "ducking"
        e.ducked = ducked
      case .silentMode(let on, let mutes):
        e.event = "silentMode"
        e.silent = on
        e.mutesThisSession = mutes
      case .nowPlaying(let isNowPlaying):
        e.event = "nowPlaying"
        e.isNowPlaying = isNowPlaying
      case .mediaServicesWereReset:
        e.event = "mediaServicesWereReset"
      case .sleepTimer(let status):
        e.event = "sleepTimer"
        e.timer = status
      case .sleepTimerEnded(let fade):
        e.event = "sleepTimerEnded"
        e.fade = fade
      }
    }
    return try line(e)
  }

  /// Reads one line (without its newline) from the server.
  public static func decodeServer(_ bytes: some Collection<UInt8>) throws(WireError)
    -> ServerMessage
  {
    let e: ServerEnvelope
    do {
      e = try JSONDecoder().decode(ServerEnvelope.self, from: Data(bytes))
    } catch {
      throw malformed(error)
    }
    func fail(_ message: String) -> WireError { WireError(code: "badMessage", message: message) }
    func need<T>(_ value: T?, _ field: String) throws(WireError) -> T {
      guard let value else { throw fail("server message '\(e.type)' lacks '\(field)'") }
      return value
    }
    func parse<T: RawRepresentable<String>>(_ raw: String?, _ field: String) throws(WireError) -> T
    {
      let raw = try need(raw, field)
      guard let value = T(rawValue: raw) else { throw fail("unknown \(field) '\(raw)'") }
      return value
    }
    switch e.type {
    case "welcome":
      return .welcome(
        Welcome(
          version: try need(e.version, "version"), session: try need(e.session, "session"),
          serverPid: try need(e.serverPid, "serverPid"), silent: try need(e.silent, "silent"),
          route: try need(e.route, "route"), player: e.player))
    case "reply":
      let id = try need(e.id, "id")
      if try need(e.ok, "ok") {
        if let playing = e.otherAudioPlaying {
          return .reply(id, .success(.otherAudioPlaying(playing)))
        }
        if let report = e.report { return .reply(id, .success(.status(report))) }
        if e.status != nil {
          let status: CommandStatus = try parse(e.status, "status")
          return .reply(id, .success(.commandStatus(status)))
        }
        return .reply(id, .success(.none))
      }
      return .reply(id, .failure(try need(e.error, "error")))
    case "error":
      return .error(try need(e.error, "error"))
    case "command":
      let kind: RemoteCommandKind = try parse(e.kind, "kind")
      guard let command = RemoteCommand(kind: kind, argument: e.argument) else {
        throw fail("command '\(kind.rawValue)' lacks its argument")
      }
      return .command(try need(e.command, "command"), command)
    case "handOver":
      return .handOver(
        try need(e.command, "command"), paths: try need(e.paths, "paths"),
        placement: try parse(e.placement, "placement"))
    case "event":
      let event: SessionEvent
      switch try need(e.event, "event") {
      case "interruptionBegan": event = .interruption(.began(try need(e.cause, "cause")))
      case "interruptionEnded":
        event = .interruption(
          .ended(
            shouldResume: try need(e.shouldResume, "shouldResume"),
            reason: try parse(e.reason, "reason")))
      case "routeChange":
        event = .routeChange(
          RouteChange(
            reason: try parse(e.reason, "reason"), previous: try need(e.previous, "previous"),
            current: try need(e.current, "current")))
      case "silenceSecondaryAudioHint":
        event = .silenceSecondaryAudioHint(try parse(e.hint, "hint"))
      case "ducking": event = .ducking(isDucked: try need(e.ducked, "ducked"))
      case "silentMode":
        event = .silentMode(
          isOn: try need(e.silent, "silent"),
          mutesThisSession: try need(e.mutesThisSession, "mutesThisSession"))
      case "nowPlaying": event = .nowPlaying(isNowPlaying: try need(e.isNowPlaying, "isNowPlaying"))
      case "mediaServicesWereReset": event = .mediaServicesWereReset
      case "sleepTimer": event = .sleepTimer(e.timer)
      case "sleepTimerEnded": event = .sleepTimerEnded(fade: try need(e.fade, "fade"))
      case let other: throw fail("unknown event '\(other)'")
      }
      return .event(event)
    case let other:
      throw fail("unknown server message '\(other)'")
    }
  }

  // MARK: Helpers

  private static func line(_ value: some Encodable) throws(WireError) -> [UInt8] {
    do {
      var bytes = [UInt8](try JSONEncoder().encode(value))
      bytes.append(UInt8(ascii: "\n"))
      return bytes
    } catch {
      throw WireError(code: "encoding", message: "cannot encode message (\(error))")
    }
  }

  private static func malformed(_ error: any Error) -> WireError {
    let detail: String
    switch error {
    case DecodingError.keyNotFound(let key, _): detail = "missing field '\(key.stringValue)'"
    case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
      detail = "wrong type for '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
    case DecodingError.dataCorrupted(let context):
      detail =
        context.codingPath.isEmpty
        ? "not a JSON object"
        : "bad value for '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
    default: detail = "not a JSON object"
    }
    return WireError(code: "malformed", message: "malformed message: \(detail)")
  }
}

/// Just a request's number, to answer a request whose other fields could not be read.
private struct RequestNumber: Decodable { var id: Int? }

/// Every field any client message may carry; `type` says which apply.
private struct ClientEnvelope: Codable {
  var type: String
  var id: Int?
  var version: Int?
  var name: String?
  var role: String?
  var category: String?
  var mode: String?
  var options: [String]?
  var active: Bool?
  var playback: PlaybackInfo?
  var commands: [String]?
  var on: Bool?
  var action: String?
  var kind: String?
  var argument: Double?
  var command: Int?
  var status: String?
  var app: String?
  var paths: [String]?
  var placement: String?
  var seconds: Double?
  var fade: Double?
}

/// Every field any server message may carry; `type` says which apply.
private struct ServerEnvelope: Codable {
  var type: String
  var id: Int?
  var version: Int?
  var session: SessionID?
  var serverPid: Int32?
  var silent: Bool?
  var route: Route?
  var player: Int32?
  var ok: Bool?
  var error: WireError?
  var otherAudioPlaying: Bool?
  var report: StatusReport?
  var status: String?
  var command: Int?
  var kind: String?
  var argument: Double?
  var event: String?
  var cause: InterruptionCause?
  var shouldResume: Bool?
  var reason: String?
  var previous: Route?
  var current: Route?
  var hint: String?
  var ducked: Bool?
  var mutesThisSession: Bool?
  var isNowPlaying: Bool?
  var paths: [String]?
  var placement: String?
  var timer: SleepTimerStatus?
  var fade: Double?
}
