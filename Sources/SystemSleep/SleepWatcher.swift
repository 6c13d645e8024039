import CDBus
import Glibc
import Platform

/// The machine going to sleep and waking, as systemd-logind announces it on the system bus
/// (`PrepareForSleep`), and a delay inhibitor that holds the sleep back while the player plays,
/// long enough for it to pause first (the phone's wakeFromSleep is a route change: playback
/// pauses and stays paused).
///
/// One thread owns the bus connection: it polls the connection's socket and a wake pipe, hands
/// `PrepareForSleep(true|false)` to the owner, and takes or releases the inhibitor (a file
/// descriptor from logind's `Inhibit("sleep", …, "delay")`; closing it releases it) when `hold`
/// asks. Without a system bus or logind (a container), `start` says why and nothing happens.
public final class SleepWatcher: Sendable {
  private struct State {
    var wantsHold = false
    var stopping = false
  }
  private let state = Locked(State())
  private let wakePipe: WakePipe

  /// Connects to the system bus and watches for sleep; `onSleep(true)` before the machine
  /// sleeps, `onSleep(false)` after it woke, called on the watcher's thread. Nil, with the
  /// reason, when there is no system bus or no logind on it.
  public static func start(onSleep: @escaping @Sendable (Bool) -> Void) -> Result<
    SleepWatcher, SleepWatchError
  > {
    // libdbus is loaded here, not at every hark's start (CDBus's Loader.c).
    if let why = cdbus_load() {
      return .failure(SleepWatchError(reason: "cannot load libdbus: \(String(cString: why))"))
    }
    var error = DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    guard let connection = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error) else {
      return .failure(SleepWatchError(reason: "no system bus (\(describe(error)))"))
    }
    dbus_connection_set_exit_on_disconnect(connection, 0)
    guard dbus_bus_name_has_owner(connection, "org.freedesktop.login1", &error) != 0 else {
      dbus_connection_close(connection)
      dbus_connection_unref(connection)
      return .failure(SleepWatchError(reason: "no systemd-logind on the system bus"))
    }
    dbus_bus_add_match(
      connection,
      "type='signal',sender='org.freedesktop.login1',interface='org.freedesktop.login1.Manager',"
        + "member='PrepareForSleep',path='/org/freedesktop/login1'", &error)
    if dbus_error_is_set(&error) != 0 {
      let reason = describe(error)
      dbus_connection_close(connection)
      dbus_connection_unref(connection)
      return .failure(SleepWatchError(reason: "cannot watch logind: \(reason)"))
    }
    let pipe: WakePipe
    do { pipe = try WakePipe() } catch {
      dbus_connection_close(connection)
      dbus_connection_unref(connection)
      return .failure(SleepWatchError(reason: "no pipe for its thread (\(error))"))
    }
    let watcher = SleepWatcher(wakePipe: pipe)
    let bus = UncheckedConnection(raw: connection)
    startThread(named: "hark-sleep") { watcher.run(bus.raw, onSleep: onSleep) }
    return .success(watcher)
  }

  private init(wakePipe: WakePipe) { self.wakePipe = wakePipe }

  /// Takes the delay inhibitor (while playing) or releases it (paused, stopped): the thread
  /// does it at once.
  public func hold(_ on: Bool) {
    let changed = state.withLock { s -> Bool in
      defer { s.wantsHold = on }
      return s.wantsHold != on
    }
    if changed { wake() }
  }

  /// Ends the thread (the inhibitor goes with it).
  public func stop() {
    state.withLock { $0.stopping = true }
    wake()
  }

  private func wake() { wakePipe.wake() }

  /// The watcher's thread: the only one that touches the connection.
  private func run(_ connection: OpaquePointer, onSleep: @Sendable (Bool) -> Void) {
    var inhibitor: Int32 = -1
    defer {
      if inhibitor >= 0 { close(inhibitor) }
      dbus_connection_close(connection)
      dbus_connection_unref(connection)
    }
    var socket: Int32 = -1
    _ = dbus_connection_get_socket(connection, &socket)
    while true {
      let (wanted, stopping) = state.withLock { ($0.wantsHold, $0.stopping) }
      if stopping { return }
      if wanted && inhibitor < 0 {
        inhibitor = Self.inhibit(connection)
      } else if !wanted && inhibitor >= 0 {
        close(inhibitor)
        inhibitor = -1
      }
      guard dbus_connection_read_write(connection, 0) != 0 else { return }  // the bus went
      while let message = dbus_connection_pop_message(connection) {
        defer { dbus_message_unref(message) }
        guard
          dbus_message_is_signal(
            message, "org.freedesktop.login1.Manager", "PrepareForSleep") != 0
        else { continue }
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0,
          dbus_message_iter_get_arg_type(&iter) == cdbus_type_boolean
        else { continue }
        var going: dbus_bool_t = 0
        dbus_message_iter_get_basic(&iter, &going)
        onSleep(going != 0)
      }
      var fds = [
        pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakePipe.readFD, events: Int16(POLLIN), revents: 0),
      ]
      _ = poll(&fds, 2, -1)  // the bus, or `hold` and `stop` through the wake pipe
      wakePipe.drain()
    }
  }

  /// logind's Inhibit("sleep", "hark", …, "delay"): the descriptor that holds sleep back until
  /// it is closed; -1 when logind refused.
  private static func inhibit(_ connection: OpaquePointer) -> Int32 {
    guard
      let call = dbus_message_new_method_call(
        "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
        "Inhibit")
    else { return -1 }
    defer { dbus_message_unref(call) }
    var iter = DBusMessageIter()
    dbus_message_iter_init_append(call, &iter)
    for word in ["sleep", "hark", "pausing playback before the machine sleeps", "delay"] {
      var ok: dbus_bool_t = 0
      word.withCString { c in
        var pointer: UnsafePointer<CChar>? = c
        ok = dbus_message_iter_append_basic(&iter, cdbus_type_string, &pointer)
      }
      guard ok != 0 else { return -1 }
    }
    var error = DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    guard
      let reply = dbus_connection_send_with_reply_and_block(connection, call, 2_000, &error)
    else { return -1 }
    defer { dbus_message_unref(reply) }
    var read = DBusMessageIter()
    guard dbus_message_iter_init(reply, &read) != 0,
      dbus_message_iter_get_arg_type(&read) == cdbus_type_unix_fd
    else { return -1 }
    var fd: Int32 = -1
    dbus_message_iter_get_basic(&read, &fd)
    return fd
  }

  private static func describe(_ error: DBusError) -> String {
    error.message.map { String(cString: $0) } ?? "unknown error"
  }
}

/// Why sleep cannot be watched.
public struct SleepWatchError: Error, Sendable, CustomStringConvertible {
  public var reason: String
  public var description: String { reason }
}

/// The connection crosses to the watcher's thread once, at its start, and is touched only there.
private struct UncheckedConnection: @unchecked Sendable {
  let raw: OpaquePointer
}
