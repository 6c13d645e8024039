import Synchronization

/// A single-producer single-consumer ring of float samples, allocated once.
///
/// The decode thread writes; the render thread reads. The reader also says which samples have
/// been heard (`release`): the writer never overwrites samples that were read but may not have
/// been heard yet, so after the device discards its buffer (a pause) the reader can go back to
/// the last sample heard (`rewindToReleased`) and resume from exactly there.
/// Positions are absolute sample counts since the last `reset`.
public final class SampleRing: @unchecked Sendable {
  private let slots: UnsafeMutableBufferPointer<Float>
  private let mask: Int
  private let written = Atomic<Int>(0)  // advanced by the writer only
  private let consumed = Atomic<Int>(0)  // moved by the reader only
  private let released = Atomic<Int>(0)  // advanced by the reader only
  public let capacity: Int

  /// `capacity` samples, a power of two.
  public init(capacity: Int) {
    precondition(capacity > 0 && capacity & (capacity - 1) == 0, "capacity must be a power of two")
    self.capacity = capacity
    mask = capacity - 1
    slots = .allocate(capacity: capacity)
    slots.initialize(repeating: 0)
  }

  deinit { slots.deallocate() }

  // MARK: Writer (decode thread)

  /// Samples the writer may add now.
  public var writableCount: Int {
    capacity - (written.load(ordering: .relaxed) &- released.load(ordering: .acquiring))
  }

  /// Where the next written sample goes.
  public var writePosition: Int { written.load(ordering: .relaxed) }

  /// Copies as much as fits; returns the count. Never waits.
  public func write(_ source: UnsafeBufferPointer<Float>) -> Int {
    let w = written.load(ordering: .relaxed)
    let n = min(source.count, capacity - (w &- released.load(ordering: .acquiring)))
    guard n > 0, let src = source.baseAddress, let base = slots.baseAddress else { return 0 }
    let start = w & mask
    let first = min(n, capacity - start)
    (base + start).update(from: src, count: first)
    if n > first { base.update(from: src + first, count: n - first) }
    written.store(w &+ n, ordering: .releasing)
    return n
  }

  /// The free slots from the write position up to the end of the storage (or to what the reader
  /// still holds), in one piece: a decoder fills them in place, then `commitWrite` publishes
  /// what it put there. Saves the copy `write` makes.
  public func writableRegion() -> UnsafeMutableBufferPointer<Float> {
    let w = written.load(ordering: .relaxed)
    let free = capacity - (w &- released.load(ordering: .acquiring))
    let start = w & mask
    let end = start + min(free, capacity - start)
    return UnsafeMutableBufferPointer(rebasing: slots[start..<end])
  }

  /// Publishes `count` samples written into `writableRegion()`.
  public func commitWrite(_ count: Int) {
    precondition(count >= 0 && count <= writableCount, "committed more than was free")
    written.store(written.load(ordering: .relaxed) &+ count, ordering: .releasing)
  }

  // MARK: Reader (render thread)

  /// Samples the reader may take now.
  public var readableCount: Int {
    written.load(ordering: .acquiring) &- consumed.load(ordering: .relaxed)
  }

  /// The next sample the reader takes.
  public var readPosition: Int { consumed.load(ordering: .relaxed) }

  /// Everything before this position has been heard.
  public var releasedPosition: Int { released.load(ordering: .relaxed) }

  /// Copies what is there, up to the buffer's size; returns the count. Never waits.
  public func read(into out: UnsafeMutableBufferPointer<Float>) -> Int {
    let r = consumed.load(ordering: .relaxed)
    let n = min(out.count, written.load(ordering: .acquiring) &- r)
    guard n > 0, let dst = out.baseAddress, let base = slots.baseAddress else { return 0 }
    let start = r & mask
    let first = min(n, capacity - start)
    dst.update(from: base + start, count: first)
    if n > first { (dst + first).update(from: base, count: n - first) }
    consumed.store(r &+ n, ordering: .releasing)
    return n
  }

  /// Takes up to `limit` samples in place: the readable ones from the read position up to the
  /// end of the storage, in one piece, a whole number of `unit`s (frames). They stay valid until
  /// released (the writer never reuses slots the reader has not released), so they can go
  /// straight to the device. Empty when not even one unit lies before the end of the storage:
  /// then `read` (which copies across the wrap) takes it.
  public func take(upTo limit: Int, unit: Int = 1) -> UnsafeBufferPointer<Float> {
    let r = consumed.load(ordering: .relaxed)
    let start = r & mask
    let n = min(limit, written.load(ordering: .acquiring) &- r, capacity - start) / unit * unit
    guard n > 0 else { return UnsafeBufferPointer(start: slots.baseAddress, count: 0) }
    consumed.store(r &+ n, ordering: .releasing)
    return UnsafeBufferPointer(rebasing: slots[start..<(start + n)])
  }

  /// Marks the samples before `position` as heard, so the writer may reuse their slots.
  public func release(upTo position: Int) {
    let p = min(position, consumed.load(ordering: .relaxed))
    if p > released.load(ordering: .relaxed) { released.store(p, ordering: .releasing) }
  }

  /// Goes back to the first sample not heard; returns how many samples will be read again.
  public func rewindToReleased() -> Int {
    let r = consumed.load(ordering: .relaxed)
    let back = released.load(ordering: .relaxed)
    consumed.store(back, ordering: .releasing)
    return r &- back
  }

  /// Goes back to `position` (not before the first sample not heard, nor past the read
  /// position), to read again what was read from there; returns how many samples will be.
  public func rewind(to position: Int) -> Int {
    let r = consumed.load(ordering: .relaxed)
    let back = min(r, max(position, released.load(ordering: .relaxed)))
    consumed.store(back, ordering: .releasing)
    return r &- back
  }

  // MARK: Both parked

  /// Empties the ring and starts counting at `position`. Only while neither thread uses it.
  public func reset(to position: Int = 0) {
    written.store(position, ordering: .sequentiallyConsistent)
    consumed.store(position, ordering: .sequentiallyConsistent)
    released.store(position, ordering: .sequentiallyConsistent)
  }
}
