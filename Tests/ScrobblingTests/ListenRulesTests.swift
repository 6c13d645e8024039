import AudioTestSupport
import Testing

@testable import Scrobbling

/// When a listen counts: rule by rule, then random sequences of a player (play, pause, seeks,
/// next, stop, repeat one, radio titles, time passing) against a reference that keeps each
/// play's heard time by hand.
@Suite struct ListenRulesTests {
  static let start = 1_700_000_000.0

  func track(
    _ path: String = "/m/song.flac", seconds: Double? = 200, artist: String? = "Artist",
    title: String? = "Song", live: Bool = false, spoken: Bool = false
  ) -> ListenedTrack {
    var t = ListenedTrack(path: path)
    t.duration = seconds
    t.artist = artist
    t.title = title
    t.isLive = live
    t.isSpoken = spoken
    return t
  }

  /// A rules machine and its clock.
  struct Run {
    var rules = ListenRules()
    var clock = 0.0
    var effects: [ListenRules.Effect] = []

    var now: Moment { Moment(monotonic: clock, wall: ListenRulesTests.start + clock) }

    mutating func send(_ input: ListenRules.Input) {
      effects += rules.handle(input, at: now)
    }

    /// Time passes, the timer ticking at each deadline as the shell's does.
    mutating func pass(_ seconds: Double) {
      let end = clock + seconds
      while let d = rules.deadline, d <= end {
        clock = max(clock, d)
        send(.tick)
      }
      clock = end
    }

    mutating func playing(_ entry: Int, _ t: ListenedTrack) {
      send(.facts(PlayingFacts(entry: entry, track: t, state: .playing, isAdvancing: true)))
    }

    mutating func paused(_ entry: Int, _ t: ListenedTrack) {
      send(.facts(PlayingFacts(entry: entry, track: t, state: .paused)))
    }

    var listens: [Listen] {
      effects.compactMap { if case .listened(let l, _) = $0 { l } else { nil } }
    }
    var sends: [Bool] {
      effects.compactMap { if case .listened(_, let s) = $0 { s } else { nil } }
    }
    var nowPlayings: Int {
      effects.filter { if case .nowPlaying = $0 { true } else { false } }.count
    }
  }

  @Test func halfTheTrackOrFourMinutesWhicheverComesFirst() {
    #expect(ListenRules.threshold(for: track(seconds: 200)) == 100)
    #expect(ListenRules.threshold(for: track(seconds: 600)) == 240)
    #expect(ListenRules.threshold(for: track(seconds: 30)) == nil)
    #expect(ListenRules.threshold(for: track(seconds: 31)) == 15.5)
    #expect(ListenRules.threshold(for: track(seconds: nil)) == 240)

    var run = Run()
    run.playing(1, track())
    #expect(run.nowPlayings == 1)
    #expect(run.rules.deadline == 100)
    run.pass(99.9)
    #expect(run.listens.isEmpty)
    run.pass(0.2)
    #expect(run.listens.map(\.startedAt) == [Int(Self.start)])
    #expect(run.sends == [true])
    run.pass(500)
    #expect(run.listens.count == 1, "one listen a play")
  }

  @Test func aPauseStopsTheCountAndASeekForwardAddsNothing() {
    var run = Run()
    let t = track()
    run.playing(1, t)
    run.pass(60)
    run.paused(1, t)
    run.pass(1000)
    #expect(run.listens.isEmpty && run.rules.deadline == nil)
    run.playing(1, t)
    #expect(run.nowPlayings == 2, "told again as it resumes")
    run.send(.seeked(to: 190))
    run.pass(39)
    #expect(run.listens.isEmpty, "99 s heard, whatever the position")
    run.pass(1.5)
    #expect(run.listens.count == 1)
    #expect(run.listens[0].startedAt == Int(Self.start), "stamped when it began to be heard")
  }

  @Test func shortTracksNeverCount() {
    var run = Run()
    run.playing(1, track(seconds: 25))
    run.pass(25)
    run.send(.started(entry: 1))
    run.pass(25)
    #expect(run.listens.isEmpty && run.rules.deadline == nil)
  }

  @Test func repeatOneAndASeekBackToTheStartAreNewListens() {
    var run = Run()
    let t = track(seconds: 100)
    run.playing(7, t)
    run.pass(100)
    run.send(.started(entry: 7))  // repeat one: the same entry heard again
    run.playing(7, t)
    run.pass(100)
    #expect(run.listens.map(\.startedAt) == [Int(Self.start), Int(Self.start) + 100])
    run.send(.seeked(to: 0))
    run.pass(50)
    #expect(run.listens.count == 3)
    // A seek back that is not to the start, or before it counted, is the same listen.
    run.send(.seeked(to: 10))
    run.pass(60)
    #expect(run.listens.count == 3)
  }

  @Test func spokenWordAndTracksWithoutArtistCountButAreNotSent() {
    var run = Run()
    run.playing(1, track(spoken: true))
    run.pass(100)
    run.playing(2, track("/m/b.flac", artist: nil))
    run.pass(100)
    #expect(run.sends == [false, false])
    #expect(run.nowPlayings == 2)
    var asked = Run(rules: ListenRules(sendSpokenWord: true))
    asked.playing(1, track(spoken: true))
    asked.pass(100)
    #expect(asked.sends == [true])
  }

  @Test func radioTitlesCountAfterFourMinutesOrHeardFromTheirStart() {
    var run = Run()
    let station = "http://radio.example/stream"
    // Tuned in during a song: it ends 100 s later; not heard from its start, it does not count.
    run.playing(1, track(station, seconds: nil, artist: "A", title: "First", live: true))
    run.pass(100)
    // The next comes while listening: heard from its start, 45 s of it counts when it ends.
    run.playing(1, track(station, seconds: nil, artist: "B", title: "Second", live: true))
    run.pass(45)
    run.playing(1, track(station, seconds: nil, artist: "C", title: "Third", live: true))
    #expect(run.listens.map(\.track.title) == ["Second"])
    // A long one counts at 4 minutes.
    run.pass(240)
    #expect(run.listens.map(\.track.title) == ["Second", "Third"])
    // A jingle of 20 s does not.
    run.playing(1, track(station, seconds: nil, artist: "Station", title: "Jingle", live: true))
    run.pass(20)
    run.playing(1, track(station, seconds: nil, artist: "D", title: "Fourth", live: true))
    #expect(run.listens.count == 2)
    // The station's name, which streams give as the album, is not sent as one.
    var named = Run()
    var t = track(station, seconds: nil, artist: "A", title: "T", live: true)
    t.album = "Radio Station"
    named.playing(1, t)
    named.pass(240)
    #expect(named.listens.first?.track.album == nil)
  }

  @Test func stoppingEndsThePlayAndTagsReadLateAreTaken() {
    var run = Run()
    run.playing(1, track(title: nil))
    run.pass(10)
    run.playing(1, track(title: "Named at last"))
    run.pass(30)
    run.send(.facts(PlayingFacts()))
    run.pass(100)
    #expect(run.listens.isEmpty)
    run.playing(1, track(title: "Named at last"))
    run.pass(100)
    #expect(run.listens.map(\.track.title) == ["Named at last"])
    #expect(run.listens[0].startedAt == Int(Self.start) + 140, "a new play after the stop")
  }

  // MARK: Random sequences

  /// A player, played at random, and each play's heard time kept by hand.
  struct Simulation {
    var run = Run()
    var generator: SeededRandom
    var entry = 0
    var current: ListenedTrack?
    var state = PlayingFacts.State.stopped
    var advancing = false
    var position = 0.0
    var repeatOne = false
    var sendSpoken: Bool

    struct Play {
      var track: ListenedTrack
      var started: Double
      var heard = 0.0
      var counted = false
      var fromStart = false
    }
    var plays: [Play] = []
    var open = false  // the last play is going on
    var expected: [(Listen, Bool)] = []
    var coverage: Set<String> = []

    init(seed: UInt64) {
      generator = SeededRandom(seed: seed &+ 0x6861_726B)
      sendSpoken = seed % 2 == 0
      run.rules = ListenRules(sendSpokenWord: sendSpoken)
    }

    mutating func randomTrack() -> ListenedTrack {
      let pick = Int.random(in: 0..<5, using: &generator)
      let seconds: [Double?] = [20, 100, 600, 45, nil]
      var t = ListenedTrack(path: "/m/\(pick).flac")
      t.duration = seconds[pick]
      t.isLive = pick == 4
      if t.isLive { t.path = "http://radio/stream" }
      t.artist = Int.random(in: 0..<6, using: &generator) == 0 ? nil : "Artist \(pick)"
      t.title = "Title \(Int.random(in: 0..<1000, using: &generator))"
      t.isSpoken = Int.random(in: 0..<5, using: &generator) == 0
      return t
    }

    var facts: PlayingFacts {
      guard let current, state != .stopped else { return PlayingFacts() }
      return PlayingFacts(
        entry: entry, track: current, state: state, isAdvancing: advancing, position: position)
    }

    mutating func newPlay(_ t: ListenedTrack, fromStart: Bool = false) {
      endPlay()
      plays.append(Play(track: t, started: run.now.wall, fromStart: fromStart))
      open = true
    }

    mutating func endPlay() {
      guard open, var p = plays.last else { return }
      open = false
      if !p.counted, p.track.isLive, p.fromStart, p.heard >= 30 {
        p.counted = true
        record(p)
        coverage.insert("radio counted at its end")
      }
      plays[plays.count - 1] = p
    }

    mutating func record(_ p: Play) {
      var t = p.track
      if t.isLive { t.album = nil }
      let send = t.isSendable && (!t.isSpoken || sendSpoken)
      expected.append((Listen(track: t, startedAt: Int(p.started.rounded(.down))), send))
    }

    /// Time passes for the player and the reference alike, split at the rules' deadlines and
    /// at the track's end.
    mutating func pass(_ seconds: Double) {
      var left = seconds
      while left > 0 {
        var step = left
        if let d = run.rules.deadline, d > run.clock { step = min(step, d - run.clock + 0.01) }
        let heard = state == .playing && advancing
        if heard, let duration = current?.duration, !(current?.isLive ?? true) {
          step = min(step, max(0, duration - position))
        }
        if heard, open, var p = plays.last {
          p.heard += step
          if !p.counted, let th = ListenRules.threshold(for: p.track), p.heard >= th - 1e-9 {
            p.counted = true
            record(p)
            coverage.insert("counted by time")
          }
          plays[plays.count - 1] = p
        }
        if heard { position += step }
        run.pass(step)
        left -= step
        if heard, let t = current, let d = t.duration, !t.isLive, position >= d - 1e-9 {
          trackEnded()
        }
        if step == 0 && left > 0 && !(heard && current?.duration != nil) { break }
      }
    }

    mutating func trackEnded() {
      guard let t = current else { return }
      position = 0
      if repeatOne {
        coverage.insert("repeat one")
        if let p = plays.last, p.heard >= 1 || p.counted { newPlay(t) }
        // As the player's observer gives them: the snapshot, then its notices.
        run.send(.facts(facts))
        run.send(.started(entry: entry))
      } else {
        entry += 1
        current = randomTrack()
        newPlay(current ?? t)
        run.send(.facts(facts))
        run.send(.started(entry: entry))
      }
    }

    mutating func step() {
      switch Int.random(in: 0..<12, using: &generator) {
      case 0, 1:  // play
        if current == nil {
          entry += 1
          current = randomTrack()
        }
        let fromStop = state == .stopped
        if fromStop, let t = current { newPlay(t) }
        state = .playing
        advancing = false
        run.send(.facts(facts))
        pass(0.3)
        advancing = true
        run.send(.facts(facts))
        // A track loaded is heard from its start: the player says so; a resume goes on.
        if fromStop { run.send(.started(entry: entry)) }
      case 2:  // pause
        guard state == .playing else { return }
        state = .paused
        advancing = false
        run.send(.facts(facts))
        coverage.insert("paused")
      case 3, 4, 5:
        pass(Double.random(in: 0.5...300, using: &generator))
      case 6:  // seek
        guard let t = current, !t.isLive, state != .stopped, let d = t.duration else { return }
        let to =
          Int.random(in: 0..<3, using: &generator) == 0
          ? 0 : Double.random(in: 0..<d, using: &generator)
        position = to
        if let p = plays.last, open, p.counted, to < 2 {
          newPlay(t)
          coverage.insert("played again by a seek")
        }
        run.send(.seeked(to: to))
        run.send(.facts(facts))
      case 7:  // next
        guard current != nil else { return }
        entry += 1
        current = randomTrack()
        position = 0
        if state != .stopped, let t = current { newPlay(t) }
        run.send(.facts(facts))
        if state == .playing { run.send(.started(entry: entry)) }
      case 8:  // stop
        guard state != .stopped else { return }
        endPlay()
        state = .stopped
        advancing = false
        position = 0
        run.send(.facts(facts))
      case 9:
        repeatOne.toggle()
      case 10:  // a radio title changes
        guard var t = current, t.isLive, state != .stopped else { return }
        t.artist = "Artist \(Int.random(in: 0..<9, using: &generator))"
        t.title = "On air \(Int.random(in: 0..<1000, using: &generator))"
        current = t
        newPlay(t, fromStart: open)
        run.send(.facts(facts))
        coverage.insert("radio title")
      default:  // tags read late: the title of a file that has not counted
        guard var t = current, !t.isLive, state != .stopped, let p = plays.last, !p.counted
        else { return }
        t.title = (t.title ?? "") + "!"
        current = t
        plays[plays.count - 1].track = t
        run.send(.facts(facts))
      }
    }

    var actual: [(Listen, Bool)] {
      run.effects.compactMap { if case .listened(let l, let s) = $0 { (l, s) } else { nil } }
    }
  }

  @Test func randomSequencesCountExactlyThePlaysHeardLongEnough() {
    var coverage: Set<String> = []
    for seed in 0..<400 {
      var sim = Simulation(seed: UInt64(seed))
      for _ in 0..<80 { sim.step() }
      let actual = sim.actual
      let expected = sim.expected
      #expect(
        actual.count == expected.count,
        "seed \(seed): \(actual.count) listens, expected \(expected.count)")
      for (a, e) in zip(actual, expected) {
        #expect(a.0 == e.0, "seed \(seed)")
        #expect(a.1 == e.1, "seed \(seed): send")
      }
      // Never before it began, in order, never a short track.
      #expect(actual.map(\.0.startedAt) == actual.map(\.0.startedAt).sorted(), "seed \(seed)")
      #expect(!actual.contains { ($0.0.track.duration ?? 100) <= 30 }, "seed \(seed)")
      coverage.formUnion(sim.coverage)
      if !actual.isEmpty { coverage.insert("listens") }
    }
    #expect(
      coverage.isSuperset(of: [
        "counted by time", "radio counted at its end", "repeat one", "paused",
        "played again by a seek", "radio title", "listens",
      ]), "\(coverage)")
  }
}
