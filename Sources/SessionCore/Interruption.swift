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
  public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A voice call (G11).
    case call
    /// Another app's non-mixable audio: music taking over, a game.
    case otherAudio
    /// A recording (the record category, G12): it interrupts every session but a call, as a
    /// call does, resumably, and nothing but a call may sound while it records.
    case recording
    /// An alarm or another alert ringing.
    case alarm
    /// A voice assistant listening and answering.
    case assistant
    /// A navigation prompt (it pauses spoken word; music only ducks under it, G9).
    case navigation

    /// What an app in `role`, with `category` and `options`, interrupts as: its role where it
    /// says one, else what its category makes it (a recorder records, an assistant plays and
    /// records, a prompt that interrupts spoken audio is a navigation prompt).
    public init(role: AppRole?, category: Category, options: CategoryOptions, isCall: Bool) {
      if isCall || role == .call {
        self = .call
      } else if category == .record {
        self = .recording
      } else if let role, let kind = Self(role: role) {
        self = kind
      } else if options.contains(.interruptSpokenAudioAndMixWithOthers) {
        self = .navigation
      } else if category == .playAndRecord {
        self = .assistant
      } else {
        self = .otherAudio
      }
    }

    private init?(role: AppRole) {
      switch role {
      case .alarm: self = .alarm
      case .assistant: self = .assistant
      case .navigation: self = .navigation
      case .call: self = .call
      case .music, .game: return nil
      }
    }

    /// What a sound-server stream of this media role interrupts as (PulseAudio's and PipeWire's
    /// names, in any case): a call, an alert, an assistant, a navigation prompt, or other audio.
    public init(mediaRole: String?) {
      switch mediaRole?.lowercased() {
      case "phone", "communication": self = .call
      case "alarm", "alert", "event", "notification": self = .alarm
      case "assistant", "a11y", "accessibility": self = .assistant
      case "navigation": self = .navigation
      default: self = .otherAudio
      }
    }
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
