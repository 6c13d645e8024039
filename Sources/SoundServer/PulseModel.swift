import SessionCore

/// Something the sound server (PulseAudio, or PipeWire's PulseAudio service) reported.
public enum PulseObservation: Sendable, Hashable {
  /// The connection is up (first, or again after a loss); `server` names the server and its
  /// version ("pulseaudio 16.1", "PulseAudio (on PipeWire 0.3.65) 15.0.0").
  case connected(server: String)
  /// The server's default sink, by name.
  case defaultSink(String)
  /// A sink exists (new, or changed); `card` is the index of the card (the device) it is a
  /// profile of, nil for a sink of no card (a null sink, a loopback).
  case sink(
    index: UInt32, name: String, description: String, properties: [String: String],
    card: UInt32? = nil)
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
  /// The sound server's role policy holds a process's stream back (WirePlumber's role
  /// loopbacks: the stream's link is taken away) for another stream `by` of a higher role
  /// (an Alert, an Assistant), in process `byPid`, named `name`: an interruption (G13, G14).
  /// `role`: the holding stream's media.role, which says what kind of interruption it is.
  case streamHeld(
    pid: Int32, stream: UInt32, by: UInt32, byPid: Int32?, name: String, role: String? = nil)
  /// The stream `by` holds nothing back any more: it ended, or a stream above it took over.
  case holdEnded(by: UInt32)
  /// The role policy lowers (ducks) a process's stream under a stream above it (Navigation),
  /// or lifts it again.
  case streamDucked(pid: Int32, stream: UInt32, ducked: Bool)
  /// A Bluetooth headset (`card`) left its music profile for its call profile while a call
  /// plays (WirePlumber's bluetooth.autoswitch-to-headset-profile): its music sink, `output`,
  /// went, and a sink of the same card comes for the call. What played on it waits.
  case headsetSwitching(card: String, output: Route)
  /// The headset's music profile is back, its sink the default again: what waited goes on.
  case headsetBack(card: String, output: Route)
  /// The headset went while it switched (no sink of it came back): what waited lost its
  /// output (G5).
  case headsetGone(card: String, output: Route)
  /// A process's stream was on the headset's music sink when it went for the switch: the
  /// sound server moved it elsewhere by itself, where it must not be heard (G5), but its
  /// process has not lost its output for good. Said before `headsetSwitching`.
  case outputHeld(pid: Int32, stream: UInt32, output: Route)
}

/// The sound server's sinks and streams as hark sees them, turned into `SoundServerEvent`s.
/// Pure: fed `PulseObservation`s, in order.
///
/// Sinks for devices that come and go (Bluetooth, USB, headphones, HDMI) are outputs of their
/// own; built-in and virtual sinks (speakers, null sinks) are the machine's own output, the
/// route table's speakers. The default sink is the current output: a device is attached (made
/// current) when it appears as the default and added (listed only) when it appears beside it,
/// so a headset that connects without becoming the default takes nothing over. A stream's
/// process is the one its properties name, or, where they name none (PipeWire's ALSA plugin
/// puts the pid on the client only), its client's. A stream whose sink goes away lost its
/// output, whatever the default; a stream with the phone role is a call.
///
/// A stream's output is the device it really reaches. Under WirePlumber's role policy
/// (media-role-nodes) a stream plays into a role loopback, a virtual sink whose other half is
/// a stream of its own (the same `node.link-group`) on the real sink: the output is followed
/// through it, and the real sink going is a loss for the streams in the loopback too. The role
/// policy itself is read from the loopbacks' properties (`policy.role-based.*`) and mirrored as
/// WirePlumber applies it: the stream of the highest role priority (the newest of equals) sets
/// the action on every other role stream, that of its loopback's `action.same-priority` or
/// `action.lower-priority`: `cork` holds them back (`streamHeld`), `duck` lowers them
/// (`streamDucked`), `mix` leaves them be.
///
/// A Bluetooth headset's music sink (A2DP) that goes while a call plays is taken for the
/// headset switching to its call profile (`headsetSwitching`), not for its going away: it
/// comes back as a sink of the same card after the call. It is taken for gone when no sink of
/// it came for the call by the call's end, or when its call sink goes while the call lasts.
public struct PulseModel: Sendable {
  private struct Sink: Sendable {
    var name: String
    var route: Route?
    /// `node.link-group`: on a loopback's virtual sink, the group of its other half.
    var linkGroup: String?
    /// A target of WirePlumber's role policy (a role loopback), and how it acts.
    var role: RoleTarget?
    /// The Bluetooth card it is a profile of, and whether that profile is a call profile.
    var card: String?
    var callProfile = false
    /// What a stream on it plays through, for its session (when it is a real sink).
    var output: Route { route ?? .speakers }
  }
  private struct RoleTarget: Sendable, Equatable {
    var priority: Int
    var samePriority: String
    var lowerPriority: String
    /// The roles whose streams WirePlumber sends here (`device.intended-roles`).
    var roles: [String]
  }
  private struct Stream: Sendable {
    var sink: UInt32
    var client: UInt32?
    /// The pid its own properties give, if any.
    var ownPid: Int32?
    var isPhone: Bool
    var name: String
    /// Its `media.role` as WirePlumber sees it (PipeWire's names), if any.
    var role: String?
    /// `node.link-group`: on a loopback's stream half, the group of its sink half.
    var linkGroup: String?
    /// The pid its session was told of (`streamOutput`), so that its end is told to the same.
    var announcedPid: Int32?
    var announcedOutput: Route?
    /// What the role policy was last said to do to it: held back by a stream, ducked.
    var announcedHeldBy: UInt32?
    /// The process it was said to be ducked for (`streamDucked`), while it is.
    var announcedDucked: Int32?
  }
  /// A headset between its music and call profiles.
  private struct Switch: Sendable {
    var output: Route
    /// The sink of the card there is now: its call sink during the call, its music sink once
    /// back (waiting to be the default again), nil between them.
    var sink: UInt32?
    /// The streams that played on its music sink (role loopbacks' stream halves among them):
    /// what plays on them, or into them, is heard on the headset again once they are back on
    /// it (or gone).
    var streams: Set<UInt32> = []
  }

  private var sinks: [UInt32: Sink] = [:]
  private var streams: [UInt32: Stream] = [:]
  private var clientPids: [UInt32: Int32] = [:]
  private var defaultSink: String?
  /// The output last made current for the default sink: said again only when it changes, so a
  /// sink's volume change does not undo the user's own choice of output.
  private var selected: String?
  /// The stream whose role holds the others back, once said (`streamHeld`).
  private var holder: UInt32?
  private var switching: [String: Switch] = [:]

  public init() {}

  /// Whether a headset's switch back from its call profile waits for nothing but the sound
  /// server to say that the headset's music sink is the default: it is back, and every stream
  /// that played there is back on it, gone, or unlinked (it plays where the default is when it
  /// plays again). Its owner asks the server for the default until it is said
  /// (`PulseWatcher.askForTheDefault`): PipeWire's pulse service at times reports no change of
  /// the default at all (Debian's 0.3.65 in a clean-clone run: the test's `pactl
  /// get-default-sink` named the headset's music sink, and no change of the server came in the
  /// 6 s after; hark, paused for the call, never played again).
  public var awaitsDefault: Bool {
    switching.values.contains { s in
      guard let index = s.sink, let sink = sinks[index], !sink.callProfile else { return false }
      return sink.name != defaultSink && s.streams.allSatisfy { isBack(streams[$0], on: index) }
    }
  }

  /// What an observation means.
  public mutating func apply(_ o: PulseObservation) -> [SoundServerEvent] {
    var out = observe(o)
    out += applyRolePolicy()
    return out
  }

  private mutating func observe(_ o: PulseObservation) -> [SoundServerEvent] {
    switch o {
    case .connected:
      return []
    case .defaultSink(let name):
      defaultSink = name
      return selectDefault() + finishSwitches()
    case .sink(let index, let name, let description, let properties, let card):
      let route = Self.route(name: name, description: description, properties: properties)
      let known = sinks[index]
      let sink = Sink(
        name: name, route: route, linkGroup: properties["node.link-group"],
        role: Self.roleTarget(properties),
        card: route?.kind == .bluetooth ? Self.card(card, properties) : nil,
        callProfile: Self.isCallProfile(properties))
      sinks[index] = sink
      var out: [SoundServerEvent] = []
      if known?.route != route {
        if let old = known?.route { out.append(.route(.detach(old))) }
        if let route { out.append(.route(name == defaultSink ? .attach(route) : .add(route))) }
      }
      if known == nil, let card = sink.card, switching[card] != nil {
        switching[card]?.sink = index
      }
      // Streams may have been reported before their sink (a list answered out of order), or
      // their output may have changed with it.
      if known == nil || known?.route != route || known?.linkGroup != sink.linkGroup {
        out += announceStreams()
      }
      return out + selectDefault() + finishSwitches()
    case .sinkRemoved(let index):
      guard let gone = sinks[index] else { return [] }
      // Who played through it, directly or through a loopback on it, before it goes.
      let through = streams.keys.sorted().filter { sinkPath(of: $0).contains(index) }
      sinks[index] = nil
      if gone.route?.name == selected { selected = nil }
      if let card = gone.card, let route = gone.route {
        if let switched = switchAway(card: card, route: route, sink: gone, streams: through) {
          return switched
        }
      }
      var out: [SoundServerEvent] = []
      if let route = gone.route { out.append(.route(.detach(route))) }
      let lost = gone.route ?? Route(name: gone.name, kind: .unknown)
      for stream in through {
        if let s = streams[stream], let pid = pid(of: s) {
          out.append(.outputLost(pid: pid, stream: stream, lost: lost))
        }
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
        name: name, role: properties["media.role"].map(Self.pipewireRole),
        linkGroup: properties["node.link-group"],
        announcedPid: known?.announcedPid, announcedOutput: known?.announcedOutput,
        announcedHeldBy: known?.announcedHeldBy, announcedDucked: known?.announcedDucked)
      var out: [SoundServerEvent] = []
      if isPhone != (known?.isPhone ?? false) {
        out.append(.phoneStream(began: isPhone, key: index, name: name, pid: pid(of: stream)))
      }
      out += announce(index, &stream)
      streams[index] = stream
      // A loopback's stream half moved: what plays into the loopback moved with it.
      if stream.linkGroup != nil && known?.sink != sink { out += announceStreams() }
      if known?.sink != sink { out += finishSwitches() }
      if known?.isPhone == true && !isPhone { out += callEnded() }
      return out
    case .sinkInputRemoved(let index):
      guard let gone = streams.removeValue(forKey: index) else { return [] }
      var out: [SoundServerEvent] = []
      if gone.isPhone {
        out.append(.phoneStream(began: false, key: index, name: "", pid: pid(of: gone)))
      }
      if let pid = gone.announcedDucked {
        out.append(.streamDucked(pid: pid, stream: index, ducked: false))
      }
      if let pid = gone.announcedPid { out.append(.streamGone(pid: pid, stream: index)) }
      if gone.linkGroup != nil { out += announceStreams() }
      if gone.isPhone { out += callEnded() }
      return out
    case .disconnected:
      // The devices, streams and calls it knew of are gone with it.
      var out: [SoundServerEvent] = []
      for (_, s) in sinks.sorted(by: { $0.key < $1.key }) {
        if let route = s.route { out.append(.route(.detach(route))) }
      }
      for (card, s) in switching.sorted(by: { $0.key < $1.key }) {
        out.append(.headsetGone(card: card, output: s.output))
      }
      if let holder { out.append(.holdEnded(by: holder)) }
      for (index, s) in streams.sorted(by: { $0.key < $1.key }) {
        if s.isPhone {
          out.append(.phoneStream(began: false, key: index, name: "", pid: pid(of: s)))
        }
        if let pid = s.announcedDucked {
          out.append(.streamDucked(pid: pid, stream: index, ducked: false))
        }
        if let pid = s.announcedPid { out.append(.streamGone(pid: pid, stream: index)) }
      }
      sinks = [:]
      streams = [:]
      clientPids = [:]
      defaultSink = nil
      selected = nil
      holder = nil
      switching = [:]
      return out
    }
  }

  /// Whether a stream's `media.role` is a call's: PulseAudio's `phone`, and PipeWire's own
  /// names for it where they reach a client untranslated (`Communication`, `Phone`), in any
  /// case (some programs send them in lower case; hark matches them all).
  static func isPhoneRole(_ role: String?) -> Bool {
    guard let role = role?.lowercased() else { return false }
    return role == "phone" || role == "communication"
  }

  /// A role as WirePlumber sees it: PipeWire's pulse service turns PulseAudio's names into
  /// PipeWire's (and back when it reports them, which is what hark reads); others stay as
  /// they are. WirePlumber matches roles exactly: a program's `alert` in lower case reaches no
  /// role loopback, and so holds nothing back here either.
  static func pipewireRole(_ role: String) -> String {
    switch role {
    case "music": "Music"
    case "video", "animation": "Movie"
    case "game": "Game"
    case "event": "Notification"
    case "phone": "Communication"
    case "production": "Production"
    case "a11y": "Accessibility"
    case "test": "Test"
    default: role
    }
  }

  private func pid(of s: Stream) -> Int32? { s.ownPid ?? s.client.flatMap { clientPids[$0] } }

  /// The sinks a stream's sound goes through, from the one it is on to the real one: a role
  /// loopback's virtual sink leads, through the loopback's stream half, to the sink that is on.
  private func sinkPath(of stream: UInt32) -> [UInt32] {
    streams[stream].map { sinkPath(from: $0.sink) } ?? []
  }

  private func sinkPath(from first: UInt32) -> [UInt32] {
    var sink = first
    var path: [UInt32] = []
    while let s = sinks[sink], !path.contains(sink), path.count < 8 {
      path.append(sink)
      guard let group = s.linkGroup,
        let half = streams.first(where: { $0.value.linkGroup == group && $0.value.sink != sink })
      else { break }
      sink = half.value.sink
    }
    return path
  }

  /// Tells a stream's process where it plays (the last sink of its path), when that is new to
  /// it.
  private func announce(_ index: UInt32, _ s: inout Stream) -> [SoundServerEvent] {
    guard let pid = pid(of: s),
      let output = sinkPath(from: s.sink).last.flatMap({ sinks[$0]?.output })
    else { return [] }
    var out: [SoundServerEvent] = []
    if let old = s.announcedPid, old != pid {
      // Another process's now: the old one hears of its end, and what the role policy does
      // to it is said again to the new one.
      if let ducked = s.announcedDucked {
        out.append(.streamDucked(pid: ducked, stream: index, ducked: false))
      }
      s.announcedDucked = nil
      s.announcedHeldBy = nil
      out.append(.streamGone(pid: old, stream: index))
    }
    guard s.announcedPid != pid || s.announcedOutput != output else { return out }
    s.announcedPid = pid
    s.announcedOutput = output
    out.append(.streamOutput(pid: pid, stream: index, output: output))
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

  // MARK: The role policy

  /// The role target a stream is in: the role loopback it is on; none for one on a real sink
  /// (linked past the policy, to a target of its own: WirePlumber ducks and corks the role
  /// loopbacks' links only, so nothing is done to it and its owner ducks it itself); else, on
  /// no sink at all, the one its role leads to (a stream the policy holds back is unlinked
  /// while it does, and one just made is not linked yet).
  private func roleTarget(of s: Stream) -> RoleTarget? {
    if let sink = sinks[s.sink] { return sink.role }
    guard let role = s.role else { return nil }
    return sinks.sorted { $0.key < $1.key }.lazy.compactMap(\.value.role).first {
      $0.roles.contains(role)
    }
  }

  /// What WirePlumber's role policy does to each stream now, said where it changed.
  private mutating func applyRolePolicy() -> [SoundServerEvent] {
    let inRoles = streams.compactMap { index, s in roleTarget(of: s).map { (index, $0) } }
    let top = inRoles.max { ($0.1.priority, $0.0) < ($1.1.priority, $1.0) }
    var held: [UInt32: UInt32] = [:]
    var ducked: Set<UInt32> = []
    if let (first, target) = top {
      for (index, t) in inRoles where index != first {
        let action = t.priority == target.priority ? target.samePriority : target.lowerPriority
        if action == "cork" { held[index] = first }
        if action == "duck" { ducked.insert(index) }
      }
    }
    // The stream that holds back what is below it, as long as it is on top, whether or not
    // anything is below it now (a stream opened meanwhile is held back by it too). A call
    // holds the others back as a call already (`phoneStream`).
    let newHolder = top.flatMap { first, target in
      target.lowerPriority != "cork" && target.samePriority != "cork"
        || streams[first]?.isPhone == true ? nil : first
    }
    var out: [SoundServerEvent] = []
    if let old = holder, old != newHolder { out.append(.holdEnded(by: old)) }
    holder = newHolder
    let byPid = newHolder.flatMap { streams[$0] }.flatMap(pid(of:))
    let byName = newHolder.flatMap { streams[$0]?.name } ?? ""
    let byRole = newHolder.flatMap { streams[$0]?.role }
    for index in streams.keys.sorted() {
      guard var s = streams[index] else { continue }
      let heldBy = newHolder == nil ? nil : held[index]
      if let pid = pid(of: s) {
        if let by = heldBy, s.announcedHeldBy != by {
          out.append(
            .streamHeld(
              pid: pid, stream: index, by: by, byPid: byPid, name: byName, role: byRole))
        }
        s.announcedHeldBy = heldBy
      }
      let duckedFor = ducked.contains(index) ? pid(of: s) : nil
      if duckedFor != s.announcedDucked {
        if let old = s.announcedDucked {
          out.append(.streamDucked(pid: old, stream: index, ducked: false))
        }
        if let new = duckedFor { out.append(.streamDucked(pid: new, stream: index, ducked: true)) }
        s.announcedDucked = duckedFor
      }
      streams[index] = s
    }
    return out
  }

  // MARK: A headset's profile switch

  private var callInProgress: Bool { streams.values.contains { $0.isPhone } }

  /// A Bluetooth sink of `card` went. While a call plays, its music sink going is the switch
  /// to the call profile, and its call sink going after the call the switch back: the events
  /// for either, or nil when it is a loss like any other.
  private mutating func switchAway(
    card: String, route: Route, sink: Sink, streams through: [UInt32]
  ) -> [SoundServerEvent]? {
    let held = through.compactMap { index in
      streams[index].flatMap(pid(of:)).map {
        SoundServerEvent.outputHeld(pid: $0, stream: index, output: route)
      }
    }
    if var s = switching[card] {
      // Its call sink going during the call, or its music sink going again: it went.
      guard sink.callProfile, !callInProgress else {
        switching[card] = nil
        var out: [SoundServerEvent] = [
          .route(.detach(s.output)), .headsetGone(card: card, output: s.output),
        ]
        for index in through {
          if let pid = streams[index].flatMap(pid(of:)) {
            out.append(.outputLost(pid: pid, stream: index, lost: s.output))
          }
        }
        return out
      }
      // The call is over: back to the music profile, whose sink comes next.
      s.sink = nil
      switching[card] = s
      return held
    }
    guard !sink.callProfile, callInProgress else { return nil }
    switching[card] = Switch(output: route, sink: nil, streams: Set(through))
    // The streams first: one still playing must be silenced before its session is held.
    return held + [.headsetSwitching(card: card, output: route)]
  }

  /// The switches whose music sink is back, with the streams that played there on it again,
  /// and the default again: done. (What resumes then is heard on the headset: a stream that
  /// starts goes to the default sink or into a loopback, one that paused is back on it.) The
  /// default need not be said when every one of those streams is on the sink again, none gone
  /// nor unlinked: their sound is heard there whatever the default. PipeWire's pulse service at
  /// times says nothing of the default coming back (no change of the server reported in the
  /// whole call, on Debian's 0.3.65 and on 1.6.8 with WirePlumber 0.5.15, three clean-clone
  /// runs in about twenty-five), while hark's stream was back on the headset: hark waited for
  /// ever.
  private mutating func finishSwitches() -> [SoundServerEvent] {
    var out: [SoundServerEvent] = []
    for (card, s) in switching.sorted(by: { $0.key < $1.key }) {
      guard let index = s.sink, let sink = sinks[index], !sink.callProfile,
        s.streams.allSatisfy({ isBack(streams[$0], on: index) })
      else { continue }
      let allOnIt =
        !s.streams.isEmpty
        && s.streams.allSatisfy { streams[$0].map { sinkPath(from: $0.sink).last } == index }
      guard sink.name == defaultSink || allOnIt else { continue }
      switching[card] = nil
      out.append(.headsetBack(card: card, output: s.output))
    }
    return out
  }

  /// Whether a stream that played on a headset's music sink is where it will be heard on it
  /// again: gone, or back on it (`sink`: the end of its path); or, for a stream of a program (not a loopback's),
  /// on no sink at all: the sound server leaves a paused stream unlinked, and links it to the
  /// default sink when it plays again (ALSA's pulse device makes a new one then anyway).
  private func isBack(_ stream: Stream?, on sink: UInt32) -> Bool {
    guard let stream else { return true }
    return sinkPath(from: stream.sink).last == sink
      || (stream.linkGroup == nil && sinks[stream.sink] == nil)
  }

  /// The last call ended: a headset that switched for it with no sink come since went away.
  private mutating func callEnded() -> [SoundServerEvent] {
    guard !callInProgress else { return [] }
    var out: [SoundServerEvent] = []
    for (card, s) in switching.sorted(by: { $0.key < $1.key }) where s.sink == nil {
      switching[card] = nil
      out += [.route(.detach(s.output)), .headsetGone(card: card, output: s.output)]
    }
    return out
  }

  // MARK: Reading properties

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

  /// A role loopback's policy, from the properties WirePlumber gives its virtual sink.
  private static func roleTarget(_ properties: [String: String]) -> RoleTarget? {
    guard properties["policy.role-based.target"] == "true" else { return nil }
    // `device.intended-roles` is a SPA-JSON array; PipeWire's pulse service spells the key
    // with an underscore.
    let list = properties["device.intended_roles"] ?? properties["device.intended-roles"] ?? ""
    let roles = list.split(whereSeparator: { " ,[]\"\t".contains($0) }).map(String.init)
    return RoleTarget(
      priority: properties["policy.role-based.priority"].flatMap { Int($0) } ?? 0,
      samePriority: properties["policy.role-based.action.same-priority"] ?? "mix",
      lowerPriority: properties["policy.role-based.action.lower-priority"] ?? "mix",
      roles: roles)
  }

  /// The Bluetooth card a sink is a profile of: the server's card, else the device's address
  /// (PipeWire's `api.bluez5.address`, PulseAudio's `device.string`), else its device name.
  static func card(_ card: UInt32?, _ properties: [String: String]) -> String? {
    if let card { return "card \(card)" }
    return properties["api.bluez5.address"] ?? properties["device.string"]
      ?? properties["device.name"]
  }

  /// Whether a Bluetooth sink is its headset's call profile (HSP/HFP) rather than its music
  /// one (A2DP): PipeWire's `headset-head-unit` or `audio-gateway`, PulseAudio's
  /// `headset_head_unit` or `handsfree_head_unit`.
  static func isCallProfile(_ properties: [String: String]) -> Bool {
    let profile =
      (properties["device.profile.name"] ?? properties["api.bluez5.profile"]
      ?? properties["bluetooth.protocol"] ?? "").lowercased()
    return profile.contains("head-unit") || profile.contains("head_unit")
      || profile.contains("gateway") || profile.hasPrefix("hsp") || profile.hasPrefix("hfp")
  }
}
