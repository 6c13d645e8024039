import AudioCore
import Platform
import PropertyBased
import SessionCore
import Testing

@testable import PlayerCore

/// Random sequences of every kind of input, in the model world of `CoreRig`, with the player's
/// rules checked after each step against the test's own model of them. A failure names the
/// rule, the step and the input.
@Suite(.timeLimit(.minutes(5))) struct PlayerCorePropertyTests {
  /// Sequences, of up to 120 steps each: the run takes a few seconds.
  static let sequences = 500

  @Test func randomSequencesKeepEveryRule() async {
    await propertyCheck(count: Self.sequences, input: Self.steps) { steps in
      var run = CoreRun()
      for step in steps where run.problem == nil { run.perform(step) }
      if let problem = run.problem {
        Issue.record(Comment(rawValue: problem + "\nsteps: \(steps.prefix(run.steps))"))
      }
    }
  }

  /// Guards the test above against generators that never reach the interesting cases.
  @Test func randomSequencesReachEveryInterestingCase() async {
    let total = Locked(CoreRun.Coverage())
    await propertyCheck(count: 200, input: Self.steps) { steps in
      var run = CoreRun()
      for step in steps { run.perform(step) }
      let c = run.coverage
      total.withLock { $0.add(c) }
    }
    let c = total.withLock { $0 }
    #expect(c.playAfterStop > 0)
    #expect(c.resumedAfterInterruption > 0)
    #expect(c.stayedPausedAfterInterruption > 0)
    #expect(c.routeLossWhilePlaying > 0)
    #expect(c.pauseThenLoss > 0)
    #expect(c.refused > 0)
    #expect(c.disabledCommands > 0)
    #expect(c.endOfQueue > 0)
    #expect(c.trackChanges > 0)
    #expect(c.heldPositions > 0)
    #expect(c.stoppedNowPlaying > 0)
    #expect(c.chapterMoves > 0)
    #expect(c.placesRestored > 0)
    #expect(c.placesKept > 0)
    #expect(c.playedToTheEnd > 0)
    #expect(c.timerPauses > 0)
    #expect(c.timerFadesCalledOff > 0)
    #expect(c.rateChanges > 0)
    #expect(c.ratesRecalled > 0)
    #expect(c.stepsChecked > 10_000)
  }

  /// A step: what kind of input, and two numbers it draws its details from.
  static let steps = zip(Gen.int(in: 0...41), Gen.int(in: 0...999), Gen.int(in: 0...999))
    .map { CoreRun.Step(kind: $0, a: $1, b: $2) }
    .array(of: 1...120)
}

/// One sequence: the rig, the test's own model of the rules, and the first rule broken.
struct CoreRun {
  struct Step: Hashable, Sendable, CustomStringConvertible {
    var kind: Int
    var a: Int
    var b: Int
    var description: String { "(\(kind), \(a), \(b))" }
  }

  struct Coverage: Sendable {
    var playAfterStop = 0, resumedAfterInterruption = 0, stayedPausedAfterInterruption = 0
    var routeLossWhilePlaying = 0, pauseThenLoss = 0, refused = 0, disabledCommands = 0
    var endOfQueue = 0, trackChanges = 0, heldPositions = 0, stoppedNowPlaying = 0
    var chapterMoves = 0, placesRestored = 0, placesKept = 0, playedToTheEnd = 0
    var timerPauses = 0, timerFadesCalledOff = 0
    var rateChanges = 0, ratesRecalled = 0
    var stepsChecked = 0

    mutating func add(_ o: Coverage) {
      playAfterStop += o.playAfterStop
      resumedAfterInterruption += o.resumedAfterInterruption
      stayedPausedAfterInterruption += o.stayedPausedAfterInterruption
      routeLossWhilePlaying += o.routeLossWhilePlaying
      pauseThenLoss += o.pauseThenLoss
      refused += o.refused
      disabledCommands += o.disabledCommands
      endOfQueue += o.endOfQueue
      trackChanges += o.trackChanges
      heldPositions += o.heldPositions
      stoppedNowPlaying += o.stoppedNowPlaying
      chapterMoves += o.chapterMoves
      placesRestored += o.placesRestored
      placesKept += o.placesKept
      playedToTheEnd += o.playedToTheEnd
      timerPauses += o.timerPauses
      timerFadesCalledOff += o.timerFadesCalledOff
      rateChanges += o.rateChanges
      ratesRecalled += o.ratesRecalled
      stepsChecked += o.stepsChecked
    }
  }

  var rig: CoreRig
  private(set) var problem: String?
  private(set) var coverage = Coverage()
  private var count = 0
  /// Steps performed.
  var steps: Int { count }
  /// The last input made, in words.
  var lastInput = ""

  // The model: what the rules say, kept by the test from the inputs it made.
  /// The interruption the server began and has not ended: whether the player was playing when
  /// it began, whether the user paused or the output went since (G14: then no resume), and why
  /// it was paused before it began.
  private var interruption:
    (wasPlaying: Bool, noResume: Bool, outputWent: Bool, before: PauseCause?)?
  /// Why it is paused or stopped, as the rules say: the last thing that took it from playing.
  private var reason: PauseCause?
  /// When the user last paused a playing player.
  private var userPausedAt: UInt64?
  /// The server's word: it is the now-playing app (it played, and no other app has since).
  private var nowPlaying = false
  /// The sleep timer ended while it played: it fades out until then, and pauses (`timer`).
  private var timerFade: UInt64?
  private let route = Route(name: "Headphones", kind: .headphones)
  /// Files the user said are spoken word, or music, at some point (`toggleSpoken`).
  private var toggled: Set<String> = []
  /// The speeds the user asked for: music's, and each podcast's or book's (by folder).
  private var musicRate = 1.0
  private var spokenRates: [String: Double] = [:]
  /// Restores and keeps checked so far.
  private var restoresSeen = 0
  private var keepsSeen = 0

  static let paths = [
    "a.wav", "b.flac", "c.ogg", "broken.mp3", "talk/episode.mp3", "http://radio/x", "d.opus",
    "book.m4b", "long.flac",
  ]
  /// Chapters of the model's files: an audiobook's and a long recording's.
  static let chapters: [String: [Chapter]] = [
    "book.m4b": [
      Chapter(start: 0, title: "One"), Chapter(start: 4, title: "Two"),
      Chapter(start: 9.5, title: "Three"), Chapter(start: 15),
    ],
    "long.flac": [Chapter(start: 0), Chapter(start: 600), Chapter(start: 1_300)],
    "c.ogg": [Chapter(start: 1), Chapter(start: 2)],
  ]

  init() {
    var settings = PlayerCore.Settings()
    settings.spokenFolders = ["talk"]
    rig = CoreRig(tracks: ["a.wav", "b.flac", "c.ogg"], seconds: 8, settings: settings)
    rig.engine.lengths = ["d.opus": 1.2, "c.ogg": 3, "book.m4b": 20, "long.flac": 1_500]
    rig.chapterFiles = Self.chapters
    rig.places = ["book.m4b": .at(12), "long.flac": .at(1_250), "talk/episode.mp3": .finished]
  }

  /// Whether a file keeps its own place, as the rules say: spoken word (its type, its folder,
  /// or the user's word) or long.
  private func isLong(_ path: String) -> Bool {
    path.hasSuffix(".m4b") || path.hasPrefix("talk/") || toggled.contains(path)
      || (rig.engine.lengths[path] ?? rig.engine.defaultSeconds) >= 1_200
  }

  private mutating func fail(_ rule: String, _ step: Step, _ input: PlayerInput?) {
    guard problem == nil else { return }
    problem = "step \(count) \(step), input \(input.map { "\($0)" } ?? "time"): \(rule)"
  }

  /// The input a step makes; nil for time passing and the engine's own events.
  private mutating func makeInput(_ step: Step) -> PlayerInput? {
    let q = rig.snapshot.queue
    func entry(_ n: Int) -> Int? { q.isEmpty ? nil : q[n % q.count].id }
    func path(_ n: Int) -> String { Self.paths[n % Self.paths.count] }
    let commands: [RemoteCommand] = [
      .play, .play, .pause, .togglePlayPause, .stop, .nextTrack, .previousTrack,
      .skipForward(seconds: Double(step.a % 20)), .skipBackward(seconds: Double(step.a % 20)),
      .changePlaybackPosition(seconds: Double(step.a % 12)),
      [.seekForward, .seekBackward, .volumeUp(percent: 5), .mute][step.a % 4],
    ]
    if step.kind < commands.count {
      rig.server.answer =
        step.b % 10 == 0
        ? .refused("a call is in progress") : step.b % 37 == 0 ? .failed("gone") : .granted
      return .command(commands[step.kind])
    }
    switch step.kind {
    case 11:
      return step.b % 3 == 1
        ? .action(.addReady([path(step.a)])) : .action(.add([path(step.a)], play: step.b % 3 == 0))
    case 12:
      return .action(.insert([path(step.a), path(step.b)], at: [.now, .next, .end][step.b % 3]))
    case 13: return entry(step.a).map { .action(.remove(entry: $0)) }
    case 14: return entry(step.a).map { .action(.move(entry: $0, to: step.b % 5)) }
    case 15: return step.b % 4 == 0 ? .action(.clear) : .action(.shuffleOnce)
    case 16: return .action(.undo)
    case 17: return entry(step.a).map { .action(.playEntry($0)) }
    case 18: return .action(.setRepeat(RepeatMode.allCases[step.a % 3]))
    case 19: return .action(.setShuffle(step.a % 2 == 0))
    case 20:
      return .action(.replace([path(step.a), path(step.b), path(step.a + 1)], start: step.b % 3))
    case 21:
      return .action(
        .restore(
          paths: [path(step.a), path(step.b)], current: step.a % 3, position: Double(step.b % 9),
          shuffle: false, repeatMode: .off))
    case 22, 23:
      if interruption != nil {
        return .session(
          .interruption(
            .ended(
              shouldResume: step.a % 3 != 0,
              reason: step.b % 2 == 0 ? .interrupterDeactivated : .interrupterExited)))
      }
      let kinds: [InterruptionCause.Kind] = [.call, .otherAudio, .recording]
      return .session(
        .interruption(.began(InterruptionCause(kind: kinds[step.a % 3], by: "app\(step.b % 3)"))))
    case 24:
      return .session(
        .routeChange(
          RouteChange(reason: .oldDeviceUnavailable, previous: route, current: .speakers)))
    case 25:
      return .session(
        .routeChange(RouteChange(reason: .newDeviceAvailable, previous: .speakers, current: route)))
    case 26: return .session(.ducking(isDucked: step.a % 2 == 0))
    case 27: return .session(.silentMode(isOn: step.a % 2 == 0, mutesThisSession: false))
    case 28: return .session(.nowPlaying(isNowPlaying: false))  // another app plays
    case 29: return .sleep(step.a % 2 == 0)
    case 30: return .action(.selectDevice(step.a % 4 == 0 ? "bad" : "usb\(step.a % 2)"))
    case 31:
      if let t = rig.engine.track ?? rig.core.queue.current { toggled.insert(t.path) }
      return .action(.toggleSpoken)
    case 34: return .action(.pauseForLostOutput)  // WirePlumber's Pause as a sink goes
    case 35, 36:
      rig.server.answer = .granted
      return .command(step.kind == 35 ? .nextChapter : .previousChapter)
    case 37: return .session(.sleepTimerEnded(fade: Double(step.a % 3)))
    case 39:
      // Speeds in and out of range: MPRIS's Rate, `hark ctl rate`.
      return .command(.changePlaybackRate([0.5, 0.75, 1, 1.5, 2, 3, 0.2, 4][step.a % 8]))
    case 40: return .action(.stepRate(faster: step.a % 3 != 0))
    case 38:
      // The timer cancelled, or set again, or announced as it ends.
      let states: [SleepTimerStatus.State?] = [nil, .running, .ending, .ended]
      return .session(
        .sleepTimer(
          states[step.a % 4].map { SleepTimerStatus(state: $0, mode: .endOfTrack, fade: 2) }))
    default: return nil
    }
  }

  mutating func perform(_ step: Step) {
    count += 1
    coverage.stepsChecked += 1
    let before = rig.snapshot
    let queueBefore = rig.core.queue
    let playingBefore = before.state == .playing
    let noticesBefore = rig.notices.count
    let engineBefore = rig.engineCommands.count
    let asked = rig.server.activationsAsked
    let t0 = rig.now
    let engineBeforeStep = rig.engine.snapshot
    let input = makeInput(step)
    lastInput = input.map { "\($0)" } ?? "time"
    var reply: CommandStatus?
    if let input {
      reply = rig.input(input)
    } else if step.kind == 32 {
      rig.pendingEngineEvents += rig.engine.loseDevice()
    } else if step.kind == 33 {
      // A sound server buffering deeper, or catching up.
      rig.engine.lag = Double(step.a % 5) * 0.3
      rig.input(.tick)
    } else if step.kind == 37 {
      // A slow disk: the chapters and places found come later, after other inputs.
      rig.holdAnswers = step.a % 2 == 0
      rig.input(.tick)
    } else {
      rig.pass(Double(step.a % 40) / 10 + 0.05)
    }
    rig.settle()
    let after = rig.snapshot
    let said = rig.notices.dropFirst(noticesBefore)
    let effects = rig.engineCommands.dropFirst(engineBefore)
    func fail(_ rule: String) { self.fail(rule, step, input) }

    // One reply for each command, and G19: what is enabled is done, what is not is refused
    // and nothing is done instead.
    if case .command(let c) = input {
      guard let reply else { return fail("a command got no reply") }
      if !before.enabledCommands.contains(c.kind) {
        coverage.disabledCommands += 1
        if reply != .commandDisabled && reply != .noSuchContent {
          fail("G19: \(c) was disabled and replied \(reply)")
        }
        if !effects.isEmpty || rig.server.activationsAsked != asked {
          fail("G19: \(c) was disabled and something was done: \(Array(effects))")
        }
      } else {
        switch reply {
        case .noSuchContent: fail("G19: \(c) was enabled and found nothing")
        case .commandDisabled:
          if case .refused = rig.server.answer, rig.server.activationsAsked > asked {
            coverage.refused += 1
          } else {
            fail("G19: \(c) was enabled and refused")
          }
        case .commandFailed, .success: break
        }
        let skipped = said.contains { if case .couldNotPlay = $0 { true } else { false } }
        checkEnabled(c, reply, before, queueBefore, Array(effects), skipped: skipped, fail)
      }
    } else if reply != nil {
      fail("an input that is no command got a reply")
    }

    // G14: an interruption's end resumes iff it was playing when it began, nothing since said
    // not to, and the interrupter said it may.
    if case .session(.interruption(.ended(let resume, _))) = input, let open = interruption {
      let expected = resume && open.wasPlaying && !open.noResume && !open.outputWent
      let resumed = rig.server.activationsAsked > asked
      if resumed != expected { fail("G14: resumed \(resumed), expected \(expected)") }
      if expected {
        coverage.resumedAfterInterruption += 1
      } else {
        coverage.stayedPausedAfterInterruption += 1
      }
    }
    // G5: the output going while playing stops the engine at once.
    if case .session(.routeChange(let change)) = input, change.reason == .oldDeviceUnavailable,
      playingBefore
    {
      coverage.routeLossWhilePlaying += 1
      if rig.engine.state == .playing { fail("G5: the engine plays on after its output went") }
      // Without the ramp, which would be heard on the output the stream was moved to.
      if !effects.contains(.pauseAtOnce) || effects.contains(.pause) {
        fail("G5: the output went and the engine was told \(Array(effects)), not pauseAtOnce")
      }
    }
    // Play after Stop starts the current track from its start (MPRIS's Stop; cmus, mpv, MPD).
    if case .command(let c) = input, c == .play || c == .togglePlayPause,
      before.state == .stopped, before.pausedBy == .user, after.state == .playing
    {
      coverage.playAfterStop += 1
      let load = effects.first { if case .load = $0 { true } else { false } }
      if case .load(_, let at, true, false) = load, at == 0 {
      } else {
        fail("Play after Stop did not start the track from its start: \(Array(effects))")
      }
    }

    updateModel(
      input, step, before: before, queueBefore: queueBefore, after: after, said: Array(said),
      t0: t0)

    // The rules that hold after every step.
    if after.state == .paused, after.pausedBy == nil { fail("paused without a reason") }
    if after.state != .playing, after.pausedBy != reason {
      fail(
        "the reason is \(String(describing: after.pausedBy)), the rules say \(String(describing: reason))"
      )
    }
    if rig.engine.state == .playing && !rig.server.active {
      fail("G1: the engine plays and the session is not active")
    }
    // The sleep timer's fade lasts only while it plays: paused, its gain is back for the next
    // play.
    if rig.engine.fading != nil, after.state != .playing {
      fail("the sleep timer's fade outlives playing (\(after.state))")
    }
    if after.isNowPlaying, !after.queue.isEmpty, after.state != .playing,
      !after.enabledCommands.isEmpty
    {
      if after.state == .stopped { coverage.stoppedNowPlaying += 1 }
      if !after.isInAudioContext { fail("G18: the server's now-playing app left its context") }
    }
    if after.queue.isEmpty, !after.enabledCommands.isEmpty {
      fail("commands enabled with an empty queue")
    }
    // The position shown never goes back between seeks, loads and new tracks (going back to
    // a kept place is a seek).
    if let back = rig.positionWentBack { fail("the position went back \(back)") }
    checkChaptersAndPlaces(step, input, before: before, effects: Array(effects))
    checkRates(step, input, before: before, engineBefore: engineBeforeStep, reply: reply)
    coverage.heldPositions = rig.heldSnapshots
    if before.current != after.current { coverage.trackChanges += 1 }
    // The server: the app that plays is the now-playing app until another app plays.
    if case .session(.nowPlaying(false)) = input { nowPlaying = false }
    if after.state == .playing, !nowPlaying {
      nowPlaying = true
      rig.deliver(.nowPlaying(isNowPlaying: true))
    }
  }

  /// Whether the rules count `path` as spoken word: its type, its folder, or the user's word.
  private func isSpoken(_ path: String) -> Bool {
    rig.core.rates.spokenOverrides[path] ?? (path.hasSuffix(".m4b") || path.hasPrefix("talk/"))
  }

  /// Speed: what the user asks is the track's (a podcast's or book's for spoken word, music's
  /// otherwise); every track the engine holds plays at the speed the rules give it; a live
  /// stream at 1×; the snapshot shows the speed heard.
  private mutating func checkRates(
    _ step: Step, _ input: PlayerInput?, before: PlayerSnapshot, engineBefore: EngineSnapshot,
    reply: CommandStatus?
  ) {
    func fail(_ rule: String) { self.fail(rule, step, input) }
    var asked: Double?
    if case .command(.changePlaybackRate(let r)) = input, reply == .success {
      asked = min(max(r, 0.5), 3)
    } else if case .action(.stepRate(let faster)) = input, engineBefore.track != nil,
      engineBefore.isSeekable, !engineBefore.isLive
    {
      let steps = PlaybackRate.steps.map(\.value)
      asked =
        faster
        ? steps.first { $0 > engineBefore.rate + 1e-6 }
        : steps.last { $0 < engineBefore.rate - 1e-6 }
    }
    if let asked, let held = engineBefore.track {
      if isSpoken(held.path) {
        spokenRates[RatePlan.collection(of: held.path)] = asked
      } else {
        musicRate = asked
      }
      coverage.rateChanges += 1
      if abs(rig.engine.rate - asked) > 1e-9 {
        fail("asked for \(asked)×, the engine plays at \(rig.engine.rate)×")
      }
    }
    let e = rig.engine.snapshot
    guard let t = e.track, e.state != .stopped, e.isSeekable else { return }
    let expected =
      t.path.hasPrefix("http")
      ? 1 : isSpoken(t.path) ? spokenRates[RatePlan.collection(of: t.path)] ?? 1 : musicRate
    if abs(e.rate - expected) > 1e-9 {
      fail("'\(t.path)' plays at \(e.rate)×, the rules say \(expected)×")
    }
    if asked == nil, e.rate != 1, engineBefore.track != t || engineBefore.segment != e.segment {
      coverage.ratesRecalled += 1
    }
    let after = rig.snapshot
    if after.current == t, abs(after.rate - e.rate) > 1e-9 {
      fail("the snapshot shows \(after.rate)×, the engine plays at \(e.rate)×")
    }
  }

  /// Chapters and kept places: a place is looked up, kept and gone back to only for long
  /// recordings, and back to where it was kept, a step earlier; the chapter commands are
  /// enabled exactly when there is a chapter to go to, and go there.
  private mutating func checkChaptersAndPlaces(
    _ step: Step, _ input: PlayerInput?, before: PlayerSnapshot, effects: [EngineCommand]
  ) {
    func fail(_ rule: String) { self.fail(rule, step, input) }
    for path in rig.placesLookedUp where !isLong(path) {
      fail("the place of '\(path)', no long recording, was looked up")
    }
    for kept in rig.placesKept.dropFirst(keepsSeen) {
      if !isLong(kept.path) { fail("a place was kept for '\(kept.path)', no long recording") }
      coverage.placesKept += 1
      if kept.place == .finished { coverage.playedToTheEnd += 1 }
    }
    keepsSeen = rig.placesKept.count
    for r in rig.restored.dropFirst(restoresSeen) {
      coverage.placesRestored += 1
      if !isLong(r.path) { fail("'\(r.path)', no long recording, was sent back to a place") }
      guard case .at(let s) = r.place else {
        fail("'\(r.path)' was sent to \(r.to) with no place kept (\(String(describing: r.place)))")
        continue
      }
      let length = rig.engine.lengths[r.path] ?? rig.engine.defaultSeconds
      let expected = min(max(0, s - 10), max(0, length - 0.05))
      if abs(r.to - expected) > 1e-9 {
        fail("'\(r.path)' kept at \(s) was sent to \(r.to), not \(expected)")
      }
    }
    restoresSeen = rig.restored.count

    // What the chapter commands may do now, from the model's files and the engine.
    let e = rig.engine.snapshot
    let after = rig.snapshot
    var list: [Chapter] = []
    if let t = e.track, t.id == rig.core.queue.currentID, e.isSeekable, rig.chaptersKnown == t.path
    {
      list = Chapter.ordered(Self.chapters[t.path] ?? [])
    }
    let upTo = list.filter { $0.start <= e.position + Chapter.startTolerance }
    let next = list.first { $0.start > e.position + Chapter.startTolerance }
    let canGoBack =
      upTo.last.map { upTo.count > 1 || e.position - $0.start > 3 } ?? false
    if after.enabledCommands.contains(.nextChapter) != (next != nil) {
      fail("nextChapter enabled \(!(next == nil)), expected \(next != nil) at \(e.position)")
    }
    if after.enabledCommands.contains(.previousChapter) != canGoBack {
      fail("previousChapter enabled \(!canGoBack), expected \(canGoBack) at \(e.position)")
    }
    if case .command(let c) = input, c == .nextChapter || c == .previousChapter,
      before.enabledCommands.contains(c.kind),
      let seek = effects.first(where: {
        if case .seek = $0 { true } else { false }
      })
    {
      coverage.chapterMoves += 1
      if case .seek(let to) = seek,
        !Self.chapters.values.joined().contains(where: { $0.start == to })
      {
        fail("\(c) went to \(to), no chapter's start")
      }
    }
  }

  /// What an enabled command must have done.
  private func checkEnabled(
    _ c: RemoteCommand, _ reply: CommandStatus, _ before: PlayerSnapshot,
    _ queueBefore: PlayQueue, _ effects: [EngineCommand], skipped: Bool,
    _ fail: (String) -> Void
  ) {
    let after = rig.snapshot
    switch c {
    case .nextTrack:
      // The next entry, or the first after it that opened (a file that will not is said).
      if let cur = before.current, let next = queueBefore.track(after: cur.id, automatic: false),
        after.current?.id != next.id, !skipped
      {
        fail("G19: next went to \(String(describing: after.current)), not \(next)")
      }
    case .previousTrack:
      let restarted = effects.contains(.seek(to: 0))
      if after.current == before.current && !restarted && !skipped {
        fail("G19: previous neither went back nor restarted the track")
      }
    case .pause:
      if after.state == .playing { fail("still playing after pause") }
    case .stop:
      if after.state != .stopped || rig.engine.track != nil { fail("Stop left it \(after.state)") }
    case .play, .togglePlayPause:
      if reply == .success, before.state != .playing, rig.server.active,
        !effects.contains(where: {
          $0 == .play || { if case .load = $0 { true } else { false } }($0)
        })
      {
        fail("play succeeded and the engine was told nothing")
      }
    case .seekForward, .seekBackward, .skipForward, .skipBackward, .changePlaybackPosition:
      if !effects.contains(where: { if case .seek = $0 { true } else { false } }) {
        fail("an enabled seek did not seek")
      }
    case .volumeUp, .volumeDown, .mute:
      break
    case .nextChapter, .previousChapter:
      if !effects.contains(where: { if case .seek = $0 { true } else { false } }) {
        fail("an enabled chapter command did not seek")
      }
    case .changePlaybackRate:
      break  // `checkRates`
    }
  }

  /// The rules' own account of why the player is paused or stopped after an input.
  private mutating func updateModel(
    _ input: PlayerInput?, _ step: Step, before: PlayerSnapshot, queueBefore: PlayQueue,
    after: PlayerSnapshot, said: [PlayerNotice], t0: UInt64
  ) {
    var wasPlaying = before.state == .playing
    var pausedBefore = before.pausedBy
    defer { if rig.snapshot.state != .playing { timerFade = nil } }
    switch input {
    case .session(.sleepTimerEnded(let fade)) where wasPlaying && timerFade == nil:
      timerFade = t0 + UInt64(fade * 1e9)
    case .session(.sleepTimer(let status)) where status == nil || status?.state == .running:
      if timerFade != nil { coverage.timerFadesCalledOff += 1 }
      timerFade = nil
    case .command(.play) where wasPlaying && before.enabledCommands.contains(.play):
      if timerFade != nil { coverage.timerFadesCalledOff += 1 }
      timerFade = nil
    case .session(.interruption(.began)) where wasPlaying && timerFade != nil:
      // The timer's pause comes first: the interruption finds it paused by the timer.
      wasPlaying = false
      pausedBefore = .timer
      reason = .timer
      timerFade = nil
    default: break
    }
    if said.contains(where: { if case .queueEnded = $0 { true } else { false } }),
      after.state == .stopped
    {
      // The engine reached the end of the queue (also after a play, and a file that would not
      // open).
      reason = .endOfQueue
      coverage.endOfQueue += 1
      interruption = nil
      return
    }
    if after.state == .playing {
      // Resumed, or the user played during the interruption, taking the audio back: whatever
      // the interrupter says later changes nothing.
      reason = nil
      interruption = nil
      userPausedAt = nil
      return
    }
    if case .command(let c) = input, !before.enabledCommands.contains(c.kind) { return }
    switch input {
    case .command(.pause), .command(.togglePlayPause):
      if wasPlaying {
        reason = .user
        userPausedAt = t0
      }
      if case .command(.togglePlayPause) = input, !wasPlaying {
        break  // a play (refused, or failed)
      }
      if let open = interruption, open.wasPlaying, !open.noResume, !open.outputWent {
        // Do not resume: the user's pause, the last word.
        interruption?.noResume = true
        interruption?.before = .user
      }
    case .command(.stop):
      reason = .user
      interruption = nil
      userPausedAt = nil
    case .action(.undo) where after.queue.isEmpty && before.state != .stopped:
      reason = nil
      interruption = nil
    case .action(.clear):
      reason = nil
      interruption = nil
    case .action(.restore):
      // Paused where it was, as the user left it (the generator restores two paths).
      reason = .user
      interruption = nil
      userPausedAt = nil
    case .action(.remove(let id)):
      // The current entry, with none after it: stopped by the user's edit.
      if queueBefore.currentID == id, queueBefore.track(after: id, automatic: false) == nil {
        reason = .user
        interruption = nil
      }
    case .session(.interruption(.began)):
      if interruption == nil, before.state != .stopped {
        interruption = (wasPlaying, false, false, pausedBefore)
      }
      if before.state != .stopped { reason = .interruption }
    case .session(.interruption(.ended(let resume, _))):
      if let open = interruption {
        if resume && open.wasPlaying && !open.noResume && !open.outputWent {
          // Its resume was asked for and refused (a call began meanwhile): over, no resume.
          reason = .interruption
          interruption = nil
          return
        }
        reason =
          open.outputWent ? .route : open.wasPlaying && !open.noResume ? .interruption : open.before
      }
      interruption = nil
    case .session(.routeChange(let change)) where change.reason == .oldDeviceUnavailable:
      if wasPlaying {
        reason = .route
      } else if before.state == .paused, before.pausedBy == .user, let at = userPausedAt,
        t0 &- at <= rig.core.settings.pauseBeforeLossWindow, interruption == nil
      {
        coverage.pauseThenLoss += 1
        reason = .route
        userPausedAt = nil
      }
      if interruption?.wasPlaying == true, interruption?.noResume == false {
        interruption?.outputWent = true
      }
    case .sleep(true):
      if wasPlaying { reason = .sleep }
    case .action(.pauseForLostOutput):
      // The output went: playing, paused by the route; otherwise the pause or the interruption
      // in charge says what happens (a headset's call profile does not stop the resume).
      if wasPlaying { reason = .route }
    case .session(.sleepTimerEnded):
      // With no fade, it pauses at once.
      if wasPlaying {
        reason = .timer
        coverage.timerPauses += 1
      }
    case nil:
      // Time passed, or the engine spoke: a device gone; or the sleep timer's fade is over.
      if wasPlaying, let until = timerFade, step.kind != 32, rig.now >= until {
        reason = .timer
        coverage.timerPauses += 1
      } else if wasPlaying {
        reason = .route
      }
    default:
      break
    }
    if after.queue.isEmpty, after.state == .stopped {
      reason = after.pausedBy == nil ? nil : reason
    }
  }
}
