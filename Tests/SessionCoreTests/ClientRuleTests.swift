import Testing

@testable import SessionCore

/// The decisions the client library and the server's socket code take from SessionCore.
@Suite struct ClientRuleTests {
  @Test func whileTheServerStartsAPlayerIsGrantedWhatItNeedsToPlay() {
    for kind: SessionRequestKind in [.setCategory, .setActive, .publish, .acceptFiles] {
      #expect(AnswerWhileServerStarts(kind) == .grant, "\(kind)")
    }
  }

  @Test func whileTheServerStartsNoOtherAudioPlays() {
    #expect(AnswerWhileServerStarts(.otherAudioPlaying) == .noOtherAudio)
  }

  @Test func whileTheServerStartsWhatNeedsTheServerIsRefused() {
    let refused: [SessionRequestKind] = [
      .status, .setSilent, .route, .command, .handOver, .stopServer, .outputLost, .setTimer,
    ]
    for kind in refused { #expect(AnswerWhileServerStarts(kind) == .refuse, "\(kind)") }
    // Every kind has one of the three answers; none is forgotten.
    #expect(Set(refused).count + 5 == SessionRequestKind.allCases.count)
  }

  @Test func aPhoneStreamInAnotherProgramBecomesAnActiveVoiceCall() {
    var calls = PhoneStreamSessions()
    #expect(calls.needsSession(stream: 7, pid: 4_000, connectedPids: [1, 2]))
    let events = calls.began(stream: 7, as: SessionID(9), name: "Signal", pid: 4_000)
    #expect(
      events == [
        .connect(SessionID(9), AppIdentity(name: "phone call (Signal)", pid: 4_000)),
        .setCategory(SessionID(9), .playAndRecord, mode: .voiceCall, options: []),
        .activate(SessionID(9)),
      ])
    // Said again by the sound server: one session per stream.
    #expect(!calls.needsSession(stream: 7, pid: 4_000, connectedPids: []))
  }

  @Test func aPhoneStreamOfAConnectedProcessIsThatSessionsOwnCall() {
    let calls = PhoneStreamSessions()
    #expect(!calls.needsSession(stream: 3, pid: 42, connectedPids: [41, 42]))
    // Without a pid it cannot be one of ours.
    #expect(calls.needsSession(stream: 3, pid: nil, connectedPids: [0, 42]))
  }

  @Test func aPhoneStreamThatEndsLetsWhatItInterruptedResume() {
    var calls = PhoneStreamSessions()
    _ = calls.began(stream: 7, as: SessionID(9), name: "x", pid: nil)
    #expect(
      calls.ended(stream: 7) == [
        .deactivate(SessionID(9), .notifyOthersOnDeactivation), .disconnect(SessionID(9)),
      ])
    #expect(calls.ended(stream: 7) == [])
    #expect(calls.sessions.isEmpty)
  }

  @Test func aPhoneStreamWithoutASessionEndsWithNoEvents() {
    var calls = PhoneStreamSessions()
    #expect(calls.ended(stream: 1) == [])
  }
}
