/// Introspection XML, generated from the same descriptions dispatch uses so the two cannot
/// disagree.
enum Introspection {
  private static let header = """
    <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

    """

  /// The document for `path`: the full object at /org/mpris/MediaPlayer2, a bare node with one
  /// child on each path above it, nil elsewhere.
  static func document(for path: String, interfaces: [InterfaceDescription]) -> String? {
    if path == Names.objectPath {
      return header + "<node>\n" + interfaces.map(xml).joined() + "</node>\n"
    }
    let prefix = path == "/" ? "/" : path + "/"
    guard Names.objectPath.hasPrefix(prefix) else { return nil }
    let rest = Names.objectPath.dropFirst(prefix.count)
    let child = rest.prefix { $0 != "/" }
    let basics = [InterfaceDescription.introspectable, .peer]
    return header + "<node>\n" + basics.map(xml).joined() + "  <node name=\"\(child)\"/>\n"
      + "</node>\n"
  }

  private static func xml(_ interface: InterfaceDescription) -> String {
    var out = "  <interface name=\"\(interface.name)\">\n"
    for method in interface.methods {
      if method.arguments.isEmpty {
        out += "    <method name=\"\(method.name)\"/>\n"
        continue
      }
      out += "    <method name=\"\(method.name)\">\n"
      for argument in method.arguments {
        let direction = argument.isInput ? "in" : "out"
        out +=
          "      <arg name=\"\(argument.name)\" type=\"\(argument.type)\" "
          + "direction=\"\(direction)\"/>\n"
      }
      out += "    </method>\n"
    }
    for signal in interface.signals {
      out += "    <signal name=\"\(signal.name)\">\n"
      for argument in signal.arguments {
        out += "      <arg name=\"\(argument.name)\" type=\"\(argument.type)\"/>\n"
      }
      out += "    </signal>\n"
    }
    for property in interface.properties {
      let access = property.writable ? "readwrite" : "read"
      let open = "    <property name=\"\(property.name)\" type=\"\(property.type)\" "
      if property.changeSignal == .emits {
        out += open + "access=\"\(access)\"/>\n"
      } else {
        out +=
          open + "access=\"\(access)\">\n"
          + "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" "
          + "value=\"\(property.changeSignal.rawValue)\"/>\n" + "    </property>\n"
      }
    }
    return out + "  </interface>\n"
  }
}
