import AudioCore
import AudioTestSupport
import Glibc
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(2))) struct SampleRingTests {
  /// Writes `values` and returns how many went in.
  @discardableResult
  private func write(_ ring: SampleRing, _ values: [Float]) -> Int {
    values.withUnsafeBufferPointer { ring.write($0) }
  }

  /// Reads up to `count` samples.
  private func read(_ ring: SampleRing, _ count: Int) -> [Float] {
    var out = [Float](repeating: -1, count: count)
    let n = out.withUnsafeMutableBufferPointer { ring.read(into: $0) }
    return Array(out[0..<n])
  }

  private func samples(_ range: Range<Int>) -> [Float] { range.map(Float.init) }

  @Test func readsBackWhatWasWrittenAcrossTheWrap() {
    let ring = SampleRing(capacity: 8)
    #expect(write(ring, samples(0..<6)) == 6)
    #expect(read(ring, 6) == samples(0..<6))
    ring.release(upTo: 6)
    // Slots 6, 7, then 0...3: the copy wraps.
    #expect(write(ring, samples(6..<12)) == 6)
    #expect(ring.readableCount == 6)
    #expect(read(ring, 100) == samples(6..<12))
    #expect(ring.readPosition == 12)
    #expect(ring.writePosition == 12)
  }

  @Test func aReadTakesAtMostTheBufferAndWhatIsThere() {
    let ring = SampleRing(capacity: 16)
    #expect(read(ring, 4).isEmpty)
    write(ring, samples(0..<10))
    #expect(read(ring, 4) == samples(0..<4))
    #expect(read(ring, 0).isEmpty)
    #expect(read(ring, 100) == samples(4..<10))
    #expect(read(ring, 100).isEmpty)
  }

  @Test func aWriteTakesOnlyWhatFits() {
    let ring = SampleRing(capacity: 8)
    #expect(ring.writableCount == 8)
    #expect(write(ring, samples(0..<10)) == 8)
    #expect(ring.writableCount == 0)
    #expect(write(ring, [99]) == 0)
    #expect(read(ring, 100) == samples(0..<8))
  }

  @Test func samplesReadButNotReleasedAreNeverOverwritten() {
    let ring = SampleRing(capacity: 8)
    write(ring, samples(0..<8))
    #expect(read(ring, 8) == samples(0..<8))
    // All read, none heard: the writer must wait.
    #expect(ring.writableCount == 0)
    #expect(write(ring, [100, 101]) == 0)
    ring.release(upTo: 3)
    #expect(ring.writableCount == 3)
    #expect(write(ring, [100, 101, 102, 103, 104]) == 3)
    // Going back still finds samples 3...7 intact, then the new ones.
    #expect(ring.rewindToReleased() == 5)
    #expect(read(ring, 100) == samples(3..<8) + [100, 101, 102])
  }

  @Test func rewindReturnsToTheLastReleasedSample() {
    let ring = SampleRing(capacity: 16)
    write(ring, samples(0..<12))
    _ = read(ring, 10)
    ring.release(upTo: 4)
    #expect(ring.releasedPosition == 4)
    #expect(ring.rewindToReleased() == 6)
    #expect(ring.readPosition == 4)
    #expect(ring.readableCount == 8)
    #expect(read(ring, 100) == samples(4..<12))
    // Nothing read since the last release: nothing to go back over.
    ring.release(upTo: 12)
    #expect(ring.rewindToReleased() == 0)
    #expect(ring.readPosition == 12)
  }

  @Test func releaseNeverPassesTheReaderNorGoesBack() {
    let ring = SampleRing(capacity: 8)
    write(ring, samples(0..<8))
    _ = read(ring, 5)
    ring.release(upTo: 100)
    #expect(ring.releasedPosition == 5)
    ring.release(upTo: 2)
    #expect(ring.releasedPosition == 5)
    #expect(ring.writableCount == 5)
  }

  @Test func resetEmptiesTheRingAndCountsOnFromThePositionGiven() {
    let ring = SampleRing(capacity: 8)
    write(ring, samples(0..<7))
    _ = read(ring, 3)
    ring.release(upTo: 2)
    ring.reset(to: 1_000_003)
    #expect(ring.readableCount == 0)
    #expect(ring.writableCount == 8)
    #expect(ring.writePosition == 1_000_003)
    #expect(ring.readPosition == 1_000_003)
    #expect(ring.releasedPosition == 1_000_003)
    #expect(read(ring, 8).isEmpty)
    #expect(write(ring, samples(50..<58)) == 8)
    #expect(read(ring, 8) == samples(50..<58))
    ring.reset()
    #expect(ring.writePosition == 0)
    #expect(ring.readableCount == 0)
  }

  @Test func inPlaceWritesStopAtTheEndOfTheStorageAndAtWhatTheReaderHolds() {
    let ring = SampleRing(capacity: 8)
    let region = ring.writableRegion()
    #expect(region.count == 8)
    for i in 0..<6 { region[i] = Float(i) }
    ring.commitWrite(6)
    #expect(ring.readableCount == 6)
    #expect(read(ring, 4) == samples(0..<4))
    // Slots 0...3 are read but not heard: the region is slots 6 and 7 only, not the wrap.
    #expect(ring.writableRegion().count == 2)
    ring.release(upTo: 4)
    let tail = ring.writableRegion()
    #expect(tail.count == 2)
    tail[0] = 6
    tail[1] = 7
    ring.commitWrite(2)
    // After the wrap: slots 0...3, now released.
    #expect(ring.writableRegion().count == 4)
    #expect(read(ring, 100) == samples(4..<8))
  }

  @Test func takeHandsOutSamplesInPlaceUpToTheWrap() {
    let ring = SampleRing(capacity: 8)
    write(ring, samples(0..<6))
    #expect(Array(ring.take(upTo: 4)) == samples(0..<4))
    ring.release(upTo: 4)
    write(ring, samples(6..<10))  // slots 6, 7, 0, 1
    #expect(Array(ring.take(upTo: 100)) == samples(4..<8))  // stops at the end of the storage
    #expect(Array(ring.take(upTo: 100)) == samples(8..<10))
    #expect(ring.take(upTo: 100).isEmpty)
    // Taken samples can be taken again after a rewind, as read ones can.
    #expect(ring.rewindToReleased() == 6)
    #expect(Array(ring.take(upTo: 3)) == samples(4..<7))
  }

  @Test func capacityMustBeAPowerOfTwo() async {
    await #expect(processExitsWith: .failure) {
      _ = SampleRing(capacity: 6)
    }
  }

  /// Waits for both threads without holding up Swift's cooperative pool (other tests need it),
  /// for at most a minute: a ring that loses track would spin forever.
  private func finish(_ threads: TestThread...) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(60)
    while !threads.allSatisfy({ $0.isFinished }) && clock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    let finished = threads.allSatisfy { $0.isFinished }
    try #require(finished, "the stress threads did not finish")
    for thread in threads { thread.join() }
  }

  /// One writer thread, one reader thread, as the decode and render threads use it: a counter
  /// of four million samples arrives intact and in order through a small ring.
  @Test func aCounterCrossesBetweenThreadsIntactAndInOrder() async throws {
    let total = 4_000_000
    let ring = SampleRing(capacity: 4096)
    let result = StressResult()
    let writer = TestThread {
      var block = [Float](repeating: 0, count: 700)
      var next = 0
      var size = LCG(seed: 1)
      while next < total {
        let n = min(size.next(upTo: block.count) + 1, total - next)
        for i in 0..<n { block[i] = Float((next + i) & 0xFF_FFFF) }
        var offset = 0
        while offset < n {
          let taken = block.withUnsafeBufferPointer {
            ring.write(UnsafeBufferPointer(rebasing: $0[offset..<n]))
          }
          offset += taken
          if taken == 0 { sched_yield() }
        }
        next += n
      }
    }
    let reader = TestThread {
      var out = [Float](repeating: 0, count: 900)
      var size = LCG(seed: 2)
      var position = 0
      while position < total {
        let want = size.next(upTo: out.count) + 1
        let n = out.withUnsafeMutableBufferPointer {
          ring.read(into: UnsafeMutableBufferPointer(rebasing: $0[0..<want]))
        }
        if n == 0 {
          sched_yield()
          continue
        }
        for i in 0..<n where out[i] != Float((position + i) & 0xFF_FFFF) {
          result.mismatch(at: position + i)
        }
        position += n
        ring.release(upTo: ring.readPosition)
      }
      result.finish(at: position)
    }
    try await finish(writer, reader)
    #expect(result.mismatches == 0, "first bad sample at \(result.firstMismatch)")
    #expect(result.finalPosition == total)
    #expect(ring.readableCount == 0)
  }

  /// The same, with the decoder filling the ring in place and the reader taking samples in
  /// place, as the engine does on its fast path.
  @Test func inPlaceWritesAndTakesCrossBetweenThreadsIntact() async throws {
    let total = 4_000_000
    let ring = SampleRing(capacity: 4096)
    let result = StressResult()
    let writer = TestThread {
      var next = 0
      var size = LCG(seed: 5)
      while next < total {
        let region = ring.writableRegion()
        let n = min(size.next(upTo: 700) + 1, total - next, region.count)
        if n == 0 {
          sched_yield()
          continue
        }
        for i in 0..<n { region[i] = Float((next + i) & 0xFF_FFFF) }
        ring.commitWrite(n)
        next += n
      }
    }
    let reader = TestThread {
      var size = LCG(seed: 6)
      var position = 0
      while position < total {
        let block = ring.take(upTo: size.next(upTo: 900) + 1)
        if block.isEmpty {
          sched_yield()
          continue
        }
        for i in 0..<block.count where block[i] != Float((position + i) & 0xFF_FFFF) {
          result.mismatch(at: position + i)
        }
        position += block.count
        ring.release(upTo: ring.readPosition)
      }
      result.finish(at: position)
    }
    try await finish(writer, reader)
    #expect(result.mismatches == 0, "first bad sample at \(result.firstMismatch)")
    #expect(result.finalPosition == total)
  }

  /// The reader as the render thread uses it: it releases only what the device has played (a
  /// lag behind what it read) and now and then goes back to it (a pause). What it reads again
  /// must still be the same samples: the writer never overwrote them.
  @Test func rewindingUnderAConcurrentWriterRereadsTheSameSamples() async throws {
    let total = 1_000_000
    let lag = 700
    let ring = SampleRing(capacity: 2048)
    let result = StressResult()
    let writer = TestThread {
      var block = [Float](repeating: 0, count: 500)
      var next = 0
      var size = LCG(seed: 3)
      while next < total {
        let n = min(size.next(upTo: block.count) + 1, total - next)
        for i in 0..<n { block[i] = Float((next + i) & 0xFF_FFFF) }
        var offset = 0
        while offset < n {
          let taken = block.withUnsafeBufferPointer {
            ring.write(UnsafeBufferPointer(rebasing: $0[offset..<n]))
          }
          offset += taken
          if taken == 0 { sched_yield() }
        }
        next += n
      }
    }
    let reader = TestThread {
      var out = [Float](repeating: 0, count: 600)
      var size = LCG(seed: 4)
      var reads = 0
      var rewinds = 0
      while ring.readPosition < total {
        let position = ring.readPosition
        let want = size.next(upTo: out.count) + 1
        let n = out.withUnsafeMutableBufferPointer {
          ring.read(into: UnsafeMutableBufferPointer(rebasing: $0[0..<want]))
        }
        if n == 0 {
          sched_yield()
          continue
        }
        for i in 0..<n where out[i] != Float((position + i) & 0xFF_FFFF) {
          result.mismatch(at: position + i)
        }
        reads += 1
        ring.release(upTo: ring.readPosition - lag)
        if reads % 37 == 0 {
          let back = ring.rewindToReleased()
          if back > 0 { rewinds += 1 }
          if ring.readPosition != ring.releasedPosition { result.mismatch(at: -1) }
        }
      }
      ring.release(upTo: total)
      result.finish(at: ring.readPosition, rewinds: rewinds)
    }
    try await finish(writer, reader)
    #expect(result.mismatches == 0, "first bad sample at \(result.firstMismatch)")
    #expect(result.finalPosition == total)
    #expect(result.rewinds > 10)
  }
}

/// What a stress reader saw, readable once it has finished.
private final class StressResult: Sendable {
  private let count = Atomic<Int>(0)
  private let first = Atomic<Int>(Int.max)
  private let end = Atomic<Int>(0)
  private let rewound = Atomic<Int>(0)

  func mismatch(at position: Int) {
    count.add(1, ordering: .relaxed)
    _ = first.compareExchange(expected: Int.max, desired: position, ordering: .relaxed)
  }

  func finish(at position: Int, rewinds: Int = 0) {
    rewound.store(rewinds, ordering: .relaxed)
    end.store(position, ordering: .releasing)
  }

  var mismatches: Int { count.load(ordering: .acquiring) }
  var firstMismatch: Int { first.load(ordering: .acquiring) }
  var finalPosition: Int { end.load(ordering: .acquiring) }
  var rewinds: Int { rewound.load(ordering: .acquiring) }
}

/// Deterministic block sizes, so a failure can be replayed.
private struct LCG {
  var state: UInt64
  init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 }
  mutating func next(upTo bound: Int) -> Int {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return Int((state >> 33) % UInt64(bound))
  }
}
