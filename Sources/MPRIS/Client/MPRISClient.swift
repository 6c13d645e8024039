import Platform

/// A media player on the session bus, as `MPRISClient` reads it (MPRIS2's
/// org.mpris.MediaPlayer2 and org.mpris.MediaPlayer2.Player properties).
public struct MPRISPlayerInfo: Sendable, Hashable {
  /// `org.mpris.MediaPlayer2.mpv`.
  public var busName: String
  /// Its Identity ("mpv Media Player"), when it gives one.
  public var identity: String?
  /// The process that owns the name, when the bus says.
  public var pid: Int32?
  /// PlaybackStatus; nil when it answers with something else, or nothing.
  public var status: MPRISPlaybackStatus?
  /// Position.
  public var position: Duration?
  /// Metadata's mpris:length.
  public var length: Duration?
  /// Rate; nil when it has none (1, then).
  public var rate: Double?
  /// Volume, 0…1 (more is allowed); nil when it has none.
  public var volume: Double?
  /// Metadata's xesam:title.
  public var title: String?

  public init(
    busName: String, identity: String? = nil, pid: Int32? = nil,
    status: MPRISPlaybackStatus? = nil, position: Duration? = nil, length: Duration? = nil,
    rate: Double? = nil, volume: Double? = nil, title: String? = nil
  ) {
    self.busName = busName
    self.identity = identity
    self.pid = pid
    self.status = status
    self.position = position
    self.length = length
    self.rate = rate
    self.volume = volume
    self.title = title
  }
}

/// A client of the desktop's media players on the session bus: lists them, reads what they do,
/// pauses them, sets their Volume. The session server's sleep timer uses it to fade out and
/// pause whatever plays (mpv with mpv-mpris, cmus, a browser).
///
/// Blocking: each call waits for the player's answer, at most `timeout` (a player that hangs
/// costs that much, never more). One thread uses it; it is not thread-safe. One private
/// connection, closed when this goes away; libdbus is loaded when the first one connects.
public final class MPRISClient {
  private let connection: BusConnection
  /// How long each call waits for its answer, in milliseconds.
  public let timeout: Int32

  static let prefix = "org.mpris.MediaPlayer2."
  static let objectPath = "/org/mpris/MediaPlayer2"
  static let playerInterface = "org.mpris.MediaPlayer2.Player"
  static let rootInterface = "org.mpris.MediaPlayer2"
  static let properties = "org.freedesktop.DBus.Properties"

  /// Connects to the bus at `address`, or the session bus (DBUS_SESSION_BUS_ADDRESS, else
  /// `$XDG_RUNTIME_DIR/bus`). Blocks until the bus answers Hello.
  public init(address: String? = nil, timeout: Duration = .milliseconds(500)) throws(MPRISError) {
    var environment: [String: String] = [:]
    for name in ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"] {
      environment[name] = Platform.environment(name)
    }
    guard let address = address ?? MPRISServer.sessionBusAddress(environment: environment) else {
      throw .noSessionBus
    }
    connection = try BusConnection.open(address: address)
    self.timeout = Int32(
      clamping: timeout.components.seconds * 1000
        + timeout.components.attoseconds / 1_000_000_000_000_000)
  }

  /// The bus names of the players on the bus (org.mpris.MediaPlayer2.*), sorted; empty when
  /// the bus does not answer.
  public func playerNames() -> [String] {
    defer { connection.discardIncoming() }
    guard
      case .success(let values) = connection.call(
        "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames",
        timeout: timeout),
      case .stringArray(let names) = values.first
    else { return [] }
    return names.filter { $0.hasPrefix(Self.prefix) && $0.count > Self.prefix.count }.sorted()
  }

  /// Every player on the bus and what it does; a player that does not answer is left out.
  public func players() -> [MPRISPlayerInfo] {
    playerNames().compactMap(player)
  }

  /// What the player named `busName` does now (its Player properties at once, GetAll), or nil
  /// when it does not answer.
  public func player(_ busName: String) -> MPRISPlayerInfo? {
    defer { connection.discardIncoming() }
    guard
      case .success(let values) = connection.call(
        busName, Self.objectPath, Self.properties, "GetAll", [.string(Self.playerInterface)],
        timeout: timeout),
      case .dictionary(let entries) = values.first
    else { return nil }
    var info = MPRISPlayerInfo(busName: busName)
    for entry in entries {
      switch (entry.key, entry.value) {
      case ("PlaybackStatus", .string(let s)): info.status = MPRISPlaybackStatus(rawValue: s)
      case ("Position", let v): info.position = Self.microseconds(v)
      case ("Rate", .double(let r)): info.rate = r
      case ("Volume", .double(let v)): info.volume = v
      case ("Metadata", .dictionary(let metadata)):
        for m in metadata {
          switch (m.key, m.value) {
          case ("mpris:length", let v): info.length = Self.microseconds(v)
          case ("xesam:title", .string(let t)): info.title = t
          default: break
          }
        }
      default: break
      }
    }
    if case .success(let identity) = connection.call(
      busName, Self.objectPath, Self.properties, "Get",
      [.string(Self.rootInterface), .string("Identity")], timeout: timeout),
      case .string(let name) = identity.first?.unwrapped
    {
      info.identity = name
    }
    info.pid = connection.processID(of: busName, timeout: timeout)
    return info
  }

  /// Its PlaybackStatus alone, or nil when it does not answer.
  public func status(_ busName: String) -> MPRISPlaybackStatus? {
    guard case .string(let s) = property(busName, "PlaybackStatus") else { return nil }
    return MPRISPlaybackStatus(rawValue: s)
  }

  /// Its Volume alone, or nil when it has none or does not answer.
  public func volume(_ busName: String) -> Double? {
    guard case .double(let v) = property(busName, "Volume") else { return nil }
    return v
  }

  /// One property of its Player interface (Get), or nil.
  private func property(_ busName: String, _ name: String) -> BusValue? {
    defer { connection.discardIncoming() }
    guard
      case .success(let values) = connection.call(
        busName, Self.objectPath, Self.properties, "Get",
        [.string(Self.playerInterface), .string(name)], timeout: timeout)
    else { return nil }
    return values.first?.unwrapped
  }

  /// Calls its Stop (for a player that would not pause); false when it refused or did not
  /// answer.
  @discardableResult
  public func stop(_ busName: String) -> Bool {
    defer { connection.discardIncoming() }
    if case .success = connection.call(
      busName, Self.objectPath, Self.playerInterface, "Stop", timeout: timeout)
    {
      return true
    }
    return false
  }

  /// Calls its Pause; false when it refused or did not answer.
  @discardableResult
  public func pause(_ busName: String) -> Bool {
    defer { connection.discardIncoming() }
    if case .success = connection.call(
      busName, Self.objectPath, Self.playerInterface, "Pause", timeout: timeout)
    {
      return true
    }
    return false
  }

  /// Sets its Volume; false when it refused (no Volume, CanControl false) or did not answer.
  @discardableResult
  public func setVolume(_ busName: String, to volume: Double) -> Bool {
    defer { connection.discardIncoming() }
    let set = connection.call(
      busName, Self.objectPath, Self.properties, "Set",
      [.string(Self.playerInterface), .string("Volume"), .variant(.double(volume))],
      timeout: timeout)
    if case .success = set { return true }
    return false
  }

  /// An MPRIS time (microseconds, as int64, uint64 or, from some players, int32).
  static func microseconds(_ value: BusValue) -> Duration? {
    switch value {
    case .int64(let us): us >= 0 ? .microseconds(us) : nil
    case .uint64(let us): .microseconds(Int64(clamping: us))
    case .int32(let us): us >= 0 ? .microseconds(Int64(us)) : nil
    case .uint32(let us): .microseconds(Int64(us))
    case .double(let us): us.isFinite && us >= 0 ? .microseconds(Int64(min(us, 9e18))) : nil
    case .boolean, .string, .objectPath, .variant, .stringArray, .dictionary: nil
    }
  }
}
