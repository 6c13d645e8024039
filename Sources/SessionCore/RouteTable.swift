/// A change to the outputs: a device plugged in or out, or the user picking one.
public enum RouteAction: Sendable, Hashable {
  case plug(RouteKind)
  case unplug(RouteKind)
  /// Pick an output by name or kind (case-insensitive).
  case select(String)
  /// A real device appeared (a jack's headphones, a Bluetooth sink that is the default): it
  /// becomes current. One already listed is left as it is.
  case attach(Route)
  /// A real device appeared that nothing is sent to yet (a sound server's sink beside its
  /// default one): listed, the current output unchanged. One already listed is left as it is.
  case add(Route)
  /// A real device went away; nothing when it was not listed.
  case detach(Route)
}

/// Why a route action could not be done.
public enum RouteError: Error, Sendable, Hashable, CustomStringConvertible {
  case alreadyPlugged(Route)
  case notPlugged(RouteKind)
  case cannotUnplugSpeakers
  case noSuchRoute(String, available: [String])

  public var description: String {
    switch self {
    case .alreadyPlugged(let r): "'\(r.name)' is already plugged in"
    case .notPlugged(let k): "no \(k.rawValue) output is plugged in"
    case .cannotUnplugSpeakers: "the built-in speakers cannot be unplugged"
    case .noSuchRoute(let name, let available):
      "no output named '\(name)'; the outputs are: \(available.joined(separator: ", "))"
    }
  }
}

/// The outputs and which one is in use, with the rules for how plugging changes them.
///
/// Plugging a device in makes it current (newDeviceAvailable, G4). Unplugging the current one
/// falls back to the most recently plugged remaining output, else the speakers
/// (oldDeviceUnavailable, G5); unplugging one that is not current changes only the list and
/// notifies nobody, since nothing that was heard moved. Selecting is an override (G6).
public struct RouteTable: Sendable, Hashable, Codable {
  /// The speakers first, then the plugged devices in the order they arrived.
  public private(set) var available: [Route]
  public private(set) var current: Route

  public init(available: [Route] = [.speakers], current: Route = .speakers) {
    precondition(available.contains(current), "the current route must be available")
    self.available = available
    self.current = current
  }

  /// Carries out an action; returns the change to announce, or nil when the current output
  /// did not change.
  public mutating func apply(_ action: RouteAction) throws(RouteError) -> RouteChange? {
    let previous = current
    switch action {
    case .plug(let kind):
      if let existing = available.first(where: { $0.kind == kind }) {
        throw .alreadyPlugged(existing)
      }
      let route = Route(name: kind.defaultName, kind: kind)
      available.append(route)
      current = route
      return RouteChange(reason: .newDeviceAvailable, previous: previous, current: route)

    case .unplug(let kind):
      if kind == .speakers { throw .cannotUnplugSpeakers }
      guard let index = available.firstIndex(where: { $0.kind == kind }) else {
        throw .notPlugged(kind)
      }
      let gone = available.remove(at: index)
      guard gone == current else { return nil }
      current = available.last ?? .speakers
      if available.isEmpty { available = [.speakers] }
      return RouteChange(reason: .oldDeviceUnavailable, previous: previous, current: current)

    case .attach(let route):
      if available.contains(where: { $0.name == route.name }) { return nil }
      available.append(route)
      current = route
      return RouteChange(reason: .newDeviceAvailable, previous: previous, current: route)

    case .add(let route):
      // Nothing heard moved: nobody is told (G4: what plays goes on).
      if !available.contains(where: { $0.name == route.name }) { available.append(route) }
      return nil

    case .detach(let route):
      guard route != .speakers, let index = available.firstIndex(where: { $0.name == route.name })
      else { return nil }
      let gone = available.remove(at: index)
      guard gone == current else { return nil }
      current = available.last ?? .speakers
      return RouteChange(reason: .oldDeviceUnavailable, previous: previous, current: current)

    case .select(let name):
      let wanted = name.lowercased()
      guard
        let route = available.first(where: { $0.name.lowercased() == wanted })
          ?? available.first(where: { $0.kind.rawValue == wanted })
      else { throw .noSuchRoute(name, available: available.map(\.name)) }
      if route == current { return nil }
      current = route
      return RouteChange(reason: .override, previous: previous, current: route)
    }
  }
}
