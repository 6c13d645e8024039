import PropertyBased
import Testing

@testable import SessionCore

/// Random sequences of events against five sessions, with the rules checked after every event.
///
/// Each test draws its own sequences from the same generators and reports one invariant, so a
/// failure names the rule it breaks; a sequence stops at that invariant's first violation, and
/// the failure message names the event (counting the five connects and setCategorys first).
@Suite(.timeLimit(.minutes(5))) struct PolicyPropertyTests {
  /// Sequences per invariant: enough to hit calls, crashes and double interruptions often,
  /// few enough that the seven tests take a few seconds on two cores.
  static let sequences = 300

  @Test func G10_G11_randomSequencesRefuseOnlyWhatTheRulesRefuse() async {
    await Self.check(.refusals)
  }

  @Test func G13_randomSequencesSendEndedOnlyAfterBegan() async {
    await Self.check(.endedFollowsBegan)
  }

  @Test func G13_G14_randomSequencesResumeExactlyWhenEveryInterrupterNotified() async {
    await Self.check(.interruptions)
  }

  @Test func G9_G11_randomSequencesNeverActivateConflictingSessions() async {
    await Self.check(.activity)
  }

  @Test func G9_randomSequencesDuckExactlyWhileAnotherActiveSessionDucks() async {
    await Self.check(.ducking)
  }

  @Test func G2_G9_G18_randomSequencesLeaveEachSessionsLastEventsEqualToItsState() async {
    await Self.check(.lastEvents)
  }

  /// Guards the tests above against a generator that never reaches the interesting cases.
  @Test func randomSequencesReachEveryInterestingCase() async {
    var coverage = Coverage()
    await propertyCheck(
      count: 200, input: Self.profile.array(of: 5), Self.step.array(of: 1...60)
    ) { profiles, steps in
      var run = PolicyRun(profiles: profiles)
      for step in steps { run.perform(step) }
      coverage.add(run.coverage)
    }
    #expect(coverage.began > 0)
    #expect(coverage.callBegan > 0)
    #expect(coverage.endedResuming > 0)
    #expect(coverage.endedNotResuming > 0)
    #expect(coverage.endedByExit > 0)
    #expect(coverage.endedAfterSeveralInterrupters > 0)
    #expect(coverage.refusedDuringCall > 0)
    #expect(coverage.otherFailures > 0)
    #expect(coverage.ducked > 0)
    #expect(coverage.nowPlayingChanges > 0)
    #expect(coverage.routeChanges > 0)
    #expect(coverage.heldBySoundServer > 0)
    #expect(coverage.duckedBySoundServer > 0)
  }

  private static func check(
    _ invariant: Invariant, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    await propertyCheck(
      count: sequences, input: profile.array(of: 5), step.array(of: 1...60),
      perform: { profiles, steps in
        var run = PolicyRun(profiles: profiles)
        for step in steps where run.problems[invariant] == nil { run.perform(step) }
        if let problem = run.problems[invariant] {
          Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation)
        }
      }, sourceLocation: sourceLocation)
  }

  // MARK: Generators

  /// A category, options, and one time in five a voice call.
  static let profile = zip(
    Gen<Category>.case, Gen.bool(0.2),
    Gen<CategoryOptions>.optionSet(of: [.mixWithOthers, .duckOthers])
  ).map { t in
    t.1
      ? Profile(category: .playAndRecord, mode: .voiceCall, options: t.2)
      : Profile(category: t.0, options: t.0.acceptsOptions ? t.2 : [])
  }

  static let slot = Gen.int(in: 0...4)

  static let playbackState = Gen.int(in: 0...3).map { n -> PlaybackState? in
    switch n {
    case 0: .playing
    case 1: .paused
    case 2: .stopped
    default: nil
    }
  }

  static let routeAction = Gen.oneOf(
    Gen<RouteKind>.case.map { RouteAction.plug($0) },
    Gen<RouteKind>.case.map { RouteAction.unplug($0) },
    Gen.element(of: ["speakers", "Headphones", "usb", "hdmi", "nowhere"])
      .map { RouteAction.select($0 ?? "speakers") }
  )

  static let publish = zip(slot, playbackState, Gen.bool(0.8)).map { t in
    Step.publish(slot: t.0, t.1, commands: t.2)
  }

  static let step = Gen<Step>.frequency(
    (5, slot.map { Step.activate(slot: $0) }),
    (3, zip(slot, Gen.bool).map { Step.deactivate(slot: $0, notify: $1) }),
    (2, zip(slot, profile).map { Step.setCategory(slot: $0, $1) }),
    (1, zip(slot, profile).map { Step.reconnect(slot: $0, as: $1) }),
    (2, publish),
    (1, Gen.bool.map { Step.silentMode($0) }),
    (1, routeAction.map { Step.route($0) }),
    (0.3, Gen.int(in: 0...4).map { Step.stranger($0) }),
    (1, zip(slot, Gen.int(in: 0...1)).map { Step.holdStream(slot: $0, holder: $1) }),
    (0.5, Gen.int(in: 0...1).map { Step.holdOutput(holder: $0) }),
    (1, zip(Gen.int(in: 0...1), Gen.bool(0.3)).map { Step.releaseHold(holder: $0, lost: $1) }),
    (1, zip(slot, Gen.bool).map { Step.soundServerDucks(slot: $0, $1) })
  )
}

/// One generated step. Slots 0...4 name the five sessions; a slot gets a new id on reconnect.
enum Step: Hashable, Sendable {
  case setCategory(slot: Int, Profile)
  case activate(slot: Int)
  case deactivate(slot: Int, notify: Bool)
  /// The client goes away (a crash, for the sessions it interrupted) and a new one takes its slot.
  case reconnect(slot: Int, as: Profile)
  case publish(slot: Int, PlaybackState?, commands: Bool)
  case silentMode(Bool)
  case route(RouteAction)
  /// An event for a session that never connected.
  case stranger(Int)
  /// The sound server holds a session's stream back (a role policy's cork) for the thing
  /// `holder` (0 or 1) stands for; or holds back the current output (a headset switching
  /// profile); or lets what `holder` held go, with the output lost or not.
  case holdStream(slot: Int, holder: Int)
  case holdOutput(holder: Int)
  case releaseHold(holder: Int, lost: Bool)
  /// The sound server ducks a session's stream itself, or no longer.
  case soundServerDucks(slot: Int, Bool)
}

/// What is checked after every event.
enum Invariant: Hashable, Sendable {
  /// G10, G11: the only failures are the rules' (a call in progress, an unknown session, a
  /// route error); a voice call's activation never fails; a failure notifies nobody and
  /// changes no session, route or silent mode.
  case refusals
  /// G13: `ended` reaches a session only after a `began`, with no `ended` in between (taking
  /// the audio back by activating closes an interruption silently).
  case endedFollowsBegan
  /// G9, G11, G13, G14: `began` goes to exactly the active sessions the activation conflicts
  /// with; `ended` comes when the last interrupter has gone, with shouldResume exactly when
  /// every interrupter left by deactivating with notifyOthersOnDeactivation.
  case interruptions
  /// G9, G11: never two non-mixable sessions active, nothing active beside a call, and
  /// nobody gains or loses the audio without activating, deactivating or a `began`.
  case activity
  /// G9: ducked exactly while active beside another active session with duckOthers (unless
  /// the sound server ducks it itself), and the last `.ducking` event says so.
  case ducking
  /// G2, G9, G18: muting, the secondary-audio hint and now-playing follow the rules, and the
  /// last event of each kind a session received matches its state.
  case lastEvents
}

/// How often the interesting cases came up, over all sequences.
struct Coverage {
  var began = 0, callBegan = 0
  var endedResuming = 0, endedNotResuming = 0, endedByExit = 0, endedAfterSeveralInterrupters = 0
  var refusedDuringCall = 0, otherFailures = 0
  var ducked = 0, nowPlayingChanges = 0, routeChanges = 0
  var heldBySoundServer = 0, duckedBySoundServer = 0

  mutating func add(_ o: Coverage) {
    began += o.began
    callBegan += o.callBegan
    endedResuming += o.endedResuming
    endedNotResuming += o.endedNotResuming
    endedByExit += o.endedByExit
    endedAfterSeveralInterrupters += o.endedAfterSeveralInterrupters
    refusedDuringCall += o.refusedDuringCall
    otherFailures += o.otherFailures
    ducked += o.ducked
    nowPlayingChanges += o.nowPlayingChanges
    routeChanges += o.routeChanges
    heldBySoundServer += o.heldBySoundServer
    duckedBySoundServer += o.duckedBySoundServer
  }
}

/// The rules of G9 and G11 restated from docs/MANNERS.md, independently of `SessionCore`.
enum SpecRules {
  /// The "mixes with others" column of docs/MANNERS.md's category table; duckOthers implies
  /// mixing.
  static func mixes(_ p: Profile) -> Bool {
    switch p.category {
    case .ambient: true
    case .playback, .playAndRecord:
      !p.options.isDisjoint(with: [
        .mixWithOthers, .duckOthers, .interruptSpokenAudioAndMixWithOthers,
      ])
    case .soloAmbient, .record, .audioProcessing: false
    }
  }

  /// Whether `x` taking the audio interrupts `other`: a call interrupts everyone (G11), and so
  /// does a recording but for a call (G12); a non-mixable session every non-mixable one except
  /// a call (G9, G11); a mixable one nobody, except one that interrupts spoken audio, which
  /// interrupts spokenAudio sessions (a prompt pausing a podcast).
  static func interrupts(_ x: Profile, _ other: Profile) -> Bool {
    if x.mode == .voiceCall { return true }
    if other.mode == .voiceCall { return false }
    if x.category == .record { return true }
    if x.options.contains(.interruptSpokenAudioAndMixWithOthers), other.mode == .spokenAudio,
      x.category == .playback || x.category == .playAndRecord
    {
      return true
    }
    if mixes(x) { return false }
    return !mixes(other)
  }

  /// What an interruption by `x` says it is.
  /// (The generated apps say no role in their hello: their category says what they are.)
  static func cause(_ x: Profile, name: String) -> InterruptionCause {
    let kind: InterruptionCause.Kind =
      x.mode == .voiceCall
      ? .call
      : x.category == .record
        ? .recording
        : x.options.contains(.interruptSpokenAudioAndMixWithOthers)
          ? .navigation : x.category == .playAndRecord ? .assistant : .otherAudio
    return InterruptionCause(kind: kind, by: name)
  }
}

extension Profile {
  init(_ record: SessionRecord) {
    self.init(category: record.category, mode: record.mode, options: record.options)
  }
}

/// Who interrupted whom and whether they all left politely, kept by the test (G13, G14).
struct InterruptionModel {
  /// Per interrupted session, the interrupters that have not gone yet.
  var interrupters: [SessionID: Set<SessionID>] = [:]
  /// Per interrupted session, AND of "left with notifyOthersOnDeactivation" over departures.
  var resumable: [SessionID: Bool] = [:]
  /// What the sound server holds back, by the session standing for the holder: why, and whom.
  private(set) var holds: [SessionID: (cause: InterruptionCause, held: Set<SessionID>)] = [:]
  /// How many interruptions ended after having had more than one interrupter.
  private(set) var endedAfterSeveral = 0
  private var peak: [SessionID: Int] = [:]

  /// Follows a successful event; returns the interruption event each session must get.
  mutating func follow(_ event: PolicyEvent, before: SessionPolicy) -> [SessionID: Interruption] {
    var out: [SessionID: Interruption] = [:]
    switch event {
    case .setCategory(let id, let category, let mode, let options):
      guard let s = before.sessions[id], s.isActive else { break }
      let profile = Profile(category: category, mode: mode, options: options)
      takeAudio(id, profile, name: s.identity.name, before: before, into: &out)
    case .activate(let id):
      guard let s = before.sessions[id], !s.isActive else { break }
      // Taking the audio back ends the session's own interruption, silently.
      forget(id)
      takeAudio(id, Profile(s), name: s.identity.name, before: before, into: &out)
      // Held back still: interrupted again at once, by every holder that holds it.
      let holders = holds.keys.sorted().filter { holds[$0]?.held.contains(id) == true }
      if let first = holders.first, let cause = holds[first]?.cause {
        out[id] = .began(cause)
        interrupters[id] = Set(holders)
        resumable[id] = true
        peak[id] = holders.count
      }
    case .deactivate(let id, let options):
      let notify = options.contains(.notifyOthersOnDeactivation)
      depart(id, notify: notify, reason: .interrupterDeactivated, into: &out)
    case .disconnect(let id):
      depart(id, notify: false, reason: .interrupterExited, into: &out)
      forget(id)
      for holder in holds.keys { holds[holder]?.held.remove(id) }
    case .holdStream(let id, let holder, let cause):
      holds[holder, default: (cause, [])].held.insert(id)
      hold(id, by: holder, cause: cause, before: before, into: &out)
    case .holdOutput(let output, let holder, let cause):
      holds[holder] = (cause, [])
      for id in before.sessions.keys where before.route(of: id).name == output.name {
        holds[holder]?.held.insert(id)
        hold(id, by: holder, cause: cause, before: before, into: &out)
        // An interrupted session hears what it waits for now (see SessionPolicy.hold).
        if let present = interrupters[id], !present.isEmpty, out[id] == nil {
          out[id] = .began(cause)
        }
      }
    case .releaseHold(let holder, let lost):
      guard holds.removeValue(forKey: holder) != nil else { break }
      depart(
        holder, notify: lost == nil,
        reason: lost == nil ? .interrupterDeactivated : .interrupterExited, into: &out)
    case .connect, .publish, .setSilentMode, .route, .sinkRoute, .outputLost, .streamOutput,
      .duckedBySoundServer:
      break
    }
    return out
  }

  /// Whether a hold holds `id` back.
  func isHeld(_ id: SessionID) -> Bool { holds.values.contains { $0.held.contains(id) } }

  /// A hold on `id`: `began` if it is active, one more interrupter if it is interrupted.
  private mutating func hold(
    _ id: SessionID, by holder: SessionID, cause: InterruptionCause, before: SessionPolicy,
    into out: inout [SessionID: Interruption]
  ) {
    guard let s = before.sessions[id] else { return }
    if s.isActive {
      out[id] = .began(cause)
      interrupters[id] = [holder]
      resumable[id] = true
      peak[id] = 1
    } else if let present = interrupters[id], !present.isEmpty {
      interrupters[id] = present.union([holder])
      peak[id] = max(peak[id] ?? 0, present.union([holder]).count)
    }
  }

  private mutating func forget(_ id: SessionID) {
    interrupters[id] = nil
    resumable[id] = nil
    peak[id] = nil
  }

  private mutating func takeAudio(
    _ x: SessionID, _ profile: Profile, name: String, before: SessionPolicy,
    into out: inout [SessionID: Interruption]
  ) {
    let cause = SpecRules.cause(profile, name: name)
    for (other, s) in before.sessions where other != x {
      guard SpecRules.interrupts(profile, Profile(s)) else { continue }
      if s.isActive {
        out[other] = .began(cause)
        interrupters[other] = [x]
        resumable[other] = true
        peak[other] = 1
      } else if let present = interrupters[other], !present.isEmpty {
        // Already interrupted: its interruption now also waits for x.
        interrupters[other] = present.union([x])
        peak[other] = max(peak[other] ?? 0, present.union([x]).count)
      }
    }
  }

  private mutating func depart(
    _ x: SessionID, notify: Bool, reason: InterruptionEndReason,
    into out: inout [SessionID: Interruption]
  ) {
    for (other, present) in interrupters where other != x && present.contains(x) {
      let left = present.subtracting([x])
      let flag = (resumable[other] ?? true) && notify
      if left.isEmpty {
        out[other] = .ended(shouldResume: flag, reason: reason)
        if (peak[other] ?? 0) > 1 { endedAfterSeveral += 1 }
        forget(other)
      } else {
        interrupters[other] = left
        resumable[other] = flag
      }
    }
  }
}

/// The last value of each derived notification one session received.
struct Heard {
  var ducked = false
  var nowPlaying = false
  var silentOn = false
  var muted = false
  var hint = false
}

/// One sequence: the policy, the slots, the test's own models, and what went wrong.
struct PolicyRun {
  private(set) var policy = SessionPolicy()
  private var slots: [SessionID] = []
  private var nextID: UInt64 = 1
  private var model = InterruptionModel()
  /// Sessions that got `began` and have not had `ended` since (nor taken the audio back).
  private var open: Set<SessionID> = []
  private var heard: [SessionID: Heard] = [:]
  private var count = 0
  /// The sessions standing for holders 0 and 1 now (a new one after each release).
  private var holders: [SessionID] = [SessionID(20_000), SessionID(20_001)]
  private var nextHolder: UInt64 = 20_002
  /// The first violation of each invariant, with the event that caused it.
  private(set) var problems: [Invariant: String] = [:]
  private(set) var coverage = Coverage()

  init(profiles: [Profile]) {
    for profile in profiles { slots.append(connect(profile)) }
  }

  private mutating func connect(_ profile: Profile) -> SessionID {
    let id = SessionID(nextID)
    nextID += 1
    apply(.connect(id, AppIdentity(name: "app\(id.rawValue)", pid: Int32(id.rawValue))))
    apply(.setCategory(id, profile.category, mode: profile.mode, options: profile.options))
    return id
  }

  mutating func perform(_ step: Step) {
    switch step {
    case .setCategory(let slot, let p):
      apply(.setCategory(slots[slot], p.category, mode: p.mode, options: p.options))
    case .activate(let slot):
      apply(.activate(slots[slot]))
    case .deactivate(let slot, let notify):
      apply(.deactivate(slots[slot], notify ? .notifyOthersOnDeactivation : []))
    case .reconnect(let slot, let p):
      apply(.disconnect(slots[slot]))
      slots[slot] = connect(p)
    case .publish(let slot, let state, let commands):
      apply(
        .publish(
          slots[slot], state.map { info($0) },
          enabledCommands: commands ? [.play, .pause, .nextTrack] : []))
    case .silentMode(let on):
      apply(.setSilentMode(on))
    case .route(let action):
      apply(.route(action))
    case .stranger(let n):
      let stranger = SessionID(10_000)
      let events: [PolicyEvent] = [
        .activate(stranger), .deactivate(stranger, []), .disconnect(stranger),
        .publish(stranger, info(.playing), enabledCommands: [.play]),
        .setCategory(stranger, .playback, mode: .default, options: []),
      ]
      apply(events[n % events.count])
    case .holdStream(let slot, let h):
      apply(
        .holdStream(
          slots[slot], holder: holders[h],
          cause: InterruptionCause(kind: .otherAudio, by: "alert \(holders[h])")))
    case .holdOutput(let h):
      apply(
        .holdOutput(
          policy.routes.current, holder: holders[h],
          cause: InterruptionCause(kind: .call, by: "headset \(holders[h])")))
    case .releaseHold(let h, let lost):
      apply(.releaseHold(holder: holders[h], lost: lost ? policy.routes.current : nil))
      holders[h] = SessionID(nextHolder)
      nextHolder += 1
    case .soundServerDucks(let slot, let ducked):
      apply(.duckedBySoundServer(slots[slot], ducked))
    }
  }

  /// Collects violations during one event.
  private struct Findings {
    var list: [(Invariant, String)] = []
    mutating func add(_ invariant: Invariant, _ text: String) { list.append((invariant, text)) }
  }

  /// Applies one event and checks every invariant; keeps the first violation of each.
  private mutating func apply(_ event: PolicyEvent) {
    count += 1
    let before = policy
    let outcome = policy.apply(event)
    var found = Findings()
    defer {
      for (invariant, text) in found.list where problems[invariant] == nil {
        problems[invariant] = "event \(count), \(event): \(text)"
      }
    }

    checkFailure(event, outcome, before: before, into: &found)
    guard outcome.failure == nil else { return }
    let notes = outcome.notifications
    for n in notes where policy.sessions[n.session] == nil {
      found.add(.refusals, "notified \(n.session), which is not connected")
    }
    checkInterruptions(event, before: before, notes: notes, into: &found)
    checkActivity(event, before: before, notes: notes, into: &found)
    checkDerived(event, notes: notes, into: &found)
  }

  /// G10, G11: refusals are the rules' own, and change nothing.
  private mutating func checkFailure(
    _ event: PolicyEvent, _ outcome: PolicyOutcome, before: SessionPolicy,
    into found: inout Findings
  ) {
    let expected = Self.expectedFailure(of: event, in: before)
    if outcome.failure != expected {
      let got = String(describing: outcome.failure)
      found.add(.refusals, "failure \(got), expected \(String(describing: expected))")
    }
    if case .activate(let id) = event, before.sessions[id]?.mode == .voiceCall,
      outcome.failure != nil
    {
      found.add(.refusals, "a voice call's activation failed")
    }
    guard outcome.failure != nil else { return }
    if outcome.failure == .activationRefused(.callInProgress) {
      coverage.refusedDuringCall += 1
    } else {
      coverage.otherFailures += 1
    }
    if !outcome.notifications.isEmpty { found.add(.refusals, "a failure notified someone") }
    // The whole value is PolicyFailureTests' business; here, everything a client can see.
    if policy.sessions != before.sessions || policy.routes != before.routes
      || policy.silentMode != before.silentMode
    {
      found.add(.refusals, "a failure changed the state")
    }
  }

  /// What the rules say this event must fail with, if anything.
  private static func expectedFailure(
    of event: PolicyEvent, in p: SessionPolicy
  ) -> PolicyFailure? {
    switch event {
    case .connect:
      return nil
    case .activate(let id):
      guard let s = p.sessions[id] else { return .activationRefused(.notRegistered) }
      let callActive = p.sessions.values.contains { $0.isActive && $0.mode == .voiceCall }
      let recording = p.sessions.contains {
        $0.key != id && $0.value.isActive && $0.value.category == .record
      }
      if s.isActive || s.mode == .voiceCall { return nil }
      if callActive { return .activationRefused(.callInProgress) }
      return recording ? .activationRefused(.recordingInProgress) : nil
    case .setCategory(let id, let category, _, let options):
      if p.sessions[id] == nil { return .unknownSession(id) }
      let takesOptions = category == .playback || category == .playAndRecord
      return options.isEmpty || takesOptions ? nil : .optionsNotAllowed(category, options)
    case .deactivate(let id, _), .disconnect(let id), .publish(let id, _, _),
      .outputLost(let id, _), .streamOutput(let id, _), .holdStream(let id, _, _),
      .duckedBySoundServer(let id, _):
      return p.sessions[id] == nil ? .unknownSession(id) : nil
    case .holdOutput, .releaseHold:
      return nil
    case .setSilentMode:
      return nil
    case .route(let action), .sinkRoute(let action):
      var table = p.routes
      do {
        _ = try table.apply(action)
        return nil
      } catch {
        return .route(error)
      }
    }
  }

  /// G9, G11, G13, G14: who got `began` and `ended`, with which flag.
  private mutating func checkInterruptions(
    _ event: PolicyEvent, before: SessionPolicy, notes: [SessionNotification],
    into found: inout Findings
  ) {
    var actual: [SessionID: Interruption] = [:]
    if case .activate(let id) = event { open.remove(id) }
    for n in notes {
      guard case .interruption(let i) = n.event else { continue }
      if actual[n.session] != nil {
        found.add(.interruptions, "\(n.session) got two interruption events")
      }
      actual[n.session] = i
      switch i {
      case .began(let cause):
        // Told again, on purpose, of an output's hold (a headset switching profile).
        let retold = if case .holdOutput = event { true } else { false }
        if open.contains(n.session), !retold {
          found.add(.endedFollowsBegan, "\(n.session) got began while interrupted")
        }
        open.insert(n.session)
        coverage.began += 1
        if cause.kind == .call { coverage.callBegan += 1 }
        if cause.by.hasPrefix("alert ") || cause.by.hasPrefix("headset ") {
          coverage.heldBySoundServer += 1
        }
      case .ended(let shouldResume, let reason):
        if !open.contains(n.session) {
          found.add(.endedFollowsBegan, "\(n.session) got ended without a began")
        }
        open.remove(n.session)
        if shouldResume { coverage.endedResuming += 1 } else { coverage.endedNotResuming += 1 }
        if reason == .interrupterExited { coverage.endedByExit += 1 }
      }
    }
    if case .disconnect(let id) = event { open.remove(id) }
    for (id, s) in policy.sessions where s.isInterrupted != open.contains(id) {
      found.add(.endedFollowsBegan, "\(id) isInterrupted \(s.isInterrupted), events say otherwise")
    }

    let endedAfterSeveral = model.endedAfterSeveral
    let expected = model.follow(event, before: before)
    coverage.endedAfterSeveralInterrupters += model.endedAfterSeveral - endedAfterSeveral
    if actual != expected {
      found.add(.interruptions, "interruptions \(actual), expected \(expected)")
    }
    for (id, s) in policy.sessions where s.interruptedBy != model.interrupters[id] ?? [] {
      let want = model.interrupters[id] ?? []
      found.add(.interruptions, "\(id) interrupted by \(s.interruptedBy), expected \(want)")
    }
  }

  /// G9–G11: who may be active together; nobody gains or loses the audio unannounced.
  private func checkActivity(
    _ event: PolicyEvent, before: SessionPolicy, notes: [SessionNotification],
    into found: inout Findings
  ) {
    let active = policy.sessions.filter { $0.value.isActive }
    if active.values.filter({ !$0.isMixable }).count > 1 {
      found.add(.activity, "two non-mixable sessions active: \(active.keys.sorted())")
    }
    if active.values.contains(where: { $0.mode == .voiceCall }), active.count != 1 {
      found.add(.activity, "a call is active alongside others: \(active.keys.sorted())")
    }
    if active.values.contains(where: { $0.category == .record }), active.count != 1 {
      found.add(.activity, "a recording is active alongside others: \(active.keys.sorted())")
    }
    if case .activate(let id) = event, !policy.isActive(id), !model.isHeld(id) {
      found.add(.activity, "\(id) activated but is not active")
    }
    for (id, s) in policy.sessions {
      let was = before.sessions[id]?.isActive ?? false
      if s.isActive, !was, event != .activate(id) {
        found.add(.activity, "\(id) became active without activating")
      }
      guard !s.isActive, was else { continue }
      let told = notes.interruptions(for: id).contains {
        if case .began = $0 { return true }
        return false
      }
      let deactivated =
        event == .deactivate(id, []) || event == .deactivate(id, .notifyOthersOnDeactivation)
      if !told, !deactivated { found.add(.activity, "\(id) lost the audio without a began") }
    }
  }

  /// G2, G9, G18: derived state follows the rules, and the last event of each kind says so.
  private mutating func checkDerived(
    _ event: PolicyEvent, notes: [SessionNotification], into found: inout Findings
  ) {
    if case .disconnect(let id) = event { heard[id] = nil }
    for n in notes {
      var h = heard[n.session] ?? Heard()
      switch n.event {
      case .ducking(let d):
        h.ducked = d
        if d { coverage.ducked += 1 }
      case .nowPlaying(let b):
        h.nowPlaying = b
        coverage.nowPlayingChanges += 1
      case .silentMode(let on, let mutes):
        h.silentOn = on
        h.muted = mutes
      case .silenceSecondaryAudioHint(let hint):
        h.hint = hint == .begin
      case .routeChange:
        coverage.routeChanges += 1
      case .interruption, .mediaServicesWereReset, .sleepTimer, .sleepTimerEnded:
        break
      }
      heard[n.session] = h
    }

    let active = policy.sessions.filter { $0.value.isActive }
    for (id, s) in policy.sessions {
      let h = heard[id] ?? Heard()
      let ducker = active.contains { $0.key != id && $0.value.options.contains(.duckOthers) }
      // The sound server's own duck stands for the policy's.
      if s.isActive && ducker && s.duckedBySoundServer { coverage.duckedBySoundServer += 1 }
      if policy.isDucked(id) != (s.isActive && ducker && !s.duckedBySoundServer) {
        found.add(.ducking, "\(id) isDucked \(policy.isDucked(id))")
      }
      if h.ducked != policy.isDucked(id) {
        found.add(.ducking, "\(id) last heard ducking \(h.ducked)")
      }

      let muted = policy.silentMode && (s.category == .soloAmbient || s.category == .ambient)
      if policy.isMuted(id) != muted { found.add(.lastEvents, "\(id) isMuted \(!muted)") }
      if h.silentOn != policy.silentMode || h.muted != muted {
        found.add(.lastEvents, "\(id) last heard silentMode \(h.silentOn), muted \(h.muted)")
      }
      let primary = active.contains { $0.key != id && !SpecRules.mixes(Profile($0.value)) }
      let hint = SpecRules.mixes(Profile(s)) && primary
      if policy.secondaryAudioShouldBeSilenced(id) != hint {
        found.add(.lastEvents, "\(id) secondaryAudioShouldBeSilenced \(!hint)")
      }
      if h.hint != hint { found.add(.lastEvents, "\(id) last heard secondary audio \(h.hint)") }
      if h.nowPlaying != (policy.nowPlaying == id) {
        found.add(.lastEvents, "\(id) last heard nowPlaying \(h.nowPlaying)")
      }
    }
    if let np = policy.nowPlaying, !policy.isEligibleForNowPlaying(np) {
      found.add(.lastEvents, "now-playing \(np) is not eligible")
    }
    if policy.nowPlaying == nil,
      policy.sessions.keys.contains(where: policy.isEligibleForNowPlaying)
    {
      found.add(.lastEvents, "an app is eligible but none is now-playing")
    }
  }
}
