import Testing

@testable import SessionCore

/// A session's category, mode and options as one value: what an app sets before activating.
struct Profile: Hashable, Sendable, CustomStringConvertible {
  var category: Category
  var mode: SessionMode = .default
  var options: CategoryOptions = []

  /// Media the user asked for: hark, `hark simulate music`.
  static let music = Profile(category: .playback)
  /// A game soundtrack that plays along with others.
  static let game = Profile(category: .ambient)
  /// The default category: app sounds that take the audio.
  static let alert = Profile(category: .soloAmbient)
  /// Playback that mixes in without ducking.
  static let mixingPlayback = Profile(category: .playback, options: .mixWithOthers)
  /// A spoken navigation prompt: playback that lowers the others (`hark simulate nav`).
  static let nav = Profile(category: .playback, options: .duckOthers)
  /// A navigation prompt as navigation apps set it up: it ducks music and pauses spoken audio.
  static let spokenNav = Profile(
    category: .playback, options: [.duckOthers, .interruptSpokenAudioAndMixWithOthers])
  /// A podcast or an audiobook.
  static let podcast = Profile(category: .playback, mode: .spokenAudio)
  /// A recorder (G12).
  static let recorder = Profile(category: .record)
  /// A phone call (`hark call`).
  static let call = Profile(category: .playAndRecord, mode: .voiceCall)

  var description: String {
    let options = options.names.isEmpty ? "" : "+" + options.names.joined(separator: "+")
    let mode = mode == .voiceCall ? "/voiceCall" : ""
    return "\(category.rawValue)\(options)\(mode)"
  }
}

extension SessionPolicy {
  /// Connects a session named `name` with the given profile; both steps must succeed.
  @discardableResult
  mutating func add(
    _ rawID: UInt64, _ name: String, _ profile: Profile,
    sourceLocation: SourceLocation = #_sourceLocation
  ) -> SessionID {
    let id = SessionID(rawID)
    succeed(.connect(id, AppIdentity(name: name, pid: Int32(rawID) + 1000)), sourceLocation)
    succeed(
      .setCategory(id, profile.category, mode: profile.mode, options: profile.options),
      sourceLocation)
    return id
  }

  /// Applies an event that must succeed and returns what it notified.
  @discardableResult
  mutating func succeed(
    _ event: PolicyEvent, _ sourceLocation: SourceLocation = #_sourceLocation
  ) -> [SessionNotification] {
    let outcome = apply(event)
    #expect(outcome.failure == nil, "\(event) failed", sourceLocation: sourceLocation)
    return outcome.notifications
  }

  /// Whether the session is active right now (false for an unknown session).
  func isActive(_ id: SessionID) -> Bool { sessions[id]?.isActive ?? false }

  /// The sessions active right now.
  var activeSessions: Set<SessionID> { Set(sessions.filter { $0.value.isActive }.keys) }
}

extension Array where Element == SessionNotification {
  /// The events for one session, in delivery order.
  func events(for id: SessionID) -> [SessionEvent] {
    filter { $0.session == id }.map(\.event)
  }

  /// The interruption events for one session, in delivery order.
  func interruptions(for id: SessionID) -> [Interruption] {
    events(for: id).compactMap {
      if case .interruption(let i) = $0 { return i }
      return nil
    }
  }

  /// Every interruption event, whoever it went to.
  var interruptions: [Interruption] {
    compactMap {
      if case .interruption(let i) = $0.event { return i }
      return nil
    }
  }

  /// The sessions that received anything.
  var recipients: Set<SessionID> { Set(map(\.session)) }
}

/// A `began` caused by a non-mixable app.
func beganByOtherAudio(_ name: String) -> Interruption {
  .began(InterruptionCause(kind: .otherAudio, by: name))
}

/// A `began` caused by a call.
func beganByCall(_ name: String = "call") -> Interruption {
  .began(InterruptionCause(kind: .call, by: name))
}

/// Now-playing info for a given state, with a title so it looks like a loaded queue.
func info(_ state: PlaybackState) -> PlaybackInfo {
  PlaybackInfo(state: state, title: "Track", duration: 180, position: 12)
}
