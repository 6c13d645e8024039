import Platform
import PlayerCore

/// Where long recordings were left: the library index in hark, a table in tests. The player
/// calls it only through a `PlaceKeeper`, on the keeper's thread, one call at a time, in the
/// order the core asked.
public protocol PlaceStore: AnyObject, Sendable {
  /// Where `path` was left; nil when nothing is kept (or the store cannot be read).
  func place(of path: String) -> ListeningPlace?
  /// Keeps where `path` is; on disk, synced, when it returns (a crash right after loses
  /// nothing).
  func keep(_ place: ListeningPlace, of path: String, duration: Double?)
  /// The speed kept for the podcast or book in `folder` (`RatePlan.collection`); nil when
  /// none is (or the store cannot be read).
  func rate(ofFolder folder: String) -> Double?
  /// Keeps the speed of the podcast or book in `folder`; on disk when it returns.
  func keepRate(_ rate: Double, ofFolder folder: String)
}

/// A thread of its own that does slow work for the player in the order given, so that no disk,
/// database or process is waited for on the player's loop (nor on the audio threads). Started
/// on first use (a player that never needs it never starts it), and ended when idle.
final class SerialWorker: Sendable {
  private struct State {
    var jobs: [(key: String?, job: @Sendable () -> Void)] = []
    var started = false
  }
  private let name: String
  /// Only the newest job waits: a new one replaces what has not started (answers the player
  /// would drop anyway, as it asked again meanwhile).
  private let latestOnly: Bool
  private let state = Locked(State())
  private let wake = Semaphore()

  init(named name: String, latestOnly: Bool = false) {
    self.name = name
    self.latestOnly = latestOnly
  }

  /// Runs `job` after those given before it. With `coalescing` a key, it takes the place of
  /// the job last given if that one had the same key and has not started (a place kept twice
  /// in a row: the second is all that matters).
  func run(coalescing key: String? = nil, _ job: @escaping @Sendable () -> Void) {
    let start: Bool = state.withLock { s in
      if latestOnly {
        s.jobs = [(key, job)]
      } else if let key, let last = s.jobs.last, last.key == key {
        s.jobs[s.jobs.count - 1] = (key, job)
      } else {
        s.jobs.append((key, job))
      }
      defer { s.started = true }
      return !s.started
    }
    if start { startThread(named: name) { [self] in loop() } }
    wake.signal()
  }

  /// Waits until every job given so far is done, at most `limit`; false when they were not
  /// done by then.
  func drain(limit: Duration) -> Bool {
    guard state.withLock({ $0.started }) else { return true }
    let done = Semaphore()
    run { done.signal() }
    let (seconds, attoseconds) = limit.components
    return done.wait(microseconds: Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
  }

  /// The thread: does the jobs as they come; after `idleLimit` with none it ends (a job
  /// given later starts it again), so that a player that played one audiobook an hour ago
  /// holds no thread for it.
  private func loop() {
    while true {
      if !wake.wait(microseconds: Self.idleLimitMicroseconds) {
        // Decided under the lock `run` takes: a job given after this starts a new thread.
        let ending = state.withLock { s in
          if s.jobs.isEmpty { s.started = false }
          return !s.started
        }
        if ending { return }
      }
      while let job = state.withLock({ s in s.jobs.isEmpty ? nil : s.jobs.removeFirst().job }) {
        job()
      }
    }
  }

  private static let idleLimitMicroseconds = 30_000_000
}
