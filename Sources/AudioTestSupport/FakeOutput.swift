import AudioCore
import Glibc
import Synchronization

/// An `AudioOutput` that records every frame written to it and misbehaves on request.
///
/// The render thread calls it as it would a sound card; none of those calls allocate or lock:
/// what it records goes into buffers allocated at init and is published through atomics, so any
/// thread may look (`recordedSamples()`, `framesWritten`, `calls`) while it plays. Counts read
/// together are consistent only while the render thread is parked (paused, stopped, lost).
///
/// The delay model: the device holds the last `latencyFrames` frames written (fewer right after
/// a start), not yet heard. `delayFrames()` reports them, `discard()` throws them away, `drain()`
/// and an underrun play them out, unplugging loses them. So the frames heard are
/// `framesWritten - framesDiscarded - delayFrames()`. A rewindable one (`Options.rewindable`)
/// takes back frames it holds: they leave the recording, so what it recorded is what was heard
/// or is still to be. A laggy one (`Options.delayLagWrites`) reports its delay as it was some
/// writes ago, as a sound server whose latency reports arrive late does.
public final class FakeOutput: AudioOutput, @unchecked Sendable {
  /// A way to misbehave.
  public enum Fault: Sendable, Hashable {
    /// The device takes this many frames in all (the last write may be cut short), then it is
    /// gone: every later write returns `.deviceGone(code: -ENODEV)`, and what it held is lost.
    case unplug(afterFrames: Int)
    /// Every `n`-th write underruns: it writes nothing and returns `.recovered`; the device had
    /// played out what it held.
    case underrun(every: Int)
    /// The device takes this many frames in all, then stops playing without a word, as a
    /// stream the sound server has ended under its client: it holds what it held, reports it
    /// as not yet heard, and every later write waits for `wakeFD` (for ever without one) until
    /// `endStall()`, then takes nothing.
    case stall(afterFrames: Int)
  }

  /// How fast the device takes frames.
  public enum Pacing: Sendable, Hashable {
    /// At once, like ALSA's `null` device.
    case unpaced
    /// Like a sound card, `speed` times real time: a second of audio at speed 10 takes 0.1 s.
    case realTime(speed: Double)
  }

  /// How the fake behaves.
  public struct Options: Sendable, Hashable {
    /// How fast writes return.
    public var pacing: Pacing
    /// Frames held in the device, not yet heard, once at least that many were written.
    public var latencyFrames: Int
    /// Misbehaviour, applied in order.
    public var faults: [Fault]
    /// Samples recorded at most; later frames are taken but not recorded (`overflowSamples`).
    /// The default holds 95 s of 44.1 kHz stereo: a paced test whose own task waits behind the
    /// rest of a parallel suite (25 s on a loaded 2-core machine) still finds every frame its
    /// track played. Only what is recorded takes memory.
    public var capacitySamples: Int
    /// Whether `rewind` takes frames back (a card's own device) or answers 0 (a sound server's).
    public var rewindable: Bool
    /// `delayFrames()` answers what the delay was this many writes ago (0: now, at most 15).
    public var delayLagWrites: Int
    /// `drain()` does not return until `endDrainStall()`: a device that hangs in its drain.
    public var drainStalls: Bool
    /// Rewindable, the frames next to be heard that `rewind` always leaves (its
    /// `framesKeptByRewind`), as PipeWire's pulse service through PulseStream.
    public var keptByRewind: Int
    /// Frames of silence `send()` writes after a fade-out's ramp (0: it sends nothing), as
    /// PulseStream does: 40 ms.
    public var silenceAfterRamp: Int

    /// Unpaced, no latency, well behaved, room for eight million samples.
    public init(
      pacing: Pacing = .unpaced, latencyFrames: Int = 0, faults: [Fault] = [],
      capacitySamples: Int = 1 << 23, rewindable: Bool = false, delayLagWrites: Int = 0,
      drainStalls: Bool = false, keptByRewind: Int = 0, silenceAfterRamp: Int = 0
    ) {
      self.drainStalls = drainStalls
      self.silenceAfterRamp = max(0, silenceAfterRamp)
      self.keptByRewind = keptByRewind
      self.pacing = pacing
      self.latencyFrames = latencyFrames
      self.faults = faults
      self.capacitySamples = capacitySamples
      self.rewindable = rewindable
      self.delayLagWrites = min(max(0, delayLagWrites), 15)
    }
  }

  /// A call other than `write`, with the frames written before it.
  public enum Call: Sendable, Hashable {
    /// `discard()`, which threw away `dropped` frames not yet heard.
    case discard(atFrame: Int, dropped: Int)
    /// `prepare()`.
    case prepare(atFrame: Int)
    /// `drain()`.
    case drain(atFrame: Int)
    /// `rewind(frames:)`, which took back `frames` frames, leaving `atFrame` written.
    case rewind(atFrame: Int, frames: Int)
  }

  /// The format it was opened at.
  public let format: PCMFormat
  /// The name it was opened by ("fake" unless told).
  public let deviceName: String
  /// What it was asked to do.
  public let options: Options

  private let samples: UnsafeMutableBufferPointer<Float>
  private let callLog: UnsafeMutableBufferPointer<Call>
  private let recorded = Atomic<Int>(0)
  private let overflow = Atomic<Int>(0)
  private let written = Atomic<Int>(0)
  private let discarded = Atomic<Int>(0)
  private let inDevice = Atomic<Int>(0)  // written since the last discard, drain or underrun
  private let writes = Atomic<Int>(0)
  private let recoveries = Atomic<Int>(0)
  private let gone = Atomic<Bool>(false)
  private let draining = Atomic<Bool>(false)
  private let drainReleased = Atomic<Bool>(false)
  private let callCount = Atomic<Int>(0)
  private let unplugAfter: Int
  private let underrunEvery: Int
  private let stallAfter: Int
  private let stalled = Atomic<Bool>(false)
  private let stallReleased = Atomic<Bool>(false)
  private let nanosecondsPerFrame: Double  // 0 when unpaced
  /// When the frames written so far are played (monotonic ns; 0: not started). Written on the
  /// render thread; read by `delayFrames()` from any thread.
  private let dueAt = Atomic<Int64>(0)
  private var due: Int64 {
    get { dueAt.load(ordering: .relaxed) }
    set { dueAt.store(newValue, ordering: .relaxed) }
  }
  /// Render thread only: what the device held after each of the last 16 writes.
  private let heldHistory: UnsafeMutableBufferPointer<Int>
  /// What `send()` writes: `silenceAfterRamp` frames of zeros.
  private let silence: UnsafeMutableBufferPointer<Float>

  /// A device playing `format`; see `Options` for how it behaves.
  public init(format: PCMFormat, deviceName: String = "fake", options: Options = Options()) {
    self.format = format
    self.deviceName = deviceName
    self.options = options
    // Left uninitialised (Float is trivial): the pages are touched only as frames are recorded,
    // and only `samples[0..<recorded]` is ever read.
    samples = .allocate(capacity: max(options.capacitySamples, 1))
    heldHistory = .allocate(capacity: 16)
    heldHistory.initialize(repeating: 0)
    silence = .allocate(capacity: max(1, options.silenceAfterRamp * format.channels))
    silence.initialize(repeating: 0)
    callLog = .allocate(capacity: 4096)
    callLog.initialize(repeating: .prepare(atFrame: 0))
    var unplug = Int.max
    var underrun = 0
    var stall = Int.max
    for fault in options.faults {
      switch fault {
      case .unplug(let frames): unplug = min(unplug, frames)
      case .underrun(let every): underrun = every
      case .stall(let frames): stall = min(stall, frames)
      }
    }
    unplugAfter = unplug
    underrunEvery = underrun
    stallAfter = stall
    switch options.pacing {
    case .unpaced: nanosecondsPerFrame = 0
    case .realTime(let speed): nanosecondsPerFrame = 1e9 / (Double(format.sampleRate) * speed)
    }
  }

  deinit {
    samples.deallocate()
    heldHistory.deallocate()
    silence.deallocate()
    callLog.deallocate()
  }

  // MARK: AudioOutput (render thread)

  /// Records what it takes; see `Fault` and `Pacing` for how it may not take it all. Paced,
  /// it takes a write once the previous one has played: until then it waits, as a full device
  /// does, and returns `.written(0)` if `wakeFD` becomes readable meanwhile.
  public func write(_ source: UnsafeBufferPointer<Float>, wakingOn wakeFD: Int32)
    -> OutputWriteResult
  {
    let channels = format.channels
    precondition(source.count % channels == 0, "a write of a partial frame")
    if stalled.load(ordering: .acquiring) || written.load(ordering: .relaxed) >= stallAfter {
      if !stalled.load(ordering: .relaxed) {
        inDevice.store(heldNow(), ordering: .relaxed)  // what it still held when it stopped
        stalled.store(true, ordering: .releasing)
      }
      waitForWakeOrRelease(wakeFD)
      return .written(0)
    }
    if nanosecondsPerFrame > 0 && !waitForRoom(wakeFD) { return .written(0) }
    let call = writes.add(1, ordering: .relaxed).newValue
    if gone.load(ordering: .relaxed) { return .deviceGone(code: -ENODEV) }
    if underrunEvery > 0 && call % underrunEvery == 0 {
      inDevice.store(0, ordering: .relaxed)
      recoveries.add(1, ordering: .releasing)
      return .recovered
    }
    let before = written.load(ordering: .relaxed)
    let room = unplugAfter == .max ? Int.max : unplugAfter - before
    if room <= 0 {
      discarded.add(delayFrames(), ordering: .relaxed)
      inDevice.store(0, ordering: .relaxed)
      gone.store(true, ordering: .releasing)
      return .deviceGone(code: -ENODEV)
    }
    let frames = min(source.count / channels, room, stallAfter - before)
    record(UnsafeBufferPointer(rebasing: source[0..<(frames * channels)]))
    // What it played on its own while not written to is gone from it for good.
    inDevice.store(heldNow(), ordering: .relaxed)
    inDevice.add(frames, ordering: .relaxed)
    heldHistory[call & 15] = inDevice.load(ordering: .relaxed)
    written.store(before + frames, ordering: .releasing)
    if nanosecondsPerFrame > 0 {
      // A device that ran dry starts again from now rather than rushing to catch up.
      let now = monotonicNanoseconds()
      if due < now { due = now }
      due += Int64(Double(frames) * nanosecondsPerFrame)
    }
    return .written(frames)
  }

  /// The frames written since the last flush, up to `latencyFrames` (as it was
  /// `delayLagWrites` writes ago, when told to lag).
  public func delayFrames() -> Int {
    let held = min(options.latencyFrames, heldNow())
    guard options.delayLagWrites > 0 else { return held }
    let call = writes.load(ordering: .relaxed) - options.delayLagWrites
    return call > 0 ? min(heldHistory[call & 15], held) : 0
  }

  /// What it holds: paced and not written to for a while, it plays on and holds less.
  private func heldNow() -> Int {
    let held = inDevice.load(ordering: .relaxed)
    let due = dueAt.load(ordering: .relaxed)
    guard nanosecondsPerFrame > 0, due > 0, !stalled.load(ordering: .acquiring) else {
      return held
    }
    let late = monotonicNanoseconds() - due
    return late <= 0 ? held : max(0, held - Int(Double(late) / nanosecondsPerFrame))
  }

  /// Whether it holds frames it is playing (since the last discard, drain or underrun).
  public func isRunning() -> Bool { heldNow() > 0 }

  /// Rewindable, takes back up to `frames` of the frames it holds but `keptByRewind`, the latest
  /// first: they leave the recording. Otherwise takes none.
  public func rewind(frames: Int) -> Int {
    guard options.rewindable, frames > 0 else { return 0 }
    let held = min(options.latencyFrames, heldNow())
    let back = min(frames, held - options.keptByRewind)
    guard back > 0 else { return 0 }
    let channels = format.channels
    var samplesBack = back * channels
    let over = overflow.load(ordering: .relaxed)
    let fromOverflow = min(over, samplesBack)
    if fromOverflow > 0 { overflow.store(over - fromOverflow, ordering: .releasing) }
    samplesBack -= fromOverflow
    recorded.store(recorded.load(ordering: .relaxed) - samplesBack, ordering: .releasing)
    inDevice.add(-back, ordering: .relaxed)
    written.store(written.load(ordering: .relaxed) - back, ordering: .releasing)
    if nanosecondsPerFrame > 0 { due -= Int64(Double(back) * nanosecondsPerFrame) }
    log(.rewind(atFrame: written.load(ordering: .relaxed), frames: back))
    return back
  }

  /// Writes `silenceAfterRamp` frames of silence at once (it is never short of room for them),
  /// as PulseStream does after a fade-out's ramp.
  public func send() -> Int {
    let frames = options.silenceAfterRamp
    guard frames > 0, !gone.load(ordering: .relaxed) else { return 0 }
    record(UnsafeBufferPointer(rebasing: silence[0..<(frames * format.channels)]))
    inDevice.store(heldNow(), ordering: .relaxed)
    inDevice.add(frames, ordering: .relaxed)
    written.add(frames, ordering: .releasing)
    if nanosecondsPerFrame > 0 {
      let now = monotonicNanoseconds()
      if due < now { due = now }
      due += Int64(Double(frames) * nanosecondsPerFrame)
    }
    return frames
  }

  /// Throws away the frames not yet heard.
  public func discard() {
    let dropped = min(options.latencyFrames, heldNow())  // what it held, not what it reports
    discarded.add(dropped, ordering: .relaxed)
    inDevice.store(0, ordering: .relaxed)
    due = 0
    log(.discard(atFrame: written.load(ordering: .relaxed), dropped: dropped))
  }

  /// Ready again; pacing starts afresh.
  public func prepare() {
    due = 0
    log(.prepare(atFrame: written.load(ordering: .relaxed)))
  }

  /// Plays out what it holds (sleeping that long when paced).
  public func drain() {
    if nanosecondsPerFrame > 0 { sleep(nanoseconds: Double(delayFrames()) * nanosecondsPerFrame) }
    if options.drainStalls {
      draining.store(true, ordering: .releasing)
      while !drainReleased.load(ordering: .acquiring) { sleep(nanoseconds: 1e6) }
      draining.store(false, ordering: .releasing)
    }
    inDevice.store(0, ordering: .relaxed)
    due = 0
    log(.drain(atFrame: written.load(ordering: .relaxed)))
  }

  // MARK: Observations (any thread)

  /// Frames the device took.
  public var framesWritten: Int { written.load(ordering: .acquiring) }
  /// Frames thrown away before they were heard (by `discard()`, or lost when unplugged).
  public var framesDiscarded: Int { discarded.load(ordering: .acquiring) }
  /// Frames heard: written, not thrown away, no longer in the device.
  public var heardFrames: Int { framesWritten - framesDiscarded - delayFrames() }
  /// Calls to `write`, whatever they returned.
  public var writeCount: Int { writes.load(ordering: .acquiring) }
  /// Writes that returned `.recovered`.
  public var recoveredCount: Int { recoveries.load(ordering: .acquiring) }
  /// Whether it has been unplugged.
  public var isGone: Bool { gone.load(ordering: .acquiring) }
  /// Samples taken but not recorded for want of room.
  public var overflowSamples: Int { overflow.load(ordering: .acquiring) }

  /// Every call other than `write`, in order.
  public var calls: [Call] {
    let n = min(callCount.load(ordering: .acquiring), callLog.count)
    return Array(callLog[0..<n])
  }

  /// How many times `discard()` was called.
  public var discardCount: Int {
    calls.count { if case .discard = $0 { true } else { false } }
  }

  /// How many times `prepare()` was called.
  public var prepareCount: Int {
    calls.count { if case .prepare = $0 { true } else { false } }
  }

  /// Whether a stalling drain (`Options.drainStalls`) is under way.
  public var isStalledInDrain: Bool { draining.load(ordering: .acquiring) }

  /// Lets a stalling drain return (and every later one at once).
  public func endDrainStall() { drainReleased.store(true, ordering: .releasing) }

  public var framesKeptByRewind: Int { options.rewindable ? options.keptByRewind : 0 }

  /// Whether it has stopped playing (`Fault.stall`).
  public var isStalled: Bool { stalled.load(ordering: .acquiring) }

  /// Lets the writes of a stalled device return (they take nothing still).
  public func endStall() { stallReleased.store(true, ordering: .releasing) }

  /// Frames taken back by `rewind(frames:)`, in all.
  public var framesRewound: Int {
    calls.reduce(0) { if case .rewind(_, let n) = $1 { $0 + n } else { $0 } }
  }

  /// How many times `drain()` was called.
  public var drainCount: Int {
    calls.count { if case .drain = $0 { true } else { false } }
  }

  /// The samples written so far, interleaved, from frame `frame` on.
  public func recordedSamples(fromFrame frame: Int = 0) -> [Float] {
    let n = recorded.load(ordering: .acquiring)
    let start = min(frame * format.channels, n)
    return Array(samples[start..<n])
  }

  // MARK: Render thread helpers

  private func record(_ source: UnsafeBufferPointer<Float>) {
    let n = recorded.load(ordering: .relaxed)
    let fits = min(source.count, samples.count - n)
    if fits > 0, let src = source.baseAddress, let dst = samples.baseAddress {
      (dst + n).initialize(from: src, count: fits)  // trivial: also over a rewind
      recorded.store(n + fits, ordering: .releasing)
    }
    if fits < source.count { overflow.add(source.count - fits, ordering: .releasing) }
  }

  private func log(_ call: Call) {
    let n = callCount.load(ordering: .relaxed)
    guard n < callLog.count else { return }
    callLog[n] = call
    callCount.store(n + 1, ordering: .releasing)
  }

  /// A stalled device's write: waits until `wakeFD` is readable or `endStall()`.
  private func waitForWakeOrRelease(_ wakeFD: Int32) {
    while !stallReleased.load(ordering: .acquiring) {
      var p = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
      if poll(&p, 1, 20) > 0 && p.revents != 0 { return }
    }
  }

  /// Waits until what was written before has played (`due`), or `wakeFD` is readable; false
  /// when woken first.
  private func waitForRoom(_ wakeFD: Int32) -> Bool {
    while true {
      let now = monotonicNanoseconds()
      if now >= due { return true }
      let milliseconds = Int32((due - now) / 1_000_000)
      if milliseconds < 1 {
        sleep(until: due)
        return true
      }
      var p = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
      if poll(&p, 1, milliseconds) > 0 && p.revents != 0 { return false }
    }
  }
}

private func monotonicNanoseconds() -> Int64 {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

private func sleep(until nanoseconds: Int64) {
  var ts = timespec(
    tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
  while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
}

private func sleep(nanoseconds: Double) {
  guard nanoseconds > 0 else { return }
  sleep(until: monotonicNanoseconds() + Int64(nanoseconds))
}
