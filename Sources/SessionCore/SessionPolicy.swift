/// A session's identity inside one server run: assigned on connection, never reused.
public struct SessionID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
  public let rawValue: UInt64
  public init(_ rawValue: UInt64) { self.rawValue = rawValue }
  public init(from decoder: any Decoder) throws {
    rawValue = try decoder.singleValueContainer().decode(UInt64.self)
  }
  public func encode(to encoder: any Encoder) throws {
    var c = encoder.singleValueContainer()
    try c.encode(rawValue)
  }
  public static func < (a: SessionID, b: SessionID) -> Bool { a.rawValue < b.rawValue }
  public var description: String { "#\(rawValue)" }
}

/// What a client is told about its session.
public enum SessionEvent: Sendable, Hashable {
  case interruption(Interruption)
  case routeChange(RouteChange)
  /// Another app's primary audio started (begin) or stopped (end); sent to mixable sessions.
  case silenceSecondaryAudioHint(SecondaryAudioHint)
  /// Another active session with duckOthers lowers this one (G9), or stopped doing so.
  case ducking(isDucked: Bool)
  /// Silent mode (G2) changed, and whether it mutes this session's category.
  case silentMode(isOn: Bool, mutesThisSession: Bool)
  /// This session became, or stopped being, the now-playing app that gets remote commands (G18).
  case nowPlaying(isNowPlaying: Bool)
  /// The session server went away and a new one took over; the client has re-registered (G16).
  /// Never produced by the policy: the client library adds it.
  case mediaServicesWereReset
  /// The sleep timer was set, cancelled (nil), moved its end, began to end or ended; sent to
  /// every session. Never produced by the policy: the server's `SleepTimer` is.
  case sleepTimer(SleepTimerStatus?)
  /// The sleep timer ended while this session is the now-playing app and plays: fade out over
  /// `fade` seconds, then pause with the reason `timer`, and stay paused. Sent by the server's
  /// `SleepTimer`, never by the policy.
  case sleepTimerEnded(fade: Double)
}

/// One event for one session.
public struct SessionNotification: Sendable, Hashable {
  public var session: SessionID
  public var event: SessionEvent
  public init(_ session: SessionID, _ event: SessionEvent) {
    self.session = session
    self.event = event
  }
}

/// An input to the policy: something a client asked for, or something that happened.
public enum PolicyEvent: Sendable, Hashable {
  case connect(SessionID, AppIdentity)
  case setCategory(SessionID, Category, mode: SessionMode, options: CategoryOptions)
  case activate(SessionID)
  case deactivate(SessionID, SetActiveOptions)
  /// The client went away: counts as deactivation without notify (see `InterruptionEndReason`).
  case disconnect(SessionID)
  case publish(SessionID, PlaybackInfo?, enabledCommands: Set<RemoteCommandKind>)
  case setSilentMode(Bool)
  case route(RouteAction)
  /// A change of the sound server's sinks (one came, went, or became the default). Unlike a
  /// jack or a simulated route, it does not move a session whose sound the sound server reports
  /// on a sink of its own (`streamOutput`): that session hears of its own sink only, through
  /// `outputLost` and `streamOutput`.
  case sinkRoute(RouteAction)
  /// The sound server moved this session's stream off an output that went away (a sink of its
  /// own choosing, not necessarily the current route): for it, that output is gone (G5).
  case outputLost(SessionID, lost: Route)
  /// The sound server reports this session's sound on this output (the sink its stream is on),
  /// or, with nil, no stream of it any more. Its route is that output while it has one.
  case streamOutput(SessionID, Route?)
  /// The sound server holds this session's stream back for another program's stream (a role
  /// policy's cork: an Alert, an Assistant), for which `holder` stands: an interruption by
  /// `holder` (G13, G14), begun now if the session is active, and again whenever it activates
  /// while `holder` lasts.
  case holdStream(SessionID, holder: SessionID, cause: InterruptionCause)
  /// The sound server takes `output` away for a while (a Bluetooth headset switching to its
  /// call profile for a call, and back after it): the sessions heard there are interrupted by
  /// `holder` until it ends. Their own device failing meanwhile is part of it, not a loss.
  case holdOutput(Route, holder: SessionID, cause: InterruptionCause)
  /// What `holder` held back may play again, or, with `lost`, not: the output it held went
  /// away meanwhile, and the sessions it held lost it (G5).
  case releaseHold(holder: SessionID, lost: Route?)
  /// The sound server itself lowers this session's stream (a role policy's duck, under a
  /// Navigation stream), or no longer: the policy's own duck (G9) is not added to it.
  case duckedBySoundServer(SessionID, Bool)
}

/// Why the policy did not do what was asked.
public enum PolicyFailure: Error, Sendable, Hashable, CustomStringConvertible {
  case activationRefused(ActivationRefusal)
  case route(RouteError)
  case unknownSession(SessionID)
  /// Mixing options on a category that does not take them (only playback and playAndRecord do).
  case optionsNotAllowed(Category, CategoryOptions)

  public var description: String {
    switch self {
    case .optionsNotAllowed(let c, let o):
      "the category \(c.rawValue) does not take the options \(o.names.joined(separator: ", "))"
        + "; only playback and playAndRecord do"
    case .activationRefused(let r): r.description
    case .route(let e): e.description
    case .unknownSession(let id): "no session \(id)"
    }
  }
}

/// What applying one event produced.
public struct PolicyOutcome: Sendable, Hashable {
  /// Set when the request was refused or invalid; the state is then unchanged.
  public var failure: PolicyFailure?
  /// Events for clients, in the order they must be delivered.
  public var notifications: [SessionNotification]
  public init(failure: PolicyFailure? = nil, notifications: [SessionNotification] = []) {
    self.failure = failure
    self.notifications = notifications
  }
}

/// One client's session as the server holds it.
public struct SessionRecord: Sendable, Hashable {
  public var identity: AppIdentity
  public var category: Category = .soloAmbient
  public var mode: SessionMode = .default
  public var options: CategoryOptions = []
  public var isActive = false
  /// The sessions whose activation interrupted this one and have not gone yet.
  public var interruptedBy: Set<SessionID> = []
  /// False as soon as one interrupter left without notifyOthersOnDeactivation.
  var interruptionResumable = true
  /// What the app last published, or nil if it never did.
  public var playback: PlaybackInfo?
  public var enabledCommands: Set<RemoteCommandKind> = []
  /// When the app last started playing, in policy steps: the now-playing tie-breaker.
  var startedPlayingAt: UInt64 = 0
  /// Where the sound server says this session's sound is (the sink its stream plays on), or
  /// nil when it says nothing (no stream, or an output that is not a sound server's).
  public var output: Route?
  /// The sound server lowers its stream by itself (a role policy's duck).
  public var duckedBySoundServer = false

  public init(identity: AppIdentity) { self.identity = identity }

  public var isInterrupted: Bool { !interruptedBy.isEmpty }
  public var isMixable: Bool { category.mixes(with: options) }
  public var isCall: Bool { mode == .voiceCall }
}

/// The session server's decisions, as a value: state + event → new state + notifications.
///
/// Implements G2 and G7–G16 of docs/MANNERS.md. It has no clock and does no I/O; the server
/// feeds it events in the order they arrive and delivers what it returns.
public struct SessionPolicy: Sendable, Hashable {
  public private(set) var sessions: [SessionID: SessionRecord] = [:]
  public private(set) var silentMode: Bool
  public private(set) var routes: RouteTable
  private var step: UInt64 = 0
  /// What the sound server holds back, by the session that stands for the holder.
  private var holds: [SessionID: Hold] = [:]

  private struct Hold: Sendable, Hashable {
    var cause: InterruptionCause
    /// The output it takes away, for an output's hold; nil for a stream's.
    var output: Route?
    /// The sessions it holds back.
    var held: Set<SessionID> = []
  }

  public init(silentMode: Bool = false, routes: RouteTable = RouteTable()) {
    self.silentMode = silentMode
    self.routes = routes
  }

  // MARK: Derived state

  /// Whether another active session with duckOthers lowers this one (G9). Not while the
  /// sound server lowers it already: its duck stands for the policy's, which would come on
  /// top of it (a role policy ducks under the very Navigation prompt that ducks here).
  public func isDucked(_ id: SessionID) -> Bool {
    guard let s = sessions[id], s.isActive, !s.duckedBySoundServer else { return false }
    return sessions.contains {
      $0.key != id && $0.value.isActive && $0.value.options.contains(.duckOthers)
    }
  }

  /// Whether silent mode mutes this session (G2).
  public func isMuted(_ id: SessionID) -> Bool {
    guard let s = sessions[id] else { return false }
    return silentMode && s.category.isSilencedBySilentMode
  }

  /// Whether a mixable session should silence its secondary audio: another app's non-mixable
  /// audio is active.
  public func secondaryAudioShouldBeSilenced(_ id: SessionID) -> Bool {
    guard let s = sessions[id], s.isMixable else { return false }
    return sessions.contains { $0.key != id && $0.value.isActive && !$0.value.isMixable }
  }

  /// Whether any session but this one is active and heard (G8's "other audio is playing").
  public func isOtherAudioPlaying(besides id: SessionID?) -> Bool {
    sessions.contains { $0.key != id && $0.value.isActive && !isMuted($0.key) }
  }

  /// Whether the app may be the now-playing app (G18): in an audio context (see
  /// `PlaybackInfo.isInAudioContext`), non-mixable, with at least one enabled command.
  ///
  /// Out of its own context, an app that has played stays eligible until another app takes the
  /// listener (one in its own context that started playing after it), as on the phone, where
  /// the app that played stays the now-playing app and Play works: stopped (by the user, or at
  /// the end of its queue: Play starts it again), or paused by an interruption that ended
  /// without resuming. An interrupter that crashed or was killed, an assistant that spoke and
  /// went, a takeover app that has quit, leave no such app, and the user's own "play" must still
  /// reach the paused one.
  public func isEligibleForNowPlaying(_ id: SessionID) -> Bool {
    guard let s = sessions[id], let playback = s.playback, canBeNowPlaying(s) else { return false }
    if playback.isInAudioContext(interrupted: s.isInterrupted) { return true }
    let stoppedAfterPlaying = playback.state == .stopped && s.startedPlayingAt > 0
    let interruptedOut = playback.state == .paused && playback.pausedBy == .interruption
    guard stoppedAfterPlaying || interruptedOut else { return false }
    return !sessions.contains { other in
      other.key != id && canBeNowPlaying(other.value)
        && other.value.startedPlayingAt > s.startedPlayingAt
        && other.value.playback?.isInAudioContext(interrupted: other.value.isInterrupted) == true
    }
  }

  private func canBeNowPlaying(_ s: SessionRecord) -> Bool {
    !s.isMixable && !s.enabledCommands.isEmpty && s.playback != nil
  }

  /// The app that receives remote commands: of the eligible ones, one that is playing before
  /// one that is not (the media keys go to what is heard), then the one that most recently
  /// started playing.
  public var nowPlaying: SessionID? {
    func rank(_ id: SessionID) -> (Bool, UInt64, SessionID) {
      let s = sessions[id]
      return (s?.playback?.state == .playing, s?.startedPlayingAt ?? 0, id)
    }
    return sessions.keys.filter(isEligibleForNowPlaying).max { a, b in
      let (ra, rb) = (rank(a), rank(b))
      return ra.0 != rb.0 ? !ra.0 : ra.1 != rb.1 ? ra.1 < rb.1 : ra.2 < rb.2
    }
  }

  /// The output a session's sound goes to: the sink its stream is on, while the sound server
  /// reports one; else the current output (where a new stream would go).
  public func route(of id: SessionID) -> Route {
    sessions[id]?.output ?? routes.current
  }

  /// The active voice call, if any.
  public var activeCall: SessionID? {
    sessions.first { $0.value.isActive && $0.value.isCall }?.key
  }

  /// The active recording (a session of the record category), if any (G12).
  public var activeRecording: SessionID? {
    sessions.first { $0.value.isActive && $0.value.category == .record }?.key
  }

  private struct Derived: Equatable {
    var ducked = false, muted = false, hint = false, nowPlaying = false, silent = false
  }

  private func derived() -> [SessionID: Derived] {
    let np = nowPlaying
    var out: [SessionID: Derived] = [:]
    for id in sessions.keys {
      out[id] = Derived(
        ducked: isDucked(id), muted: isMuted(id), hint: secondaryAudioShouldBeSilenced(id),
        nowPlaying: np == id, silent: silentMode)
    }
    return out
  }

  // MARK: Events

  /// Applies one event; on failure the state is left as it was.
  public mutating func apply(_ event: PolicyEvent) -> PolicyOutcome {
    let unchanged = self
    step &+= 1
    let before = derived()
    var explicit: [SessionNotification] = []
    if let failure = handle(event, into: &explicit) {
      self = unchanged  // a refused or invalid event leaves the state as it was, step included
      return PolicyOutcome(failure: failure)
    }
    let after = derived()
    var notes = explicit
    for id in after.keys.sorted() {
      let a = after[id] ?? Derived()
      let b = before[id] ?? Derived()
      if a.ducked != b.ducked { notes.append(.init(id, .ducking(isDucked: a.ducked))) }
      if a.silent != b.silent || a.muted != b.muted {
        notes.append(.init(id, .silentMode(isOn: a.silent, mutesThisSession: a.muted)))
      }
      if a.hint != b.hint {
        notes.append(.init(id, .silenceSecondaryAudioHint(a.hint ? .begin : .end)))
      }
      if a.nowPlaying != b.nowPlaying {
        notes.append(.init(id, .nowPlaying(isNowPlaying: a.nowPlaying)))
      }
    }
    return PolicyOutcome(notifications: notes)
  }

  private mutating func handle(
    _ event: PolicyEvent, into notes: inout [SessionNotification]
  ) -> PolicyFailure? {
    switch event {
    case .connect(let id, let identity):
      precondition(sessions[id] == nil, "session ids are never reused")
      sessions[id] = SessionRecord(identity: identity)
      return nil

    case .setCategory(let id, let category, let mode, let options):
      guard var s = sessions[id] else { return .unknownSession(id) }
      // As AVAudioSession does: mixing options belong to the categories whose mixing they
      // change; on the others they would contradict the category table in docs/MANNERS.md.
      guard options.isEmpty || category.acceptsOptions else {
        return .optionsNotAllowed(category, options)
      }
      s.category = category
      s.mode = mode
      s.options = options
      sessions[id] = s
      // An active session that became non-mixable (or a call) takes the audio as if it had
      // just activated; that is the only way a category change can affect others.
      if s.isActive { interruptConflicts(of: id, into: &notes) }
      return nil

    case .activate(let id):
      guard let s = sessions[id] else { return .activationRefused(.notRegistered) }
      if s.isActive { return nil }
      // G10/G11: while a call is active only another call may start.
      if !s.isCall, activeCall != nil { return .activationRefused(.callInProgress) }
      // G12: no alert, prompt or music sounds into a recording; only a call may start.
      if !s.isCall, let recording = activeRecording, recording != id {
        return .activationRefused(.recordingInProgress)
      }
      sessions[id]?.isActive = true
      // Taking the audio back ends this session's own interruption; it knows it is active.
      sessions[id]?.interruptedBy = []
      sessions[id]?.interruptionResumable = true
      interruptConflicts(of: id, into: &notes)
      // Its stream is held back still (an Alert plays on): interrupted again at once, to
      // resume when the holder ends, rather than playing into silence.
      for holder in holds.keys.sorted() where holds[holder]?.held.contains(id) == true {
        if let cause = holds[holder]?.cause { hold(id, by: holder, cause: cause, into: &notes) }
      }
      return nil

    case .deactivate(let id, let options):
      guard sessions[id] != nil else { return .unknownSession(id) }
      sessions[id]?.isActive = false
      release(
        id, shouldResume: options.contains(.notifyOthersOnDeactivation),
        reason: .interrupterDeactivated, into: &notes)
      return nil

    case .disconnect(let id):
      guard sessions[id] != nil else { return .unknownSession(id) }
      sessions[id]?.isActive = false
      release(id, shouldResume: false, reason: .interrupterExited, into: &notes)
      sessions[id] = nil
      for holder in holds.keys { holds[holder]?.held.remove(id) }
      return nil

    case .publish(let id, let playback, let commands):
      guard var s = sessions[id] else { return .unknownSession(id) }
      if playback?.state == .playing, s.playback?.state != .playing { s.startedPlayingAt = step }
      s.playback = playback
      s.enabledCommands = commands
      sessions[id] = s
      return nil

    case .setSilentMode(let on):
      silentMode = on
      return nil

    case .route(let action), .sinkRoute(let action):
      let change: RouteChange?
      do { change = try routes.apply(action) } catch { return .route(error) }
      guard let change else { return nil }
      // A jack or a simulated route changes what every session hears (a sound server switches
      // the port of the sink it plays on when headphones are pulled). A change of the sound
      // server's sinks does not move a session whose stream is on a sink of its own.
      let sinksOnly = if case .sinkRoute = event { true } else { false }
      for id in sessions.keys.sorted() where !sinksOnly || sessions[id]?.output == nil {
        notes.append(.init(id, .routeChange(change)))
      }
      return nil

    case .outputLost(let id, let lost):
      guard sessions[id] != nil else { return .unknownSession(id) }
      // Its device failed because the output is held (its stream ended by the server while
      // a headset switches profile): the hold's end says whether the output came back.
      if holds.values.contains(where: { $0.output != nil && $0.held.contains(id) }) { return nil }
      let change = RouteChange(
        reason: .oldDeviceUnavailable, previous: lost, current: routes.current)
      notes.append(.init(id, .routeChange(change)))
      return nil

    case .streamOutput(let id, let output):
      guard sessions[id] != nil else { return .unknownSession(id) }
      let before = route(of: id)
      sessions[id]?.output = output
      let after = route(of: id)
      // Its stream moved (by the user or the desktop's policy), or it plays where the current
      // output is not: the app goes on (G6) and learns where it is heard.
      if after != before {
        notes.append(
          .init(id, .routeChange(RouteChange(reason: .override, previous: before, current: after))))
      }
      return nil

    case .holdStream(let id, let holder, let cause):
      guard sessions[id] != nil else { return .unknownSession(id) }
      holds[holder, default: Hold(cause: cause)].held.insert(id)
      hold(id, by: holder, cause: cause, into: &notes)
      return nil

    case .holdOutput(let output, let holder, let cause):
      var held = Hold(cause: cause, output: output)
      for id in sessions.keys.sorted() where route(of: id).name == output.name {
        held.held.insert(id)
        hold(id, by: holder, cause: cause, retell: true, into: &notes)
      }
      holds[holder] = held
      return nil

    case .releaseHold(let holder, let lost):
      guard let held = holds.removeValue(forKey: holder) else { return nil }
      if let lost {
        // Told first, so that the interruption's end finds them paused by the route (G5).
        for id in held.held.sorted() where sessions[id]?.interruptedBy.contains(holder) == true {
          let change = RouteChange(
            reason: .oldDeviceUnavailable, previous: lost, current: routes.current)
          notes.append(.init(id, .routeChange(change)))
        }
      }
      release(
        holder, shouldResume: lost == nil,
        reason: lost == nil ? .interrupterDeactivated : .interrupterExited, into: &notes)
      return nil

    case .duckedBySoundServer(let id, let ducked):
      guard sessions[id] != nil else { return .unknownSession(id) }
      sessions[id]?.duckedBySoundServer = ducked
      return nil
    }
  }

  /// `holder` holds `id` back: an active session is interrupted by it; one interrupted already
  /// waits for it too, and, with `retell`, hears `began` again with the new cause; one that is
  /// neither has nothing to stop.
  ///
  /// An output's hold is told again: WirePlumber 0.5.11+ sends an MPRIS Pause to the players
  /// whose sink went, the headset's switch included, a few milliseconds before the session
  /// server hears of it, and a player interrupted by the call must be able to tell that Pause
  /// from the user's (which means "do not resume", G14). Told once more, it keeps its
  /// interruption and learns what it waits for now.
  private mutating func hold(
    _ id: SessionID, by holder: SessionID, cause: InterruptionCause, retell: Bool = false,
    into notes: inout [SessionNotification]
  ) {
    guard var s = sessions[id] else { return }
    if s.isActive {
      s.isActive = false
      s.interruptedBy = [holder]
      s.interruptionResumable = true
      notes.append(.init(id, .interruption(.began(cause))))
    } else if s.isInterrupted {
      s.interruptedBy.insert(holder)
      if retell { notes.append(.init(id, .interruption(.began(cause)))) }
    }
    sessions[id] = s
  }

  /// The sessions `id` interrupts by being active (G9, G11): a call interrupts every session;
  /// a non-mixable session interrupts every non-mixable one except a call; a mixable one none,
  /// except that one with interruptSpokenAudioAndMixWithOthers (a navigation prompt)
  /// interrupts spoken audio (a podcast) rather than ducking it.
  private func conflicts(of id: SessionID) -> [SessionID] {
    guard let x = sessions[id] else { return [] }
    return sessions.keys.sorted().filter { other in
      guard other != id, let s = sessions[other] else { return false }
      if x.isCall { return true }
      if s.isCall { return false }
      // A recording interrupts every other sound but a call, as a call does (G12).
      if x.category == .record { return true }
      if x.options.contains(.interruptSpokenAudioAndMixWithOthers) && s.mode == .spokenAudio
        && x.category.acceptsOptions
      {
        return true
      }
      if x.isMixable { return false }
      return !s.isMixable
    }
  }

  /// Interrupts the active sessions `id` conflicts with, and adds `id` to the interrupters of
  /// those already interrupted, so their interruption ends only when `id` has gone too.
  private mutating func interruptConflicts(
    of id: SessionID, into notes: inout [SessionNotification]
  ) {
    guard let x = sessions[id] else { return }
    let kind = InterruptionCause.Kind(
      role: x.identity.role, category: x.category, options: x.options, isCall: x.isCall)
    let cause = InterruptionCause(kind: kind, by: x.identity.name)
    for other in conflicts(of: id) {
      guard var s = sessions[other] else { continue }
      if s.isActive {
        s.isActive = false
        s.interruptedBy = [id]
        s.interruptionResumable = true
        sessions[other] = s
        // What `other` itself interrupted stays interrupted: `other` has not deactivated.
        notes.append(.init(other, .interruption(.began(cause))))
      } else if s.isInterrupted {
        sessions[other]?.interruptedBy.insert(id)
      }
    }
  }

  /// `id` has gone from the sessions it interrupted; those left with no interrupter get `ended`.
  private mutating func release(
    _ id: SessionID, shouldResume: Bool, reason: InterruptionEndReason,
    into notes: inout [SessionNotification]
  ) {
    for other in sessions.keys.sorted() where other != id {
      guard var s = sessions[other], s.interruptedBy.contains(id) else { continue }
      s.interruptedBy.remove(id)
      s.interruptionResumable = s.interruptionResumable && shouldResume
      if s.interruptedBy.isEmpty {
        notes.append(
          .init(other, .interruption(.ended(shouldResume: s.interruptionResumable, reason: reason)))
        )
        s.interruptionResumable = true
      }
      sessions[other] = s
    }
  }
}
