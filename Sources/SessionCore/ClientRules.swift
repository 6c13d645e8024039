/// What a session asks of the server, by kind: the wire's requests without their payloads.
public enum SessionRequestKind: Sendable, Hashable, CaseIterable {
  case setCategory, setActive, publish, otherAudioPlaying, acceptFiles
  case status, setSilent, route, command, handOver, stopServer, outputLost, setTimer
}

/// How a session answers its own request while the server it started has not answered yet
/// (a player that starts without waiting for the server).
///
/// With no server there is no other session, so what a player needs to start playing
/// (category, activation, publishing) is granted on the spot, remembered, and told to the server
/// once it answers (which then delivers `.mediaServicesWereReset`). Whatever needs the server's
/// own state or another app fails as if disconnected.
public enum AnswerWhileServerStarts: Sendable, Hashable {
  /// Granted now; the session registers it with the server once connected.
  case grant
  /// Answered now: no other app's audio plays, since there is no other session (G8).
  case noOtherAudio
  /// Needs the server: the request fails (disconnected).
  case refuse

  /// The answer to a request of `kind`.
  public init(_ kind: SessionRequestKind) {
    switch kind {
    case .setCategory, .setActive, .publish, .acceptFiles: self = .grant
    case .otherAudioPlaying: self = .noOtherAudio
    case .status, .setSilent, .route, .command, .stopServer, .outputLost, .handOver, .setTimer:
      self = .refuse
    }
  }
}

/// Calls in other programs (sound-server streams with the phone role), each a session of its
/// own for the policy: a voice call that activates, interrupting what plays, and that
/// deactivates notifying the others when its stream ends, so what it interrupted may resume
/// (G13). The server carries out the events; this decides which streams are such calls.
public struct PhoneStreamSessions: Sendable, Hashable {
  /// The session of each phone stream that has one, by the sound server's stream key.
  public private(set) var sessions: [UInt32: SessionID] = [:]

  public init() {}

  /// Whether a phone stream that began needs a session of its own: not when it has one already
  /// (the sound server says so again), nor when it plays in a process that is connected
  /// (`connectedPids`): hark's own calls have sessions of their own.
  public func needsSession(
    stream key: UInt32, pid: Int32?, connectedPids: some Sequence<Int32>
  ) -> Bool {
    guard sessions[key] == nil else { return false }
    if let pid, connectedPids.contains(pid) { return false }
    return true
  }

  /// Records `id` as the session of the stream `key` (named `name`, in process `pid` when the
  /// sound server knows it) and returns the events that make it an active voice call.
  public mutating func began(stream key: UInt32, as id: SessionID, name: String, pid: Int32?)
    -> [PolicyEvent]
  {
    sessions[key] = id
    return [
      .connect(id, AppIdentity(name: "phone call (\(name))", pid: pid ?? 0)),
      .setCategory(id, .playAndRecord, mode: .voiceCall, options: []),
      .activate(id),
    ]
  }

  /// The events that end the session of the stream `key`: it deactivates notifying the others,
  /// then disconnects. Empty when the stream had no session.
  public mutating func ended(stream key: UInt32) -> [PolicyEvent] {
    guard let id = sessions.removeValue(forKey: key) else { return [] }
    return [.deactivate(id, .notifyOthersOnDeactivation), .disconnect(id)]
  }
}
