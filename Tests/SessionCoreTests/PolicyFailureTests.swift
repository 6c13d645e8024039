import Testing

@testable import SessionCore

/// `apply(_:)`'s contract: "on failure the state is left as it was" (and `PolicyOutcome`:
/// "the state is then unchanged").
@Suite(.timeLimit(.minutes(2))) struct PolicyFailureTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var event: PolicyEvent
    var failure: PolicyFailure
    var testDescription: String { "\(event)" }
  }

  static let hark = SessionID(1)
  static let call = SessionID(2)
  static let stranger = SessionID(99)

  static let cases: [Case] = [
    Case(event: .activate(hark), failure: .activationRefused(.callInProgress)),
    Case(event: .activate(stranger), failure: .activationRefused(.notRegistered)),
    Case(
      event: .setCategory(stranger, .playback, mode: .default, options: []),
      failure: .unknownSession(stranger)),
    Case(
      event: .deactivate(stranger, .notifyOthersOnDeactivation),
      failure: .unknownSession(stranger)),
    Case(event: .disconnect(stranger), failure: .unknownSession(stranger)),
    Case(
      event: .setCategory(hark, .soloAmbient, mode: .default, options: .duckOthers),
      failure: .optionsNotAllowed(.soloAmbient, .duckOthers)),
    Case(
      event: .setCategory(hark, .ambient, mode: .default, options: .mixWithOthers),
      failure: .optionsNotAllowed(.ambient, .mixWithOthers)),
    Case(
      event: .publish(stranger, info(.playing), enabledCommands: [.play]),
      failure: .unknownSession(stranger)),
    Case(
      event: .route(.plug(.headphones)),
      failure: .route(.alreadyPlugged(Route(name: "Headphones", kind: .headphones)))),
    Case(event: .route(.unplug(.usb)), failure: .route(.notPlugged(.usb))),
    Case(event: .route(.unplug(.speakers)), failure: .route(.cannotUnplugSpeakers)),
    Case(
      event: .route(.select("hdmi")),
      failure: .route(.noSuchRoute("hdmi", available: ["Speakers", "Headphones"]))),
  ]

  /// hark playing and now-playing, interrupted by an active call, on headphones.
  static func busyPolicy() -> SessionPolicy {
    var policy = SessionPolicy()
    policy.add(1, "hark", .music)
    policy.add(2, "call", .call)
    policy.succeed(.publish(hark, info(.playing), enabledCommands: [.pause]))
    policy.succeed(.activate(hark))
    policy.succeed(.activate(call))
    policy.succeed(.route(.plug(.headphones)))
    return policy
  }

  @Test(arguments: cases)
  func failedEventLeavesEveryObservableStateUnchanged(c: Case) {
    var policy = Self.busyPolicy()
    let before = policy
    let outcome = policy.apply(c.event)
    #expect(outcome.failure == c.failure)
    #expect(outcome.notifications.isEmpty)
    #expect(policy.sessions == before.sessions)
    #expect(policy.routes == before.routes)
    #expect(policy.silentMode == before.silentMode)
    #expect(policy.nowPlaying == before.nowPlaying)
    #expect(policy.activeCall == before.activeCall)
  }

  /// The whole value, as `==` and `hash(into:)` see it: a server that compares policies to
  /// decide whether anything changed relies on this.
  @Test(arguments: cases)
  func failedEventLeavesThePolicyValueUnchanged(c: Case) {
    var policy = Self.busyPolicy()
    let before = policy
    #expect(policy.apply(c.event).failure == c.failure)
    #expect(policy == before)
  }
}
