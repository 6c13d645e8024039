import Testing

@testable import SessionCore

/// What the sound server does to hark's sound by itself, as the policy takes it: a role
/// policy corking its stream for another program's Alert, a Bluetooth headset switching to its
/// call profile for a call, a role policy ducking it under a Navigation prompt.
@Suite(.timeLimit(.minutes(2))) struct SoundServerHoldRuleTests {
  static let alert = InterruptionCause(kind: .otherAudio, by: "paplay")
  static let switching = InterruptionCause(kind: .call, by: "WH-1000XM4 (call profile)")
  static let headset = Route(name: "WH-1000XM4", kind: .bluetooth)
  let holder = SessionID(100)

  /// G13, G14: a corked stream is an interruption, begun and ended like another app's, and
  /// resumed from: not "playing" with a frozen position.
  @Test func G13_G14_aStreamHeldBackIsInterruptedAndResumesAfter() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    policy.succeed(.activate(hark))
    #expect(
      policy.succeed(.holdStream(hark, holder: holder, cause: Self.alert)).interruptions(
        for: hark) == [.began(Self.alert)])
    #expect(!policy.isActive(hark))
    #expect(
      policy.succeed(.releaseHold(holder: holder, lost: nil)).interruptions(for: hark) == [
        .ended(shouldResume: true, reason: .interrupterDeactivated)
      ])
    #expect(policy.apply(.activate(hark)).failure == nil)
  }

  /// A paused app's stream held back is nothing to interrupt; playing while the hold lasts
  /// (started during an Alert) is interrupted at once, and resumes when it ends.
  @Test func G13_activatingWhileHeldBackIsInterruptedAtOnce() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    #expect(policy.succeed(.holdStream(hark, holder: holder, cause: Self.alert)).isEmpty)
    let notes = policy.succeed(.activate(hark))
    #expect(notes.interruptions(for: hark) == [.began(Self.alert)])
    #expect(policy.sessions[hark]?.interruptedBy == [holder])
    #expect(
      policy.succeed(.releaseHold(holder: holder, lost: nil)).interruptions(for: hark) == [
        .ended(shouldResume: true, reason: .interrupterDeactivated)
      ])
    // Released: nothing holds it back any more.
    #expect(policy.succeed(.activate(hark)).interruptions(for: hark).isEmpty)
  }

  /// A call interrupted hark; the headset switches for it: the interruption ends when both
  /// are over, the call first, the headset's return last.
  @Test func G13_aHeadsetSwitchingDuringACallEndsTheInterruptionWhenBack() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let call = policy.add(2, "call", .call)
    policy.succeed(.streamOutput(hark, Self.headset))
    policy.succeed(.activate(hark))
    policy.succeed(.activate(call))
    // Told again what it waits for now (WirePlumber's MPRIS Pause came a moment before).
    #expect(
      policy.succeed(.holdOutput(Self.headset, holder: holder, cause: Self.switching))
        .interruptions(for: hark) == [.began(Self.switching)])
    #expect(policy.sessions[hark]?.interruptedBy == [call, holder])
    // Its device fails while the headset switches (the stream was ended): no loss.
    #expect(policy.succeed(.outputLost(hark, lost: Self.headset)).isEmpty)
    #expect(
      policy.succeed(.deactivate(call, .notifyOthersOnDeactivation)).interruptions(for: hark)
        .isEmpty)
    #expect(
      policy.succeed(.releaseHold(holder: holder, lost: nil)).interruptions(for: hark) == [
        .ended(shouldResume: true, reason: .interrupterDeactivated)
      ])
  }

  /// G5: the headset went while it switched: told as a loss first, then the interruption
  /// ends without resuming.
  @Test func G5_aHeadsetThatWentDuringTheSwitchIsLost() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    policy.succeed(.streamOutput(hark, Self.headset))
    policy.succeed(.activate(hark))
    #expect(
      policy.succeed(.holdOutput(Self.headset, holder: holder, cause: Self.switching))
        .interruptions(for: hark) == [.began(Self.switching)])
    let notes = policy.succeed(.releaseHold(holder: holder, lost: Self.headset))
    #expect(
      notes.events(for: hark) == [
        .routeChange(
          RouteChange(reason: .oldDeviceUnavailable, previous: Self.headset, current: .speakers)),
        .interruption(.ended(shouldResume: false, reason: .interrupterExited)),
      ])
  }

  /// A session on another output is not held by a headset's switch.
  @Test func aSwitchHoldsOnlyWhatPlaysOnThatOutput() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    policy.succeed(.streamOutput(hark, .speakers))
    policy.succeed(.activate(hark))
    #expect(
      policy.succeed(.holdOutput(Self.headset, holder: holder, cause: Self.switching)).isEmpty)
    #expect(policy.isActive(hark))
    // Its own output failing is a loss as ever.
    #expect(policy.succeed(.outputLost(hark, lost: .speakers)).events(for: hark).count == 1)
  }

  /// G9: a prompt that ducks (hark simulate nav) ducks hark; when the sound server ducks hark's
  /// stream by itself for the same prompt (a role policy), hark's own duck is not added.
  @Test func G9_theSoundServersDuckStandsForThePolicys() {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let nav = policy.add(2, "nav", .spokenNav)
    policy.succeed(.activate(hark))
    #expect(policy.succeed(.activate(nav)).events(for: hark) == [.ducking(isDucked: true)])
    #expect(
      policy.succeed(.duckedBySoundServer(hark, true)).events(for: hark) == [
        .ducking(isDucked: false)
      ])
    #expect(!policy.isDucked(hark))
    // The prompt goes on after the sound server's duck ends (its stream ended first).
    #expect(
      policy.succeed(.duckedBySoundServer(hark, false)).events(for: hark) == [
        .ducking(isDucked: true)
      ])
    #expect(policy.succeed(.deactivate(nav, [])).events(for: hark) == [.ducking(isDucked: false)])
  }

  @Test func unknownSessionsAreRefused() {
    var policy = SessionPolicy()
    let nobody = SessionID(9)
    #expect(
      policy.apply(.holdStream(nobody, holder: holder, cause: Self.alert)).failure
        == .unknownSession(nobody))
    #expect(policy.apply(.duckedBySoundServer(nobody, true)).failure == .unknownSession(nobody))
    #expect(policy.apply(.releaseHold(holder: holder, lost: nil)).failure == nil)
  }
}
