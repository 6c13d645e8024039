/// The names MPRIS and D-Bus fix.
enum Names {
  static let objectPath = "/org/mpris/MediaPlayer2"
  static let busNamePrefix = "org.mpris.MediaPlayer2."
  /// MPRIS reserves this trackid for "no track".
  static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

  static let root = "org.mpris.MediaPlayer2"
  static let player = "org.mpris.MediaPlayer2.Player"
  static let properties = "org.freedesktop.DBus.Properties"
  static let introspectable = "org.freedesktop.DBus.Introspectable"
  static let peer = "org.freedesktop.DBus.Peer"

  static let busDriver = "org.freedesktop.DBus"
  static let local = "org.freedesktop.DBus.Local"
}

/// The standard error names replies use.
enum ErrorName {
  static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
  static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
  static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
  static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
  static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
  static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
  static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
  static let failed = "org.freedesktop.DBus.Error.Failed"
}

/// A method's name and its arguments, for dispatch and for introspection.
struct MethodDescription: Sendable {
  struct Argument: Sendable {
    var name: String
    var type: String
    var isInput: Bool
  }
  var name: String
  var arguments: [Argument] = []

  /// The signature a call must carry.
  var inputSignature: String { arguments.filter(\.isInput).map(\.type).joined() }
}

/// A signal's name and arguments, for introspection.
struct SignalDescription: Sendable {
  var name: String
  var arguments: [(name: String, type: String)]
}

/// A property's name, type and access, for dispatch and for introspection.
struct PropertyDescription: Sendable {
  /// What org.freedesktop.DBus.Property.EmitsChangedSignal says about it.
  enum ChangeSignal: String, Sendable {
    /// PropertiesChanged carries the new value.
    case emits = "true"
    /// Never changes while the server runs.
    case constant = "const"
    /// Changes without a signal (Position: clients ask, or follow Seeked).
    case silent = "false"
  }

  var name: String
  var type: String
  var writable = false
  var changeSignal = ChangeSignal.emits
}

/// One D-Bus interface as this object implements it.
struct InterfaceDescription: Sendable {
  var name: String
  var methods: [MethodDescription] = []
  var signals: [SignalDescription] = []
  var properties: [PropertyDescription] = []

  func method(named name: String) -> MethodDescription? { methods.first { $0.name == name } }
  func property(named name: String) -> PropertyDescription? {
    properties.first { $0.name == name }
  }
}

extension InterfaceDescription {
  private typealias Arg = MethodDescription.Argument

  static let introspectable = InterfaceDescription(
    name: Names.introspectable,
    methods: [
      .init(name: "Introspect", arguments: [Arg(name: "xml_data", type: "s", isInput: false)])
    ]
  )

  static let peer = InterfaceDescription(
    name: Names.peer,
    methods: [
      .init(name: "Ping"),
      .init(
        name: "GetMachineId", arguments: [Arg(name: "machine_uuid", type: "s", isInput: false)]),
    ])

  static let properties = InterfaceDescription(
    name: Names.properties,
    methods: [
      .init(
        name: "Get",
        arguments: [
          Arg(name: "interface_name", type: "s", isInput: true),
          Arg(name: "property_name", type: "s", isInput: true),
          Arg(name: "value", type: "v", isInput: false),
        ]),
      .init(
        name: "GetAll",
        arguments: [
          Arg(name: "interface_name", type: "s", isInput: true),
          Arg(name: "properties", type: "a{sv}", isInput: false),
        ]),
      .init(
        name: "Set",
        arguments: [
          Arg(name: "interface_name", type: "s", isInput: true),
          Arg(name: "property_name", type: "s", isInput: true),
          Arg(name: "value", type: "v", isInput: true),
        ]),
    ],
    signals: [
      .init(
        name: "PropertiesChanged",
        arguments: [
          ("interface_name", "s"), ("changed_properties", "a{sv}"),
          ("invalidated_properties", "as"),
        ])
    ])

  /// org.mpris.MediaPlayer2; DesktopEntry only when there is one.
  static func root(hasDesktopEntry: Bool) -> InterfaceDescription {
    var properties: [PropertyDescription] = [
      .init(name: "CanQuit", type: "b", changeSignal: .constant),
      .init(name: "CanRaise", type: "b", changeSignal: .constant),
      .init(name: "HasTrackList", type: "b", changeSignal: .constant),
      .init(name: "Identity", type: "s", changeSignal: .constant),
    ]
    if hasDesktopEntry {
      properties.append(.init(name: "DesktopEntry", type: "s", changeSignal: .constant))
    }
    properties += [
      .init(name: "SupportedUriSchemes", type: "as", changeSignal: .constant),
      .init(name: "SupportedMimeTypes", type: "as", changeSignal: .constant),
    ]
    return InterfaceDescription(
      name: Names.root, methods: [.init(name: "Raise"), .init(name: "Quit")],
      properties: properties)
  }

  static let player = InterfaceDescription(
    name: Names.player,
    methods: [
      .init(name: "Next"), .init(name: "Previous"), .init(name: "Pause"),
      .init(name: "PlayPause"), .init(name: "Stop"), .init(name: "Play"),
      .init(name: "Seek", arguments: [Arg(name: "Offset", type: "x", isInput: true)]),
      .init(
        name: "SetPosition",
        arguments: [
          Arg(name: "TrackId", type: "o", isInput: true),
          Arg(name: "Position", type: "x", isInput: true),
        ]),
      .init(name: "OpenUri", arguments: [Arg(name: "Uri", type: "s", isInput: true)]),
    ],
    signals: [.init(name: "Seeked", arguments: [("Position", "x")])],
    properties: [
      .init(name: "PlaybackStatus", type: "s"),
      .init(name: "LoopStatus", type: "s", writable: true),
      .init(name: "Rate", type: "d", writable: true),
      .init(name: "Shuffle", type: "b", writable: true),
      .init(name: "Metadata", type: "a{sv}"),
      .init(name: "Volume", type: "d", writable: true),
      .init(name: "Position", type: "x", changeSignal: .silent),
      .init(name: "MinimumRate", type: "d", changeSignal: .constant),
      .init(name: "MaximumRate", type: "d", changeSignal: .constant),
      .init(name: "CanGoNext", type: "b"),
      .init(name: "CanGoPrevious", type: "b"),
      .init(name: "CanPlay", type: "b"),
      .init(name: "CanPause", type: "b"),
      .init(name: "CanSeek", type: "b"),
      .init(name: "CanControl", type: "b"),
    ])
}

extension Duration {
  /// Whole microseconds, MPRIS's unit, rounded toward zero and clamped to Int64.
  var mprisMicroseconds: Int64 {
    let (seconds, attoseconds) = components
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
    if overflow { return seconds < 0 ? .min : .max }
    let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000)
    if overflow2 { return seconds < 0 ? .min : .max }
    return total
  }
}
