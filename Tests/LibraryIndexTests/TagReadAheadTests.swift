import AudioTestSupport
import Testing

@testable import LibraryIndex

/// `TagReadAhead`, the decisions of a scan's tag reading: rule by rule, then against simulated
/// helpers that cannot be started, die on hostile files, die at any moment, and answer at
/// their own pace, in random sequences. Always: every path is delivered once, in order, with
/// its own record or a failure; a record is awaited only from a helper that was sent its path
/// and has not yet answered it; a helper's input never holds more than `bytesAhead`.
@Suite struct TagReadAheadTests {
  func plan(_ count: Int, helpers: Int = 1, depth: Int = 16, bytesAhead: Int = 16_384)
    -> TagReadAhead
  {
    TagReadAhead(
      sizes: Array(repeating: 10, count: count), helpers: helpers, depth: depth,
      bytesAhead: bytesAhead)
  }

  /// The scan that hung: the helper could not be started for the first two paths, then could
  /// for the third. Those two fail, and the record awaited next is the third's, from the
  /// helper that was sent it, not the first's (the helper never had it, and waited for its
  /// next path while the scan waited for that record).
  @Test func aHelperThatCouldNotBeStartedIsNotAwaitedForThePathItWasNotSent() {
    var p = plan(3)
    #expect(p.next() == .send(path: 0, helper: 0))
    p.sent(to: 0, .notStarted)
    #expect(p.next() == .fail(path: 0, .notStarted))
    #expect(p.next() == .send(path: 1, helper: 0))
    p.sent(to: 0, .notStarted)
    #expect(p.next() == .fail(path: 1, .notStarted))
    #expect(p.next() == .send(path: 2, helper: 0))
    p.sent(to: 0, .written)
    #expect(p.next() == .receive(path: 2, helper: 0))
    p.answered(by: 0)
    #expect(p.next() == nil)
  }

  /// A helper that dies owing paths: the oldest is blamed and written first to a fresh helper,
  /// the rest after it; blamed again, it fails as crashed and the rest are written once more.
  @Test func aPathTwoHelpersDieOnIsCrashedAndTheRestAreWrittenAgain() {
    var p = plan(3)
    for path in 0..<3 {
      #expect(p.next() == .send(path: path, helper: 0))
      p.sent(to: 0, .written)
    }
    #expect(p.next() == .receive(path: 0, helper: 0))
    p.ended(0)
    for path in 0..<3 {
      #expect(p.next() == .send(path: path, helper: 0))
      p.sent(to: 0, .written)
    }
    #expect(p.next() == .receive(path: 0, helper: 0))
    p.ended(0)
    #expect(p.next() == .fail(path: 0, .crashed))
    for path in 1..<3 {
      #expect(p.next() == .send(path: path, helper: 0))
      p.sent(to: 0, .written)
    }
    #expect(p.next() == .receive(path: 1, helper: 0))
    p.answered(by: 0)
    #expect(p.next() == .receive(path: 2, helper: 0))
    p.answered(by: 0)
    #expect(p.next() == nil)
  }

  /// A write that finds its helper gone: nothing more is written to it, what it answered
  /// before is still read, then its end; a helper gone with nothing written is stopped, and
  /// the path it was to be sent blamed.
  @Test func aHelperFoundGoneIsReadToItsEndBeforeItIsReplaced() {
    var p = plan(4, helpers: 2)
    #expect(p.next() == .send(path: 0, helper: 0))
    p.sent(to: 0, .written)
    #expect(p.next() == .send(path: 2, helper: 0))
    p.sent(to: 0, .gone)
    #expect(p.next() == .send(path: 1, helper: 1))
    p.sent(to: 1, .gone)
    #expect(p.next() == .receive(path: 0, helper: 0))
    p.answered(by: 0)
    #expect(p.next() == .stop(helper: 1))
    p.ended(1)
    #expect(p.next() == .send(path: 1, helper: 1))
    p.sent(to: 1, .written)
    #expect(p.next() == .send(path: 3, helper: 1))
    p.sent(to: 1, .written)
    #expect(p.next() == .receive(path: 1, helper: 1))
  }

  /// Paths are written ahead while the helper's input has room for their bytes (a single path
  /// however long), and no further than `depth` a helper.
  @Test func pathsAreWrittenAheadAsFarAsTheInputHasRoom() {
    var p = TagReadAhead(sizes: [30, 30, 30, 100, 1], helpers: 1, depth: 16, bytesAhead: 64)
    #expect(p.next() == .send(path: 0, helper: 0))
    p.sent(to: 0, .written)
    #expect(p.next() == .send(path: 1, helper: 0))
    p.sent(to: 0, .written)
    #expect(p.next() == .receive(path: 0, helper: 0))
    p.answered(by: 0)
    #expect(p.next() == .send(path: 2, helper: 0))
    p.sent(to: 0, .written)
    #expect(p.next() == .receive(path: 1, helper: 0))
    p.answered(by: 0)
    #expect(p.next() == .receive(path: 2, helper: 0))
    p.answered(by: 0)
    #expect(p.next() == .send(path: 3, helper: 0))
    var q = plan(10, helpers: 2, depth: 2)
    var sends: [Int] = []
    while case .send(let path, let h) = q.next() {
      sends.append(path)
      q.sent(to: h, .written)
    }
    #expect(sends.sorted() == [0, 1, 2, 3])
  }

  @Test func randomSequencesDeliverEveryPathOnceAndNeverAwaitWhatCannotCome() throws {
    var coverage: Set<String> = []
    for seed in 0..<3000 {
      var world = World(seed: UInt64(seed))
      let issues = world.run()
      // The first failing sequence is enough to go on.
      try #require(issues.isEmpty, "seed \(seed): \(issues.prefix(3))")
      coverage.formUnion(world.coverage)
    }
    #expect(
      coverage.isSuperset(of: [
        "not started", "gone", "crashed", "answered after a death", "bytes held back",
        "several helpers", "idle death",
      ]), "\(coverage)")
  }
}

/// A scan's tag reading carried out against simulated helpers, as `TagReaders` carries it out
/// against processes: a helper runs its input in order, answering each path or dying on it,
/// and may die or fail to start at random.
private struct World {
  var rng: SeededRandom
  let count: Int
  let sizes: [Int]
  var plan: TagReadAhead
  /// Paths every helper dies on.
  let hostile: Set<Int>
  /// Per mille: a start that fails, a helper that dies on a path for no reason of the path's,
  /// a helper that dies between steps.
  let startFailure: Int
  let randomDeath: Int
  let idleDeath: Int
  var helpers: [Helper?]
  var delivered: [(path: Int, answer: Int?, failure: TagReadAhead.Failure?)] = []
  var coverage: Set<String> = []
  var issues: [String] = []
  var deaths = 0

  /// A helper process: paths in its input (written, not read), answers in its output (written,
  /// not received), and whether it still runs.
  struct Helper {
    var input: [Int] = []
    var output: [Int] = []
    var running = true
  }

  init(seed: UInt64) {
    rng = SeededRandom(seed: seed &+ 0x6861_726B)
    count = Int.random(in: 0...60, using: &rng)
    let n = Int.random(in: 1...4, using: &rng)
    let depth = Int.random(in: 1...5, using: &rng)
    let bytesAhead = Int.random(in: 1...80, using: &rng)
    var sizes: [Int] = []
    for _ in 0..<count { sizes.append(Int.random(in: 1...30, using: &rng)) }
    self.sizes = sizes
    plan = TagReadAhead(sizes: sizes, helpers: n, depth: depth, bytesAhead: bytesAhead)
    var hostile: Set<Int> = []
    for p in 0..<count where Int.random(in: 0..<100, using: &rng) < 8 { hostile.insert(p) }
    self.hostile = hostile
    // A third of the runs have no chance in them: there each path's end is known.
    let chance = Int.random(in: 0..<3, using: &rng) > 0
    startFailure = chance ? Int.random(in: 0...300, using: &rng) : 0
    randomDeath = chance ? Int.random(in: 0...100, using: &rng) : 0
    idleDeath = chance ? Int.random(in: 0...50, using: &rng) : 0
    helpers = Array(repeating: nil, count: n)
    if n > 1 { coverage.insert("several helpers") }
  }

  func chance(_ perMille: Int, _ rng: inout SeededRandom) -> Bool {
    Int.random(in: 0..<1000, using: &rng) < perMille
  }

  /// The helper `h` reads the next path of its input: answers it, or dies on it.
  mutating func advance(_ h: Int) {
    guard var helper = helpers[h], helper.running, !helper.input.isEmpty else { return }
    let path = helper.input.removeFirst()
    if hostile.contains(path) || chance(randomDeath, &rng) {
      helper.running = false
      deaths += 1
    } else {
      helper.output.append(path)
    }
    helpers[h] = helper
  }

  /// Runs the plan to its end; what went wrong.
  mutating func run() -> [String] {
    var steps = 0
    // Each path costs a send and a receive a try, and gets at most a few tries (two deaths;
    // a start failure ends it), plus the stops of helpers found gone.
    let most = 20 * (count + 1)
    while let step = plan.next() {
      steps += 1
      if steps > most {
        issues.append("not done after \(most) steps")
        return issues
      }
      // Helpers run, and die, at their own pace meanwhile.
      for h in helpers.indices {
        for _ in 0..<Int.random(in: 0...2, using: &rng) { advance(h) }
        if helpers[h]?.running == true && chance(idleDeath, &rng) {
          helpers[h]?.running = false
          deaths += 1
          coverage.insert("idle death")
        }
      }
      switch step {
      case .send(let path, let h):
        plan.sent(to: h, send(path, to: h))
      case .receive(let path, let h):
        // Nothing more could be written: a helper owing a path with one not written behind it
        // has no room for it.
        if plan.queues.contains(where: { !$0.gone && $0.written > 0 && $0.written < $0.paths.count }
        ) {
          coverage.insert("bytes held back")
        }
        guard let answer = receive(from: h) else {
          helpers[h] = nil
          plan.ended(h)
          continue
        }
        if answer != path { issues.append("path \(path) got the record of \(answer)") }
        if deaths > 0 { coverage.insert("answered after a death") }
        plan.answered(by: h)
        delivered.append((path, answer, nil))
      case .stop(let h):
        helpers[h] = nil
        plan.ended(h)
      case .fail(let path, let failure):
        delivered.append((path, nil, failure))
        coverage.insert(failure == .crashed ? "crashed" : "not started")
      }
      if !issues.isEmpty { return issues }
    }
    check()
    return issues
  }

  /// Writes `path` to helper `h`, starting one first when none runs.
  mutating func send(_ path: Int, to h: Int) -> TagReadAhead.Sent {
    if helpers[h] == nil {
      if chance(startFailure, &rng) { return .notStarted }
      helpers[h] = Helper()
    }
    guard var helper = helpers[h], helper.running else {
      coverage.insert("gone")
      return .gone
    }
    if helper.input.contains(path) || helper.output.contains(path) {
      issues.append("path \(path) written twice to one helper")
    }
    helper.input.append(path)
    let held = helper.input + helper.output
    if held.count > 1 && held.map({ sizes[$0] }).reduce(0, +) > plan.bytesAhead {
      issues.append("helper \(h) holds \(held) over \(plan.bytesAhead) bytes")
    }
    helpers[h] = helper
    return .written
  }

  /// The next answer of helper `h`, letting it run until it has one; nil at its end. A helper
  /// that runs, has answered everything and has nothing more to read would be waited on for
  /// ever: an issue.
  mutating func receive(from h: Int) -> Int? {
    while true {
      guard let helper = helpers[h] else {
        issues.append("a record awaited from helper \(h), which is not running")
        return nil
      }
      if !helper.output.isEmpty { return helpers[h]?.output.removeFirst() }
      if !helper.running { return nil }
      if helper.input.isEmpty {
        issues.append("waiting for ever on helper \(h), which was sent nothing it owes")
        return nil
      }
      advance(h)
    }
  }

  /// What the whole run delivered.
  mutating func check() {
    if delivered.map(\.path) != Array(0..<count) {
      issues.append("delivered \(delivered.map(\.path)), not each path once in order")
    }
    for d in delivered {
      if hostile.contains(d.path) && d.answer != nil {
        issues.append("hostile path \(d.path) was answered")
      }
      // Without chance, every path ends as it must: answered, or crashed if hostile.
      if startFailure == 0 && randomDeath == 0 && idleDeath == 0 {
        let expected: TagReadAhead.Failure? = hostile.contains(d.path) ? .crashed : nil
        if d.failure != expected {
          issues.append("path \(d.path) ended \(String(describing: d.failure))")
        }
      }
    }
  }
}
