import Testing

@testable import SessionCore

/// G4–G6 at the policy level: route changes reach every session, errors change nothing.
@Suite struct RouteRuleTests {
  static let headphones = Route(name: "Headphones", kind: .headphones)
  static let bluetooth = Route(name: "Bluetooth headset", kind: .bluetooth)
  static let usb = Route(name: "USB audio", kind: .usb)

  /// hark playing and an idle app, on the speakers.
  private func twoApps() -> (SessionPolicy, hark: SessionID, idle: SessionID) {
    var policy = SessionPolicy()
    let hark = policy.add(1, "hark", .music)
    let idle = policy.add(2, "idle", .game)
    policy.succeed(.activate(hark))
    return (policy, hark, idle)
  }

  @Test func G4_pluggingHeadphonesTellsEverySessionNewDeviceAvailable() {
    var (policy, hark, idle) = twoApps()
    let notes = policy.succeed(.route(.plug(.headphones)))
    let change = RouteChange(
      reason: .newDeviceAvailable, previous: .speakers, current: Self.headphones)
    #expect(notes.events(for: hark) == [.routeChange(change)])
    #expect(notes.events(for: idle) == [.routeChange(change)])
    #expect(notes.count == 2)
    #expect(policy.routes.current == Self.headphones)
    // G4: what was playing goes on; the policy neither pauses nor deactivates it.
    #expect(policy.isActive(hark))
  }

  @Test func G5_unpluggingTheCurrentOutputFallsBackWithOldDeviceUnavailable() {
    var (policy, hark, idle) = twoApps()
    policy.succeed(.route(.plug(.headphones)))
    let notes = policy.succeed(.route(.unplug(.headphones)))
    let change = RouteChange(
      reason: .oldDeviceUnavailable, previous: Self.headphones, current: .speakers)
    #expect(notes.events(for: hark) == [.routeChange(change)])
    #expect(notes.events(for: idle) == [.routeChange(change)])
    #expect(policy.routes.current == .speakers)
    #expect(policy.routes.available == [.speakers])
  }

  @Test func G5_unpluggingFallsBackToTheMostRecentlyPluggedOutput() {
    var (policy, hark, _) = twoApps()
    policy.succeed(.route(.plug(.headphones)))
    policy.succeed(.route(.plug(.bluetooth)))
    let notes = policy.succeed(.route(.unplug(.bluetooth)))
    #expect(
      notes.events(for: hark) == [
        .routeChange(
          RouteChange(
            reason: .oldDeviceUnavailable, previous: Self.bluetooth, current: Self.headphones))
      ])
    #expect(policy.routes.current == Self.headphones)
  }

  @Test func G5_unpluggingAnOutputNotInUseNotifiesNobody() {
    var (policy, _, _) = twoApps()
    policy.succeed(.route(.plug(.headphones)))
    policy.succeed(.route(.plug(.usb)))
    let notes = policy.succeed(.route(.unplug(.headphones)))
    #expect(notes.isEmpty)
    #expect(policy.routes.current == Self.usb)
    #expect(policy.routes.available == [.speakers, Self.usb])
  }

  @Test func G5_pluggingBackInIsANewDeviceNotARestart() {
    var (policy, hark, _) = twoApps()
    policy.succeed(.route(.plug(.headphones)))
    policy.succeed(.route(.unplug(.headphones)))
    let notes = policy.succeed(.route(.plug(.headphones)))
    #expect(
      notes.events(for: hark) == [
        .routeChange(
          RouteChange(reason: .newDeviceAvailable, previous: .speakers, current: Self.headphones))
      ])
    #expect(notes.interruptions.isEmpty)
  }

  @Test(arguments: ["speakers", "Speakers", "SPEAKERS"])
  func G6_selectingAnOutputIsAnOverride(name: String) {
    var (policy, hark, idle) = twoApps()
    policy.succeed(.route(.plug(.headphones)))
    let notes = policy.succeed(.route(.select(name)))
    let change = RouteChange(reason: .override, previous: Self.headphones, current: .speakers)
    #expect(notes.events(for: hark) == [.routeChange(change)])
    #expect(notes.events(for: idle) == [.routeChange(change)])
    #expect(policy.routes.current == .speakers)
    // The plugged output stays on the list for the route picker.
    #expect(policy.routes.available == [.speakers, Self.headphones])
    #expect(policy.isActive(hark))
  }

  @Test func G6_selectingTheCurrentOutputNotifiesNobody() {
    var (policy, _, _) = twoApps()
    let notes = policy.succeed(.route(.select("Speakers")))
    #expect(notes.isEmpty)
    #expect(policy.routes.current == .speakers)
  }

  struct ErrorCase: Sendable, CustomTestStringConvertible {
    var setup: [RouteAction]
    var action: RouteAction
    var error: RouteError
    var testDescription: String { "\(action)" }
  }

  static let errorCases: [ErrorCase] = [
    ErrorCase(
      setup: [.plug(.headphones)], action: .plug(.headphones),
      error: .alreadyPlugged(headphones)),
    ErrorCase(setup: [], action: .plug(.speakers), error: .alreadyPlugged(.speakers)),
    ErrorCase(setup: [.plug(.headphones)], action: .unplug(.usb), error: .notPlugged(.usb)),
    ErrorCase(setup: [], action: .unplug(.speakers), error: .cannotUnplugSpeakers),
    ErrorCase(
      setup: [.plug(.headphones)], action: .select("hdmi"),
      error: .noSuchRoute("hdmi", available: ["Speakers", "Headphones"])),
  ]

  @Test(arguments: errorCases)
  func G6_routeErrorsAreReportedAndNotifyNobody(c: ErrorCase) {
    var (policy, _, _) = twoApps()
    for action in c.setup { policy.succeed(.route(action)) }
    let routesBefore = policy.routes
    let sessionsBefore = policy.sessions

    let outcome = policy.apply(.route(c.action))
    #expect(outcome.failure == .route(c.error))
    #expect(outcome.notifications.isEmpty)
    #expect(policy.routes == routesBefore)
    #expect(policy.sessions == sessionsBefore)
  }

  @Test func G6_noSuchRouteNamesTheOutputsThereAre() {
    var (policy, _, _) = twoApps()
    policy.succeed(.route(.plug(.headphones)))
    let failure = policy.apply(.route(.select("hdmi"))).failure
    #expect(
      failure?.description == "no output named 'hdmi'; the outputs are: Speakers, Headphones")
  }
}
