/// What `TagReaders` decides, with no I/O: which path is written to which helper and when,
/// which record is read from which helper, and what a helper that dies or cannot be started
/// costs. `TagReaders` asks for the next step, carries it out and reports how it went.
///
/// Paths are numbered by their place in the scan's list and delivered in that order. Path `p`
/// goes to helper `p % helpers`. A helper answers the paths written to it in the order they
/// were written, so each helper's queue here is the paths given to it and not yet delivered,
/// oldest first, of which the first `written` are in its input now (the one process running
/// has been sent them and owes their records). Only a path that is in a running helper's input
/// is ever awaited, and every path leaves the queue exactly once: answered, or given a
/// failure.
///
/// - A helper that cannot be started costs the path it was to be sent (`notStarted`); the next
///   path tries to start one again. (A failed start had left a path in the queue as if sent:
///   the helper started for the next path answered that one in its place, and the scan then
///   waited for ever for a record the helper had never been asked for.)
/// - A helper that ends before answering (its end of file read, or found gone by a write)
///   is blamed on the oldest path in its input, or the path it was to be sent when none was:
///   everything in its queue goes to a fresh helper, that path first, and a path blamed a
///   second time (a fresh helper died on it too) gets `crashed`.
struct TagReadAhead: Equatable, Sendable {
  /// What `TagReaders` does next.
  enum Step: Equatable, Sendable {
    /// Write `path` to `helper`'s input (starting a helper first when none runs), and report
    /// how that went (`sent`).
    case send(path: Int, helper: Int)
    /// Read `helper`'s next record, which is `path`'s: deliver it and report `answered`; at the
    /// helper's end of file, stop it and report `ended`.
    case receive(path: Int, helper: Int)
    /// `helper` is gone and owes nothing to read: stop (reap) it and report `ended`.
    case stop(helper: Int)
    /// Deliver `failure` as `path`'s record.
    case fail(path: Int, Failure)
  }

  /// Why a path has no record.
  enum Failure: Equatable, Sendable {
    /// Two helpers died on it (`TagHelper.crashed`).
    case crashed
    /// No helper could be started to read it (`TagHelper.notStarted`).
    case notStarted
  }

  /// How writing a path to a helper went.
  enum Sent: Equatable, Sendable {
    /// It is in the helper's input.
    case written
    /// No helper ran, and none could be started.
    case notStarted
    /// The helper is gone (the write failed: EPIPE): its end is still to be read.
    case gone
  }

  /// One helper's share: its paths not yet delivered, oldest first.
  struct Queue: Equatable, Sendable {
    /// The paths, by number.
    var paths: [Int] = []
    /// How many of `paths` (the first ones) are in the running helper's input.
    var written = 0
    /// Their bytes.
    var bytes = 0
    /// A write found the helper gone: nothing more is written to it until its end is read.
    var gone = false
  }

  /// Each path's bytes in a helper's input.
  let sizes: [Int]
  /// How many paths each helper is given ahead of the one awaited.
  let depth: Int
  /// How many bytes of paths a helper's input holds at most, but for a single path.
  let bytesAhead: Int
  /// The helpers' queues.
  private(set) var queues: [Queue]
  /// The paths before this one are delivered.
  private(set) var delivered = 0
  /// The paths before this one are in a queue or delivered.
  private(set) var assigned = 0
  /// Failures of paths not yet delivered.
  private(set) var failures: [Int: Failure] = [:]
  /// How many helpers ended owing each path that was blamed once.
  private(set) var blamed: [Int: Int] = [:]

  /// Paths of `sizes` bytes each (their bytes and the NUL that ends them), read by `helpers`
  /// helpers (at least one).
  init(sizes: [Int], helpers: Int, depth: Int, bytesAhead: Int) {
    self.sizes = sizes
    self.depth = max(1, depth)
    self.bytesAhead = bytesAhead
    queues = Array(repeating: Queue(), count: max(1, helpers))
  }

  /// The next step; nil when every path has been delivered.
  mutating func next() -> Step? {
    guard delivered < sizes.count else { return nil }
    if let failure = failures.removeValue(forKey: delivered) {
      delivered += 1
      return .fail(path: delivered - 1, failure)
    }
    while assigned < sizes.count, assigned - delivered < depth * queues.count {
      queues[assigned % queues.count].paths.append(assigned)
      assigned += 1
    }
    // Everything there is room for is written before a record is waited for: the helpers
    // read while this one is awaited.
    for (h, queue) in queues.enumerated()
    where !queue.gone && queue.written < queue.paths.count {
      let path = queue.paths[queue.written]
      if queue.written == 0 || queue.bytes + sizes[path] <= bytesAhead {
        return .send(path: path, helper: h)
      }
    }
    let h = delivered % queues.count
    precondition(queues[h].paths.first == delivered, "the awaited path is not its helper's next")
    // Not written, and nothing could be: its helper is gone.
    guard queues[h].written > 0 else { return .stop(helper: h) }
    return .receive(path: delivered, helper: h)
  }

  /// `send(path:helper:)` went as `outcome`.
  mutating func sent(to h: Int, _ outcome: Sent) {
    precondition(
      !queues[h].gone && queues[h].written < queues[h].paths.count, "nothing was to be sent")
    let path = queues[h].paths[queues[h].written]
    // (The queue is changed where it is, not copied out and back: its paths would be copied.)
    switch outcome {
    case .written:
      queues[h].written += 1
      queues[h].bytes += sizes[path]
    case .notStarted:
      // A start is tried only when no helper runs, which is when none owes anything.
      precondition(queues[h].written == 0, "a helper was started while one ran")
      queues[h].paths.removeFirst()
      failures[path] = .notStarted
    case .gone:
      queues[h].gone = true
    }
  }

  /// `receive(path:helper:)` gave the path's record.
  mutating func answered(by h: Int) {
    precondition(
      queues[h].written > 0 && queues[h].paths.first == delivered, "no record was awaited")
    let path = queues[h].paths.removeFirst()
    queues[h].written -= 1
    queues[h].bytes -= sizes[path]
    blamed[path] = nil
    delivered += 1
  }

  /// Helper `h` ended (and was stopped) owing its oldest path: the path it died on, or was to
  /// be sent. Its queue goes to the next helper, from its start.
  mutating func ended(_ h: Int) {
    guard let path = queues[h].paths.first else {
      preconditionFailure("a helper that owed nothing was stopped")
    }
    let times = blamed[path, default: 0] + 1
    if times >= 2 {
      queues[h].paths.removeFirst()
      failures[path] = .crashed
      blamed[path] = nil
    } else {
      blamed[path] = times
    }
    queues[h].written = 0
    queues[h].bytes = 0
    queues[h].gone = false
  }
}
