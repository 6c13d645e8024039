/// Why the MPRIS server could not start. The owner logs it once and plays on without MPRIS.
public enum MPRISError: Error, Equatable, CustomStringConvertible {
  /// There is no session bus: DBUS_SESSION_BUS_ADDRESS is not set and `$XDG_RUNTIME_DIR/bus`
  /// does not exist.
  case noSessionBus
  /// Connecting to the bus at `address`, or registering on it, failed; `reason` is libdbus's.
  case cannotConnect(address: String, reason: String)
  /// The process could not get a pipe or a thread for the server; `reason` is strerror's.
  case cannotStart(reason: String)

  /// One line for the log, in the house style (no program name: the owner adds it).
  public var description: String {
    switch self {
    case .noSessionBus:
      "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set); media keys and playerctl "
        + "will not reach the player; run it inside a desktop session or under dbus-run-session"
    case .cannotConnect(let address, let reason):
      "cannot reach the D-Bus session bus at '\(address)'; media keys and playerctl will not "
        + "reach the player (\(reason))"
    case .cannotStart(let reason):
      "cannot start the MPRIS server; media keys and playerctl will not reach the player "
        + "(\(reason))"
    }
  }
}
