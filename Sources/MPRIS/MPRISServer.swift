import Glibc
import Platform

/// An MPRIS2 server (org.mpris.MediaPlayer2 and its Player interface) on the D-Bus session bus,
/// for one player: the owner.
///
/// The owner pushes its state with `update(_:)` on every change, says when the position jumps
/// with `seeked(to:)`, and says with `setEligible(_:)` when it may be the now-playing app (G18):
/// only then does the server hold a bus name, so media keys reach whichever app is being
/// listened to. Clients' commands arrive on `requests`, already checked against the state's
/// `can...` flags (G19). Position is read from the owner's closure whenever a client asks.
///
/// Threads: one dedicated thread serves the connection. Every method here may be called from
/// any thread and returns at once; the work happens on that thread.
public final class MPRISServer: Sendable {
  /// The clients' commands, in the order they came, each delivered before its caller's reply.
  ///
  /// One consumer; requests wait in the stream, without limit, until it reads them. Ends when the
  /// server is closed or the bus goes away.
  public let requests: AsyncStream<MPRISRequest>

  private let mailbox: Mailbox
  private let wake: WakePipe
  private let thread: JoinableThread

  /// Connects to the bus and starts serving, holding no name until `setEligible(true)`.
  ///
  /// Blocks until the bus has answered Hello. Throws, and prints nothing, when there is no
  /// session bus or it cannot be reached: the owner logs the error once and plays on without
  /// MPRIS.
  ///
  /// - Parameters:
  ///   - configuration: names, and the bus address (the session bus when nil).
  ///   - state: what to show until the first `update(_:)`.
  ///   - position: the playback position now. Called on the service thread whenever a client
  ///     reads Position; it must be cheap, thread-safe and must not block (an atomic load).
  public init(
    configuration: MPRISConfiguration = MPRISConfiguration(), state: MPRISState = MPRISState(),
    position: @escaping @Sendable () -> Duration
  ) throws(MPRISError) {
    precondition(
      Self.isValidPlayerName(configuration.playerName),
      "MPRIS player name '\(configuration.playerName)' is not a valid bus name element")
    var environment: [String: String] = [:]
    for name in ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"] {
      environment[name] = Platform.environment(name)
    }
    guard
      let address = configuration.busAddress
        ?? Self.sessionBusAddress(environment: environment)
    else { throw .noSessionBus }

    let wake: WakePipe
    do { wake = try WakePipe() } catch { throw .cannotStart(reason: "no pipe: \(error.reason)") }
    let connection = try BusConnection.open(address: address)
    let mailbox = Mailbox(state: state)
    let (stream, continuation) = AsyncStream.makeStream(of: MPRISRequest.self)
    let loop = ServiceLoop(
      connection: connection, mailbox: mailbox, wake: wake,
      object: MediaPlayerObject(configuration: configuration, position: position),
      requests: continuation)
    do { thread = try JoinableThread { loop.run() } } catch {
      throw .cannotStart(reason: "no thread: \(error.reason)")
    }
    self.mailbox = mailbox
    self.wake = wake
    requests = stream
  }

  deinit { close() }

  /// Shows a new state: Get and GetAll answer from it at once, and PropertiesChanged goes out
  /// for every Player property that differs from the last state sent (never Position).
  public func update(_ state: MPRISState) {
    let posted = mailbox.contents.withLock { c in
      guard !c.closed && !c.ended && c.state != state else { return false }
      c.state = state
      c.events.append(.stateChanged(state))
      return true
    }
    if posted { wake.wake() }
  }

  /// Says the position jumped (a seek, or a track restarted) to `position`: emits Seeked.
  ///
  /// Like PropertiesChanged, Seeked goes out only while a name is held: no client is listening
  /// otherwise, and one that finds the name later reads Position afresh.
  public func seeked(to position: Duration) {
    if mailbox.post(.seeked(position)) { wake.wake() }
  }

  /// Takes a bus name when the owner becomes eligible to be the now-playing app (G18), and gives
  /// it back when it stops being eligible.
  ///
  /// The name is org.mpris.MediaPlayer2.<playerName>, or ...<playerName>.instance<PID> when
  /// another player holds that one.
  public func setEligible(_ eligible: Bool) {
    if mailbox.post(.eligible(eligible)) { wake.wake() }
  }

  /// The bus name held now; nil while not eligible, or when every name was taken.
  public var busName: String? { mailbox.contents.withLock { $0.busName } }

  /// Gives the name back, closes the connection and ends `requests`; waits for the service
  /// thread. Later calls to any method do nothing.
  public func close() {
    let first = mailbox.contents.withLock { c in
      defer { c.closed = true }
      if !c.closed { c.events.append(.stop) }
      return !c.closed
    }
    guard first else { return }
    wake.wake()
    if thread.isCurrent {
      thread.detach()  // closed from the service thread itself (by the position closure)
    } else {
      thread.join()
    }
  }

  /// The session bus's address: DBUS_SESSION_BUS_ADDRESS, else the socket at
  /// `$XDG_RUNTIME_DIR/bus` if there is one (where libdbus and sd-bus look too); nil if neither.
  public static func sessionBusAddress(environment: [String: String]) -> String? {
    if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
    guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
    let path = runtime + "/bus"
    var info = stat()
    guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
    return "unix:path=" + escapeAddressValue(path)
  }

  /// D-Bus address values escape every byte outside [-0-9A-Za-z_/.\*] as %xx.
  static func escapeAddressValue(_ value: String) -> String {
    var out = ""
    for byte in value.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
        UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "*"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        out += "%" + hexByte(byte)
      }
    }
    return out
  }

  /// A bus name element: letters, digits, `_` and `-`, not empty, not starting with a digit.
  static func isValidPlayerName(_ name: String) -> Bool {
    guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
    else { return false }
    return name.utf8.allSatisfy { byte in
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
        true
      default:
        false
      }
    }
  }
}
