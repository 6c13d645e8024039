import SessionCore
import Testing

@testable import SoundServer

/// A Bluetooth headset switching to its call profile for a call and back
/// (WirePlumber 0.5's bluetooth.autoswitch-to-headset-profile): its A2DP sink goes and a
/// headset-head-unit sink of the same card comes, and the other way round after the call.
/// For hark that is an interruption, not the headset going away; the headset that really goes
/// during it is a loss (G5).
@Suite(.timeLimit(.minutes(1))) struct HeadsetSwitchTests {
  static let headset = Route(name: "WH-1000XM4", kind: .bluetooth)
  static let card = "00:11:22:33:44:55"
  static let hark: Int32 = 4242

  static func bluetooth(_ profile: String) -> [String: String] {
    ["device.bus": "bluetooth", "api.bluez5.address": card, "device.profile.name": profile]
  }
  static let a2dp = PulseObservation.sink(
    index: 3, name: "bluez_output.AA.1", description: "WH-1000XM4",
    properties: bluetooth("a2dp-sink"))
  static let a2dpAgain = PulseObservation.sink(
    index: 9, name: "bluez_output.AA.1", description: "WH-1000XM4",
    properties: bluetooth("a2dp-sink"))
  static let callSink = PulseObservation.sink(
    index: 5, name: "bluez_output.AA.headset-head-unit", description: "WH-1000XM4",
    properties: bluetooth("headset-head-unit"))
  static let phone = PulseObservation.sinkInput(
    index: 20, sink: 0, client: nil,
    properties: [
      "media.role": "phone", "application.name": "Firefox", "application.process.id": "77",
    ])

  /// hark plays on the headset (the default); a call's stream starts in another program.
  func duringACall() -> PulseModel {
    var m = PulseModel()
    _ = m.apply(.sink(index: 0, name: "out", description: "Speakers", properties: [:]))
    _ = m.apply(.defaultSink("bluez_output.AA.1"))
    _ = m.apply(Self.a2dp)
    _ = m.apply(
      .sinkInput(
        index: 7, sink: 3, client: nil, properties: ["application.process.id": "\(Self.hark)"]))
    _ = m.apply(Self.phone)
    return m
  }

  @Test func theMusicSinkGoingDuringACallIsASwitchNotALoss() {
    var m = duringACall()
    #expect(
      m.apply(.sinkRemoved(3)) == [
        .outputHeld(pid: Self.hark, stream: 7, output: Self.headset),
        .headsetSwitching(card: Self.card, output: Self.headset),
      ])
    // The call sink comes (the same headset: nothing new for the routes), the call ends, the
    // headset switches back: done once its music sink is the default again.
    #expect(!m.apply(Self.callSink).contains(.route(.detach(Self.headset))))
    _ = m.apply(.defaultSink("bluez_output.AA.headset-head-unit"))
    _ = m.apply(.sinkInputRemoved(20))
    #expect(m.apply(.sinkRemoved(5)) == [])
    let back = m.apply(Self.a2dpAgain)
    #expect(!back.contains(.headsetBack(card: Self.card, output: Self.headset)))
    #expect(
      m.apply(.defaultSink("bluez_output.AA.1")).contains(
        .headsetBack(card: Self.card, output: Self.headset)))
  }

  /// A paused stream the sound server moved elsewhere keeps the switch waiting until it is
  /// back on the music sink (or gone, or on no sink): resuming on it must not be heard on the
  /// speakers.
  @Test func theSwitchWaitsForTheStreamsThatPlayedThere() {
    var m = duringACall()
    _ = m.apply(.sinkRemoved(3))
    _ = m.apply(
      .sinkInput(
        index: 7, sink: 0, client: nil, properties: ["application.process.id": "\(Self.hark)"]))
    _ = m.apply(Self.callSink)
    _ = m.apply(.sinkInputRemoved(20))
    _ = m.apply(.sinkRemoved(5))
    _ = m.apply(Self.a2dpAgain)
    #expect(
      !m.apply(.defaultSink("bluez_output.AA.1")).contains(
        .headsetBack(card: Self.card, output: Self.headset)))
    #expect(
      m.apply(
        .sinkInput(
          index: 7, sink: 9, client: nil, properties: ["application.process.id": "\(Self.hark)"])
      )
      .contains(.headsetBack(card: Self.card, output: Self.headset)))
  }

  /// PipeWire's pulse service at times reports no change of the default when the music sink
  /// comes back after the call: a stream that is on the music sink again is heard there all
  /// the same, so the switch is done without it; one only unlinked still waits for the default
  /// (above).
  @Test func theSwitchIsDoneUnsaidOnceEveryStreamIsBackOnTheMusicSink() {
    var m = duringACall()
    let pid = ["application.process.id": "\(Self.hark)"]
    _ = m.apply(.sinkRemoved(3))
    // The sound server moved hark's stream to the speakers meanwhile.
    _ = m.apply(.sinkInput(index: 7, sink: 0, client: nil, properties: pid))
    _ = m.apply(Self.callSink)
    _ = m.apply(.defaultSink("bluez_output.AA.headset-head-unit"))
    _ = m.apply(.sinkInputRemoved(20))
    _ = m.apply(.sinkRemoved(5))
    #expect(!m.apply(Self.a2dpAgain).contains(.headsetBack(card: Self.card, output: Self.headset)))
    #expect(
      m.apply(.sinkInput(index: 7, sink: 9, client: nil, properties: pid)).contains(
        .headsetBack(card: Self.card, output: Self.headset)))
  }

  /// After the call, the music sink back and hark's paused stream unlinked, nothing is left to
  /// wait for but the default: that is when the owner asks the server for it (PipeWire's pulse
  /// service at times never says it changed), and only then; said, the switch is done.
  @Test func theDefaultIsAskedForOnlyWhileTheSwitchWaitsForItAlone() {
    var m = duringACall()
    let pid = ["application.process.id": "\(Self.hark)"]
    #expect(!m.awaitsDefault, "no switch yet")
    _ = m.apply(.sinkRemoved(3))
    _ = m.apply(Self.callSink)
    _ = m.apply(.defaultSink("bluez_output.AA.headset-head-unit"))
    #expect(!m.awaitsDefault, "during the call: its music sink is not back")
    _ = m.apply(.sinkInputRemoved(20))
    _ = m.apply(.sinkRemoved(5))
    _ = m.apply(.defaultSink("out"))
    #expect(!m.awaitsDefault, "the call is over; the music sink is not back yet")
    // hark's paused stream, left on the sink that went: unlinked.
    _ = m.apply(.sinkInput(index: 7, sink: 3, client: nil, properties: pid))
    #expect(!m.apply(Self.a2dpAgain).contains(.headsetBack(card: Self.card, output: Self.headset)))
    #expect(m.awaitsDefault, "back, with nothing but the default to wait for")
    // The sound server moved the stream to the speakers meanwhile: that is waited for first.
    _ = m.apply(.sinkInput(index: 7, sink: 0, client: nil, properties: pid))
    #expect(!m.awaitsDefault, "the stream is to come back first")
    _ = m.apply(.sinkInput(index: 7, sink: 3, client: nil, properties: pid))
    #expect(m.awaitsDefault)
    // The answer to the question: the switch is done, and nothing is asked any more.
    #expect(
      m.apply(.defaultSink("bluez_output.AA.1")).contains(
        .headsetBack(card: Self.card, output: Self.headset)))
    #expect(!m.awaitsDefault)
  }

  /// G5: the headset turned off during the call (its call sink goes while the call lasts).
  @Test func G5_theCallSinkGoingDuringTheCallIsTheHeadsetGoing() {
    var m = duringACall()
    _ = m.apply(.sinkRemoved(3))
    _ = m.apply(Self.callSink)
    #expect(
      m.apply(.sinkRemoved(5)) == [
        .route(.detach(Self.headset)), .headsetGone(card: Self.card, output: Self.headset),
      ])
  }

  /// G5: no sink of the headset came for the call by its end: it went.
  @Test func G5_noCallSinkByTheCallsEndIsTheHeadsetGoing() {
    var m = duringACall()
    _ = m.apply(.sinkRemoved(3))
    #expect(
      m.apply(.sinkInputRemoved(20)) == [
        .phoneStream(began: false, key: 20, name: "", pid: 77), .streamGone(pid: 77, stream: 20),
        .route(.detach(Self.headset)), .headsetGone(card: Self.card, output: Self.headset),
      ])
  }

  /// G5: with no call, the music sink going is the headset going, as ever.
  @Test func G5_withNoCallTheMusicSinkGoingIsALoss() {
    var m = duringACall()
    _ = m.apply(.sinkInputRemoved(20))
    #expect(
      m.apply(.sinkRemoved(3)) == [
        .route(.detach(Self.headset)),
        .outputLost(pid: Self.hark, stream: 7, lost: Self.headset),
      ])
  }

  /// The sound server going ends the switch: what waited lost its output.
  @Test func losingTheSoundServerDuringTheSwitchIsTheHeadsetGoing() {
    var m = duringACall()
    _ = m.apply(.sinkRemoved(3))
    #expect(m.apply(.disconnected).contains(.headsetGone(card: Self.card, output: Self.headset)))
  }

  @Test(arguments: [
    ("headset-head-unit", true), ("headset_head_unit", true), ("handsfree_head_unit", true),
    ("audio-gateway", true), ("a2dp-sink", false), ("a2dp_sink", false), ("", false),
  ])
  func callProfiles(profile: String, isCall: Bool) {
    #expect(PulseModel.isCallProfile(["device.profile.name": profile]) == isCall)
    #expect(PulseModel.isCallProfile(["bluetooth.protocol": profile]) == isCall)
  }

  /// The card: the server's, else the headset's address, else its device name.
  @Test func aHeadsetsCardIsItsCardElseItsAddress() {
    #expect(PulseModel.card(4, Self.bluetooth("a2dp-sink")) == "card 4")
    #expect(PulseModel.card(nil, Self.bluetooth("a2dp-sink")) == Self.card)
    #expect(PulseModel.card(nil, ["device.string": "AA:BB"]) == "AA:BB")
    #expect(PulseModel.card(nil, [:]) == nil)
  }
}
