import Platform
import SessionCore
import Testing

@testable import SoundServer

/// What the sound server's reports mean, over recorded sequences like those PulseAudio sends.
@Suite(.timeLimit(.minutes(2))) struct PulseModelTests {
  let builtin: [String: String] = ["device.bus": "pci", "device.form_factor": "internal"]
  let bluetooth: [String: String] = ["device.bus": "bluetooth", "device.form_factor": "headset"]
  let headset = Route(name: "WH-1000XM4", kind: .bluetooth)

  /// A machine with speakers and a Bluetooth headset that is the default; hark plays on it.
  func machine() -> (PulseModel, [SoundServerEvent]) {
    var m = PulseModel()
    var out: [SoundServerEvent] = []
    out += m.apply(.defaultSink("bluez_sink.AA"))
    out += m.apply(
      .sink(index: 0, name: "alsa_output.pci", description: "Built-in Audio", properties: builtin))
    out += m.apply(
      .sink(index: 3, name: "bluez_sink.AA", description: "WH-1000XM4", properties: bluetooth))
    out += m.apply(
      .sinkInput(
        index: 7, sink: 3, client: nil,
        properties: ["application.process.id": "4242", "application.name": "ALSA plug-in [hark]"]))
    return (m, out)
  }

  let speakers = Route.speakers

  @Test func devicesThatComeAndGoAreOutputsAndTheDefaultIsCurrent() {
    let (_, events) = machine()
    #expect(
      events == [
        .route(.attach(headset)), .route(.select("WH-1000XM4")),
        .streamOutput(pid: 4242, stream: 7, output: headset),
      ])
  }

  /// G5: the headset goes; the server moves the stream to the speakers by itself. The device is
  /// detached and the stream that played on it lost its output.
  @Test func G5_aSinkGoingAwayDetachesItAndTellsTheStreamsOnIt() {
    var (m, _) = machine()
    let gone = m.apply(.sinkRemoved(3))
    #expect(gone == [.route(.detach(headset)), .outputLost(pid: 4242, stream: 7, lost: headset)])
    // What follows the removal: the stream is where the server moved it, the default is new.
    #expect(
      m.apply(
        .sinkInput(
          index: 7, sink: 0, client: nil, properties: ["application.process.id": "4242"]))
        == [.streamOutput(pid: 4242, stream: 7, output: speakers)])
    #expect(m.apply(.defaultSink("alsa_output.pci")) == [.route(.select("Speakers"))])
  }

  /// A stream on a built-in or virtual sink loses its output too when that sink goes.
  @Test func G5_aVirtualSinkGoingAwayTellsItsStreams() {
    var m = PulseModel()
    _ = m.apply(.sink(index: 1, name: "out", description: "Null Output", properties: [:]))
    _ = m.apply(
      .sinkInput(index: 2, sink: 1, client: nil, properties: ["application.process.id": "99"]))
    #expect(
      m.apply(.sinkRemoved(1)) == [
        .outputLost(pid: 99, stream: 2, lost: Route(name: "out", kind: .unknown))
      ])
  }

  /// G6: the user moves the stream (its sink stays): no loss, only where it plays now; the user
  /// changing the default makes a new current output.
  @Test func G6_aStreamMovedByTheUserIsNotALoss() {
    var (m, _) = machine()
    #expect(
      m.apply(
        .sinkInput(
          index: 7, sink: 0, client: nil, properties: ["application.process.id": "4242"]))
        == [.streamOutput(pid: 4242, stream: 7, output: speakers)])
    #expect(m.apply(.defaultSink("alsa_output.pci")) == [.route(.select("Speakers"))])
    #expect(
      m.apply(
        .sink(index: 0, name: "alsa_output.pci", description: "Built-in Audio", properties: builtin)
      ) == [])
    // The headset it left goes later: nobody played there, nobody lost anything.
    #expect(m.apply(.sinkRemoved(3)) == [.route(.detach(headset))])
  }

  /// G4: a headset that connects and is made the default is attached (current); the stream
  /// that plays on the speakers stays there, and stays the speakers' until it is moved.
  @Test func G4_aNewDefaultDeviceIsAttached() {
    var m = PulseModel()
    _ = m.apply(
      .sink(index: 0, name: "alsa_output.pci", description: "Built-in Audio", properties: builtin))
    _ = m.apply(.defaultSink("alsa_output.pci"))
    _ = m.apply(
      .sinkInput(index: 7, sink: 0, client: nil, properties: ["application.process.id": "1"]))
    #expect(
      m.apply(
        .sink(index: 5, name: "bluez_sink.AA", description: "WH-1000XM4", properties: bluetooth))
        == [.route(.add(headset))])
    #expect(m.apply(.defaultSink("bluez_sink.AA")) == [.route(.select("WH-1000XM4"))])
    // module-switch-on-connect moves the stream: it plays on the headset now (G4: go on).
    #expect(
      m.apply(
        .sinkInput(index: 7, sink: 5, client: nil, properties: ["application.process.id": "1"]))
        == [.streamOutput(pid: 1, stream: 7, output: headset)])
  }

  /// A device that appears while the default stays is listed, not made current: a headset
  /// that connects beside the speakers takes nothing over, and its leaving costs nothing.
  @Test func G4_G5_aSinkBesideTheDefaultIsAddedAndItsLeavingLosesNothing() {
    var m = PulseModel()
    _ = m.apply(.defaultSink("alsa_output.pci"))
    _ = m.apply(
      .sink(index: 0, name: "alsa_output.pci", description: "Built-in Audio", properties: builtin))
    _ = m.apply(
      .sinkInput(index: 7, sink: 0, client: nil, properties: ["application.process.id": "1"]))
    #expect(
      m.apply(
        .sink(index: 5, name: "bluez_sink.AA", description: "WH-1000XM4", properties: bluetooth))
        == [.route(.add(headset))])
    #expect(m.apply(.sinkRemoved(5)) == [.route(.detach(headset))])
  }

  /// PipeWire's ALSA plugin (ALSA's `default` on PipeWire desktops) puts no pid on its stream;
  /// the pid is its client's. G5 holds through it as through `pulse`.
  @Test func G5_aStreamsProcessIsFoundThroughItsClient() {
    var m = PulseModel()
    _ = m.apply(.defaultSink("bluez_sink.AA"))
    _ = m.apply(
      .sink(index: 3, name: "bluez_sink.AA", description: "WH-1000XM4", properties: bluetooth))
    #expect(
      m.apply(.client(index: 40, properties: ["application.process.id": "4242"])) == [])
    let alsaStream = ["application.name": "hark", "media.role": "Music"]
    #expect(
      m.apply(.sinkInput(index: 7, sink: 3, client: 40, properties: alsaStream)) == [
        .streamOutput(pid: 4242, stream: 7, output: headset)
      ])
    #expect(
      m.apply(.sinkRemoved(3)) == [
        .route(.detach(headset)), .outputLost(pid: 4242, stream: 7, lost: headset),
      ])
    #expect(m.apply(.sinkInputRemoved(7)) == [.streamGone(pid: 4242, stream: 7)])
  }

  /// The client's details may come after its stream's: the stream is told of then.
  @Test func aClientKnownLateStillNamesItsStreamsProcess() {
    var m = PulseModel()
    _ = m.apply(.sink(index: 1, name: "out", description: "Null Output", properties: [:]))
    #expect(m.apply(.sinkInput(index: 2, sink: 1, client: 9, properties: [:])) == [])
    #expect(
      m.apply(.client(index: 9, properties: ["application.process.id": "77"])) == [
        .streamOutput(pid: 77, stream: 2, output: speakers)
      ])
    #expect(
      m.apply(.sinkRemoved(1)) == [
        .outputLost(pid: 77, stream: 2, lost: Route(name: "out", kind: .unknown))
      ])
  }

  /// A stream reported before its sink is told of once the sink is known.
  @Test func aStreamBeforeItsSinkIsToldOfWithTheSink() {
    var m = PulseModel()
    #expect(
      m.apply(
        .sinkInput(index: 2, sink: 3, client: nil, properties: ["application.process.id": "5"]))
        == [])
    #expect(
      m.apply(
        .sink(index: 3, name: "bluez_sink.AA", description: "WH-1000XM4", properties: bluetooth))
        == [.route(.add(headset)), .streamOutput(pid: 5, stream: 2, output: headset)])
  }

  /// PipeWire's names for the phone role count as a call too.
  @Test(arguments: ["phone", "Phone", "Communication", "communication"])
  func G11_phoneRolesInEitherVocabulary(role: String) {
    #expect(PulseModel.isPhoneRole(role))
  }

  @Test(arguments: ["music", "Music", "event", "Notification", "", "telephone"])
  func otherRolesAreNotCalls(role: String) {
    #expect(!PulseModel.isPhoneRole(role))
  }

  /// G11: a phone-role stream is a call while it lasts, once.
  @Test func G11_aPhoneStreamIsACall() {
    var m = PulseModel()
    let phone = [
      "media.role": "phone", "application.name": "paplay", "application.process.id": "77",
    ]
    #expect(
      m.apply(.sinkInput(index: 9, sink: 0, client: nil, properties: phone)) == [
        .phoneStream(began: true, key: 9, name: "paplay", pid: 77)
      ])
    #expect(m.apply(.sinkInput(index: 9, sink: 0, client: nil, properties: phone)) == [])
    #expect(
      m.apply(.sinkInputRemoved(9)) == [.phoneStream(began: false, key: 9, name: "", pid: 77)])
    #expect(m.apply(.sinkInputRemoved(9)) == [])
    #expect(
      m.apply(.sinkInput(index: 10, sink: 0, client: nil, properties: ["media.role": "music"]))
        == [])
  }

  @Test func losingTheSoundServerDetachesItsDevicesAndEndsItsCalls() {
    var (m, _) = machine()
    _ = m.apply(.sinkInput(index: 9, sink: 0, client: nil, properties: ["media.role": "phone"]))
    #expect(
      m.apply(.disconnected) == [
        .route(.detach(headset)), .streamGone(pid: 4242, stream: 7),
        .phoneStream(began: false, key: 9, name: "", pid: nil),
      ])
  }

  @Test(arguments: [
    ("bluez_sink.x", [String: String](), RouteKind?.some(.bluetooth)),
    ("alsa_output.usb-Foo", ["device.bus": "usb"], .usb),
    ("alsa_output.usb-Bar", ["device.bus": "usb", "device.form_factor": "headset"], .headphones),
    ("alsa_output.pci.hdmi-stereo", ["device.bus": "pci"], .hdmi),
    (
      "alsa_output.pci.analog", ["device.bus": "pci", "device.form_factor": "headphone"],
      .headphones
    ),
    ("alsa_output.pci.analog", ["device.bus": "pci", "device.form_factor": "internal"], nil),
    ("out", [:], nil),
  ])
  func sinksMapToRouteKinds(name: String, properties: [String: String], kind: RouteKind?) {
    #expect(PulseModel.route(name: name, description: "D", properties: properties)?.kind == kind)
  }
}

/// The watcher itself, with no sound server to watch: it waits for one quietly and closes
/// cleanly, also twice (a server that lost the race to serve closes it, then deinit does).
@Suite(.timeLimit(.minutes(2))) struct PulseWatcherTests {
  @Test(arguments: [nil, "unix:/nonexistent/native"])
  func closingTwiceWithNoSoundServerIsHarmless(server: String?) async throws {
    let reports = Reports()
    let watcher = try #require(
      PulseWatcher(clientName: "hark test", server: server) { reports.add($0) })
    // Long enough for a failed connection to be retried a few times (250 ms, 500 ms, 1 s apart).
    try await Task.sleep(for: .milliseconds(1_300))
    watcher.close()
    watcher.close()
    #expect(reports.all.allSatisfy { $0 == .disconnected })
  }
}

final class Reports: Sendable {
  private let list = Locked<[PulseObservation]>([])
  func add(_ o: PulseObservation) { list.withLock { $0.append(o) } }
  var all: [PulseObservation] { list.withLock { $0 } }
}
