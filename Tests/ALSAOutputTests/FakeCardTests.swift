import Glibc
import Testing

@testable import ALSAOutput

/// The watcher's real path, from snd_ctl_open to poll and snd_ctl_read, against the fake card
/// (an alsa-lib control plugin that reports each change twice, as real cards may). Each test
/// runs the probe in a process of its own, so HOME and the ALSA configuration are its own.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FakeCardTests {
  static let headphones = "Headphones (Fake Jack Card)"
  static let lineOut = "Line out (Fake Jack Card)"

  @Test func headphonesPluggedAndUnpluggedMakeOneEventEach() async {
    guard let card = await FakeCard() else { return }
    let probe = card.startProbe()
    #expect(await probe.nextLine() == "outputs: ")
    card.set(["Headphone Jack"])
    #expect(await probe.nextLine() == "plugged headphones: \(Self.headphones)")
    card.set(["Headphone Jack", "Line Out Jack", "Mic Jack"])
    #expect(await probe.nextLine() == "plugged line: \(Self.lineOut)")
    card.set(["Line Out Jack", "Mic Jack"])
    #expect(await probe.nextLine() == "unplugged headphones: \(Self.headphones)")
    card.set(["Headphone Jack", "Line Out Jack"])
    #expect(await probe.nextLine() == "plugged headphones: \(Self.headphones)")
    // Every change came twice, and the mic came and went: nothing more may follow.
    #expect(await probe.linesDuring(.milliseconds(300)) == [])
    let end = await probe.finish()
    #expect(await probe.nextLine(within: .seconds(1)) == "closed")
    #expect(end.status == 0)
    #expect(end.errors == "", "the watcher printed: \(end.errors)")
  }

  @Test func whatIsPluggedInAtStartIsAnOutputNotAnEvent() async {
    guard let card = await FakeCard(state: "Headphone Jack=1\nMic Jack=1\n") else { return }
    let probe = card.startProbe()
    #expect(await probe.nextLine() == "outputs: \(Self.headphones)")
    #expect(await probe.linesDuring(.milliseconds(300)) == [])
    card.set([])
    #expect(await probe.nextLine() == "unplugged headphones: \(Self.headphones)")
    #expect(await probe.finish().status == 0)
  }

  @Test func aCardThatVanishesUnplugsEverythingOnIt() async {
    guard let card = await FakeCard() else { return }
    let probe = card.startProbe()
    #expect(await probe.nextLine() == "outputs: ")
    card.set(["Headphone Jack", "Line Out Jack"])
    let plugged = [await probe.nextLine(), await probe.nextLine()]
    #expect(
      plugged == ["plugged headphones: \(Self.headphones)", "plugged line: \(Self.lineOut)"])
    card.set(["Headphone Jack", "Line Out Jack"], gone: true)
    #expect(await probe.nextLine() == "unplugged headphones: \(Self.headphones)")
    #expect(await probe.nextLine() == "unplugged line: \(Self.lineOut)")
    // The control is closed: whatever the file says now, the card is not watched.
    card.set(["Headphone Jack"])
    #expect(await probe.linesDuring(.milliseconds(300)) == [])
    #expect(await probe.finish().status == 0)
  }

  @Test func aUSBCardIsOneRouteUntilItGoes() async {
    guard let card = await FakeCard(driver: "USB-Audio") else { return }
    let probe = card.startProbe()
    #expect(await probe.nextLine() == "outputs: USB audio (Fake Jack Card)")
    card.set(["Headphone Jack"])
    #expect(await probe.linesDuring(.milliseconds(300)) == [])
    card.set([], gone: true)
    #expect(await probe.nextLine() == "unplugged usb: USB audio (Fake Jack Card)")
    #expect(await probe.finish().status == 0)
  }

  @Test func anIdleWatcherSleeps() async {
    guard let card = await FakeCard() else { return }
    let probe = card.startProbe()
    #expect(await probe.nextLine() == "outputs: ")
    let idle = await idleActivity(of: probe.pid, thread: JackWatcher.threadName)
    #expect(idle.ticks <= 1, "the idle watcher used CPU")
    #expect(idle.switches <= 1, "the idle watcher woke up")
    card.set(["Headphone Jack"])
    #expect(await probe.nextLine() == "plugged headphones: \(Self.headphones)")
    #expect(await probe.finish().status == 0)
  }
}
