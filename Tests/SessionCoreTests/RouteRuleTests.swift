import Testing

@testable import SessionCore

/// G4–G6 at the policy level: route changes reach every session, errors change nothing.
@Suite(.timeLimit(.minutes(2))) struct RouteRuleTests {
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

  // MARK: A session's own output (the sound server's sink its stream is on)

  /// The route of a session whose stream the sound server reports is that stream's sink; of
  /// one without, the current output.
  @Test func aSessionsRouteIsTheSinkItsStreamIsOnElseTheCurrentOutput() {
    var (policy, hark, idle) = twoApps()
    policy.succeed(.sinkRoute(.add(Self.bluetooth)))
    #expect(policy.succeed(.streamOutput(hark, .speakers)).isEmpty, "where it already was")
    #expect(policy.route(of: hark) == .speakers)
    policy.succeed(.sinkRoute(.select("Bluetooth headset")))
    #expect(policy.route(of: hark) == .speakers, "its stream stays where it is")
    #expect(policy.route(of: idle) == Self.bluetooth, "a new stream would go to the default")
  }

  /// The route of a playing session is the sink its stream is on: a headset that becomes the
  /// default while hark's stream stays on the speakers is not hark's route; its leaving is no
  /// reason for hark to pause (G4, G5).
  @Test func G5_theDefaultLeavingDoesNotPauseASessionPlayingElsewhere() {
    var (policy, hark, idle) = twoApps()
    policy.succeed(.streamOutput(hark, .speakers))
    let came = policy.succeed(.sinkRoute(.attach(Self.bluetooth)))
    #expect(came.events(for: hark) == [], "hark's sound did not move")
    #expect(came.events(for: idle).count == 1)
    let went = policy.succeed(.sinkRoute(.detach(Self.bluetooth)))
    #expect(went.events(for: hark) == [], "hark's sink is still there")
    #expect(
      went.events(for: idle) == [
        .routeChange(
          RouteChange(reason: .oldDeviceUnavailable, previous: Self.bluetooth, current: .speakers))
      ])
  }

  /// G5: the sink hark's stream is on goes: hark hears it once, through outputLost, as
  /// oldDeviceUnavailable; not a second time from the device's detach.
  @Test func G5_theSinkASessionPlaysOnGoingAwayIsToldOnce() {
    var (policy, hark, _) = twoApps()
    policy.succeed(.sinkRoute(.attach(Self.bluetooth)))
    policy.succeed(.streamOutput(hark, Self.bluetooth))
    #expect(policy.succeed(.sinkRoute(.detach(Self.bluetooth))).events(for: hark) == [])
    #expect(
      policy.succeed(.outputLost(hark, lost: Self.bluetooth)).events(for: hark) == [
        .routeChange(
          RouteChange(reason: .oldDeviceUnavailable, previous: Self.bluetooth, current: .speakers))
      ])
  }

  /// G6: the stream moved to another sink (by the user, or by the desktop's policy): the app
  /// hears of its new output as an override, and goes on.
  @Test func G6_aStreamMovedToAnotherSinkIsAnOverride() {
    var (policy, hark, idle) = twoApps()
    policy.succeed(.sinkRoute(.add(Self.bluetooth)))
    policy.succeed(.streamOutput(hark, .speakers))
    let notes = policy.succeed(.streamOutput(hark, Self.bluetooth))
    #expect(
      notes.events(for: hark) == [
        .routeChange(RouteChange(reason: .override, previous: .speakers, current: Self.bluetooth))
      ])
    #expect(notes.events(for: idle) == [])
    #expect(policy.isActive(hark))
    // Its stream gone (closed on a pause), its route is the current output again.
    #expect(
      policy.succeed(.streamOutput(hark, nil)).events(for: hark) == [
        .routeChange(RouteChange(reason: .override, previous: Self.bluetooth, current: .speakers))
      ])
  }

  /// G5: headphones pulled from a jack pause hark even while its stream is on a sound server's
  /// sink: the server switches that sink's port to the speakers, no sink goes (a jack's or a
  /// simulated route is everyone's, unlike a sink's).
  @Test func G5_aJackStillPausesASessionPlayingOnASink() {
    var (policy, hark, _) = twoApps()
    policy.succeed(.route(.attach(Self.headphones)))
    policy.succeed(.streamOutput(hark, .speakers))
    #expect(
      policy.succeed(.route(.detach(Self.headphones))).events(for: hark) == [
        .routeChange(
          RouteChange(reason: .oldDeviceUnavailable, previous: Self.headphones, current: .speakers))
      ])
  }
}
