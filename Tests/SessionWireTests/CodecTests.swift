import SessionCore
import Testing

@testable import SessionWire

private func roundTrip(_ m: ClientMessage) throws -> ClientMessage {
  var line = try WireCodec.encode(m)
  #expect(line.last == UInt8(ascii: "\n"))
  #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false, "one message, one line")
  line.removeLast()
  return try WireCodec.decodeClient(line)
}

private func roundTrip(_ m: ServerMessage) throws -> ServerMessage {
  var line = try WireCodec.encode(m)
  #expect(line.last == UInt8(ascii: "\n"))
  line.removeLast()
  return try WireCodec.decodeServer(line)
}

private func decodeError(_ text: String) -> WireDecodeError? {
  do {
    _ = try WireCodec.decodeClient(Array(text.utf8))
    return nil
  } catch {
    return error
  }
}

@Suite(.timeLimit(.minutes(2))) struct ClientMessageTests {
  static let messages: [ClientMessage] = [
    .hello(version: 1, name: "hark \"quoted\"\nname", role: nil),
    .hello(version: 1, name: "alarm", role: .alarm),
    .request(1, .setCategory(.playback, mode: .default, options: [.mixWithOthers, .duckOthers])),
    .request(2, .setCategory(.playAndRecord, mode: .voiceCall, options: [])),
    .request(3, .setActive(true, options: [])),
    .request(4, .setActive(false, options: .notifyOthersOnDeactivation)),
    .request(
      5,
      .publish(
        PlaybackInfo(
          state: .paused, title: "Ünïcode ✓", artist: "A", album: "B", duration: 201.5,
          position: 12.25, rate: 0, pausedBy: .interruption),
        commands: [.play, .nextTrack])),
    .request(6, .publish(nil, commands: [])),
    .request(7, .otherAudioPlaying),
    .request(8, .status),
    .request(9, .setSilent(true)),
    .request(10, .route(.plug(.bluetooth))),
    .request(11, .route(.unplug(.headphones))),
    .request(12, .route(.select("USB audio"))),
    .request(13, .command(.changePlaybackPosition(seconds: 42))),
    .request(14, .command(.nextTrack)),
    .request(15, .command(.volumeUp(percent: 5))),
    .request(18, .command(.play, app: "hark")),
    .request(19, .acceptFiles),
    .request(20, .handOver(paths: ["/music/a b.flac", "/music/\u{1}odd"], placement: .next)),
    .request(16, .stopServer),
    .commandResult(17, .commandDisabled),
    .request(21, .setTimer(SleepTimerSetting(.duration(seconds: 1800), fade: 5))),
    .request(22, .setTimer(SleepTimerSetting(.endOfTrack, fade: 0))),
    .request(23, .setTimer(SleepTimerSetting(.endOfChapter, fade: 12.5))),
    .request(24, .setTimer(nil)),
  ]

  @Test(arguments: messages)
  func everyClientMessageSurvivesTheWire(_ message: ClientMessage) throws {
    #expect(try roundTrip(message) == message)
  }

  @Test func lineThatIsNotJSONIsMalformedWithoutRequestID() throws {
    let e = try #require(decodeError("garbage"))
    #expect(e.requestID == nil)
    #expect(e.error.code == "malformed")
  }

  @Test func unknownTypeIsAnsweredToItsRequest() throws {
    let e = try #require(decodeError(#"{"type":"dance","id":7}"#))
    #expect(e.requestID == 7)
    #expect(e.error.code == "unknownMessage")
    #expect(e.error.message.contains("dance"))
  }

  @Test func missingFieldIsNamed() throws {
    let e = try #require(decodeError(#"{"type":"setActive","id":3}"#))
    #expect(e.requestID == 3)
    #expect(e.error.code == "badRequest")
    #expect(e.error.message.contains("'active'"))
  }

  @Test func unknownEnumValuesAreRefusedByName() throws {
    let category = try #require(decodeError(#"{"type":"setCategory","id":1,"category":"loud"}"#))
    #expect(category.error.message == "unknown category 'loud'")
    let option = try #require(
      decodeError(#"{"type":"setCategory","id":1,"category":"playback","options":["shout"]}"#))
    #expect(option.error.code == "badRequest")
    let kind = try #require(decodeError(#"{"type":"route","id":1,"action":"plug","kind":"radio"}"#))
    #expect(kind.error.message == "unknown kind 'radio'")
  }

  @Test func commandArgumentsMustBeFiniteAndNonNegative() throws {
    let missing = try #require(
      decodeError(#"{"type":"command","id":1,"kind":"changePlaybackPosition"}"#))
    #expect(missing.error.code == "badRequest")
    let negative = try #require(
      decodeError(#"{"type":"command","id":1,"kind":"skipForward","argument":-3}"#))
    #expect(negative.error.code == "badRequest")
  }

  @Test func wrongFieldTypeIsMalformed() throws {
    let e = try #require(decodeError(#"{"type":"setActive","id":1,"active":"yes"}"#))
    #expect(e.error.code == "malformed")
    #expect(e.error.message.contains("active"))
  }

  /// A request whose fields cannot be read is still answered, or its sender waits for ever.
  @Test func aBadFieldStillNamesItsRequest() throws {
    let e = try #require(
      decodeError(#"{"type":"publish","id":12,"playback":{"state":"loud"},"commands":[]}"#))
    #expect(e.requestID == 12)
    #expect(e.error.code == "malformed")
  }

  @Test func unknownTypeWithoutIDIsStillUnknown() throws {
    let e = try #require(decodeError(#"{"type":"dance"}"#))
    #expect(e.error.code == "unknownMessage")
  }

  @Test func requestsNeedAnID() throws {
    let e = try #require(decodeError(#"{"type":"status"}"#))
    #expect(e.requestID == nil)
    #expect(e.error.message.contains("'id'"))
  }

  /// A timer the server cannot use is refused by name, answered to its request.
  @Test func aTimerOutOfRangeIsABadRequestNamingTheValue() throws {
    let unknown = try #require(decodeError(#"{"type":"setTimer","id":1,"mode":"bedtime"}"#))
    #expect(unknown.requestID == 1)
    #expect(unknown.error.message == "unknown timer mode 'bedtime'")
    let noSeconds = try #require(decodeError(#"{"type":"setTimer","id":2,"mode":"duration"}"#))
    #expect(noSeconds.error.message == "'setTimer' needs the field 'seconds'")
    let long = try #require(
      decodeError(#"{"type":"setTimer","id":3,"mode":"duration","seconds":90000}"#))
    #expect(long.error.code == "badRequest")
    #expect(long.error.message.contains("90000"))
    let fade = try #require(
      decodeError(#"{"type":"setTimer","id":4,"mode":"endOfTrack","fade":-1}"#))
    #expect(fade.error.message.contains("fade"))
    let noMode = try #require(decodeError(#"{"type":"setTimer","id":5}"#))
    #expect(noMode.error.message == "'setTimer' needs the field 'mode'")
  }

  /// Without `fade`, the phone's few seconds.
  @Test func aTimerWithoutAFadeFadesTheDefault() throws {
    let m = try WireCodec.decodeClient(
      Array(#"{"type":"setTimer","id":1,"mode":"endOfTrack"}"#.utf8))
    #expect(m == .request(1, .setTimer(SleepTimerSetting(.endOfTrack, fade: 5))))
  }
}

@Suite(.timeLimit(.minutes(2))) struct ServerMessageTests {
  static let report = StatusReport(
    version: 1, serverPid: 42, silent: true, route: .speakers,
    routes: [.speakers, Route(name: "Headphones", kind: .headphones)],
    sessions: [
      SessionStatus(
        session: SessionID(3), pid: 100, name: "music", category: .playback, mode: .default,
        options: ["mixWithOthers"], active: true, interrupted: false, ducked: true, muted: false,
        nowPlaying: true, playback: PlaybackInfo(state: .playing, title: "T"), commands: [.play]),
      SessionStatus(
        session: SessionID(4), pid: 101, name: "game", category: .ambient, mode: .default,
        options: [], active: false, interrupted: true, ducked: false, muted: true,
        nowPlaying: false, playback: nil, commands: []),
    ], nowPlaying: 100,
    timer: SleepTimerStatus(
      state: .running, mode: .duration(seconds: 1800), fade: 5, remaining: 1799.5))

  static let messages: [ServerMessage] = [
    .welcome(
      Welcome(version: 1, session: SessionID(9), serverPid: 7, silent: false, route: .speakers)),
    .welcome(
      Welcome(
        version: 1, session: SessionID(10), serverPid: 7, silent: true, route: .speakers,
        player: 4242)),
    .reply(1, .success(.none)),
    .reply(2, .success(.otherAudioPlaying(true))),
    .reply(3, .success(.status(report))),
    .reply(4, .success(.commandStatus(.noSuchContent))),
    .reply(5, .failure(WireError(code: "callInProgress", message: "a call is in progress"))),
    .error(WireError(code: "tooLarge", message: "too long")),
    .command(12, .skipBackward(seconds: 10)),
    .command(13, .togglePlayPause),
    .handOver(14, paths: ["/music/é.flac"], placement: .now),
    .event(.interruption(.began(InterruptionCause(kind: .call, by: "call")))),
    .event(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated))),
    .event(.interruption(.ended(shouldResume: false, reason: .interrupterExited))),
    .event(
      .routeChange(
        RouteChange(
          reason: .oldDeviceUnavailable, previous: Route(name: "Headphones", kind: .headphones),
          current: .speakers))),
    .event(.silenceSecondaryAudioHint(.begin)),
    .event(.ducking(isDucked: true)),
    .event(.silentMode(isOn: true, mutesThisSession: false)),
    .event(.nowPlaying(isNowPlaying: true)),
    .event(.mediaServicesWereReset),
    .event(
      .sleepTimer(
        SleepTimerStatus(state: .running, mode: .endOfChapter, fade: 5, remaining: nil))),
    .event(
      .sleepTimer(
        SleepTimerStatus(state: .ended, mode: .endOfTrack, fade: 0, apps: ["hark", "mpv"]))),
    .event(.sleepTimer(nil)),
    .event(.sleepTimerEnded(fade: 4.5)),
  ]

  @Test(arguments: messages)
  func everyServerMessageSurvivesTheWire(_ message: ServerMessage) throws {
    #expect(try roundTrip(message) == message)
  }

  /// `hark status --json` readers rely on these keys being present, null or not.
  @Test func statusReportWritesNullsRatherThanOmittingKeys() throws {
    var r = Self.report
    r.nowPlaying = nil
    r.timer = nil
    let text = String(
      decoding: try WireCodec.encode(.reply(1, .success(.status(r)))), as: UTF8.self)
    #expect(text.contains(#""nowPlaying":null"#))
    #expect(text.contains(#""playback":null"#))
    #expect(text.contains(#""pausedBy":null"#))
    #expect(text.contains(#""duration":null"#))
    #expect(text.contains(#""chapterEnd":null"#))
    #expect(text.contains(#""timer":null"#))
    var running = Self.report
    running.timer = SleepTimerStatus(state: .running, mode: .endOfTrack, fade: 5)
    let withTimer = String(
      decoding: try WireCodec.encode(.reply(1, .success(.status(running)))), as: UTF8.self)
    #expect(withTimer.contains(#""seconds":null"#))
    #expect(withTimer.contains(#""remaining":null"#))
  }

  @Test func unknownEventIsAnError() {
    #expect(throws: WireError.self) {
      try WireCodec.decodeServer(Array(#"{"type":"event","event":"party"}"#.utf8))
    }
  }
}
