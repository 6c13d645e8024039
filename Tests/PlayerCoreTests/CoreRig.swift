import AudioCore
import SessionCore

@testable import PlayerCore

/// A `PlayerCore` in a model world: an engine, a session server and a mixer that answer its
/// effects as the real ones do, on a clock that moves only when told. It runs the core the way
/// `Player` does (answers handed back at once, `endStep` after each outside input) and keeps
/// what the core said: replies, notices, snapshots, what was published.
struct CoreRig {
  var core: PlayerCore
  var engine: ModelEngine
  var server = ModelServer()
  var volume: VolumeState?
  var volumeFails = false
  /// Monotonic nanoseconds.
  var now: UInt64 = 1_000_000_000
  /// Engine events not yet delivered (the real engine's come on their own queue).
  var pendingEngineEvents: [EngineEvent] = []
  /// Session events not yet delivered (the server's answer to a lost output).
  var pendingSessionEvents: [SessionEvent] = []
  /// Answers found off the player's loop (chapters, places), not yet delivered; held back
  /// while `holdAnswers` (a slow disk).
  var pendingAnswers: [PlayerInput] = []
  var holdAnswers = false

  // The files' chapters, and the index's places (a model of the library index: what was kept
  // is what a look-up finds).
  var chapterFiles: [String: [Chapter]] = [:]
  var places: [String: ListeningPlace] = [:]
  /// The index's speeds, by folder (what was kept is what a look-up finds).
  var ratesKept: [String: Double] = [:]
  /// Every look-up and keep asked for, in order.
  var chaptersAsked: [String] = []
  var placesLookedUp: [String] = []
  var placesKept: [(path: String, place: ListeningPlace)] = []
  /// The seeks made as a place found came: the recording, where it went, and the place.
  var restored: [(path: String, to: Double, place: ListeningPlace?)] = []
  /// The file whose chapters were asked for last, once its answer has been delivered.
  var chaptersKnown: String?

  // What was seen.
  var replies: [CommandStatus] = []
  var notices: [PlayerNotice] = []
  var published: [(PlaybackInfo, Set<RemoteCommandKind>)] = []
  var engineCommands: [EngineCommand] = []
  var sleepHeld = false
  var clockRunning = false
  var finished = false
  /// Effects of the last outside input (answers included), in order.
  var lastEffects: [PlayerEffect] = []
  /// The first time the position a view shows went back between two snapshots without a seek,
  /// a load, a stop or a new track between them.
  var positionWentBack: String?
  /// How many snapshots held the position (behind what was shown, not advancing).
  var heldSnapshots = 0
  private var lastShown: PlayerSnapshot?
  private var jumpSinceShown = false

  init(
    tracks: [String] = ["a.wav"], seconds: Double = 30, settings: PlayerCore.Settings = .init(),
    volume: VolumeState? = nil
  ) {
    var s = settings
    s.shuffleSeed = 42
    core = PlayerCore(settings: s)
    engine = ModelEngine(defaultSeconds: seconds)
    self.volume = volume
    _ = input(.start(files: tracks, autoplay: false))
  }

  var snapshot: PlayerSnapshot { core.shown }

  var observation: Observation {
    Observation(engine: engine.snapshot, volume: volume, now: now)
  }

  var messages: [String] {
    notices.compactMap { if case .message(let m) = $0 { m.description } else { nil } }
  }

  var heard: [String] {
    notices.compactMap { if case .nowPlaying(let t) = $0 { t.path } else { nil } }
  }

  // MARK: Driving it

  /// One outside input, as `Player.step` handles it; the command's reply, if any.
  @discardableResult
  mutating func input(_ input: PlayerInput) -> CommandStatus? {
    lastEffects = []
    let before = replies.count
    feed(input)
    if !finished {
      for e in core.endStep(seeing: observation) { carryOut(e) }
    }
    return replies.count > before ? replies.last : nil
  }

  @discardableResult
  mutating func send(_ command: RemoteCommand) -> CommandStatus? { input(.command(command)) }

  mutating func perform(_ action: PlayerAction) { input(.action(action)) }

  mutating func deliver(_ event: SessionEvent) { input(.session(event)) }

  /// Plays, granted, and delivers what the engine says about it.
  mutating func playing() {
    server.answer = .granted
    send(.play)
    settle()
  }

  /// Delivers the engine's and the server's pending events, one input each, until none are left.
  mutating func settle() {
    var rounds = 0
    while !(pendingEngineEvents.isEmpty && pendingSessionEvents.isEmpty)
      || (!holdAnswers && !pendingAnswers.isEmpty), rounds < 100
    {
      rounds += 1
      if !pendingSessionEvents.isEmpty {
        input(.session(pendingSessionEvents.removeFirst()))
      } else if !pendingEngineEvents.isEmpty {
        input(.engine(pendingEngineEvents.removeFirst()))
      } else {
        input(pendingAnswers.removeFirst())
      }
    }
  }

  /// Lets `seconds` of time pass, with a tick each second while the clock runs, and the
  /// engine's events as they happen.
  mutating func pass(_ seconds: Double) {
    var left = seconds
    while left > 0 {
      let dt = min(left, 0.25)
      left -= dt
      now += UInt64(dt * 1e9)
      pendingEngineEvents += engine.advance(dt, queue: engine.queue)
      settle()
      if clockRunning { input(.tick) }
    }
  }

  private mutating func feed(_ input: PlayerInput) {
    for effect in core.handle(input, seeing: observation) {
      if case .placeFound(let t, let place, _) = input, case .engine(.seek(let to)) = effect {
        restored.append((t.path, to, place))
      }
      carryOut(effect)
    }
    if case .chaptersFound(let t, _) = input, chaptersAsked.last == t.path {
      chaptersKnown = t.path
    }
  }

  private mutating func carryOut(_ effect: PlayerEffect) {
    lastEffects.append(effect)
    switch effect {
    case .engine(let command):
      switch command {
      case .load, .seek, .stop: jumpSinceShown = true
      case .setRate: jumpSinceShown = true
      case .play, .pause, .pauseAtOnce, .reopenOutput, .setDucked, .fadeOut, .endFade, .shutdown:
        break
      }
      engineCommands.append(command)
      pendingEngineEvents += engine.apply(command)
    case .publishQueue(let queue):
      engine.queue = queue
    case .publishRates(let rates):
      engine.rates = rates
    case .keepRate(let folder, let rate):
      ratesKept[folder] = rate
    case .setCategory(let mode):
      server.modes.append(mode)
    case .activate:
      let answer = server.answer
      if answer == .granted { server.active = true }
      server.activationsAsked += 1
      feed(.activation(answer))
    case .deactivate:
      server.active = false
    case .reportOutputLost(let route):
      if server.takesLostOutputs {
        pendingSessionEvents.append(
          .routeChange(
            RouteChange(reason: .oldDeviceUnavailable, previous: route, current: .speakers)))
      }
      feed(.outputLossAnswered(route, taken: server.takesLostOutputs))
    case .publish(let info, let commands):
      published.append((info, commands))
    case .setVolume(let percent):
      if !volumeFails { volume?.percent = percent }
      feed(.volumeAnswered(failure: volumeFails ? "the mixer said no" : nil, muting: false))
    case .setMuted(let muted):
      if !volumeFails { volume?.muted = muted }
      feed(.volumeAnswered(failure: volumeFails ? "the mixer said no" : nil, muting: true))
    case .findVolume:
      break
    case .switchDevice(let name):
      if name.hasPrefix("bad") {
        feed(.deviceSwitched(name, failure: "no such device"))
      } else {
        engine.deviceName = name
        feed(.deviceSwitched(name, failure: nil))
      }
    case .recheckLookahead:
      feed(.lookaheadCheck)
    case .findChapters(let t):
      chaptersAsked.append(t.path)
      chaptersKnown = nil
      pendingAnswers.append(.chaptersFound(t, chapterFiles[t.path] ?? []))
    case .lookUpPlace(let t):
      placesLookedUp.append(t.path)
      pendingAnswers.append(
        .placeFound(t, places[t.path], rate: ratesKept[RatePlan.collection(of: t.path)]))
    case .keepPlace(let path, let place, _):
      places[path] = place
      placesKept.append((path, place))
    case .holdSleep(let hold):
      sleepHeld = hold
    case .clock(let running):
      clockRunning = running
    case .wake:
      break
    case .changed(let snap, let said):
      notices += said
      let news = said.contains {
        switch $0 {
        case .nowPlaying, .seeked, .queueEnded: true
        default: false
        }
      }
      if let last = lastShown, !jumpSinceShown, !news, last.current == snap.current,
        last.state != .stopped, snap.state != .stopped, positionWentBack == nil
      {
        // Paused from playing, it is where the sound stopped: not behind what was shown, but
        // not where the clock carried it since.
        let pausing = last.state == .playing && snap.state != .playing
        let was = pausing ? last.position : last.position(at: snap.positionTime)
        let shown = snap.position(at: snap.positionTime)
        if shown < was - 1e-9 { positionWentBack = "from \(was) to \(shown)" }
        if snap.state == .playing, !snap.isAdvancing { heldSnapshots += 1 }
      }
      lastShown = snap
      jumpSinceShown = false
    case .reply(let status):
      replies.append(status)
    case .finish:
      finished = true
    }
  }
}

/// A session server: answers activations as told, remembers what it was told.
struct ModelServer {
  var answer: ActivationAnswer = .granted
  var active = false
  var activationsAsked = 0
  var modes: [SessionMode] = []
  /// Whether it takes an output reported lost (and answers with a route change).
  var takesLostOutputs = true
}

/// An engine: tracks of known lengths by path ("broken…" will not open, "http…" are live
/// streams), a position that moves with the time passed while playing, gapless advances
/// through the queue it was given, and the events the real engine sends.
struct ModelEngine {
  var defaultSeconds: Double
  var lengths: [String: Double] = [:]
  var queue = PlayQueue()
  /// The speeds as last published: a track begun plays at its own (asked when it begins).
  var rates = RatePlan()
  var rate = 1.0
  var state: EngineState = .stopped
  var track: QueuedTrack?
  var position = 0.0
  var started = false
  var deviceName = "fake"
  var ducked = false
  /// The sleep timer's fade under way: its length in seconds.
  var fading: Double?
  /// How far behind the truth the position it reports is (a deep buffer's estimate).
  var lag = 0.0
  var shutDown = false
  /// Which stretch of sound is heard: a new one at each load, seek and track begun.
  var segment = 0
  /// What the decoder lined up after the track heard, once it reached the track's last 1.5 s
  /// (asked of the queue it had then, as the real decode thread does).
  var decided: Lookahead?

  init(defaultSeconds: Double) { self.defaultSeconds = defaultSeconds }

  func length(_ t: QueuedTrack) -> Double? {
    t.path.hasPrefix("http") ? nil : lengths[t.path] ?? defaultSeconds
  }

  /// Between two stretches of sound (the real engine mid-seek, or opening a load): it says
  /// no track for a moment, though it is not stopped.
  var betweenStretches = false

  var snapshot: EngineSnapshot {
    var s = EngineSnapshot(state: state, deviceName: deviceName, segment: segment, rate: rate)
    guard let track, !betweenStretches else { return s }
    s.track = track
    s.position = max(0, position - lag)
    s.duration = length(track)
    s.isSeekable = !track.path.hasPrefix("http")
    s.isLive = track.path.hasPrefix("http")
    s.isAdvancing = state == .playing && started
    s.metadata = TrackMetadata(title: nil, artist: "the artist of \(track.path)")
    s.lookahead = decided ?? .undecided
    return s
  }

  /// The decoder reaches the last 1.5 s of the track heard: it asks what follows.
  mutating func decideIfNear() {
    guard decided == nil, let track, let d = length(track), d - position < 1.5 else { return }
    decided = queue.track(after: track.id, automatic: true).map { .next($0) } ?? .end
  }

  /// Carries out a command; the events it leads to.
  mutating func apply(_ command: EngineCommand) -> [EngineEvent] {
    switch command {
    case .load(let t, let seconds, let playing, let continuing):
      state = playing ? .playing : .paused
      started = false
      var events: [EngineEvent] = []
      var candidate: QueuedTrack? = t
      var at = seconds
      // A file that will not open is said, and the next that does is loaded in its place; one
      // that failed already in this run (repeat) ends the queue.
      var failed: Set<Int> = []
      while let c = candidate, c.path.hasPrefix("broken") {
        events.append(
          .trackFailed(c, DecodeError(.unknownFormat, path: c.path, reason: "not an audio file")))
        failed.insert(c.id)
        candidate = queue.track(after: c.id, automatic: true)
        if let n = candidate, failed.contains(n.id) { candidate = nil }
        at = 0
      }
      guard let opened = candidate else {
        track = nil
        state = .stopped
        return events + [.endOfQueue]
      }
      track = opened
      rate = rates.rate(for: opened.path, genre: nil)
      segment += 1
      position = min(at, length(opened) ?? at)
      decided = nil
      decideIfNear()
      events.append(.loaded(opened))
      if !continuing || opened != t { events.append(.nowHearing(opened)) }
      if playing { started = true; events.append(.outputStarted) }
      return events
    case .play:
      guard track != nil else { return [] }
      state = .playing
      started = true
      return [.outputStarted]
    case .pause, .pauseAtOnce:
      if state == .playing { state = .paused }
      started = false
      return []
    case .stop:
      decided = nil
      track = nil
      state = .stopped
      position = 0
      started = false
      return []
    case .seek(let seconds):
      guard let track else { return [] }
      position = min(max(0, seconds), length(track) ?? seconds)
      segment += 1
      decided = nil
      decideIfNear()
      return []
    case .setRate(let r):
      guard track != nil else { return [] }
      rate = r
      segment += 1  // decoded again from where it is heard
      decided = nil
      decideIfNear()
      return []
    case .reopenOutput:
      return []
    case .setDucked(let d):
      ducked = d
      return []
    case .fadeOut(let seconds):
      fading = seconds
      return []
    case .endFade:
      fading = nil
      return []
    case .shutdown:
      shutDown = true
      return []
    }
  }

  /// Time passes: the position moves while playing, and at a track's end the next is heard
  /// (gaplessly) or the queue ends.
  mutating func advance(_ seconds: Double, queue: PlayQueue) -> [EngineEvent] {
    guard state == .playing, started, let t = track else { return [] }
    position += seconds * rate
    decideIfNear()
    guard let length = length(t), position >= length else { return [] }
    var events: [EngineEvent] = []
    var next: QueuedTrack? =
      switch decided {
      case .next(let n): n
      case .end, .undecided, nil: nil
      }
    decided = nil
    var failed: Set<Int> = []
    while let n = next, n.path.hasPrefix("broken") {
      events.append(
        .trackFailed(n, DecodeError(.unknownFormat, path: n.path, reason: "not an audio file")))
      failed.insert(n.id)
      next = queue.track(after: n.id, automatic: true)
      if let m = next, failed.contains(m.id) { next = nil }
    }
    if let next {
      position -= length
      track = next
      rate = rates.rate(for: next.path, genre: nil)
      segment += 1
      decideIfNear()
      events.append(.nowHearing(next))
    } else {
      position = length
      state = .stopped
      started = false
      events.append(.endOfQueue)
    }
    return events
  }

  /// The device went away under the engine: it stops writing and says so.
  mutating func loseDevice() -> [EngineEvent] {
    guard state == .playing else { return [] }
    state = .paused
    started = false
    return [.deviceLost(device: deviceName, code: -19)]
  }
}
