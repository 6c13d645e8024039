/// An interruption of one session by others (G9, G11, G13).
public enum Interruption: Sendable, Hashable {
  /// Another session took the audio; this one is no longer active.
  case began(InterruptionCause)
  /// Every session that caused the interruption has gone. `shouldResume` is true exactly when
  /// each of them deactivated with `notifyOthersOnDeactivation`.
  case ended(shouldResume: Bool, reason: InterruptionEndReason)
}

/// What started an interruption, so the app can tell the user ("call in progress").
public struct InterruptionCause: Sendable, Hashable, Codable {
  /// The kind of interrupter.
  public enum Kind: String, Sendable, Hashable, Codable {
    /// A voice call (G11).
    case call
    /// Another app's non-mixable audio: music taking over, an alarm, a voice assistant.
    case otherAudio
    /// A recording (the record category, G12): it interrupts every session but a call, as a
    /// call does, resumably, and nothing but a call may sound while it records.
    case recording
  }
  public var kind: Kind
  /// The interrupting app's name, as it registered.
  public var by: String

  public init(kind: Kind, by: String) {
    self.kind = kind
    self.by = by
  }
}

/// Why an interruption ended.
public enum InterruptionEndReason: String, Sendable, Hashable, Codable {
  /// The last interrupter deactivated its session.
  case interrupterDeactivated
  /// The last interrupter went away without deactivating (it crashed, or was killed).
  /// The server then ends the interruption without shouldResume: the app stays paused and
  /// tells the user, whose play works at once (G14).
  case interrupterExited
}

/// The hint that secondary audio (a game soundtrack) should go quiet because another app's
/// primary, non-mixable audio is playing.
public enum SecondaryAudioHint: String, Sendable, Hashable, Codable {
  case begin, end
}

/// Why a session server refused an activation (G10).
public enum ActivationRefusal: String, Sendable, Hashable, Codable, Error, CustomStringConvertible {
  /// A call is active; nothing but another call may start now.
  case callInProgress
  /// A recording is under way; nothing but a call may sound into it (G12).
  case recordingInProgress
  /// The session asked to activate before saying who it is.
  case notRegistered

  public var description: String {
    switch self {
    case .callInProgress: "a call is in progress"
    case .recordingInProgress: "a recording is in progress"
    case .notRegistered: "the session has not registered with the server"
    }
  }
}
