import SessionCore
import Synchronization
import Testing

@testable import SoundServer

/// What the sound server's reports mean, over recorded sequences like those PulseAudio sends.
@Suite struct PulseModelTests {
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
        index: 7, sink: 3,
        properties: ["application.process.id": "4242", "application.name": "ALSA plug-in [hark]"]))
    return (m, out)
  }

  @Test func devicesThatComeAndGoAreOutputsAndTheDefaultIsCurrent() {
    let (_, events) = machine()
    #expect(events == [.route(.attach(headset)), .route(.select("WH-1000XM4"))])
  }

  /// G5: the headset goes; the server moves the stream to the speakers by itself. The device is
  /// detached and the stream that played on it lost its output.
  @Test func G5_aSinkGoingAwayDetachesItAndTellsTheStreamsOnIt() {
    var (m, _) = machine()
    let gone = m.apply(.sinkRemoved(3))
    #expect(gone == [.route(.detach(headset)), .outputLost(pid: 4242, stream: 7, lost: headset)])
    // What follows the removal changes nothing more: the move and the new default.
    #expect(
      m.apply(.sinkInput(index: 7, sink: 0, properties: ["application.process.id": "4242"])) == [])
    #expect(m.apply(.defaultSink("alsa_output.pci")) == [.route(.select("Speakers"))])
  }

  /// A stream on a built-in or virtual sink loses its output too when that sink goes.
  @Test func G5_aVirtualSinkGoingAwayTellsItsStreams() {
    var m = PulseModel()
    _ = m.apply(.sink(index: 1, name: "out", description: "Null Output", properties: [:]))
    _ = m.apply(.sinkInput(index: 2, sink: 1, properties: ["application.process.id": "99"]))
    #expect(
      m.apply(.sinkRemoved(1)) == [
        .outputLost(pid: 99, stream: 2, lost: Route(name: "out", kind: .unknown))
      ])
  }

  /// G6: the user moves the stream or changes the default: no loss, at most a new current output.
  @Test func G6_movingAStreamIsNotALoss() {
    var (m, _) = machine()
    #expect(
      m.apply(.sinkInput(index: 7, sink: 0, properties: ["application.process.id": "4242"])) == [])
    #expect(m.apply(.defaultSink("alsa_output.pci")) == [.route(.select("Speakers"))])
    #expect(
      m.apply(
        .sink(index: 0, name: "alsa_output.pci", description: "Built-in Audio", properties: builtin)
      ) == [])
  }

  /// G4: a headset that connects (and is made the default) is attached.
  @Test func G4_aNewDeviceIsAttached() {
    var m = PulseModel()
    _ = m.apply(
      .sink(index: 0, name: "alsa_output.pci", description: "Built-in Audio", properties: builtin))
    _ = m.apply(.defaultSink("alsa_output.pci"))
    #expect(
      m.apply(
        .sink(index: 5, name: "bluez_sink.AA", description: "WH-1000XM4", properties: bluetooth))
        == [.route(.attach(headset))])
    #expect(m.apply(.defaultSink("bluez_sink.AA")) == [.route(.select("WH-1000XM4"))])
  }

  /// G11: a phone-role stream is a call while it lasts, once.
  @Test func G11_aPhoneStreamIsACall() {
    var m = PulseModel()
    let phone = [
      "media.role": "phone", "application.name": "paplay", "application.process.id": "77",
    ]
    #expect(
      m.apply(.sinkInput(index: 9, sink: 0, properties: phone)) == [
        .phoneStream(began: true, key: 9, name: "paplay", pid: 77)
      ])
    #expect(m.apply(.sinkInput(index: 9, sink: 0, properties: phone)) == [])
    #expect(
      m.apply(.sinkInputRemoved(9)) == [.phoneStream(began: false, key: 9, name: "", pid: 77)])
    #expect(m.apply(.sinkInputRemoved(9)) == [])
    #expect(m.apply(.sinkInput(index: 10, sink: 0, properties: ["media.role": "music"])) == [])
  }

  @Test func losingTheSoundServerDetachesItsDevicesAndEndsItsCalls() {
    var (m, _) = machine()
    _ = m.apply(.sinkInput(index: 9, sink: 0, properties: ["media.role": "phone"]))
    #expect(
      m.apply(.disconnected) == [
        .route(.detach(headset)), .phoneStream(began: false, key: 9, name: "", pid: nil),
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
@Suite struct PulseWatcherTests {
  @Test(arguments: [nil, "unix:/nonexistent/native"])
  func closingTwiceWithNoSoundServerIsHarmless(server: String?) async throws {
    let reports = Reports()
    let watcher = try #require(
      PulseWatcher(clientName: "hark test", server: server) { reports.add($0) })
    // Long enough for a failed connection to be retried once (after 1 s).
    try await Task.sleep(for: .milliseconds(1_300))
    watcher.close()
    watcher.close()
    #expect(reports.all.allSatisfy { $0 == .disconnected })
  }
}

final class Reports: Sendable {
  private let list = Mutex<[PulseObservation]>([])
  func add(_ o: PulseObservation) { list.withLock { $0.append(o) } }
  var all: [PulseObservation] { list.withLock { $0 } }
}
