import PropertyBased
import Testing

@testable import SessionCore

/// Random sequences of what happens around a sleep timer (time passing, hark's player playing,
/// pausing and seeking, the desktop's players answering surveys, the user setting and cancelling
/// it), with its rules checked after every step against a model kept by the test.
@Suite(.timeLimit(.minutes(5))) struct SleepTimerPropertyTests {
  static let second: UInt64 = 1_000_000_000
  static let hark = SessionID(1)

  /// One step: a kind (0...9) and two numbers (0...999) it reads as it needs.
  static let steps = zip(Gen.int(in: 0...9), Gen.int(in: 0...999), Gen.int(in: 0...999))
    .array(of: 1...80)

  @Test func randomSequencesKeepTheTimersRules() async {
    await propertyCheck(count: 400, input: Self.steps) { steps in
      var run = Run()
      for (i, s) in steps.enumerated() where run.problem == nil {
        run.perform(kind: s.0, s.1, s.2)
        if let problem = run.problem {
          Issue.record("step \(i + 1) of \(steps.count) (\(s)): \(problem)")
        }
      }
    }
  }

  /// Guards the test above against a generator that never reaches the interesting cases.
  @Test func randomSequencesReachEveryInterestingCase() async {
    var total = Run.Coverage()
    await propertyCheck(count: 200, input: Self.steps) { steps in
      var run = Run()
      for s in steps { run.perform(kind: s.0, s.1, s.2) }
      total.add(run.coverage)
    }
    #expect(total.durationEnds > 0)
    #expect(total.trackEnds > 0)
    #expect(total.sessionsEnded > 0)
    #expect(total.desktopPaused > 0)
    #expect(total.ended > 0)
    #expect(total.cancelledFades > 0)
  }

  /// The world around the timer, and what the rules say the timer may do in it.
  struct Run {
    struct Coverage {
      var durationEnds = 0, trackEnds = 0, sessionsEnded = 0, desktopPaused = 0, ended = 0
      var cancelledFades = 0
      mutating func add(_ o: Coverage) {
        durationEnds += o.durationEnds
        trackEnds += o.trackEnds
        sessionsEnded += o.sessionsEnded
        desktopPaused += o.desktopPaused
        ended += o.ended
        cancelledFades += o.cancelledFades
      }
    }

    var timer = SleepTimer()
    var now: UInt64 = 1_000 * second
    /// hark's player: what it published and when.
    var harkState: PlaybackState? = nil
    var harkPosition = 0.0
    var harkDuration: Double? = 120
    var harkChapterEnd: Double? = nil
    var publishedAt: UInt64 = 0
    /// The desktop as it is (what a survey would find).
    var desktop: [SleepTimer.DesktopPlayer] = []
    /// The model: what the timer has asked for and not had answered.
    var surveyOutstanding = false
    /// Desktop fades asked for and not answered, and whether the newest was stopped.
    var fadesOutstanding = 0
    var fadeStopped = false
    /// The last survey answered: what a fade may name.
    var answered: [SleepTimer.DesktopPlayer] = []
    /// When a duration timer was set to end.
    var durationEnd: UInt64? = nil
    var sessionToldThisEnding = false
    var announcedShape: SleepTimerStatus? = nil
    var problem: String?
    var coverage = Coverage()

    var listening: SleepTimer.Listening {
      var playback: PlaybackInfo? = nil
      if let harkState {
        let moved = harkState == .playing ? Double(now - publishedAt) / 1e9 : 0
        var position = harkPosition + moved
        if let d = harkDuration { position = min(position, d) }
        playback = PlaybackInfo(
          state: harkState, duration: harkDuration, position: position,
          rate: harkState == .playing ? 1 : 0, chapterEnd: harkChapterEnd)
      }
      return SleepTimer.Listening(
        now: now,
        nowPlaying: playback.map { .init(session: Run.hark, name: "hark", playback: $0) },
        playing: harkState == .playing ? [Run.hark] : [], sessionPids: [4242])
    }

    static let hark = SessionID(1)

    mutating func perform(kind: Int, _ a: Int, _ b: Int) {
      let before = timer.phase
      let effects: [SleepTimer.Effect]
      switch kind {
      case 0, 1:
        // Time passes (up to 10 s), and the shell looks when it is due, or at once.
        now += UInt64(a) * 10_000_000
        effects = timer.update(listening)
      case 2:
        // hark publishes: plays, pauses, stops, seeks, a new track.
        harkPosition = harkState == nil ? 0 : listening.nowPlaying?.playback.position ?? 0
        switch a % 5 {
        case 0: harkState = .playing
        case 1: harkState = .paused
        case 2: harkState = b % 2 == 0 ? .stopped : nil
        case 3: harkPosition = Double(b % 120)
        default:
          harkPosition = 0
          harkDuration = b % 7 == 0 ? nil : Double(5 + b % 60)
          harkChapterEnd = b % 3 == 0 ? Double(2 + b % 20) : nil
        }
        publishedAt = now
        effects = timer.update(listening)
      case 3:
        let mode: SleepTimerMode =
          switch a % 3 {
          case 0: .duration(seconds: Double(1 + b % 30))
          case 1: .endOfTrack
          default: .endOfChapter
          }
        let setting = SleepTimerSetting(mode, fade: Double(b % 6))
        effects = timer.set(setting, listening)
        durationEnd = nil
        if case .duration(let s) = mode { durationEnd = now + UInt64(s) * second }
        sessionToldThisEnding = false
      case 4:
        effects = timer.cancel(listening)
        durationEnd = nil
      case 5, 6:
        guard surveyOutstanding else { return perform(kind: 0, a, b) }
        surveyOutstanding = false
        answered = desktop
        effects = timer.surveyed(desktop, listening)
      case 7:
        guard fadesOutstanding > 0 else { return perform(kind: 8, a, b) }
        fadesOutstanding -= 1
        if !fadeStopped {
          for i in desktop.indices where desktop[i].state == .playing { desktop[i].state = .paused }
        }
        effects = timer.desktopPaused(listening)
      case 8:
        // The desktop changes: mpv (or hark's own MPRIS player) plays, pauses, seeks.
        let busName =
          a % 4 == 0 ? "org.mpris.MediaPlayer2.hark" : "org.mpris.MediaPlayer2.p\(a % 3)"
        desktop.removeAll { $0.busName == busName }
        if b % 4 != 0 {
          desktop.append(
            .init(
              busName: busName, name: busName, pid: a % 4 == 0 ? 4242 : nil,
              state: b % 3 == 0 ? .paused : .playing, position: Double(b % 50),
              length: b % 5 == 0 ? nil : 50))
        }
        return
      default:
        effects = timer.update(listening)
      }
      check(effects, before: before)
    }

    mutating func check(_ effects: [SleepTimer.Effect], before: SleepTimer.Phase) {
      func fail(_ s: String) { if problem == nil { problem = s } }
      for e in effects {
        switch e {
        case .surveyDesktop:
          if surveyOutstanding { fail("a second survey while one was outstanding") }
          surveyOutstanding = true
        case .endSession(let id, let fade):
          if harkState != .playing || id != Run.hark { fail("told a session that does not play") }
          if sessionToldThisEnding { fail("told hark's session twice in one ending") }
          if fade < 0 { fail("a negative fade") }
          sessionToldThisEnding = true
          coverage.sessionsEnded += 1
        case .pauseDesktop(let players, _):
          if players.isEmpty { fail("a desktop fade of nothing") }
          for p in players {
            if p.state != .playing { fail("pauses \(p.busName), which does not play") }
            if SleepTimer.isHarks(p, listening) {
              fail("pauses hark's own \(p.busName) over MPRIS")
            }
            if !answered.contains(p) { fail("pauses \(p.busName), which no survey found") }
          }
          fadesOutstanding += 1
          fadeStopped = false
          coverage.desktopPaused += 1
        case .stopDesktopFade:
          if fadesOutstanding == 0 { fail("stops a desktop fade that is not under way") }
          fadeStopped = true
          coverage.cancelledFades += 1
        case .announce:
          var shape = timer.status(at: now)
          shape?.remaining = nil
          announcedShape = shape
        }
      }
      // The sessions always know what the timer is doing.
      var shape = timer.status(at: now)
      shape?.remaining = nil
      if shape != announcedShape { fail("changed to \(String(describing: shape)) without telling") }
      // Off exactly when there is no status; nothing is due when off or ended.
      if timer.isOff != (timer.status(at: now) == nil) { fail("off and status disagree") }
      switch timer.phase {
      case .off, .ended:
        if timer.wakeAt != nil { fail("wakes although it is \(timer.phase)") }
      case .running, .ending: break
      }
      // A duration ends at its time: not before, and at the first look at or after it.
      if case .running = before, case .ending = timer.phase {
        if let end = durationEnd {
          if now < end { fail("a duration ended \(end - now) ns early") }
          coverage.durationEnds += 1
        } else {
          coverage.trackEnds += 1
        }
      }
      if case .running(let r) = timer.phase, case .duration = r.setting.mode, let end = durationEnd,
        now >= end
      {
        fail("a duration still runs \(now - end) ns after its end")
      }
      if case .ended = timer.phase {
        if case .ended = before {
          if effects.contains(where: { $0 != .announce }) {
            fail("asked for \(effects) after it had ended")
          }
        } else {
          coverage.ended += 1
          sessionToldThisEnding = false
        }
      }
    }
  }
}
