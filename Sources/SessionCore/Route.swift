/// What an output is, for the user and for the G4/G5 rules.
public enum RouteKind: String, Sendable, Hashable, Codable, CaseIterable {
  case speakers, headphones, bluetooth, usb, hdmi, line, unknown

  /// The name a plugged-in device of this kind gets when nothing better is known.
  public var defaultName: String {
    switch self {
    case .speakers: "Speakers"
    case .headphones: "Headphones"
    case .bluetooth: "Bluetooth headset"
    case .usb: "USB audio"
    case .hdmi: "HDMI"
    case .line: "Line out"
    case .unknown: "Output"
    }
  }
}

/// An audio output.
public struct Route: Sendable, Hashable, Codable {
  /// The name shown to the user and accepted by `hark route select`.
  public var name: String
  public var kind: RouteKind

  public init(name: String, kind: RouteKind) {
    self.name = name
    self.kind = kind
  }

  /// The built-in output every machine has.
  public static let speakers = Route(name: RouteKind.speakers.defaultName, kind: .speakers)
}

/// Why the current route changed (AVAudioSession's route-change reasons).
public enum RouteChangeReason: String, Sendable, Hashable, Codable {
  /// Headphones plugged in, a wireless device connected (G4: go on).
  case newDeviceAvailable
  /// The output in use went away (G5: pause at once).
  case oldDeviceUnavailable
  /// The user picked another output (G6: go on without a pause).
  case override
  case categoryChange
  case noSuitableRoute
}

/// A change of the current output.
public struct RouteChange: Sendable, Hashable, Codable {
  public var reason: RouteChangeReason
  public var previous: Route
  public var current: Route

  public init(reason: RouteChangeReason, previous: Route, current: Route) {
    self.reason = reason
    self.previous = previous
    self.current = current
  }
}
