import Glibc
import MPRIS
import Testing

/// The D-Bus side of the object, called with dbus-send: introspection, properties, errors.
@Suite(.timeLimit(.minutes(2))) struct ProtocolTests {
  /// The MPRIS 2.2 interfaces as the specification lists them (the optional Fullscreen
  /// properties and the TrackList and Playlists interfaces are left out, as HasTrackList says).
  static let mprisInterfaces = """
    interface org.mpris.MediaPlayer2
    method Raise() -> ()
    method Quit() -> ()
    property CanQuit b read const
    property CanRaise b read const
    property HasTrackList b read const
    property Identity s read const
    property DesktopEntry s read const
    property SupportedUriSchemes as read const
    property SupportedMimeTypes as read const
    interface org.mpris.MediaPlayer2.Player
    method Next() -> ()
    method Previous() -> ()
    method Pause() -> ()
    method PlayPause() -> ()
    method Stop() -> ()
    method Play() -> ()
    method Seek(x) -> ()
    method SetPosition(ox) -> ()
    method OpenUri(s) -> ()
    signal Seeked(x)
    property PlaybackStatus s read true
    property LoopStatus s readwrite true
    property Rate d readwrite true
    property Shuffle b readwrite true
    property Metadata a{sv} read true
    property Volume d readwrite true
    property Position x read false
    property MinimumRate d read const
    property MaximumRate d read const
    property CanGoNext b read true
    property CanGoPrevious b read true
    property CanPlay b read true
    property CanPause b read true
    property CanSeek b read true
    property CanControl b read true
    """

  /// Reads introspection XML with Python's parser and lists what it declares, one line each.
  static let listInterfaces = """
    import sys, xml.etree.ElementTree as ET
    root = ET.parse(sys.argv[1]).getroot()
    assert root.tag == "node"
    for i in root.findall("interface"):
        print("interface", i.get("name"))
        for m in i.findall("method"):
            args = m.findall("arg")
            ins = "".join(a.get("type") for a in args if a.get("direction", "in") == "in")
            outs = "".join(a.get("type") for a in args if a.get("direction") == "out")
            print(f"method {m.get('name')}({ins}) -> ({outs})")
        for s in i.findall("signal"):
            print(f"signal {s.get('name')}(" + "".join(a.get("type") for a in s.findall("arg")) + ")")
        for p in i.findall("property"):
            emits = "true"
            for a in p.findall("annotation"):
                if a.get("name") == "org.freedesktop.DBus.Property.EmitsChangedSignal":
                    emits = a.get("value")
            print("property", p.get("name"), p.get("type"), p.get("access"), emits)
    for n in root.findall("node"):
        print("node", n.get("name"))
    """

  /// The Introspect reply for `path`, parsed and listed by Python.
  func introspect(_ bus: TestBus, path: String) throws -> [String] {
    let reply = runCommand(
      [
        "dbus-send", "--session", "--print-reply=literal", "--dest=org.mpris.MediaPlayer2.hark",
        path, "org.freedesktop.DBus.Introspectable.Introspect",
      ], environment: bus.environment)
    try #require(reply.status == 0, "\(reply)")
    // --print-reply=literal prints the string as it is, after three spaces of indentation.
    let xml = String(reply.stdout.drop { $0 == " " })
    let file = bus.directory + "/introspect.xml"
    let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    try #require(fd >= 0)
    _ = Array(xml.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    let listed = runCommand(
      ["python3", "-c", Self.listInterfaces, file], environment: bus.environment)
    try #require(listed.status == 0, "introspection XML does not parse: \(listed)\n\(xml)")
    return listed.text.split(separator: "\n").map(String.init)
  }

  @Test func introspectionIsValidXMLDeclaringTheMPRISInterfaces() async throws {
    try await withTestBus { bus in
      _ = try await FakePlayer(bus: bus, state: playingState)
      let lines = try introspect(bus, path: "/org/mpris/MediaPlayer2")
      let interfaces = lines.filter { $0.hasPrefix("interface ") }.count
      #expect(interfaces == 5)
      let mpris = lines.drop { $0 != "interface org.mpris.MediaPlayer2" }
      #expect(Array(mpris) == Self.mprisInterfaces.split(separator: "\n").map(String.init))
      #expect(lines.contains("method Get(ss) -> (v)"))
      #expect(lines.contains("method GetAll(s) -> (a{sv})"))
      #expect(lines.contains("method Set(ssv) -> ()"))
      #expect(lines.contains("signal PropertiesChanged(sa{sv}as)"))
      #expect(lines.contains("method Introspect() -> (s)"))
      #expect(lines.contains("method Ping() -> ()"))

      // The paths above it lead to it, as `busctl tree` and d-feet walk them.
      #expect(try introspect(bus, path: "/").last == "node org")
      #expect(try introspect(bus, path: "/org/mpris").last == "node MediaPlayer2")
    }
  }

  @Test func propertiesAnswerGetGetAllAndSetAsDBusSays() async throws {
    try await withTestBus { bus in
      _ = try await FakePlayer(bus: bus, state: playingState)
      let properties = "org.freedesktop.DBus.Properties"
      let identity = bus.call(
        "\(properties).Get", "string:org.mpris.MediaPlayer2", "string:Identity")
      #expect(identity.stdout.contains("variant       string \"hark\""), "\(identity)")
      // An empty interface name searches every interface.
      let rate = bus.call("\(properties).Get", "string:", "string:MaximumRate")
      #expect(rate.stdout.contains("double 1"), "\(rate)")

      let root = bus.call("\(properties).GetAll", "string:org.mpris.MediaPlayer2")
      for expected in [
        "string \"CanQuit\"", "string \"HasTrackList\"", "string \"SupportedUriSchemes\"",
        "string \"file\"", "string \"audio/flac\"", "string \"DesktopEntry\"",
      ] {
        #expect(root.stdout.contains(expected), "\(expected) missing from \(root)")
      }
      let none = bus.call("\(properties).GetAll", "string:org.freedesktop.DBus.Peer")
      #expect(none.status == 0 && none.stdout.contains("array ["), "\(none)")

      func error(_ output: CommandOutput) -> String {
        String(output.stderr.split(separator: ":").first ?? "")
      }
      #expect(
        error(
          bus.call(
            "\(properties).Set", "string:org.mpris.MediaPlayer2.Player",
            "string:PlaybackStatus", "variant:string:Paused"))
          == "Error org.freedesktop.DBus.Error.PropertyReadOnly")
      #expect(
        error(bus.call("\(properties).Get", "string:org.mpris.MediaPlayer2.Player", "string:Nope"))
          == "Error org.freedesktop.DBus.Error.UnknownProperty")
      #expect(
        error(bus.call("\(properties).Get", "string:org.example.Nope", "string:Identity"))
          == "Error org.freedesktop.DBus.Error.UnknownInterface")
      #expect(
        error(
          bus.call(
            "\(properties).Set", "string:org.mpris.MediaPlayer2.Player", "string:Volume",
            "variant:string:loud"))
          == "Error org.freedesktop.DBus.Error.InvalidArgs")
      #expect(
        error(
          bus.call(
            "\(properties).Set", "string:org.mpris.MediaPlayer2.Player", "string:LoopStatus",
            "variant:string:Forever"))
          == "Error org.freedesktop.DBus.Error.InvalidArgs")
      #expect(
        error(
          bus.call(
            "\(properties).Set", "string:org.mpris.MediaPlayer2.Player", "string:Rate",
            "variant:double:0"))
          == "Error org.freedesktop.DBus.Error.InvalidArgs")
      #expect(
        bus.call(
          "\(properties).Set", "string:org.mpris.MediaPlayer2.Player", "string:Rate",
          "variant:double:1"
        ).status == 0)
    }
  }

  /// A player with speeds of its own: Rate within MinimumRate…MaximumRate is forwarded; 0 (which
  /// MPRIS would have act as Pause) and speeds outside are refused, and so is any change while
  /// the owner says there is none to make (a live stream).
  @Test func rateIsForwardedWithinTheRangeTheOwnerGives() async throws {
    try await withTestBus { bus in
      var state = playingState
      state.rate = 1
      state.canChangeRate = true
      let player = try await FakePlayer(bus: bus, state: state, rates: 0.5...3)
      let properties = "org.freedesktop.DBus.Properties"
      let interface = "string:org.mpris.MediaPlayer2.Player"
      #expect(
        bus.call("\(properties).Get", interface, "string:MinimumRate").stdout.contains("double 0.5")
      )
      #expect(
        bus.call("\(properties).Get", interface, "string:MaximumRate").stdout.contains("double 3"))
      func set(_ rate: String) -> CommandOutput {
        bus.call("\(properties).Set", interface, "string:Rate", "variant:double:\(rate)")
      }
      func error(_ output: CommandOutput) -> String {
        String(output.stderr.split(separator: ":").first ?? "")
      }
      #expect(set("1.5").status == 0)
      #expect(set("3").status == 0)
      #expect(error(set("0")) == "Error org.freedesktop.DBus.Error.InvalidArgs")
      #expect(error(set("3.5")) == "Error org.freedesktop.DBus.Error.InvalidArgs")
      #expect(error(set("0.25")) == "Error org.freedesktop.DBus.Error.InvalidArgs")
      #expect(await player.requests(count: 2) == [.setRate(1.5), .setRate(3)])
      state.rate = 1.5
      player.server.update(state)
      await waitUntil("Rate reads 1.5") {
        bus.call("\(properties).Get", interface, "string:Rate").stdout.contains("double 1.5")
      }
      state.canChangeRate = false
      player.server.update(state)
      await waitUntil("the owner's word that there is no speed to change") {
        error(set("2")) == "Error org.freedesktop.DBus.Error.NotSupported"
      }
      #expect(set("1.5").status == 0, "the speed it has is no change")
      #expect(player.log.all.count == 2)
    }
  }

  @Test func wrongCallsGetTheStandardErrors() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      func error(_ output: CommandOutput) -> String {
        String(output.stderr.split(separator: ":").first ?? "")
      }
      #expect(
        error(bus.call("org.mpris.MediaPlayer2.Player.Rewind"))
          == "Error org.freedesktop.DBus.Error.UnknownMethod")
      #expect(
        error(bus.call("org.mpris.MediaPlayer2.Player.Seek", "string:5"))
          == "Error org.freedesktop.DBus.Error.InvalidArgs")
      let elsewhere = runCommand(
        [
          "dbus-send", "--session", "--print-reply", "--dest=org.mpris.MediaPlayer2.hark",
          "/org/mpris/Other", "org.mpris.MediaPlayer2.Player.Play",
        ], environment: bus.environment)
      #expect(error(elsewhere) == "Error org.freedesktop.DBus.Error.UnknownObject")
      #expect(bus.call("org.freedesktop.DBus.Peer.Ping").status == 0)
      #expect(bus.call("org.mpris.MediaPlayer2.Raise").status == 0)
      #expect(bus.call("org.mpris.MediaPlayer2.Quit").status == 0)
      // Raise and Quit do nothing (CanRaise and CanQuit are false); Play still works after.
      #expect(bus.call("org.mpris.MediaPlayer2.Player.Play").status == 0)
      #expect(await player.requests(count: 1) == [.play])
    }
  }
}
