import Glibc
import Logging
import SessionCore
import SessionWire
import Testing

@testable import SessionClient
@testable import SessionServer

/// The session server with real sockets and real `AudioSession` clients, in process.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SessionServerTests {
  private var quietLogger: Logger {
    var l = Logger(label: "second-server")
    l.logLevel = .critical
    return l
  }

  @Test func G13_callHangingUpWithNotifyLetsTheMusicResume() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let music = try await server.client("music")
    let events = EventRecorder(music)
    try await music.setCategory(.playback)
    try await music.setActive(true)

    let call = try await server.client("call")
    try await call.setCategory(.playAndRecord, mode: .voiceCall)
    try await call.setActive(true)
    let began = await events.wait(for: "began") {
      $0 == .interruption(.began(InterruptionCause(kind: .call, by: "call")))
    }
    #expect(began != nil)

    try await call.setActive(false, options: .notifyOthersOnDeactivation)
    let ended = await events.wait(for: "ended") {
      if case .interruption(.ended) = $0 { return true } else { return false }
    }
    #expect(ended == .interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    try await music.setActive(true)
    call.close()
    music.close()
    try await server.stop()
  }

  @Test func G10_activationDuringACallIsRefusedWithTheReason() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let call = try await server.client("call")
    try await call.setCategory(.playAndRecord, mode: .voiceCall)
    try await call.setActive(true)
    let music = try await server.client("music")
    try await music.setCategory(.playback)
    await #expect(throws: SessionClientError.refused(.callInProgress)) {
      try await music.setActive(true)
    }
    let status = try await music.status()
    #expect(status.sessions.first { $0.name == "music" }?.active == false)
    call.close()
    music.close()
    try await server.stop()
  }

  /// A call that crashes must not strand the music paused without a word (G14): the server
  /// ends the interruption without shouldResume, saying the interrupter exited.
  @Test func G14_aCrashedCallEndsTheInterruptionWithoutResume() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let music = try await server.client("music")
    let events = EventRecorder(music)
    try await music.setCategory(.playback)
    try await music.setActive(true)

    let raw = try server.rawConnection()
    raw.send(#"{"type":"hello","version":1,"name":"crashy call"}"# + "\n")
    raw.send(#"{"type":"setCategory","id":1,"category":"playAndRecord","mode":"voiceCall"}"# + "\n")
    raw.send(#"{"type":"setActive","id":2,"active":true}"# + "\n")
    let replies = raw.readLines(3).lines
    #expect(replies.count == 3)
    #expect(replies.dropFirst().allSatisfy { $0.contains(#""ok":true"#) }, "\(replies)")
    _ = await events.wait(for: "began") {
      if case .interruption(.began) = $0 { return true } else { return false }
    }
    raw.close()  // dies without deactivating
    let ended = await events.wait(for: "ended") {
      if case .interruption(.ended) = $0 { return true } else { return false }
    }
    #expect(ended == .interruption(.ended(shouldResume: false, reason: .interrupterExited)))
    try await music.setActive(true)  // the user's play works at once
    music.close()
    try await server.stop()
  }

  @Test func malformedAndOversizedMessagesDoNotTakeTheServerDown() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let bystander = try await server.client("bystander")
    try await bystander.setCategory(.playback)
    try await bystander.setActive(true)

    let raw = try server.rawConnection()
    raw.send("not json at all\n")
    raw.send(#"{"type":"setActive","id":1,"active":true}"# + "\n")  // before hello
    let early = raw.readLines(2)
    #expect(early.lines.first?.contains(#""code":"malformed""#) == true, "\(early.lines)")
    #expect(early.lines.last?.contains(#""code":"helloFirst""#) == true, "\(early.lines)")
    #expect(raw.isClosedByPeer(), "a client that skips hello is disconnected")
    raw.close()

    let chatty = try server.rawConnection()
    chatty.send(#"{"type":"hello","version":1,"name":"chatty"}"# + "\n")
    chatty.send(#"{"type":"setCategory","id":1,"category":"loud"}"# + "\n")
    chatty.send(#"{"type":"frobnicate","id":2}"# + "\n")
    chatty.send("\u{1}\u{2}\u{3}\n")
    let answers = chatty.readLines(4).lines
    #expect(answers.count == 4)
    #expect(answers[1].contains("unknown category 'loud'"))
    #expect(answers[2].contains(#""code":"unknownMessage""#))
    #expect(answers[3].contains(#""code":"malformed""#))
    // A line longer than the limit, never terminated: refused and disconnected.
    _ = chatty.send(bytes: [UInt8](repeating: UInt8(ascii: "x"), count: maximumMessageBytes + 10))
    let last = chatty.readLines(1)
    #expect(last.lines.first?.contains(#""code":"tooLarge""#) == true)
    #expect(chatty.isClosedByPeer())
    chatty.close()

    // Everyone else is still served, and the bystander's session is untouched.
    let status = try await bystander.status()
    #expect(status.sessions.map(\.name) == ["bystander"])
    #expect(status.sessions.first?.active == true)
    bystander.close()
    try await server.stop()
  }

  @Test func aWrongProtocolVersionIsRefusedAndClosed() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let raw = try server.rawConnection()
    raw.send(#"{"type":"hello","version":99,"name":"future"}"# + "\n")
    let reply = raw.readLines(1).lines
    #expect(reply.first?.contains(#""code":"versionMismatch""#) == true, "\(reply)")
    #expect(raw.isClosedByPeer())
    raw.close()
    try await server.stop()
  }

  @Test func aClientThatNeverReadsIsDisconnectedAndTheServerGoesOn() async throws {
    let server = TestServer(maximumPendingOutputBytes: 64 * 1024)
    defer { server.cleanUp() }
    try await server.start()
    let raw = try server.rawConnection()
    raw.send(#"{"type":"hello","version":1,"name":"deaf"}"# + "\n")
    // Ask for far more than the socket buffer and the 64 KiB allowance hold; never read.
    var flood: [UInt8] = []
    for i in 1...3000 { flood += Array((#"{"type":"status","id":\#(i)}"# + "\n").utf8) }
    var sent = 0
    while sent < flood.count {
      let n = raw.send(bytes: Array(flood[sent...]))
      if n <= 0 { break }
      sent += n
    }
    let other = try await server.client("other")
    let status = try await other.status()
    #expect(status.version == protocolVersion)
    #expect(raw.isHungUp(), "the server cut off the client that did not read")
    raw.close()
    other.close()
    try await server.stop()
  }

  @Test func G17_remoteCommandsReachTheNowPlayingAppAndAreAnswered() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let control = try await server.client("hark ctl")
    await #expect(throws: SessionClientError.self) { _ = try await control.send(.pause) }

    let app = try await server.client("music")
    try await app.setCategory(.playback)
    try await app.setActive(true)
    try await app.publish(PlaybackInfo(state: .playing, title: "Song"), commands: [.play, .pause])
    let answering = Task { () -> RemoteCommand? in
      for await incoming in app.commands {
        incoming.respond(incoming.command == .pause ? .success : .commandFailed)
        return incoming.command
      }
      return nil
    }
    #expect(try await control.send(.pause) == .success)
    #expect(await answering.value == .pause)
    app.close()
    control.close()
    try await server.stop()
  }

  @Test func G19_aDisabledCommandIsRefusedAndNeverForwarded() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let app = try await server.client("music")
    try await app.setCategory(.playback)
    try await app.setActive(true)
    try await app.publish(PlaybackInfo(state: .playing, title: "Last song"), commands: [.pause])
    let received = Task { () -> RemoteCommand? in
      for await incoming in app.commands { return incoming.command }
      return nil
    }
    let control = try await server.client("hark ctl")
    let refusal = await serverError { _ = try await control.send(.nextTrack) }
    #expect(refusal?.code == "commandDisabled")
    #expect(refusal?.message == "'music' does not take 'next track' right now")
    app.close()
    #expect(await received.value == nil, "the app never saw the disabled command")
    control.close()
    try await server.stop()
  }

  /// One player per user: files go to the newest connection that accepts them; with none,
  /// `noPlayer`; an app that does not accept files never sees them.
  @Test func filesGoToTheNewestPlayerThatAcceptsThem() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let control = try await server.client("hark play")
    let none = await serverError { _ = try await control.handOver(["/m/a.flac"], placement: .now) }
    #expect(none?.code == "noPlayer")
    #expect(none?.message == "no hark player is running")

    var configuration = AudioSession.Configuration(
      name: "hark", paths: server.paths, autospawn: false)
    configuration.acceptsFiles = true
    let older = try await AudioSession.connect(configuration)
    let newer = try await AudioSession.connect(configuration)
    let other = try await server.client("music")  // a session that takes no files
    // A welcome names the player files go to, so that `hark play` need not ask: none before.
    #expect(control.welcome.player == nil)
    try await newer.setCategory(.playback)  // answered after its acceptFiles
    let later = try await server.client("hark play")
    #expect(later.welcome.player == getpid())
    later.close()
    let received = Task { () -> (paths: [String], placement: QueuePlacement)? in
      for await incoming in newer.files {
        incoming.respond(.success)
        return (incoming.paths, incoming.placement)
      }
      return nil
    }
    #expect(try await control.handOver(["/m/a.flac", "/m/b.flac"], placement: .next) == .success)
    let got = await received.value
    #expect(got?.paths == ["/m/a.flac", "/m/b.flac"])
    #expect(got?.placement == .next)

    // The newest goes: the older one gets the next hand-over, answered as it chooses.
    try await newer.setCategory(.playback)  // listed in the status, so its leaving can be seen
    let gone = newer.welcome.session
    newer.close()
    for _ in 0..<500
    where try await control.status().sessions.contains(where: { $0.session == gone }) {
      try await Task.sleep(for: .milliseconds(10))
    }
    let answered = Task { () -> [String]? in
      for await incoming in older.files {
        incoming.respond(.noSuchContent)
        return incoming.paths
      }
      return nil
    }
    #expect(try await control.handOver([], placement: .end) == .noSuchContent)
    #expect(await answered.value == [])
    older.close()
    other.close()
    control.close()
    try await server.stop()
  }

  /// More files than one 64 KB line holds go in several hand-overs, in order, the first
  /// played now and the rest as what plays next after it.
  @Test func aLongHandOverIsCutIntoLinesThatFitInOrder() throws {
    let paths = (0..<3000).map {
      "/music/a rather long folder name/album \($0 / 12)/track \($0).flac"
    }
    let runs = AudioSession.batches(paths, .now)
    #expect(runs.count > 1)
    #expect(Array(runs.joined()) == paths)
    for run in runs {
      let line = try WireCodec.encode(.request(1, .handOver(paths: run, placement: .next)))
      #expect(line.count <= maximumMessageBytes)
    }
    #expect(AudioSession.batches([], .end) == [[]])
  }

  /// `hark ctl --player NAME` reaches that app even when another is the now-playing app, and
  /// G19 holds for it as for the now-playing app.
  @Test func G17_G19_aCommandToANamedAppReachesItAndKeepsG19() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let hark = try await server.client("hark")
    try await hark.setCategory(.playback)
    try await hark.publish(PlaybackInfo(state: .paused, title: "Mine"), commands: [.play])
    let music = try await server.client("music")
    try await music.setCategory(.playback)
    try await music.setActive(true)
    try await music.publish(PlaybackInfo(state: .playing, title: "Theirs"), commands: [.pause])
    let received = Task { () -> RemoteCommand? in
      for await incoming in hark.commands {
        incoming.respond(.success)
        return incoming.command
      }
      return nil
    }
    let control = try await server.client("hark ctl")
    #expect(try await control.send(.play, to: "hark") == .success)
    #expect(await received.value == .play)
    let disabled = await serverError { _ = try await control.send(.nextTrack, to: "hark") }
    #expect(disabled?.code == "commandDisabled")
    let byPid = await serverError { _ = try await control.send(.play, to: "999999") }
    #expect(byPid?.message == "no session has pid 999999")
    let nobody = await serverError { _ = try await control.send(.play, to: "nobody") }
    #expect(nobody?.code == "noSuchApp")
    #expect(nobody?.message == "no app named 'nobody' is connected")
    hark.close()
    music.close()
    control.close()
    try await server.stop()
  }

  @Test func G3_G19_aVolumeCommandOnAnOutputWithoutAVolumeControlSaysSo() {
    let refusal = SessionServer.refusal(
      .volumeUp, by: "hark", playing: PlaybackInfo(state: .playing, output: "null", volume: nil))
    #expect(refusal == "'hark' cannot change the volume: its output 'null' has no volume control")
  }

  /// G16: the server goes away and another takes its place; the client re-registers its
  /// category, activation and now-playing info, and says so.
  @Test func G16_aClientReRegistersWithANewServer() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let app = try await server.client("music")
    let events = EventRecorder(app)
    try await app.setCategory(.playback, options: [.mixWithOthers])
    try await app.setActive(true)
    try await app.publish(PlaybackInfo(state: .playing, title: "Kept"), commands: [.pause])

    try await server.stop()
    try await server.start()
    let reset = await events.wait(for: "reset") { $0 == .mediaServicesWereReset }
    #expect(reset != nil)
    let status = try await app.status()
    let mine = try #require(status.sessions.first { $0.name == "music" })
    #expect(mine.active)
    #expect(mine.category == .playback)
    #expect(mine.options == ["mixWithOthers"])
    #expect(mine.playback?.title == "Kept")
    app.close()
    try await server.stop()
  }

  @Test func G2_silentModeSurvivesAServerRestart() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let control = try await server.client("hark silent")
    try await control.setSilentMode(true)
    control.close()
    try await server.stop()
    try await server.start()
    let again = try await server.client("hark status")
    #expect(try await again.status().silent)
    again.close()
    try await server.stop()
  }

  @Test func simulatedRoutesAreAnnouncedAndErrorsNamed() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let app = try await server.client("music")
    let events = EventRecorder(app)
    try await app.setCategory(.playback)
    try await app.route(.plug(.headphones))
    try await app.route(.unplug(.headphones))
    let unplugged = await events.wait(for: "oldDeviceUnavailable") {
      if case .routeChange(let c) = $0, c.reason == .oldDeviceUnavailable { return true }
      return false
    }
    guard case .routeChange(let change) = unplugged else { return }
    #expect(change.previous.kind == .headphones)
    #expect(change.current == .speakers)
    let e = await serverError { try await app.route(.select("Moon")) }
    #expect(e?.code == "route")
    #expect(e?.message.contains("'Moon'") == true)
    app.close()
    try await server.stop()
  }

  @Test func idleServerExitsAfterItsLastClientLeaves() async throws {
    let server = TestServer(idleExit: .milliseconds(300))
    defer { server.cleanUp() }
    try await server.start()
    let c = try await server.client("brief")
    c.close()
    var running = true
    for _ in 0..<300 {
      running = SessionServer.isRunning(server.paths)
      if !running { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(!running)
    #expect(access(server.paths.socket, F_OK) != 0, "the socket file is removed")
  }

  @Test func aSecondServerStepsAsideForTheFirst() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let second = SessionServer(
      configuration: .init(paths: server.paths, idleExit: nil), logger: quietLogger)
    #expect(throws: ServerStartError.self) { try second.run() }
    let c = try await server.client("still")
    #expect(try await c.status().version == protocolVersion)
    c.close()
    try await server.stop()
  }
}
