import Glibc
import Platform
import SessionCore
import SessionWire
import Testing

@testable import SessionClient
@testable import SessionServer

/// What the server makes of the sound server's news (sinks, streams, the default), with a real
/// server and client in process: the watcher's events are posted by hand, as the sound-server
/// watcher posts them.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SoundServerEventTests {
  static let headset = Route(name: "Bluetooth headset", kind: .bluetooth)

  /// The streams the server asked to end, in order.
  final class Silenced: Sendable {
    private let list = Locked<[UInt32]>([])
    func add(_ s: UInt32) { list.withLock { $0.append(s) } }
    var all: [UInt32] { list.withLock { $0 } }
  }

  func route(of name: String, in report: StatusReport) -> Route? {
    report.sessions.first { $0.name == name }?.route
  }

  /// The server's status once `done` holds for it (posted events are handled a moment later),
  /// or the last one seen after 2 s.
  func status(
    of app: AudioSession, once done: (StatusReport) -> Bool
  ) async throws -> StatusReport {
    var report = try await app.status()
    for _ in 0..<200 where !done(report) {
      try await Task.sleep(for: .milliseconds(10))
      report = try await app.status()
    }
    return report
  }

  /// G5: the sink hark's stream is on goes: the app is told (oldDeviceUnavailable, naming the
  /// headset), then the stream the sound server moved is ended, never muted.
  /// What one report of the sound server means (an output gone, the stream that lost it) is
  /// posted at once: the loop is woken once and finds all of it, in order (woken at the first,
  /// it took the core from the watcher's thread, and the stream was ended 10 ms later).
  @Test func G5_oneReportsEventsAreFoundTogetherInOrder() {
    let external = ExternalEvents()
    let batch: [ExternalEvent] = [
      .sinkRoute(.detach(Self.headset)), .outputLost(pid: 7, stream: 9, lost: Self.headset),
      .streamOutput(pid: 7, stream: 9, output: .speakers),
    ]
    external.post(batch)
    var ready = pollfd(fd: external.fd, events: Int16(POLLIN), revents: 0)
    #expect(poll(&ready, 1, 0) == 1, "the loop was not woken")
    #expect(external.drain() == batch)
    ready.revents = 0
    #expect(poll(&ready, 1, 0) == 0, "woken again with nothing left")
    external.post([])
    #expect(poll(&ready, 1, 0) == 0, "woken for nothing")
  }

  @Test(.timeLimit(.minutes(2)))
  func G5_aLostStreamIsToldThenEnded() async throws {
    let external = ExternalEvents()
    let silenced = Silenced()
    external.setSilencer { silenced.add($0) }
    let server = TestServer(external: external)
    defer { server.cleanUp() }
    try await server.start()
    let app = try await server.client("hark")
    let events = EventRecorder(app)
    try await app.setCategory(.playback)
    try await app.setActive(true)
    let me = getpid()

    external.post(.sinkRoute(.attach(Self.headset)))
    external.post(.streamOutput(pid: me, stream: 7, output: Self.headset))
    let report = try await status(of: app) { route(of: "hark", in: $0) == Self.headset }
    #expect(route(of: "hark", in: report) == Self.headset)

    // Another program's stream losing its sink is not hark's business.
    external.post(.outputLost(pid: me + 100_000, stream: 8, lost: Self.headset))
    external.post(.sinkRoute(.detach(Self.headset)))
    external.post(.outputLost(pid: me, stream: 7, lost: Self.headset))
    let lost = await events.wait(for: "oldDeviceUnavailable") {
      if case .routeChange(let c) = $0, c.reason == .oldDeviceUnavailable { return true }
      return false
    }
    guard case .routeChange(let change) = lost else { return }
    #expect(change.previous == Self.headset)
    for _ in 0..<200 where silenced.all.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
    #expect(silenced.all == [7], "only hark's own moved stream is ended, once")
    let lostCount = events.all.filter {
      if case .routeChange(let c) = $0, c.reason == .oldDeviceUnavailable { return true }
      return false
    }.count
    #expect(lostCount == 1, "told once, not again by the headset's detach: \(events.all)")
    app.close()
    try await server.stop()
  }

  /// G5: an app that paused just before its output went (WirePlumber's own MPRIS Pause for a
  /// sink that goes reaches it first, by up to 78 ms beside a busy core) is still heard, its
  /// ramp and what the sound server keeps: its moved stream is ended too. One that paused long
  /// before is silent; its stream is left to it.
  @Test(.timeLimit(.minutes(2)), arguments: [false, true])
  func G5_aStreamPausedJustBeforeItsOutputWentIsEndedToo(longBefore: Bool) async throws {
    let external = ExternalEvents()
    let silenced = Silenced()
    external.setSilencer { silenced.add($0) }
    // The window: long for the pause just before (nothing this test does may outlast it), short
    // for the one long before.
    let window: Duration = longBefore ? .milliseconds(50) : .seconds(30)
    let server = TestServer(external: external, silencesJustPaused: window)
    defer { server.cleanUp() }
    try await server.start()
    let app = try await server.client("hark")
    try await app.setCategory(.playback)
    try await app.setActive(true)
    let me = getpid()
    external.post(.sinkRoute(.attach(Self.headset)))
    external.post(.streamOutput(pid: me, stream: 7, output: Self.headset))
    _ = try await status(of: app) { route(of: "hark", in: $0) == Self.headset }

    try await app.setActive(false)
    // Past the window, by the server's clock as by this one (the pause was taken before
    // setActive answered).
    if longBefore { try await Task.sleep(for: .milliseconds(80)) }
    external.post(.sinkRoute(.detach(Self.headset)))
    external.post(.outputLost(pid: me, stream: 7, lost: Self.headset))
    // Events are handled in order: once this one shows, the ones before it have been.
    let sentinel = Route(name: "Sentinel HDMI", kind: .hdmi)
    external.post(.sinkRoute(.add(sentinel)))
    _ = try await status(of: app) { $0.routes.contains(sentinel) }
    #expect(silenced.all == (longBefore ? [] : [7]))
    app.close()
    try await server.stop()
  }

  /// The route of a playing session is the sink its stream is on: a headset that comes and goes
  /// while hark's stream stays on the speakers is not hark's route, and its going does not pause
  /// hark.
  @Test(.timeLimit(.minutes(2)))
  func G4_G5_aHeadsetBesideHarksSinkIsNotItsRoute() async throws {
    let external = ExternalEvents()
    let server = TestServer(external: external)
    defer { server.cleanUp() }
    try await server.start()
    let app = try await server.client("hark")
    let events = EventRecorder(app)
    try await app.setCategory(.playback)
    try await app.setActive(true)
    external.post(.streamOutput(pid: getpid(), stream: 3, output: .speakers))
    external.post(.sinkRoute(.attach(Self.headset)))
    external.post(.sinkRoute(.detach(Self.headset)))
    // Events are handled in order: once this one shows, the ones before it have been.
    let sentinel = Route(name: "Sentinel HDMI", kind: .hdmi)
    external.post(.sinkRoute(.add(sentinel)))
    let report = try await status(of: app) { $0.routes.contains(sentinel) }
    #expect(report.routes.contains(sentinel))
    #expect(!report.routes.contains(Self.headset))
    #expect(report.route == .speakers, "an added output is not current")
    #expect(route(of: "hark", in: report) == .speakers)
    #expect(
      !events.all.contains {
        if case .routeChange = $0 { return true } else { return false }
      }, "hark's sound did not move: \(events.all)")
    app.close()
    try await server.stop()
  }

  /// hark's own phone-role streams (`hark call` plays with the phone role) already have a call
  /// session; only other programs' become one.
  @Test(.timeLimit(.minutes(2)))
  func G11_onlyOtherProgramsPhoneStreamsBecomeCalls() async throws {
    let external = ExternalEvents()
    let server = TestServer(external: external)
    defer { server.cleanUp() }
    try await server.start()
    let app = try await server.client("call")
    try await app.setCategory(.playAndRecord, mode: .voiceCall)
    external.post(.phoneStream(began: true, key: 1, name: "hark", pid: getpid()))
    external.post(.phoneStream(began: true, key: 2, name: "Firefox", pid: getpid() + 100_000))
    let report = try await status(of: app) { r in
      r.sessions.contains { $0.name.contains("Firefox") }
    }
    let names = report.sessions.map(\.name)
    #expect(names.contains("phone call (Firefox)"))
    #expect(!names.contains("phone call (hark)"), "\(names)")
    app.close()
    try await server.stop()
  }

  /// G13, G14: another program's Alert corks hark's stream (a role policy): the app is
  /// interrupted, and resumes when the Alert ends. hark's own apps holding each other back are
  /// the policy's business, not a hold.
  @Test(.timeLimit(.minutes(2)))
  func G13_aStreamHeldBackByTheSoundServerIsAnInterruption() async throws {
    let external = ExternalEvents()
    let server = TestServer(external: external)
    defer { server.cleanUp() }
    try await server.start()
    let app = try await server.client("hark")
    let events = EventRecorder(app)
    try await app.setCategory(.playback)
    try await app.setActive(true)
    let me = getpid()
    // Held back by a hark app's own stream (this process): nothing.
    external.post(.streamHeld(pid: me, stream: 7, by: 8, byPid: me, name: "hark"))
    external.post(.streamHeld(pid: me, stream: 7, by: 9, byPid: me + 100_000, name: "paplay"))
    let began = await events.wait(for: "began") {
      if case .interruption(.began) = $0 { return true }
      return false
    }
    #expect(began == .interruption(.began(InterruptionCause(kind: .otherAudio, by: "paplay"))))
    external.post(.holdEnded(by: 9))
    let ended = await events.wait(for: "ended") {
      if case .interruption(.ended) = $0 { return true }
      return false
    }
    #expect(ended == .interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    app.close()
    try await server.stop()
  }

  /// G9: the sound server ducking hark's stream by itself stands for the policy's duck.
  @Test(.timeLimit(.minutes(2)))
  func G9_aStreamTheSoundServerDucksIsNotDuckedTwice() async throws {
    let external = ExternalEvents()
    let server = TestServer(external: external)
    defer { server.cleanUp() }
    try await server.start()
    let app = try await server.client("hark")
    let events = EventRecorder(app)
    try await app.setCategory(.playback)
    try await app.setActive(true)
    let nav = try await server.client("nav")
    try await nav.setCategory(.playback, options: [.duckOthers])
    try await nav.setActive(true)
    _ = await events.wait(for: "ducked") { $0 == .ducking(isDucked: true) }
    external.post(.streamDucked(pid: getpid(), stream: 7, ducked: true))
    _ = await events.wait(for: "not ducked") { $0 == .ducking(isDucked: false) }
    #expect(events.all.filter { $0 == .ducking(isDucked: false) }.count >= 1)
    nav.close()
    app.close()
    try await server.stop()
  }
}
