import SessionCore
import Testing

@testable import SoundServer

/// WirePlumber 0.5's role policy (its media-role-nodes example) as hark reads it through
/// PipeWire's pulse service: each role is a loopback, a virtual sink (where the role's streams
/// play) whose other half is a stream of its own on the real sink, both with the same
/// `node.link-group`. The properties are those `pactl -f json list sinks` showed for PipeWire
/// 1.6.8 with WirePlumber 0.5.15.
@Suite(.timeLimit(.minutes(1))) struct RolePolicyTests {
  static let headset = Route(name: "Bluetooth headset", kind: .bluetooth)
  static let hark: Int32 = 4242
  static let other: Int32 = 77

  static func loopback(
    _ role: String, priority: Int, lower: String, roles: String
  ) -> [String: String] {
    [
      "policy.role-based.target": "true", "policy.role-based.priority": "\(priority)",
      "policy.role-based.action.same-priority": "mix",
      "policy.role-based.action.lower-priority": lower, "device.intended_roles": roles,
      "node.link-group": "loopback-1-\(role)", "media.class": "Audio/Sink",
    ]
  }

  /// The speakers (0), a headset (1, the default), the Multimedia (10), Navigation (11) and
  /// Alert (12) loopbacks with their stream halves (100, 101, 102) on the headset, and hark's
  /// music (7) in the Multimedia loopback.
  func desktop() -> PulseModel {
    var m = PulseModel()
    _ = m.apply(.defaultSink("bluez_output.1"))
    _ = m.apply(.sink(index: 0, name: "out", description: "Speakers", properties: [:]))
    _ = m.apply(
      .sink(
        index: 1, name: "bluez_output.1", description: "Bluetooth headset",
        properties: ["device.bus": "bluetooth"]))
    let roles: [(UInt32, String, Int, String, String)] = [
      (10, "multimedia", 10, "mix", #"[ "Music", "Movie", "Game", "Multimedia" ]"#),
      (11, "navigation", 30, "duck", #"[ "Navigation", "GPS" ]"#),
      (12, "alert", 100, "cork", #"[ "Alert", "Emergency" ]"#),
    ]
    for (index, role, priority, lower, names) in roles {
      _ = m.apply(
        .sink(
          index: index, name: "input.loopback.sink.role.\(role)", description: role,
          properties: Self.loopback(role, priority: priority, lower: lower, roles: names)))
      _ = m.apply(
        .sinkInput(
          index: index + 90, sink: 1, client: nil,
          properties: ["node.link-group": "loopback-1-\(role)", "media.role": "Loopback"]))
    }
    _ = m.apply(
      .sinkInput(
        index: 7, sink: 10, client: nil,
        properties: ["application.process.id": "\(Self.hark)", "media.role": "music"]))
    return m
  }

  /// Another program's stream of `role` in its loopback (`sink`), or on no sink yet.
  func otherStream(_ index: UInt32, role: String, sink: UInt32) -> PulseObservation {
    .sinkInput(
      index: index, sink: sink, client: nil,
      properties: [
        "application.process.id": "\(Self.other)", "application.name": "paplay",
        "media.role": role,
      ])
  }

  /// hark's route is the device its stream reaches: through the loopback, the headset.
  @Test func G6_aStreamInARoleLoopbackIsHeardWhereTheLoopbackPlays() {
    var m = PulseModel()
    _ = m.apply(
      .sink(
        index: 1, name: "bluez_output.1", description: "Bluetooth headset",
        properties: ["device.bus": "bluetooth"]))
    _ = m.apply(
      .sink(
        index: 10, name: "input.loopback.sink.role.multimedia", description: "Multimedia",
        properties: Self.loopback(
          "multimedia", priority: 10, lower: "mix", roles: #"[ "Music" ]"#)))
    // hark's stream comes before the loopback's half is known: the loopback's own sink.
    #expect(
      m.apply(
        .sinkInput(
          index: 7, sink: 10, client: nil,
          properties: ["application.process.id": "\(Self.hark)", "media.role": "music"]))
        == [.streamOutput(pid: Self.hark, stream: 7, output: .speakers)])
    #expect(
      m.apply(
        .sinkInput(
          index: 100, sink: 1, client: nil,
          properties: ["node.link-group": "loopback-1-multimedia", "media.role": "Loopback"]))
        == [.streamOutput(pid: Self.hark, stream: 7, output: Self.headset)])
    // The user moves the loopback to the speakers (pavucontrol's "Multimedia"): G6.
    _ = m.apply(.sink(index: 0, name: "out", description: "Speakers", properties: [:]))
    #expect(
      m.apply(
        .sinkInput(
          index: 100, sink: 0, client: nil,
          properties: ["node.link-group": "loopback-1-multimedia", "media.role": "Loopback"]))
        == [.streamOutput(pid: Self.hark, stream: 7, output: .speakers)])
  }

  /// G5 with pause-playback off: the headset the loopback plays on goes; hark's stream is in
  /// the loopback, not on the headset, and still lost its output.
  @Test func G5_theDeviceBehindARoleLoopbackGoingIsALoss() {
    var m = desktop()
    let events = m.apply(.sinkRemoved(1))
    #expect(events.contains(.outputLost(pid: Self.hark, stream: 7, lost: Self.headset)))
    #expect(events.contains(.route(.detach(Self.headset))))
    // WirePlumber moves the half to the speakers: hark is heard there now (it pauses first).
    #expect(
      m.apply(
        .sinkInput(
          index: 100, sink: 0, client: nil,
          properties: ["node.link-group": "loopback-1-multimedia", "media.role": "Loopback"]))
        == [.streamOutput(pid: Self.hark, stream: 7, output: .speakers)])
  }

  /// G13, G14: another program's Alert corks hark (WirePlumber unlinks its stream: no sink);
  /// the hold ends with the Alert.
  @Test func G13_anotherProgramsAlertHoldsHarkBackUntilItEnds() {
    var m = desktop()
    #expect(
      m.apply(otherStream(20, role: "Alert", sink: 12)) == [
        .streamOutput(pid: Self.other, stream: 20, output: Self.headset),
        .streamHeld(
          pid: Self.hark, stream: 7, by: 20, byPid: Self.other, name: "paplay", role: "Alert"),
      ])
    // hark's stream unlinked meanwhile: no new hold, and no output to announce.
    #expect(
      m.apply(
        .sinkInput(
          index: 7, sink: UInt32.max, client: nil,
          properties: ["application.process.id": "\(Self.hark)", "media.role": "music"])) == [])
    #expect(
      m.apply(.sinkInputRemoved(20)) == [
        .streamGone(pid: Self.other, stream: 20), .holdEnded(by: 20),
      ])
  }

  /// hark started during another program's Alert: its stream is never linked, and is held
  /// back from the start (its role leads to the Multimedia loopback, below the Alert's).
  @Test func G13_aStreamThatStartsDuringAnAlertIsHeldBackAtOnce() {
    var m = desktop()
    _ = m.apply(.sinkInputRemoved(7))
    _ = m.apply(otherStream(20, role: "Alert", sink: 12))
    #expect(
      m.apply(
        .sinkInput(
          index: 8, sink: UInt32.max, client: nil,
          properties: ["application.process.id": "\(Self.hark)", "media.role": "music"]))
        == [
          .streamHeld(
            pid: Self.hark, stream: 8, by: 20, byPid: Self.other, name: "paplay", role: "Alert")
        ])
  }

  /// Streams of the same priority mix; a call on top holds the others back as a call already
  /// (a phoneStream), not as a hold.
  @Test func sameRolesMixAndACallIsNoHold() {
    var m = desktop()
    #expect(
      m.apply(otherStream(20, role: "music", sink: 10)) == [
        .streamOutput(pid: Self.other, stream: 20, output: Self.headset)
      ])
    _ = m.apply(
      .sink(
        index: 13, name: "input.loopback.sink.role.communication", description: "Communication",
        properties: Self.loopback(
          "communication", priority: 50, lower: "cork", roles: #"[ "Communication", "Phone" ]"#
        )))
    let call = m.apply(otherStream(21, role: "phone", sink: 13))
    #expect(call.contains(.phoneStream(began: true, key: 21, name: "paplay", pid: Self.other)))
    #expect(!call.contains { if case .streamHeld = $0 { true } else { false } })
  }

  /// G9: a Navigation stream ducks hark (WirePlumber's duck-level), and lifts it when it ends.
  @Test func G9_aNavigationStreamDucksHarkWhileItLasts() {
    var m = desktop()
    #expect(
      m.apply(otherStream(20, role: "Navigation", sink: 11)) == [
        .streamOutput(pid: Self.other, stream: 20, output: Self.headset),
        .streamDucked(pid: Self.hark, stream: 7, ducked: true),
      ])
    #expect(
      m.apply(.sinkInputRemoved(20)) == [
        .streamGone(pid: Self.other, stream: 20),
        .streamDucked(pid: Self.hark, stream: 7, ducked: false),
      ])
  }

  /// A stream linked past the role policy (on a real sink, as one with a target of its own
  /// is: `hark --device pulse:NAME`) is not ducked by WirePlumber, whose duck is the role
  /// loopback's volume: hark is not told it is, and ducks itself. Unlinked again (held back),
  /// its role leads to its loopback as before.
  @Test func G9_aStreamOnARealSinkIsNotDuckedByTheRolePolicy() {
    var m = desktop()
    _ = m.apply(
      .sinkInput(
        index: 7, sink: 1, client: nil,
        properties: ["application.process.id": "\(Self.hark)", "media.role": "music"]))
    #expect(
      m.apply(otherStream(20, role: "Navigation", sink: 11)) == [
        .streamOutput(pid: Self.other, stream: 20, output: Self.headset)
      ])
    #expect(
      m.apply(
        .sinkInput(
          index: 7, sink: UInt32.max, client: nil,
          properties: ["application.process.id": "\(Self.hark)", "media.role": "music"]))
        == [.streamDucked(pid: Self.hark, stream: 7, ducked: true)])
  }

  /// WirePlumber matches roles exactly: a program's `alert` in lower case reaches no role
  /// loopback (it plays on the default sink, beside everything) and holds nothing back. The
  /// pulse service's own names are PipeWire's in other words (`music` is Music).
  @Test func rolesInLowerCaseAreWhatWirePlumberMakesOfThem() {
    var m = desktop()
    let events = m.apply(otherStream(20, role: "alert", sink: 1))
    #expect(!events.contains { if case .streamHeld = $0 { true } else { false } })
    #expect(PulseModel.pipewireRole("music") == "Music")
    #expect(PulseModel.pipewireRole("phone") == "Communication")
    #expect(PulseModel.pipewireRole("event") == "Notification")
    #expect(PulseModel.pipewireRole("Alert") == "Alert")
    #expect(PulseModel.pipewireRole("alert") == "alert")
  }

  /// The Alert's loopback holds back what is below it for as long as it is on top: hark's
  /// stream made anew meanwhile (a resume) is held by the same Alert, not by a new hold.
  @Test func theHoldLastsAsLongAsTheAlertWhateverHarksStreamsDo() {
    var m = desktop()
    _ = m.apply(otherStream(20, role: "Alert", sink: 12))
    #expect(m.apply(.sinkInputRemoved(7)) == [.streamGone(pid: Self.hark, stream: 7)])
    #expect(
      m.apply(
        .sinkInput(
          index: 9, sink: UInt32.max, client: nil,
          properties: ["application.process.id": "\(Self.hark)", "media.role": "music"]))
        == [
          .streamHeld(
            pid: Self.hark, stream: 9, by: 20, byPid: Self.other, name: "paplay", role: "Alert")
        ])
    #expect(m.apply(.disconnected).contains(.holdEnded(by: 20)))
  }
}
