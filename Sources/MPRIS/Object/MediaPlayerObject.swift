/// A method call as the object sees it, taken out of its message.
struct MethodCall {
  var path: String
  /// Nil when the caller left the interface out (D-Bus allows it).
  var interface: String?
  var member: String
  var signature: String
  var arguments: [BusValue]
}

/// What handling one call came to: the reply to send and the request, if any, for the owner.
struct CallOutcome: Equatable, Sendable {
  enum Reply: Equatable, Sendable {
    case values([BusValue])
    case error(name: String, text: String)
  }

  var reply: Reply
  var request: MPRISRequest?

  static let done = CallOutcome(reply: .values([]), request: nil)
  static func forward(_ request: MPRISRequest) -> CallOutcome {
    CallOutcome(reply: .values([]), request: request)
  }
  static func error(_ name: String, _ text: String) -> CallOutcome {
    CallOutcome(reply: .error(name: name, text: text), request: nil)
  }
}

/// The object at /org/mpris/MediaPlayer2: the MPRIS rules, with no I/O.
///
/// It answers a call from a state snapshot and decides whether the owner hears of it. Position
/// comes from the owner's closure, asked only when a client reads it.
struct MediaPlayerObject: Sendable {
  let configuration: MPRISConfiguration
  let position: @Sendable () -> Duration

  var interfaces: [InterfaceDescription] {
    [
      .introspectable, .peer, .properties,
      .root(hasDesktopEntry: configuration.desktopEntry != nil), .player,
    ]
  }

  /// The MPRIS interfaces, the ones with properties.
  private var propertyInterfaces: [InterfaceDescription] {
    [.root(hasDesktopEntry: configuration.desktopEntry != nil), .player]
  }

  // MARK: Dispatch

  func handle(_ call: MethodCall, state: MPRISState) -> CallOutcome {
    let interfaces = interfaces
    let interface: InterfaceDescription
    if let name = call.interface {
      guard let found = interfaces.first(where: { $0.name == name }) else {
        return .error(ErrorName.unknownInterface, "no interface '\(name)' here")
      }
      interface = found
    } else {
      // Member names are unique across our interfaces, so the first that has it is the one.
      guard let found = interfaces.first(where: { $0.method(named: call.member) != nil }) else {
        return .error(ErrorName.unknownMethod, "no method '\(call.member)' here")
      }
      interface = found
    }
    guard let method = interface.method(named: call.member) else {
      return .error(ErrorName.unknownMethod, "no method '\(call.member)' in '\(interface.name)'")
    }
    guard call.signature == method.inputSignature else {
      return .error(
        ErrorName.invalidArgs,
        "'\(call.member)' takes '\(method.inputSignature)', not '\(call.signature)'")
    }

    switch interface.name {
    case Names.peer:
      if call.member == "Ping" { return .done }
      guard let id = BusConnection.machineID() else {
        return .error(ErrorName.failed, "this machine has no D-Bus machine id")
      }
      return CallOutcome(reply: .values([.string(id)]), request: nil)
    case Names.introspectable:
      guard let xml = Introspection.document(for: call.path, interfaces: interfaces) else {
        return .error(ErrorName.unknownObject, "no object at '\(call.path)'")
      }
      return CallOutcome(reply: .values([.string(xml)]), request: nil)
    default:
      break
    }
    guard call.path == Names.objectPath else {
      return .error(ErrorName.unknownObject, "no object at '\(call.path)'")
    }
    switch interface.name {
    case Names.properties:
      return propertiesMethod(call.member, call.arguments, state: state)
    case Names.player:
      return playerMethod(call.member, call.arguments, state: state)
    default:
      // Raise and Quit: CanRaise and CanQuit are false, and MPRIS says calls then do nothing.
      return .done
    }
  }

  // MARK: org.mpris.MediaPlayer2.Player

  private func playerMethod(_ member: String, _ arguments: [BusValue], state: MPRISState)
    -> CallOutcome
  {
    // G19: a disabled command does nothing and is not forwarded. MPRIS asks for an error only
    // where noted; elsewhere it says the call "should have no effect".
    func ifEnabled(_ flag: Bool, _ request: MPRISRequest) -> CallOutcome {
      state.canControl && flag ? .forward(request) : .done
    }
    switch member {
    case "Play":
      return ifEnabled(state.canPlay, .play)
    case "Pause":
      return ifEnabled(state.canPause, .pause)
    case "PlayPause":
      // PlayPause is Pause while playing and Play otherwise; it is enabled when that is.
      // MPRIS wants an error when it cannot act.
      let resolved = state.playbackStatus == .playing ? state.canPause : state.canPlay
      guard state.canControl && resolved else {
        let which = state.playbackStatus == .playing ? "CanPause" : "CanPlay"
        return .error(ErrorName.notSupported, "PlayPause is disabled (\(which) is false)")
      }
      return .forward(.playPause)
    case "Stop":
      guard state.canControl else {
        return .error(ErrorName.notSupported, "Stop is disabled (CanControl is false)")
      }
      return .forward(.stop)
    case "Next":
      return ifEnabled(state.canGoNext, .next)
    case "Previous":
      return ifEnabled(state.canGoPrevious, .previous)
    case "Seek":
      guard case .int64(let offset) = arguments.first else { return invalidArguments(member) }
      return ifEnabled(state.canSeek, .seek(by: .microseconds(offset)))
    case "SetPosition":
      guard arguments.count == 2, case .objectPath(let trackPath) = arguments[0],
        case .int64(let microseconds) = arguments[1]
      else { return invalidArguments(member) }
      // MPRIS: a stale track id, a negative position or one past the end is ignored.
      guard let track = state.track, trackPath == self.trackPath(for: track.id),
        microseconds >= 0, microseconds <= track.length?.mprisMicroseconds ?? .max
      else { return .done }
      return ifEnabled(
        state.canSeek, .setPosition(trackID: track.id, to: .microseconds(microseconds)))
    case "OpenUri":
      guard case .string(let uri) = arguments.first else { return invalidArguments(member) }
      guard state.canControl else {
        return .error(ErrorName.notSupported, "OpenUri is disabled (CanControl is false)")
      }
      let scheme = uri.prefix { $0 != ":" }.lowercased()
      guard uri.contains(":"),
        configuration.supportedURISchemes.contains(where: { $0.lowercased() == scheme })
      else {
        let schemes = configuration.supportedURISchemes.map { "'\($0):'" }.joined(separator: ", ")
        return .error(
          ErrorName.notSupported, "cannot open '\(uri)': only \(schemes) URIs are supported")
      }
      return .forward(.openURI(uri))
    default:
      return .error(ErrorName.unknownMethod, "no method '\(member)' in '\(Names.player)'")
    }
  }

  private func invalidArguments(_ member: String) -> CallOutcome {
    .error(ErrorName.invalidArgs, "wrong arguments for '\(member)'")
  }

  // MARK: org.freedesktop.DBus.Properties

  private func propertiesMethod(_ member: String, _ arguments: [BusValue], state: MPRISState)
    -> CallOutcome
  {
    guard case .string(let interfaceName) = arguments.first else {
      return invalidArguments(member)
    }
    switch member {
    case "GetAll":
      if let interface = propertyInterfaces.first(where: { $0.name == interfaceName }) {
        let entries = interface.properties.compactMap { property in
          value(of: property.name, in: interface.name, state: state).map {
            BusValue.DictionaryEntry(key: property.name, value: $0)
          }
        }
        return CallOutcome(reply: .values([.dictionary(entries)]), request: nil)
      }
      guard interfaces.contains(where: { $0.name == interfaceName }) else {
        return .error(ErrorName.unknownInterface, "no interface '\(interfaceName)' here")
      }
      return CallOutcome(reply: .values([.dictionary([])]), request: nil)
    case "Get", "Set":
      guard arguments.count >= 2, case .string(let name) = arguments[1] else {
        return invalidArguments(member)
      }
      let interface: String
      let property: PropertyDescription
      switch lookUp(property: name, interface: interfaceName) {
      case .found(let i, let p): (interface, property) = (i, p)
      case .missing(let outcome): return outcome
      }
      if member == "Get" {
        guard let value = value(of: property.name, in: interface, state: state) else {
          return .error(ErrorName.unknownProperty, "no property '\(name)' here")
        }
        return CallOutcome(reply: .values([.variant(value)]), request: nil)
      }
      guard property.writable else {
        return .error(ErrorName.propertyReadOnly, "'\(name)' is read-only")
      }
      guard arguments.count == 3 else { return invalidArguments(member) }
      return set(property.name, to: arguments[2].unwrapped, state: state)
    default:
      return .error(ErrorName.unknownMethod, "no method '\(member)' in '\(Names.properties)'")
    }
  }

  private enum LookUp {
    case found(interface: String, property: PropertyDescription)
    case missing(CallOutcome)
  }

  /// The interface and property a Get or Set names; an empty interface name searches all.
  private func lookUp(property name: String, interface interfaceName: String) -> LookUp {
    let candidates: [InterfaceDescription]
    if interfaceName.isEmpty {
      candidates = propertyInterfaces
    } else if let interface = interfaces.first(where: { $0.name == interfaceName }) {
      candidates = [interface]
    } else {
      return .missing(.error(ErrorName.unknownInterface, "no interface '\(interfaceName)' here"))
    }
    for interface in candidates {
      if let property = interface.property(named: name) {
        return .found(interface: interface.name, property: property)
      }
    }
    return .missing(.error(ErrorName.unknownProperty, "no property '\(name)' here"))
  }

  /// A client's write; the owner decides, and reports the outcome in its next state.
  private func set(_ name: String, to value: BusValue, state: MPRISState) -> CallOutcome {
    guard state.canControl else {
      return .error(ErrorName.notSupported, "'\(name)' cannot be set (CanControl is false)")
    }
    switch (name, value) {
    case ("LoopStatus", .string(let raw)):
      guard let loop = MPRISLoopStatus(rawValue: raw) else {
        return .error(ErrorName.invalidArgs, "LoopStatus is 'None', 'Track' or 'Playlist'")
      }
      return .forward(.setLoopStatus(loop))
    case ("Shuffle", .boolean(let shuffle)):
      return .forward(.setShuffle(shuffle))
    case ("Volume", .double(let volume)):
      guard !volume.isNaN else { return .error(ErrorName.invalidArgs, "Volume is a number") }
      // G3: Volume is the output's system volume; with no volume control there is nothing to
      // set, and the write is ignored. MPRIS: negative values mean 0.
      guard state.volume != nil else { return .done }
      return .forward(.setVolume(max(0, volume)))
    case ("Rate", .double(let rate)):
      // MPRIS asks that a rate of 0 act as Pause; G19 forbids mapping one command onto
      // another, so it is refused, as any rate outside MinimumRate…MaximumRate is.
      let low = configuration.minimumRate
      let high = configuration.maximumRate
      guard rate.isFinite, rate > 0, rate >= low, rate <= high else {
        return .error(
          ErrorName.invalidArgs,
          low == high
            ? "Rate is fixed at \(low) (MinimumRate = MaximumRate)"
            : "Rate is between \(low) and \(high) (0 is not a speed: Pause pauses)")
      }
      if rate == state.rate { return .done }
      guard state.canChangeRate else {
        return .error(
          ErrorName.notSupported,
          "the speed cannot be changed now (nothing loaded, or a live stream)")
      }
      return .forward(.setRate(rate))
    default:
      return .error(ErrorName.invalidArgs, "'\(name)' cannot be set to a '\(value.signature)'")
    }
  }

  // MARK: Property values

  /// The value of a property; Position asks the owner. Nil for an unknown property.
  func value(of property: String, in interface: String, state: MPRISState) -> BusValue? {
    switch (interface, property) {
    case (Names.root, "CanQuit"), (Names.root, "CanRaise"), (Names.root, "HasTrackList"):
      return .boolean(false)
    case (Names.root, "Identity"):
      return .string(configuration.identity)
    case (Names.root, "DesktopEntry"):
      return configuration.desktopEntry.map(BusValue.string)
    case (Names.root, "SupportedUriSchemes"):
      return .stringArray(configuration.supportedURISchemes)
    case (Names.root, "SupportedMimeTypes"):
      return .stringArray(configuration.supportedMIMETypes)
    case (Names.player, "PlaybackStatus"):
      return .string(state.playbackStatus.rawValue)
    case (Names.player, "LoopStatus"):
      return .string(state.loopStatus.rawValue)
    case (Names.player, "Rate"):
      return .double(state.rate)
    case (Names.player, "MinimumRate"):
      return .double(configuration.minimumRate)
    case (Names.player, "MaximumRate"):
      return .double(configuration.maximumRate)
    case (Names.player, "Shuffle"):
      return .boolean(state.shuffle)
    case (Names.player, "Metadata"):
      return .dictionary(metadata(state.track))
    case (Names.player, "Volume"):
      return .double(state.volume ?? 1)
    case (Names.player, "Position"):
      return .int64(max(0, position().mprisMicroseconds))
    case (Names.player, "CanGoNext"):
      return .boolean(state.canGoNext)
    case (Names.player, "CanGoPrevious"):
      return .boolean(state.canGoPrevious)
    case (Names.player, "CanPlay"):
      return .boolean(state.canPlay)
    case (Names.player, "CanPause"):
      return .boolean(state.canPause)
    case (Names.player, "CanSeek"):
      return .boolean(state.canSeek)
    case (Names.player, "CanControl"):
      return .boolean(state.canControl)
    default:
      return nil
    }
  }

  /// The Player properties whose values differ between two states, in introspection order.
  /// Never Position: MPRIS has clients follow it through Seeked.
  static func changedProperties(from old: MPRISState, to new: MPRISState) -> [String] {
    var changed: [String] = []
    if old.playbackStatus != new.playbackStatus { changed.append("PlaybackStatus") }
    if old.loopStatus != new.loopStatus { changed.append("LoopStatus") }
    if old.rate != new.rate { changed.append("Rate") }
    if old.shuffle != new.shuffle { changed.append("Shuffle") }
    if old.track != new.track { changed.append("Metadata") }
    if (old.volume ?? 1) != (new.volume ?? 1) { changed.append("Volume") }
    if old.canGoNext != new.canGoNext { changed.append("CanGoNext") }
    if old.canGoPrevious != new.canGoPrevious { changed.append("CanGoPrevious") }
    if old.canPlay != new.canPlay { changed.append("CanPlay") }
    if old.canPause != new.canPause { changed.append("CanPause") }
    if old.canSeek != new.canSeek { changed.append("CanSeek") }
    if old.canControl != new.canControl { changed.append("CanControl") }
    return changed
  }

  private func metadata(_ track: MPRISTrack?) -> [BusValue.DictionaryEntry] {
    guard let track else { return [.init(key: "mpris:trackid", value: .objectPath(Names.noTrack))] }
    var entries: [BusValue.DictionaryEntry] = [
      .init(key: "mpris:trackid", value: .objectPath(trackPath(for: track.id)))
    ]
    if let length = track.length {
      entries.append(.init(key: "mpris:length", value: .int64(max(0, length.mprisMicroseconds))))
    }
    if let title = track.title { entries.append(.init(key: "xesam:title", value: .string(title))) }
    if !track.artists.isEmpty {
      entries.append(.init(key: "xesam:artist", value: .stringArray(track.artists)))
    }
    if let album = track.album { entries.append(.init(key: "xesam:album", value: .string(album))) }
    if let url = track.url { entries.append(.init(key: "xesam:url", value: .string(url))) }
    if let number = track.trackNumber, let number32 = Int32(exactly: number) {
      entries.append(.init(key: "xesam:trackNumber", value: .int32(number32)))
    }
    // The owner's own keys ("hark:pauseReason"), in its namespace as MPRIS asks.
    for (key, value) in track.extra.sorted(by: { $0.key < $1.key }) {
      entries.append(.init(key: key, value: .string(value)))
    }
    return entries
  }

  /// The trackid object path for the owner's track id: `/<player>/track/<id>`, each part
  /// escaped so that any string makes a valid, distinct path. MPRIS keeps /org/mpris for itself.
  func trackPath(for id: String) -> String {
    "/" + Self.pathElement(configuration.playerName) + "/track/" + Self.pathElement(id)
  }

  /// An object path element (letters, digits, `_`) for any string: other bytes become `_xx`
  /// in hexadecimal, and the empty string becomes `_`. Distinct strings stay distinct.
  static func pathElement(_ s: String) -> String {
    guard !s.isEmpty else { return "_" }
    var out = ""
    for byte in s.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        out += "_" + hexByte(byte)
      }
    }
    return out
  }
}
