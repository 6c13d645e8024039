import CDBus

/// A D-Bus value of the few types MPRIS uses, to put into or take out of a message.
indirect enum BusValue: Equatable, Sendable {
  case boolean(Bool)
  case int32(Int32)
  /// Read only (a bus daemon's answer: a process id).
  case uint32(UInt32)
  case int64(Int64)
  /// Read only (another player's mpris:length, which some send unsigned).
  case uint64(UInt64)
  case double(Double)
  case string(String)
  case objectPath(String)
  case variant(BusValue)
  /// `as`
  case stringArray([String])
  /// `a{sv}`, in the order given.
  case dictionary([DictionaryEntry])

  /// One `{sv}` entry.
  struct DictionaryEntry: Equatable, Sendable {
    var key: String
    var value: BusValue
  }

  /// The D-Bus type signature.
  var signature: String {
    switch self {
    case .boolean: "b"
    case .int32: "i"
    case .uint32: "u"
    case .int64: "x"
    case .uint64: "t"
    case .double: "d"
    case .string: "s"
    case .objectPath: "o"
    case .variant: "v"
    case .stringArray: "as"
    case .dictionary: "a{sv}"
    }
  }

  /// The value inside a variant, or the value itself.
  var unwrapped: BusValue {
    if case .variant(let inner) = self { return inner.unwrapped }
    return self
  }
}

/// Writing and reading values with the DBusMessageIter API (the variadic
/// dbus_message_append_args cannot be called from Swift).
///
/// Iterators are allocated for the duration of one call and never copied: libdbus's writer keeps
/// the parent and child iterators in step between open_container and close_container.
enum BusCoder {
  /// Appends `value` at `iter`; false when libdbus ran out of memory.
  static func append(_ value: BusValue, to iter: UnsafeMutablePointer<DBusMessageIter>) -> Bool {
    switch value {
    case .boolean(let b):
      var raw: dbus_bool_t = b ? 1 : 0
      return dbus_message_iter_append_basic(iter, cdbus_type_boolean, &raw) != 0
    case .int32(let i):
      var raw = i
      return dbus_message_iter_append_basic(iter, cdbus_type_int32, &raw) != 0
    case .uint32(let u):
      var raw = u
      return dbus_message_iter_append_basic(iter, cdbus_type_uint32, &raw) != 0
    case .int64(let i):
      var raw = i
      return dbus_message_iter_append_basic(iter, cdbus_type_int64, &raw) != 0
    case .uint64(let u):
      var raw = u
      return dbus_message_iter_append_basic(iter, cdbus_type_uint64, &raw) != 0
    case .double(let d):
      var raw = d
      return dbus_message_iter_append_basic(iter, cdbus_type_double, &raw) != 0
    case .string(let s):
      return appendString(s, type: cdbus_type_string, to: iter)
    case .objectPath(let p):
      return appendString(p, type: cdbus_type_object_path, to: iter)
    case .variant(let inner):
      return withContainer(iter, type: cdbus_type_variant, signature: inner.signature) { sub in
        append(inner, to: sub)
      }
    case .stringArray(let strings):
      return withContainer(iter, type: cdbus_type_array, signature: "s") { sub in
        strings.allSatisfy { appendString($0, type: cdbus_type_string, to: sub) }
      }
    case .dictionary(let entries):
      return withContainer(iter, type: cdbus_type_array, signature: "{sv}") { sub in
        entries.allSatisfy { entry in
          withContainer(sub, type: cdbus_type_dict_entry, signature: nil) { pair in
            appendString(entry.key, type: cdbus_type_string, to: pair)
              && append(.variant(entry.value), to: pair)
          }
        }
      }
    }
  }

  /// Appends every value to the end of `message`'s arguments.
  static func append(_ values: [BusValue], to message: OpaquePointer) -> Bool {
    withUnsafeTemporaryAllocation(of: DBusMessageIter.self, capacity: 1) { buffer in
      guard let iter = buffer.baseAddress else { return false }
      dbus_message_iter_init_append(message, iter)
      return values.allSatisfy { append($0, to: iter) }
    }
  }

  /// The message's arguments; nil if one has a type this module never receives.
  static func arguments(of message: OpaquePointer) -> [BusValue]? {
    withUnsafeTemporaryAllocation(of: DBusMessageIter.self, capacity: 1) { buffer in
      guard let iter = buffer.baseAddress else { return nil }
      var values: [BusValue] = []
      guard dbus_message_iter_init(message, iter) != 0 else { return values }
      repeat {
        guard let value = read(iter) else { return nil }
        values.append(value)
      } while dbus_message_iter_next(iter) != 0
      return values
    }
  }

  /// The value at `iter`: basic types, variants and string arrays.
  static func read(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> BusValue? {
    switch dbus_message_iter_get_arg_type(iter) {
    case cdbus_type_boolean:
      var raw: dbus_bool_t = 0
      dbus_message_iter_get_basic(iter, &raw)
      return .boolean(raw != 0)
    case cdbus_type_int32:
      var raw: Int32 = 0
      dbus_message_iter_get_basic(iter, &raw)
      return .int32(raw)
    case cdbus_type_uint32:
      var raw: UInt32 = 0
      dbus_message_iter_get_basic(iter, &raw)
      return .uint32(raw)
    case cdbus_type_int64:
      var raw: Int64 = 0
      dbus_message_iter_get_basic(iter, &raw)
      return .int64(raw)
    case cdbus_type_uint64:
      var raw: UInt64 = 0
      dbus_message_iter_get_basic(iter, &raw)
      return .uint64(raw)
    case cdbus_type_double:
      var raw: Double = 0
      dbus_message_iter_get_basic(iter, &raw)
      return .double(raw)
    case cdbus_type_string:
      return readString(iter).map(BusValue.string)
    case cdbus_type_object_path:
      return readString(iter).map(BusValue.objectPath)
    case cdbus_type_variant:
      return withUnsafeTemporaryAllocation(of: DBusMessageIter.self, capacity: 1) { buffer in
        guard let sub = buffer.baseAddress else { return nil }
        dbus_message_iter_recurse(iter, sub)
        return read(sub).map(BusValue.variant)
      }
    case cdbus_type_array where dbus_message_iter_get_element_type(iter) == cdbus_type_string:
      return withUnsafeTemporaryAllocation(of: DBusMessageIter.self, capacity: 1) { buffer in
        guard let sub = buffer.baseAddress else { return nil }
        dbus_message_iter_recurse(iter, sub)
        var strings: [String] = []
        while dbus_message_iter_get_arg_type(sub) == cdbus_type_string {
          guard let s = readString(sub) else { return nil }
          strings.append(s)
          dbus_message_iter_next(sub)
        }
        return .stringArray(strings)
      }
    case cdbus_type_array where dbus_message_iter_get_element_type(iter) == cdbus_type_dict_entry:
      return readDictionary(iter)
    default:
      return nil
    }
  }

  /// An `a{sv}` (another player's properties and Metadata): the entries whose value this module
  /// reads, in order; an entry of another type (a list of object paths, nested containers) is
  /// left out rather than failing the whole dictionary. nil for keys that are not strings.
  private static func readDictionary(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> BusValue? {
    withUnsafeTemporaryAllocation(of: DBusMessageIter.self, capacity: 2) { buffer in
      guard let entries = buffer.baseAddress else { return nil }
      let pair = entries + 1
      dbus_message_iter_recurse(iter, entries)
      var out: [BusValue.DictionaryEntry] = []
      while dbus_message_iter_get_arg_type(entries) == cdbus_type_dict_entry {
        dbus_message_iter_recurse(entries, pair)
        guard dbus_message_iter_get_arg_type(pair) == cdbus_type_string,
          let key = readString(pair)
        else { return nil }
        if dbus_message_iter_next(pair) != 0, let value = read(pair) {
          out.append(BusValue.DictionaryEntry(key: key, value: value.unwrapped))
        }
        dbus_message_iter_next(entries)
      }
      return .dictionary(out)
    }
  }

  private static func readString(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> String? {
    var raw: UnsafePointer<CChar>? = nil
    dbus_message_iter_get_basic(iter, &raw)
    return raw.map { String(cString: $0) }
  }

  private static func appendString(
    _ s: String, type: Int32, to iter: UnsafeMutablePointer<DBusMessageIter>
  ) -> Bool {
    s.withCString { chars in
      var raw: UnsafePointer<CChar>? = chars
      return dbus_message_iter_append_basic(iter, type, &raw) != 0
    }
  }

  /// Opens a container, fills it with `body`, and closes it; abandons it if `body` fails.
  private static func withContainer(
    _ iter: UnsafeMutablePointer<DBusMessageIter>, type: Int32, signature: String?,
    _ body: (UnsafeMutablePointer<DBusMessageIter>) -> Bool
  ) -> Bool {
    withUnsafeTemporaryAllocation(of: DBusMessageIter.self, capacity: 1) { buffer in
      guard let sub = buffer.baseAddress else { return false }
      let opened: dbus_bool_t =
        if let signature {
          signature.withCString { dbus_message_iter_open_container(iter, type, $0, sub) }
        } else {
          dbus_message_iter_open_container(iter, type, nil, sub)
        }
      guard opened != 0 else { return false }
      guard body(sub) else {
        dbus_message_iter_abandon_container(iter, sub)
        return false
      }
      return dbus_message_iter_close_container(iter, sub) != 0
    }
  }
}
