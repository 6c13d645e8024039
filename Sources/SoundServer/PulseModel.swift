import SessionCore

/// Something the sound server (PulseAudio, or PipeWire's PulseAudio service) reported.
public enum PulseObservation: Sendable, Hashable {
  /// The server's default sink, by name.
  case defaultSink(String)
  /// A sink exists (new, or changed).
  case sink(index: UInt32, name: String, description: String, properties: [String: String])
  case sinkRemoved(UInt32)
  /// A playback stream exists (new, or changed: moved to another sink, corked).
  case sinkInput(index: UInt32, sink: UInt32, properties: [String: String])
  case sinkInputRemoved(UInt32)
  /// The connection was lost; what was known is void.
  case disconnected
}

/// What the session server should make of the sound server's news, in hark's terms.
public enum SoundServerEvent: Sendable, Hashable {
  /// A change of the outputs: a device came (attach), went (detach), or was chosen (select).
  case route(RouteAction)
  /// A phone-role stream began or ended: a call in another program (G11, G13).
  case phoneStream(began: Bool, key: UInt32, name: String, pid: Int32?)
  /// A process's stream lost its output (the sink went away; the sound server moved the stream
  /// elsewhere by itself): that process must pause before anything is heard there (G5).
  case outputLost(pid: Int32, stream: UInt32, lost: Route)
}

/// The sound server's sinks and streams as hark sees them, turned into `SoundServerEvent`s.
/// Pure: fed `PulseObservation`s, in order.
///
/// Sinks for devices that come and go (Bluetooth, USB, headphones, HDMI) are outputs of their
/// own: they are attached when they appear and detached when they go. Built-in and virtual
/// sinks (speakers, null sinks) are the machine's own output, the route table's speakers. The
/// default sink is the current output. A stream whose sink goes away lost its output, whatever
/// the default; a stream with `media.role=phone` is a call.
public struct PulseModel: Sendable {
  private struct Sink: Sendable {
    var name: String
    var route: Route?
  }
  private struct Stream: Sendable {
    var sink: UInt32
    var pid: Int32?
    var isPhone: Bool
  }

  private var sinks: [UInt32: Sink] = [:]
  private var streams: [UInt32: Stream] = [:]
  private var defaultSink: String?
  /// The output last made current for the default sink: said again only when it changes, so a
  /// sink's volume change does not undo the user's own choice of output.
  private var selected: String?

  public init() {}

  /// What an observation means.
  public mutating func apply(_ o: PulseObservation) -> [SoundServerEvent] {
    switch o {
    case .defaultSink(let name):
      defaultSink = name
      return selectDefault()
    case .sink(let index, let name, let description, let properties):
      let route = Self.route(name: name, description: description, properties: properties)
      let known = sinks[index]
      sinks[index] = Sink(name: name, route: route)
      var out: [SoundServerEvent] = []
      if known?.route != route {
        if let old = known?.route { out.append(.route(.detach(old))) }
        if let route { out.append(.route(.attach(route))) }
      }
      return out + selectDefault()
    case .sinkRemoved(let index):
      guard let gone = sinks.removeValue(forKey: index) else { return [] }
      if gone.route?.name == selected { selected = nil }
      var out: [SoundServerEvent] = []
      if let route = gone.route { out.append(.route(.detach(route))) }
      let lost = gone.route ?? Route(name: gone.name, kind: .unknown)
      for (stream, s) in streams.sorted(by: { $0.key < $1.key }) where s.sink == index {
        if let pid = s.pid { out.append(.outputLost(pid: pid, stream: stream, lost: lost)) }
      }
      return out
    case .sinkInput(let index, let sink, let properties):
      let pid = properties["application.process.id"].flatMap { Int32($0) }
      let isPhone = properties["media.role"] == "phone"
      let known = streams[index]
      streams[index] = Stream(sink: sink, pid: pid, isPhone: isPhone)
      guard isPhone != (known?.isPhone ?? false) else { return [] }
      let name = properties["application.name"] ?? properties["media.name"] ?? "phone"
      return [.phoneStream(began: isPhone, key: index, name: name, pid: pid)]
    case .sinkInputRemoved(let index):
      guard let gone = streams.removeValue(forKey: index), gone.isPhone else { return [] }
      return [.phoneStream(began: false, key: index, name: "", pid: gone.pid)]
    case .disconnected:
      // The devices and calls it knew of are gone with it.
      var out: [SoundServerEvent] = []
      for (_, s) in sinks.sorted(by: { $0.key < $1.key }) {
        if let route = s.route { out.append(.route(.detach(route))) }
      }
      for (index, s) in streams.sorted(by: { $0.key < $1.key }) where s.isPhone {
        out.append(.phoneStream(began: false, key: index, name: "", pid: s.pid))
      }
      sinks = [:]
      streams = [:]
      defaultSink = nil
      selected = nil
      return out
    }
  }

  /// The default sink is the current output: an attached device, else the speakers.
  private mutating func selectDefault() -> [SoundServerEvent] {
    guard let name = defaultSink, let sink = sinks.values.first(where: { $0.name == name }) else {
      return []
    }
    let target = sink.route?.name ?? Route.speakers.name
    guard target != selected else { return [] }
    selected = target
    return [.route(.select(target))]
  }

  /// The output a sink stands for, or nil for the machine's own (built-in, virtual).
  static func route(name: String, description: String, properties: [String: String]) -> Route? {
    let bus = properties["device.bus"]?.lowercased()
    let form = properties["device.form_factor"]?.lowercased()
    let profile = (properties["device.profile.name"] ?? "").lowercased()
    let kind: RouteKind?
    if bus == "bluetooth" || name.hasPrefix("bluez_") {
      kind = .bluetooth
    } else if bus == "usb" {
      kind = form == "headphone" || form == "headset" ? .headphones : .usb
    } else if form == "headphone" || form == "headset" {
      kind = .headphones
    } else if profile.contains("hdmi") || name.lowercased().contains("hdmi") {
      kind = .hdmi
    } else {
      kind = nil
    }
    guard let kind else { return nil }
    return Route(name: description.isEmpty ? name : description, kind: kind)
  }
}
