import SessionCore
import Testing

@testable import JackRoutes

// Recorded control events, written as data: what snd_ctl reported (the element, its value when
// re-read after the event) on the cards below, and the route events that must come of them.

/// A laptop's HDA codec: headphones, a mic, built-in speakers (phantom), HDMI on the same card.
let laptop = JackCard(
  control: "hw:0", id: "PCH", name: "HDA Intel PCH", driver: "HDA-Intel",
  jacks: [
    JackReading(JackElement("Headphone Jack"), isPlugged: false),
    JackReading(JackElement("Mic Jack"), isPlugged: false),
    JackReading(JackElement("Speaker Phantom Jack"), isPlugged: true),
    JackReading(JackElement("HDMI/DP,pcm=3 Jack"), isPlugged: false),
  ])

/// A USB headset: the card is the device; its own connector jack is not followed.
let headset = JackCard(
  control: "hw:2", id: "Headset", name: "Jabra EVOLVE 20", driver: "USB-Audio",
  jacks: [JackReading(JackElement("Headphone - Output Jack"), isPlugged: true)])

let headphones = Route(name: "Headphones (HDA Intel PCH)", kind: .headphones)
let hdmi = Route(name: "HDMI/DisplayPort 3 (HDA Intel PCH)", kind: .hdmi)
let usbHeadset = Route(name: "USB audio (Jabra EVOLVE 20)", kind: .usb)

/// One element event on `control`: `name` re-read as `plugged`.
func value(_ control: String, _ name: String, _ plugged: Bool, index: Int = 0) -> JackObservation {
  .jackChanged(control: control, JackReading(JackElement(name, index: index), isPlugged: plugged))
}

/// Feeds `observations` in order and returns every event, in order.
func replay(_ state: inout JackState, _ observations: [JackObservation]) -> [JackEvent] {
  observations.flatMap { state.observe($0) }
}

@Suite(.timeLimit(.minutes(2))) struct JackStateTests {
  @Test func whatIsPluggedAtStartIsTheStartingPointNotNews() {
    var start = laptop
    start.jacks[0].isPlugged = true
    var state = JackState(cards: [start, headset])
    #expect(state.outputs == [headphones, usbHeadset])
    // The same values reported again change nothing.
    #expect(replay(&state, [value("hw:0", "Headphone Jack", true)]).isEmpty)
  }

  @Test func plugThenUnplugHeadphones() {
    var state = JackState(cards: [laptop])
    #expect(state.outputs.isEmpty)
    #expect(state.observe(value("hw:0", "Headphone Jack", true)) == [.plugged(headphones)])
    #expect(state.outputs == [headphones])
    #expect(state.observe(value("hw:0", "Headphone Jack", false)) == [.unplugged(headphones)])
    #expect(state.outputs.isEmpty)
  }

  @Test func oneChangeReportedSeveralTimesMakesOneEvent() {
    // An HDA codec's unsolicited event, the jack poll after resume and an INFO event each make
    // the driver notify the same element: the watcher re-reads it every time.
    var state = JackState(cards: [laptop])
    let recorded = [
      value("hw:0", "Headphone Jack", true),
      value("hw:0", "Headphone Jack", true),
      value("hw:0", "Headphone Jack", true),
      value("hw:0", "Headphone Jack", false),
      value("hw:0", "Headphone Jack", false),
    ]
    #expect(replay(&state, recorded) == [.plugged(headphones), .unplugged(headphones)])
  }

  @Test func micAndPhantomJacksNeverMakeEvents() {
    var state = JackState(cards: [laptop])
    let recorded = [
      value("hw:0", "Mic Jack", true),
      value("hw:0", "Speaker Phantom Jack", false),
      value("hw:0", "Speaker Phantom Jack", true),
      value("hw:0", "Mic Jack", false),
    ]
    #expect(replay(&state, recorded).isEmpty)
    #expect(state.outputs.isEmpty)
  }

  @Test func aLaptopEvening() {
    // Headphones in, a monitor connected, headphones out while the monitor stays, monitor off.
    var state = JackState(cards: [laptop])
    let recorded = [
      value("hw:0", "Headphone Jack", true),
      value("hw:0", "Mic Jack", true),  // a headset's mic ring
      value("hw:0", "HDMI/DP,pcm=3 Jack", true),
      value("hw:0", "HDMI/DP,pcm=3 Jack", true),
      value("hw:0", "Mic Jack", false),
      value("hw:0", "Headphone Jack", false),
      value("hw:0", "HDMI/DP,pcm=3 Jack", false),
    ]
    #expect(
      replay(&state, recorded) == [
        .plugged(headphones), .plugged(hdmi), .unplugged(headphones), .unplugged(hdmi),
      ])
  }

  @Test func aUSBCardAppearingIsPluggedAndVanishingIsUnplugged() {
    var state = JackState(cards: [laptop])
    #expect(state.observe(.cardAppeared(headset)) == [.plugged(usbHeadset)])
    #expect(state.outputs == [usbHeadset])
    // Its connector element is not followed: the card is the route.
    #expect(state.observe(value("hw:2", "Headphone - Output Jack", false)).isEmpty)
    #expect(state.outputs == [usbHeadset])
    #expect(state.observe(.cardVanished(control: "hw:2")) == [.unplugged(usbHeadset)])
    #expect(state.outputs.isEmpty)
    // ENODEV, POLLERR and the deleted /dev/snd node may all report it: once is enough.
    #expect(state.observe(.cardVanished(control: "hw:2")).isEmpty)
  }

  @Test func aCardVanishingUnplugsEveryPluggedOutputOnIt() {
    var state = JackState(cards: [laptop])
    _ = replay(
      &state, [value("hw:0", "Headphone Jack", true), value("hw:0", "HDMI/DP,pcm=3 Jack", true)])
    #expect(
      state.observe(.cardVanished(control: "hw:0")) == [.unplugged(headphones), .unplugged(hdmi)])
    // Events from a card that is gone are ignored.
    #expect(state.observe(value("hw:0", "Headphone Jack", true)).isEmpty)
  }

  @Test func aHotpluggedCardWithSomethingPluggedInReportsIt() {
    var state = JackState()
    var dock = laptop
    dock.control = "hw:1"
    dock.jacks[0].isPlugged = true
    #expect(state.observe(.cardAppeared(dock)) == [.plugged(headphones)])
  }

  @Test func aCardSeenAgainReportsOnlyWhatChanged() {
    var state = JackState(cards: [laptop])
    var again = laptop
    again.jacks[0].isPlugged = true
    again.jacks.remove(at: 3)
    #expect(state.observe(.cardAppeared(again)) == [.plugged(headphones)])
    #expect(state.observe(.cardAppeared(again)).isEmpty)
    #expect(state.observe(.cardAppeared(headset)) == [.plugged(usbHeadset)])
    #expect(state.observe(.cardAppeared(headset)).isEmpty)
  }

  @Test func jacksAddedAndRemovedWithTheCardStillThere() {
    // SND_CTL_EVENT_MASK_ADD for a jack created late (an HDMI codec probed after the card), then
    // SND_CTL_EVENT_MASK_REMOVE for it while plugged.
    var state = JackState(cards: [laptop])
    #expect(
      state.observe(value("hw:0", "HDMI/DP,pcm=7 Jack", true))
        == [.plugged(Route(name: "HDMI/DisplayPort 7 (HDA Intel PCH)", kind: .hdmi))])
    #expect(
      state.observe(.jackRemoved(control: "hw:0", JackElement("HDMI/DP,pcm=7 Jack")))
        == [.unplugged(Route(name: "HDMI/DisplayPort 7 (HDA Intel PCH)", kind: .hdmi))])
    #expect(state.observe(.jackRemoved(control: "hw:0", JackElement("Mic Jack"))).isEmpty)
    #expect(state.observe(.jackRemoved(control: "hw:0", JackElement("Mic Jack"))).isEmpty)
  }

  @Test func twoIdenticalCardsGetRoutesOfTheirOwn() {
    var second = headset
    second.control = "hw:3"
    second.id = "Headset_1"
    var state = JackState(cards: [headset])
    let secondRoute = Route(name: "USB audio (Jabra EVOLVE 20 #2)", kind: .usb)
    #expect(state.observe(.cardAppeared(second)) == [.plugged(secondRoute)])
    #expect(state.observe(.cardVanished(control: "hw:2")) == [.unplugged(usbHeadset)])
    #expect(state.observe(.cardVanished(control: "hw:3")) == [.unplugged(secondRoute)])
  }

  @Test func elementsOfTheSameNameAreTwoOutputs() {
    var front = laptop
    front.jacks = [
      JackReading(JackElement("Headphone Jack"), isPlugged: false),
      JackReading(JackElement("Headphone Jack", index: 1), isPlugged: false),
    ]
    var state = JackState(cards: [front])
    let second = Route(name: "Headphones 2 (HDA Intel PCH)", kind: .headphones)
    #expect(state.observe(value("hw:0", "Headphone Jack", true, index: 1)) == [.plugged(second)])
    #expect(state.outputs == [second])
  }

  @Test func eventsForAControlNeverSeenAreIgnored() {
    var state = JackState(cards: [laptop])
    #expect(state.observe(value("hw:9", "Headphone Jack", true)).isEmpty)
    #expect(state.observe(.jackRemoved(control: "hw:9", JackElement("Headphone Jack"))).isEmpty)
    #expect(state.controls == ["hw:0"])
  }
}
