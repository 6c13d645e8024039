import AudioCore
import CSoundTouch

/// Why sound cannot be played at another speed, in words for the listener.
public struct TimeStretchError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Kind: Hashable, Sendable {
    /// SoundTouch's library is not installed, or is not one hark can use.
    case libraryUnavailable
    /// SoundTouch will not take the format (more than its 16 channels).
    case formatRefused
  }
  public let kind: Kind
  /// One line: what cannot be done and why, the library's own words last.
  public let reason: String
  public var description: String { reason }
}

/// Plays interleaved float frames faster or slower with their pitch kept (`PlaybackRate`, 0.5×
/// to 3×), for listening to long recordings at speed: SoundTouch's time stretch (WSOLA: the
/// sound is cut into 50 ms sequences, which are laid down again closer together or further
/// apart, each joined over 10 ms where its waveform best matches the last one's end).
///
/// One thread owns it (the decode thread): nothing here locks, and nothing is allocated after
/// `init` as long as at most `maxInputFrames` are put at a time and what is ready is received
/// before more is put (SoundTouch's own buffers are grown to that at `init`).
///
/// Frames go in with `put(_:)` and come out with `receive(into:)` (or both at once, through a
/// buffer of its own, with `process(_:into:)`); `finish()` at the end of the stream lets the
/// last of them out, `reset()` at a seek drops everything. The output is late: SoundTouch wants
/// 70 ms of input (at 1×) to 150 ms (at 3×) before its first frame, and holds about as much
/// until `finish()`.
///
/// Where the output is in the input: `sourcePosition` is the input frame (counted from the start
/// of the stream or the last `reset()`) that the next frame received plays: the sum of the
/// frames received, each times the rate it was made at. It starts at 0 and ends, once
/// `finish()`'s tail is received, at the count of frames put, so it never drifts. In between,
/// the sound wanders from it in a sawtooth, as WSOLA copies a sequence at 1× and then jumps:
/// measured on noise at 44.1 kHz (TimeStretchTests prints it), the sound of a frame came from
/// 45 to 2 ms of the file before its `sourcePosition` at 2× (24 ms before on average), 87 to
/// 11 ms before at 3× (47), 27 ms before to 2 ms after at 1.5× (12 before), 4 ms before to
/// 25 ms after at 0.5× (11 after); within 40 ms × |rate − 1| + 20 ms either way at any rate
/// and across changes of rate (which the tests check). To say where a listener is, take
/// `sourcePosition` and `outputRate` before each `receive(into:)`: the i-th frame it hands out
/// plays input frame `sourcePosition + i × outputRate`. (`receive(into:)` hands out frames made
/// at one rate at a time, so that this holds across a change of rate.)
public final class TimeStretcher {
  /// Loads SoundTouch (libSoundTouchDll.so.1) if it is not loaded yet: nil when it is ready,
  /// else why not, in words for the listener.
  public static func load() -> String? {
    cst_load().map { failure(String(cString: $0)) }
  }

  /// What `load()` would say if SoundTouch's library were the one named `soname` (for tests:
  /// the library hark uses is loaded once and for good).
  static func check(soname: String) -> String? {
    let why = UnsafeMutablePointer<CChar>.allocate(capacity: 256)
    defer { why.deallocate() }
    guard cst_check(soname, why, 256) == 0 else { return nil }
    return failure(String(cString: why))
  }

  /// The listener's words for a library that cannot be loaded; the loader's own last.
  static func failure(_ why: String) -> String {
    "speeds other than 1× need SoundTouch, which cannot be loaded; install libsoundtouch1 (\(why))"
  }

  /// SoundTouch's version ("2.3.2"), loading it; nil when it cannot be loaded.
  public static var libraryVersion: String? {
    load() == nil ? String(cString: soundtouch_getVersionString()) : nil
  }

  /// The time-stretch settings, for speech and music alike (docs/PERFORMANCE.md, "Speed",
  /// has the measurements): SoundTouch's own choice by rate lengthens its sequences to 90 ms at
  /// 0.5×, where syllables then start twice (36 starts for 20 syllables of a test buzz), and its
  /// setting for speech (40, 15 and 8 ms, which is its own choice at 2× and above) roughens
  /// sustained music (a chord's energy off its partials −7 dB of the whole, against −13 dB
  /// and below otherwise). 50 ms sequences, a 20 ms window to seek each join in and a 10 ms
  /// overlap keep syllables whole at 0.5× and music as clean as SoundTouch's own choice.
  static let sequenceMilliseconds: Int32 = 50
  static let seekWindowMilliseconds: Int32 = 20
  static let overlapMilliseconds: Int32 = 10

  public let channels: Int
  public let sampleRate: Int
  /// The most frames `put(_:)` takes at a time without SoundTouch growing its buffers.
  public let maxInputFrames: Int

  /// The speed; a change applies to what is made from now on, including the input SoundTouch
  /// holds (frames ready to be received keep the rate they were made at).
  public var rate: PlaybackRate {
    didSet { soundtouch_setTempo(handle, Float(rate.value)) }
  }

  /// Frames put since the start of the stream (the input; silence `finish()` adds is not).
  public private(set) var framesIn = 0
  /// Frames received since the start of the stream.
  public private(set) var framesOut = 0
  /// The input frame the next frame received plays (see the type's comment for how near).
  public private(set) var sourcePosition = 0.0

  /// Where the stream is: taking input, letting its tail out, or over.
  private enum Phase {
    case streaming
    /// After `finish()`: frames are received until `framesOut` is `end`.
    case draining(end: Int)
    /// The tail is out; the next `put(_:)` starts a new stream.
    case ended
  }
  private var phase = Phase.streaming

  private let handle: UnsafeMutableRawPointer
  /// `process(_:into:)` and `finish(into:)` receive into this.
  private let scratch: UnsafeMutableBufferPointer<Float>
  /// 128 frames of silence, which `finish()` pushes the tail out with.
  private let silence: UnsafeMutableBufferPointer<Float>

  /// Frames made and not yet received, in runs of one rate (oldest first, a ring): a run per
  /// change of rate while frames wait, so a handful at most; more are merged into the newest.
  private var runFrames = [Int](repeating: 0, count: 8)
  private var runRates = [Double](repeating: 1, count: 8)
  private var runFirst = 0
  private var runCount = 0

  /// A stretcher for `channels` interleaved channels at `sampleRate`, playing at `rate`.
  /// Throws when SoundTouch cannot be loaded or will not take the format.
  public init(
    channels: Int, sampleRate: Int, rate: PlaybackRate, maxInputFrames: Int = 8_192
  ) throws(TimeStretchError) {
    precondition(channels > 0 && sampleRate > 0 && maxInputFrames > 0)
    if let why = Self.load() { throw TimeStretchError(kind: .libraryUnavailable, reason: why) }
    guard let handle = soundtouch_createInstance() else {
      throw TimeStretchError(
        kind: .libraryUnavailable, reason: "SoundTouch would not start (out of memory?)")
    }
    guard soundtouch_setChannels(handle, UInt32(clamping: channels)) != 0 else {
      soundtouch_destroyInstance(handle)
      throw TimeStretchError(
        kind: .formatRefused,
        reason: "SoundTouch cannot play \(channels) channels at other speeds (16 at most)")
    }
    soundtouch_setSampleRate(handle, UInt32(clamping: sampleRate))
    soundtouch_setSetting(handle, Int32(CST_SETTING_SEQUENCE_MS), Self.sequenceMilliseconds)
    soundtouch_setSetting(handle, Int32(CST_SETTING_SEEKWINDOW_MS), Self.seekWindowMilliseconds)
    soundtouch_setSetting(handle, Int32(CST_SETTING_OVERLAP_MS), Self.overlapMilliseconds)
    self.handle = handle
    self.channels = channels
    self.sampleRate = sampleRate
    self.maxInputFrames = maxInputFrames
    self.rate = rate
    scratch = .allocate(capacity: 4_096 * channels)
    silence = .allocate(capacity: 128 * channels)
    silence.initialize(repeating: 0)
    scratch.initialize(repeating: 0)
    warmUp()
    soundtouch_setTempo(handle, Float(rate.value))
  }

  deinit {
    soundtouch_destroyInstance(handle)
    scratch.deallocate()
    silence.deallocate()
  }

  /// Grows SoundTouch's buffers to what the largest input at the fastest and slowest rates
  /// needs (its input buffer is largest at 3×, where it keeps up to 150 ms besides; its output
  /// at 0.5×), then empties them.
  private func warmUp() {
    let frames = maxInputFrames + sampleRate / 4
    let zeros = UnsafeMutableBufferPointer<Float>.allocate(capacity: frames * channels)
    defer { zeros.deallocate() }
    zeros.initialize(repeating: 0)
    for tempo: Float in [3, 0.5] {
      soundtouch_setTempo(handle, tempo)
      for _ in 0..<2 {
        soundtouch_putSamples(handle, zeros.baseAddress, UInt32(frames))
        while soundtouch_receiveSamples(handle, scratch.baseAddress, 4_096) > 0 {}
      }
      soundtouch_clear(handle)
    }
  }

  // MARK: Input and output

  /// Takes interleaved frames (whole frames; at most `maxInputFrames` without allocating).
  /// After the end of a stream (`finish()` and its tail received), starts a new one.
  public func put(_ input: UnsafeBufferPointer<Float>) {
    precondition(input.count % channels == 0, "whole frames")
    switch phase {
    case .streaming: break
    case .draining: preconditionFailure("put(_:) after finish(), before its tail was received")
    case .ended: reset()
    }
    let frames = input.count / channels
    guard frames > 0, let base = input.baseAddress else { return }
    framesIn += frames
    feed(base, frames: frames)
  }

  /// Puts frames into SoundTouch and counts what they made, at the rate they were made at.
  private func feed(_ base: UnsafePointer<Float>, frames: Int) {
    let before = Int(soundtouch_numSamples(handle))
    soundtouch_putSamples(handle, base, UInt32(frames))
    let made = Int(soundtouch_numSamples(handle)) - before
    guard made > 0 else { return }
    let r = rate.value
    if runCount > 0, runRates[(runFirst + runCount - 1) % runFrames.count] == r {
      runFrames[(runFirst + runCount - 1) % runFrames.count] += made
    } else if runCount == runFrames.count {
      // Eight changes of rate while frames waited: the newest run takes these too, at its rate
      // (sourcePosition then strays by these frames times the difference of rates).
      runFrames[(runFirst + runCount - 1) % runFrames.count] += made
    } else {
      let i = (runFirst + runCount) % runFrames.count
      runFrames[i] = made
      runRates[i] = r
      runCount += 1
    }
  }

  /// Frames ready to be received.
  public var availableFrames: Int {
    switch phase {
    case .streaming: Int(soundtouch_numSamples(handle))
    case .draining(let end): end - framesOut
    case .ended: 0
    }
  }

  /// The rate the next frames received were made at: each covers this many input frames.
  public var outputRate: Double { runCount > 0 ? runRates[runFirst] : rate.value }

  /// Copies ready frames into `output` (interleaved; as many whole frames as fit) and returns
  /// how many; 0 when none are ready. The frames of one call were all made at one rate
  /// (`outputRate`), so a call may hand out fewer than are ready.
  public func receive(into output: UnsafeMutableBufferPointer<Float>) -> Int {
    var want = output.count / channels
    switch phase {
    case .streaming: break
    case .draining(let end): want = min(want, end - framesOut)
    case .ended: return 0
    }
    if runCount > 0 { want = min(want, runFrames[runFirst]) }
    guard want > 0, let base = output.baseAddress else { return 0 }
    var got = Int(soundtouch_receiveSamples(handle, base, UInt32(want)))
    if case .draining = phase, got < want {
      // SoundTouch ran out before the end `finish()` worked out (it has not been seen to): the
      // rest is silence, so that the output still covers the input exactly.
      (base + got * channels).update(repeating: 0, count: (want - got) * channels)
      got = want
    }
    take(got)
    return got
  }

  /// Counts `frames` received: from the oldest run, or (padding) at the current rate.
  private func take(_ frames: Int) {
    framesOut += frames
    if runCount > 0 {
      let r = runRates[runFirst]
      sourcePosition += Double(frames) * r
      runFrames[runFirst] -= frames
      if runFrames[runFirst] <= 0 {
        runFirst = (runFirst + 1) % runFrames.count
        runCount -= 1
      }
    } else {
      sourcePosition += Double(frames) * rate.value
    }
    if case .draining(let end) = phase, framesOut >= end { phase = .ended }
  }

  /// Puts `input` (any number of whole frames) and hands each run of ready output to `output`,
  /// from a buffer of the stretcher's own (valid during the call only).
  public func process(
    _ input: UnsafeBufferPointer<Float>, into output: (UnsafeBufferPointer<Float>) -> Void
  ) {
    precondition(input.count % channels == 0, "whole frames")
    var at = 0
    repeat {
      let n = min(input.count - at, maxInputFrames * channels)
      put(UnsafeBufferPointer(rebasing: input[at..<(at + n)]))
      at += n
      drain(into: output)
    } while at < input.count
  }

  /// Hands everything ready to `output`, a buffer at a time.
  private func drain(into output: (UnsafeBufferPointer<Float>) -> Void) {
    while true {
      let n = receive(into: scratch)
      if n == 0 { return }
      output(UnsafeBufferPointer(rebasing: scratch[0..<(n * channels)]))
    }
  }

  // MARK: The end of a stream, and seeks

  /// Ends the stream: what SoundTouch holds is pushed out with silence, and the frames still to
  /// be received are those that cover the input exactly (at one rate, input ÷ rate in all,
  /// rounded). Receive them with `receive(into:)`; the stream is over when `availableFrames` is
  /// 0. Nothing to do if the stream is already ending.
  public func finish() {
    guard case .streaming = phase else { return }
    // Silence 128 frames at a time, as SoundTouch's own flush does (which allocates each time,
    // and counts its end by the input's rate, not the output's, when the rate changed), until
    // the frames made reach the end of the input; a second of it is more than its delay.
    var pushed = 0
    if let zeros = silence.baseAddress {
      while madeSourcePosition < Double(framesIn), pushed < sampleRate {
        feed(zeros, frames: 128)
        pushed += 128
      }
    }
    // Frames from now until the output covers the input: whole runs, then part of one.
    var left = Double(framesIn) - sourcePosition
    var frames = 0
    var i = 0
    while left > 0, i < runCount {
      let run = (runFirst + i) % runFrames.count
      let covers = Double(runFrames[run]) * runRates[run]
      if covers >= left {
        frames += Int((left / runRates[run]).rounded())
        left = 0
      } else {
        frames += runFrames[run]
        left -= covers
      }
      i += 1
    }
    if left > 0 { frames += Int((left / rate.value).rounded()) }
    phase = frames > 0 ? .draining(end: framesOut + frames) : .ended
  }

  /// The input frame the frames made so far (received or not) reach.
  private var madeSourcePosition: Double {
    var p = sourcePosition
    for i in 0..<runCount {
      let run = (runFirst + i) % runFrames.count
      p += Double(runFrames[run]) * runRates[run]
    }
    return p
  }

  /// `finish()`, then the tail handed to `output` (from the stretcher's buffer); the next
  /// `put(_:)` starts a new stream.
  public func finish(into output: (UnsafeBufferPointer<Float>) -> Void) {
    finish()
    drain(into: output)
  }

  /// Drops everything in and out (a seek, a new track): counts and `sourcePosition` to zero,
  /// the rate kept.
  public func reset() {
    soundtouch_clear(handle)
    phase = .streaming
    framesIn = 0
    framesOut = 0
    sourcePosition = 0
    runFirst = 0
    runCount = 0
  }
}
