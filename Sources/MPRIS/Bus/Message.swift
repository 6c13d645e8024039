import CDBus

/// One DBusMessage, released (dbus_message_unref) when this goes away.
final class Message {
  let raw: OpaquePointer

  /// Takes over a reference the caller owns.
  init(taking raw: OpaquePointer) { self.raw = raw }

  deinit { dbus_message_unref(raw) }

  /// A signal; nil if libdbus ran out of memory.
  static func signal(path: String, interface: String, member: String) -> Message? {
    dbus_message_new_signal(path, interface, member).map(Message.init(taking:))
  }

  var isMethodCall: Bool { dbus_message_get_type(raw) == DBUS_MESSAGE_TYPE_METHOD_CALL }
  var isSignal: Bool { dbus_message_get_type(raw) == DBUS_MESSAGE_TYPE_SIGNAL }
  var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
  var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
  var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
  var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
  var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
  /// The caller said it does not want a reply (NO_REPLY_EXPECTED).
  var noReplyExpected: Bool { dbus_message_get_no_reply(raw) != 0 }

  /// The arguments; nil if one has a type this module never receives.
  var arguments: [BusValue]? { BusCoder.arguments(of: raw) }

  /// Appends the values; false when libdbus ran out of memory.
  func append(_ values: [BusValue]) -> Bool { BusCoder.append(values, to: raw) }

  /// A successful reply to this call carrying `values`; nil if libdbus ran out of memory.
  func reply(_ values: [BusValue]) -> Message? {
    guard let reply = dbus_message_new_method_return(raw).map(Message.init(taking:)),
      reply.append(values)
    else { return nil }
    return reply
  }

  /// An error reply to this call; nil if libdbus ran out of memory.
  func errorReply(name: String, text: String) -> Message? {
    dbus_message_new_error(raw, name, text).map(Message.init(taking:))
  }
}
