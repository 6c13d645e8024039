import CDBus

/// One private connection to a message bus (dbus_connection_open_private), closed and released
/// in `deinit`.
///
/// Not thread-safe by design: after `open` returns, only the service thread touches it. Private,
/// so that libdbus's shared session connection (and whatever else in the process uses it) never
/// sees our messages, and so that closing it is ours to do.
final class BusConnection {
  let raw: OpaquePointer

  private init(raw: OpaquePointer) { self.raw = raw }

  deinit {
    dbus_connection_close(raw)
    dbus_connection_unref(raw)
  }

  /// Connects to the bus at `address` and says Hello (dbus_bus_register); blocks until the bus
  /// answers.
  static func open(address: String) throws(MPRISError) -> BusConnection {
    // libdbus is loaded here, not at every hark's start (CDBus's Loader.c).
    if let why = cdbus_load() {
      throw .cannotConnect(address: address, reason: "cannot load libdbus: \(String(cString: why))")
    }
    var error = DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    guard let raw = dbus_connection_open_private(address, &error) else {
      throw .cannotConnect(address: address, reason: describe(error))
    }
    // A lost bus must end our thread, not the process (libdbus's default for shared
    // connections is to call _exit).
    dbus_connection_set_exit_on_disconnect(raw, 0)
    let connection = BusConnection(raw: raw)
    guard dbus_bus_register(raw, &error) != 0 else {
      throw .cannotConnect(address: address, reason: describe(error))
    }
    return connection
  }

  /// The socket to poll, or nil if the transport has none.
  var socket: Int32? {
    var fd: Int32 = -1
    guard dbus_connection_get_socket(raw, &fd) != 0, fd >= 0 else { return nil }
    return fd
  }

  /// Reads and writes what the socket allows without blocking; false once disconnected.
  func readWrite() -> Bool { dbus_connection_read_write(raw, 0) != 0 }

  /// The next incoming message, if one has been read.
  func popMessage() -> Message? { dbus_connection_pop_message(raw).map(Message.init(taking:)) }

  /// Queues a message for sending; false when libdbus ran out of memory.
  @discardableResult
  func send(_ message: Message) -> Bool { dbus_connection_send(raw, message.raw, nil) != 0 }

  /// Writes everything queued (blocks until the socket has taken it).
  func flush() { dbus_connection_flush(raw) }

  /// What asking the bus for a well-known name came to.
  enum NameRequest: Equatable {
    case owned
    case taken
    case failed(String)
  }

  /// Asks for `name` without queueing (dbus_bus_request_name with DO_NOT_QUEUE); blocks until
  /// the bus answers.
  func requestName(_ name: String) -> NameRequest {
    var error = DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    let result = dbus_bus_request_name(raw, name, UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error)
    switch result {
    case Int32(DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER), Int32(DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER):
      return .owned
    case Int32(DBUS_REQUEST_NAME_REPLY_EXISTS), Int32(DBUS_REQUEST_NAME_REPLY_IN_QUEUE):
      return .taken
    default:
      return .failed(Self.describe(error))
    }
  }

  /// Gives `name` back (dbus_bus_release_name); blocks until the bus answers.
  func releaseName(_ name: String) {
    var error = DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    _ = dbus_bus_release_name(raw, name, &error)
  }

  /// The process behind a connection's unique name (org.freedesktop.DBus's
  /// GetConnectionUnixProcessID), or nil when the bus does not say within `timeout`
  /// milliseconds. Blocks; incoming messages read meanwhile wait in libdbus's queue.
  func processID(of connection: String, timeout: Int32 = 250) -> Int32? {
    guard
      let call = dbus_message_new_method_call(
        "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
        "GetConnectionUnixProcessID"
      ).map(Message.init(taking:)),
      call.append([.string(connection)])
    else { return nil }
    var error = DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    guard
      let answer = dbus_connection_send_with_reply_and_block(raw, call.raw, timeout, &error)
        .map(Message.init(taking:)),
      case .uint32(let pid) = answer.arguments?.first
    else { return nil }
    return Int32(bitPattern: pid)
  }

  /// Calls `member` of `interface` on `path` at `destination` and waits up to `timeout`
  /// milliseconds for the answer: its arguments, or the error's words. Blocks; messages that
  /// arrive meanwhile wait in libdbus's queue (`discardIncoming` empties it).
  func call(
    _ destination: String, _ path: String, _ interface: String, _ member: String,
    _ arguments: [BusValue] = [], timeout: Int32
  ) -> Result<[BusValue], BusCallError> {
    guard
      let call = dbus_message_new_method_call(destination, path, interface, member)
        .map(Message.init(taking:)),
      call.append(arguments)
    else { return .failure(BusCallError(message: "out of memory")) }
    var error = DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    guard
      let answer = dbus_connection_send_with_reply_and_block(raw, call.raw, timeout, &error)
        .map(Message.init(taking:))
    else { return .failure(BusCallError(message: Self.describe(error))) }
    guard let values = answer.arguments else {
      return .failure(BusCallError(message: "'\(member)' answered with values of unknown types"))
    }
    return .success(values)
  }

  /// Drops what has arrived unasked (the bus's NameAcquired, signals): a client that only
  /// calls must not let them pile up.
  func discardIncoming() {
    _ = readWrite()
    while popMessage() != nil {}
  }

  /// This machine's D-Bus id, for org.freedesktop.DBus.Peer.GetMachineId.
  static func machineID() -> String? {
    var error = DBusError()
    dbus_error_init(&error)
    defer { dbus_error_free(&error) }
    // dbus_get_local_machine_id aborts the process when there is no id; this one reports it.
    guard let id = dbus_try_get_local_machine_id(&error) else { return nil }
    defer { dbus_free(id) }
    return String(cString: id)
  }

  private static func describe(_ error: DBusError) -> String {
    guard let message = error.message else { return "unknown D-Bus error" }
    return String(cString: message)
  }
}

/// A method call that failed: libdbus's words (the callee's error, or no answer in time).
struct BusCallError: Error, Equatable {
  var message: String
}
