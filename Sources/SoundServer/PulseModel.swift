import SessionCore

/// Something the sound server (PulseAudio, or PipeWire's PulseAudio service) reported.
public enum PulseObservation: Sendable, Hashable {
  /// The connection is up (first, or again after a loss); `server` names the server and its
  /// version ("pulseaudio 16.1", "PulseAudio (on PipeWire 0.3.65) 15.0.0").
  case connected(server: String)
  /// The server's default sink, by name.
  case defaultSink(String)
  /// A sink exists (new, or changed).
  case sink(index: UInt32, name: String, description: String, properties: [String: String])
  case sinkRemoved(UInt32)
  /// A client of the server exists (new, or changed): the program behind streams.
  case client(index: UInt32, properties: [String: String])
  case clientRemoved(UInt32)
  /// A playback stream exists (new, or changed: moved to another sink, corked). `client` is
  /// the index of the client it belongs to, nil when it has none (a stream of a module).
  case sinkInput(index: UInt32, sink: UInt32, client: UInt32?, properties: [String: String])
  case sinkInputRemoved(UInt32)
  /// The connection was lost; what was known is void.
  case disconnected
}

/// What the session server should make of the sound server's news, in hark's terms.
public enum SoundServerEvent: Sendable, Hashable {
  /// A change of the outputs: a device came (attach, or add when it is not the default), went
  /// (detach), or was chosen as the default (select).
  case route(RouteAction)
  /// A phone-role stream began or ended: a call in another program (G11, G13).
  case phoneStream(began: Bool, key: UInt32, name: String, pid: Int32?)
  /// A process's stream lost its output (the sink went away; the sound server moved the stream
  /// elsewhere by itself): that process must pause before anything is heard there (G5).
  case outputLost(pid: Int32, stream: UInt32, lost: Route)
  /// A process's stream plays on this output: it appeared there, or was moved there (by the
  /// user, or by the desktop's policy: G6 either way). The output of that process's session.
  case streamOutput(pid: Int32, stream: UInt32, output: Route)
  /// A process's stream is gone.
  case streamGone(pid: Int32, stream: UInt32)
}

/// The sound server's sinks and streams as hark sees them, turned into `SoundServerEvent`s.
/// Pure: fed `PulseObservation`s, in order.
///
/// Sinks for devices that come and go (Bluetooth, USB, headphones, HDMI) are outputs of their
/// own; built-in and virtual sinks (speakers, null sinks) are the machine's own output, the
/// route table's speakers. The default sink is the current output: a device is attached (made
/// current) when it appears as the default and added (listed only) when it appears beside it,
/// so a headset that connects without becoming the default takes nothing over. A stream's
/// output is the sink it is on; its process is the one its properties name, or, where they name
/// none (PipeWire's ALSA plugin puts the pid on the client only), its client's. A stream whose
/// sink goes away lost its output, whatever the default; a stream with the phone role is a call.
public struct PulseModel: Sendable {
  private struct Sink: Sendable {
    var name: String
    var route: Route?
    /// What a stream on it plays through, for its session.
    var output: Route { route ?? .speakers }
  }
  private struct Stream: Sendable {
    var sink: UInt32
    var client: UInt32?
    /// The pid its own properties give, if any.
    var ownPid: Int32?
    var isPhone: Bool
    var name: String
    /// The pid its session was told of (`streamOutput`), so that its end is told to the same.
    var announcedPid: Int32?
    var announcedOutput: Route?
  }

  private var sinks: [UInt32: Sink] = [:]
  private var streams: [UInt32: Stream] = [:]
  private var clientPids: [UInt32: Int32] = [:]
  private var defaultSink: String?
  /// The output last made current for the default sink: said again only when it changes, so a
  /// sink's volume change does not undo the user's own choice of output.
  private var selected: String?

  public init() {}

  /// What an observation means.
  public mutating func apply(_ o: PulseObservation) -> [SoundServerEvent] {
    switch o {
    case .connected:
      return []
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
        if let route { out.append(.route(name == defaultSink ? .attach(route) : .add(route))) }
      }
      // Streams may have been reported before their sink (a list answered out of order), or
      // their output may have changed with it.
      if known == nil || known?.route != route { out += announceStreams() }
      return out + selectDefault()
    case .sinkRemoved(let index):
      guard let gone = sinks.removeValue(forKey: index) else { return [] }
      if gone.route?.name == selected { selected = nil }
      var out: [SoundServerEvent] = []
      if let route = gone.route { out.append(.route(.detach(route))) }
      let lost = gone.route ?? Route(name: gone.name, kind: .unknown)
      for (stream, s) in streams.sorted(by: { $0.key < $1.key }) where s.sink == index {
        if let pid = pid(of: s) { out.append(.outputLost(pid: pid, stream: stream, lost: lost)) }
      }
      return out
    case .client(let index, let properties):
      let pid = properties["application.process.id"].flatMap { Int32($0) }
      guard clientPids[index] != pid else { return [] }
      clientPids[index] = pid
      // Its streams may have arrived first: their process is known now.
      return announceStreams()
    case .clientRemoved(let index):
      clientPids[index] = nil
      return []
    case .sinkInput(let index, let sink, let client, let properties):
      let isPhone = Self.isPhoneRole(properties["media.role"])
      let name = properties["application.name"] ?? properties["media.name"] ?? "phone"
      let known = streams[index]
      var stream = Stream(
        sink: sink, client: client,
        ownPid: properties["application.process.id"].flatMap { Int32($0) }, isPhone: isPhone,
        name: name, announcedPid: known?.announcedPid, announcedOutput: known?.announcedOutput)
      var out: [SoundServerEvent] = []
      if isPhone != (known?.isPhone ?? false) {
        out.append(.phoneStream(began: isPhone, key: index, name: name, pid: pid(of: stream)))
      }
      out += announce(index, &stream)
      streams[index] = stream
      return out
    case .sinkInputRemoved(let index):
      guard let gone = streams.removeValue(forKey: index) else { return [] }
      var out: [SoundServerEvent] = []
      if gone.isPhone {
        out.append(.phoneStream(began: false, key: index, name: "", pid: pid(of: gone)))
      }
      if let pid = gone.announcedPid { out.append(.streamGone(pid: pid, stream: index)) }
      return out
    case .disconnected:
      // The devices, streams and calls it knew of are gone with it.
      var out: [SoundServerEvent] = []
      for (_, s) in sinks.sorted(by: { $0.key < $1.key }) {
        if let route = s.route { out.append(.route(.detach(route))) }
      }
      for (index, s) in streams.sorted(by: { $0.key < $1.key }) {
        if s.isPhone {
          out.append(.phoneStream(began: false, key: index, name: "", pid: pid(of: s)))
        }
        if let pid = s.announcedPid { out.append(.streamGone(pid: pid, stream: index)) }
      }
      sinks = [:]
      streams = [:]
      clientPids = [:]
      defaultSink = nil
      selected = nil
      return out
    }
  }

  /// Whether a stream's `media.role` is a call's: PulseAudio's `phone`, and PipeWire's own
  /// names for it where they reach a client untranslated (`Communication`, `Phone`).
  static func isPhoneRole(_ role: String?) -> Bool {
    guard let role = role?.lowercased() else { return false }
    return role == "phone" || role == "communication"
  }

  private func pid(of s: Stream) -> Int32? { s.ownPid ?? s.client.flatMap { clientPids[$0] } }

  /// Tells a stream's process where it plays, when that is new to it.
  private func announce(_ index: UInt32, _ s: inout Stream) -> [SoundServerEvent] {
    guard let pid = pid(of: s), let sink = sinks[s.sink] else { return [] }
    var out: [SoundServerEvent] = []
    if let old = s.announcedPid, old != pid { out.append(.streamGone(pid: old, stream: index)) }
    guard s.announcedPid != pid || s.announcedOutput != sink.output else { return out }
    s.announcedPid = pid
    s.announcedOutput = sink.output
    out.append(.streamOutput(pid: pid, stream: index, output: sink.output))
    return out
  }

  private mutating func announceStreams() -> [SoundServerEvent] {
    var out: [SoundServerEvent] = []
    for index in streams.keys.sorted() {
      guard var s = streams[index] else { continue }
      out += announce(index, &s)
      streams[index] = s
    }
    return out
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
