import AudioTestSupport
import PlayerCore
import StateFile
import Testing

/// When the player writes its state file while it runs, so that a crash loses little.
@Suite struct SaveScheduleTests {
  private typealias Seen = SaveSchedule.Seen
  private let second: UInt64 = 1_000_000_000
  private let paused = Seen(
    queueChanges: 1, current: 7, shuffle: false, repeatMode: .off, playing: false, position: 12)

  @Test func aRestoredStateLeftAloneIsNeverWritten() {
    var s = SaveSchedule(saved: paused, at: 0)
    for t in [0, 1, 5, 60, 3600] {
      #expect(s.due(seeing: paused, at: UInt64(t) * second) == nil)
    }
  }

  @Test func aChangeIsSavedTwoSecondsAfterTheFirstOfABurst() {
    var s = SaveSchedule(saved: paused, at: 0)
    var seen = paused
    seen.queueChanges = 2
    #expect(s.due(seeing: seen, at: 10 * second) == 12 * second)
    seen.current = 8
    seen.shuffle = true
    // Later changes do not put the save off.
    #expect(s.due(seeing: seen, at: 11 * second) == 12 * second)
    s.didSave(seen, at: 12 * second, took: 1_000_000)
    #expect(s.saved == seen)
    #expect(s.due(seeing: seen, at: 13 * second) == nil)
  }

  @Test func aChangeUndoneBeforeItsSaveIsNone() {
    var s = SaveSchedule(saved: paused, at: 0)
    var seen = paused
    seen.repeatMode = .all
    #expect(s.due(seeing: seen, at: 3 * second) == 5 * second)
    #expect(s.due(seeing: paused, at: 4 * second) == nil)
    // Changed again: two seconds from this change, not the first.
    #expect(s.due(seeing: seen, at: 9 * second) == 11 * second)
  }

  @Test func aSeekWhilePausedIsAChangeAJitterIsNot() {
    var s = SaveSchedule(saved: paused, at: 0)
    var seen = paused
    seen.position = 12.4
    #expect(s.due(seeing: seen, at: second) == nil)
    seen.position = 40
    #expect(s.due(seeing: seen, at: second) == 3 * second)
  }

  @Test func nothingReadIsSavedAtTheFirstLook() {
    var s = SaveSchedule(saved: nil, at: 0)
    #expect(s.due(seeing: paused, at: 5 * second) == 7 * second)
    #expect(s.due(seeing: paused, at: 6 * second) == 7 * second)
  }

  @Test func playingSavesThePositionEveryMinuteAndAPauseAtOnce() {
    var playing = paused
    playing.playing = true
    var s = SaveSchedule(saved: playing, at: 0)
    playing.position = 13
    #expect(s.due(seeing: playing, at: second) == 60 * second)
    s.didSave(playing, at: 60 * second, took: 10_000_000)
    playing.position = 80
    #expect(s.due(seeing: playing, at: 61 * second) == 120 * second)
    var stopped = playing
    stopped.playing = false
    #expect(s.due(seeing: stopped, at: 70 * second) == 72 * second)
  }

  /// A queue of 200,000 paths takes long to save, and a held `n` changes the entry every few
  /// hundred milliseconds: the saves still take no more than a 200th of the time.
  @Test func slowSavesAreSpacedByTwoHundredTimesTheirLength() {
    var s = SaveSchedule(saved: paused, at: 0)
    var seen = paused
    var now: UInt64 = 0
    var began: [UInt64] = []
    var busy: UInt64 = 0
    let took = second / 2
    while now < 600 * second {
      now += second / 4
      seen.current = (seen.current ?? 0) + 1
      if let due = s.due(seeing: seen, at: now), due <= now {
        began.append(now)
        busy += took
        s.didSave(seen, at: now, took: took)
        now += took
      }
    }
    #expect(began.count >= 5)
    #expect(zip(began, began.dropFirst()).allSatisfy { $1 - $0 >= 201 * took })
    #expect(busy * SaveSchedule.shareOfTime <= now + SaveSchedule.shareOfTime * took)
  }

  /// A full disk: the save fails, nothing is taken as saved, and it is tried again a minute on
  /// (not at every look), then saved once there is room.
  @Test func aFailedSaveIsTriedAgainAMinuteOn() {
    var s = SaveSchedule(saved: paused, at: 0)
    var seen = paused
    seen.queueChanges = 2
    #expect(s.due(seeing: seen, at: 10 * second) == 12 * second)
    s.didFail(at: 12 * second, took: 1_000_000)
    #expect(s.saved == paused)
    let retry = s.due(seeing: seen, at: 13 * second)
    #expect(retry.map { $0 >= 72 * second && $0 <= 73 * second } == true)
    // Still due an hour on, if no look came between.
    #expect(s.due(seeing: seen, at: 3600 * second) == retry)
    s.didSave(seen, at: 3600 * second, took: 1_000_000)
    #expect(s.due(seeing: seen, at: 3601 * second) == nil)
  }

  /// Random sequences of what a player goes through (queue changes, skips, pauses, seeks, time
  /// passing), each save made when it falls due, as the keeper makes them: a change is on disk
  /// within `settle` of its first moment, the position while playing within a minute (or 200
  /// saves' time), and nothing is written that the file already holds while paused.
  @Test(arguments: 0..<20) func changesReachTheDiskInTimeAndNothingElseIsWritten(seed: Int) {
    var random = SeededRandom(seed: UInt64(seed) &+ 0x5A5E)
    var seen = paused
    var now: UInt64 = 0
    var schedule = SaveSchedule(saved: seen, at: now)
    var onDisk = seen
    var savedAt = now
    var took: UInt64 = 0
    var differingSince: UInt64?
    var due = schedule.due(seeing: seen, at: now)
    for _ in 0..<400 {
      // The next look: a random step of time, or an event at once.
      let step = UInt64.random(in: 0...(3 * second), using: &random)
      let next = now + step
      // A save falling due before the next look is made at its time.
      if let at = due, at <= next {
        now = max(now, at)
        let wasDifferent = seen.differsForTest(from: onDisk)
        #expect(
          wasDifferent || (seen.playing && seen.position != onDisk.position),
          "a save of what the file held already, seed \(seed)")
        #expect(
          now >= savedAt + took * (1 + SaveSchedule.shareOfTime) || savedAt == 0,
          "saves too close, seed \(seed)")
        took = UInt64.random(in: 0...(second / 200), using: &random)
        schedule.didSave(seen, at: now, took: took)
        onDisk = seen
        savedAt = now
        differingSince = nil
        due = schedule.due(seeing: seen, at: now)
        continue
      }
      if seen.playing { seen.position += Double(step) / 1e9 }
      now = next
      switch Int.random(in: 0..<10, using: &random) {
      case 0: seen.queueChanges += 1
      case 1: seen.current = Int.random(in: 0..<5, using: &random)
      case 2: seen.playing.toggle()
      case 3: seen.position = Double.random(in: 0..<300, using: &random)
      case 4: seen.shuffle.toggle()
      default: break  // time only
      }
      if seen.differsForTest(from: onDisk) {
        differingSince = differingSince ?? now
      } else {
        differingSince = nil
      }
      due = schedule.due(seeing: seen, at: now)
      if let since = differingSince {
        #expect(due != nil, "a change with no save to come, seed \(seed)")
        #expect(now - since <= SaveSchedule.settle, "a change left unsaved, seed \(seed)")
      }
      if seen.playing && onDisk.playing && seen.position != onDisk.position {
        #expect(
          due.map { $0 <= savedAt + SaveSchedule.whilePlaying } == true,
          "the position left, seed \(seed)")
      }
      if !seen.differsForTest(from: onDisk) && !seen.playing {
        #expect(due == nil, "a save due of nothing new, seed \(seed)")
      }
    }
  }
}

extension SaveSchedule.Seen {
  /// The schedule's rule, restated for the test: what is saved at once.
  fileprivate func differsForTest(from saved: Self) -> Bool {
    queueChanges != saved.queueChanges || current != saved.current || shuffle != saved.shuffle
      || repeatMode != saved.repeatMode || playing != saved.playing
      || (!playing && abs(position - saved.position) >= 1)
  }
}
