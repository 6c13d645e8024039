import AudioCore
import Glibc
import Platform
import PlayerCore
import PlayerEngine
import StateFile

/// Keeps the state file current while the player runs, as `SaveSchedule` decides, on a thread
/// of its own ("hark-state"): the player's loop only hands it each new snapshot, and the audio
/// threads never see it. The save on quit stays the player host's, after `stop`.
final class StateKeeper: Sendable {
  private struct Shared {
    var latest: PlayerSnapshot?
    var stopping = false
  }

  private let file: StateFile
  /// The file at start was damaged and not yet set aside: the first save (this keeper's or the
  /// one on quit) moves it to `state.json.damaged` rather than overwriting it.
  private let damaged: Locked<Bool>
  /// Whether the player has had a queue (restored or given): until then nothing is saved.
  private let hadQueue: Locked<Bool>
  /// What the file held and the player was given back, if it was.
  private let restored: SavedState?
  private let shared = Locked(Shared())
  private let wake = Platform.Semaphore()
  private let ended = Platform.Semaphore()

  /// Starts keeping `player`'s state in `file`. `restored`: what the file held, when the
  /// player was given it back (nothing is saved while the player holds just that).
  init(
    _ player: Player, in file: StateFile, restored: SavedState?, damaged: Locked<Bool>,
    hadQueue: Locked<Bool>
  ) {
    self.file = file
    self.restored = restored
    self.damaged = damaged
    self.hadQueue = hadQueue
    // Watching first: a change between the two is seen.
    player.observe { [self] snapshot, _ in
      shared.withLock { $0.latest = snapshot }
      wake.signal()
    }
    let now = player.snapshot
    shared.withLock { s in
      if s.latest == nil { s.latest = now }
    }
    startThread(named: "hark-state") { [self] in
      loop()
      ended.signal()
    }
  }

  /// Ends the thread, a save under way done first; the player host saves after it.
  func stop() {
    shared.withLock { $0.stopping = true }
    wake.signal()
    ended.wait()
  }

  private func loop() {
    var queue: [QueuedTrack] = []
    var queueChanges = 0
    var schedule: SaveSchedule?
    var failing = false
    while true {
      guard let (snapshot, stopping) = shared.withLock({ s in s.latest.map { ($0, s.stopping) } })
      else { return }
      if stopping { return }
      let now = monotonicNanoseconds()
      switch Self.compare(snapshot.queue, queue) {
      case .sameStorage: break
      case .sameEntries: queue = snapshot.queue  // (so that the next look is quick)
      case .changed:
        queue = snapshot.queue
        queueChanges += 1
      }
      let seen = SaveSchedule.Seen(
        queueChanges: queueChanges, current: snapshot.current?.id, shuffle: snapshot.shuffle,
        repeatMode: snapshot.repeatMode, playing: snapshot.state == .playing,
        position: snapshot.current != nil ? snapshot.position(at: now) : 0)
      if schedule == nil {
        // What the player holds is what the file holds, or the first change is due.
        let holds = restored.map { Self.same(SavedState.of(snapshot, now: now), $0) } ?? false
        schedule = SaveSchedule(saved: holds ? seen : nil, at: now)
      }
      var due = hadQueue.withLock { $0 } ? schedule?.due(seeing: seen, at: now) : nil
      if let at = due, at <= now {
        let state = SavedState.of(snapshot, now: now)
        let began = monotonicNanoseconds()
        let problem = save(state)
        let took = monotonicNanoseconds() &- began
        if let problem {
          if !failing { HarkLog.write(problem) }
          failing = true
          schedule?.didFail(at: began, took: took)
        } else {
          if failing { HarkLog.write("the queue is saved again in '\(file.path)'") }
          failing = false
          schedule?.didSave(seen, at: began, took: took)
        }
        due = schedule?.due(seeing: seen, at: monotonicNanoseconds())
      }
      if let at = due {
        let now = monotonicNanoseconds()
        if at > now { _ = wake.wait(microseconds: Int((at - now) / 1_000) + 1) }
      } else {
        wake.wait()
      }
    }
  }

  /// Writes `state`, a damaged file set aside first; the problem in words, or nil.
  private func save(_ state: SavedState) -> String? {
    damaged.withLock { damaged in
      if damaged, let aside = file.setAside() {
        HarkLog.write("the damaged state file was moved to '\(aside)'")
      }
      damaged = false
    }
    do {
      try file.save(state)
      return nil
    } catch {
      return "cannot save the queue while playing: \(error); the state file from before is "
        + "unchanged (it is saved again on quit)"
    }
  }

  enum Comparison { case sameStorage, sameEntries, changed }

  /// Whether `a` holds the entries `b` holds, in the same order: the same array storage (the
  /// player hands on the queue it has until it changes), else the same ids one by one.
  static func compare(_ a: [QueuedTrack], _ b: [QueuedTrack]) -> Comparison {
    guard a.count == b.count else { return .changed }
    let same = a.withUnsafeBufferPointer { x in
      b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress }
    }
    if same { return .sameStorage }
    for i in a.indices where a[i].id != b[i].id { return .changed }
    return .sameEntries
  }

  /// What the file keeps is the same in both (the position to within a second).
  static func same(_ a: SavedState, _ b: SavedState) -> Bool {
    a.queue == b.queue && a.current == b.current && a.shuffle == b.shuffle
      && a.repeatMode == b.repeatMode && abs(a.position - b.position) < 1
  }
}
