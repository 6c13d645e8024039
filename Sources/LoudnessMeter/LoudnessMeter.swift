import AudioCore
import CEBUR128
import Loudness

/// Why a track's loudness could not be measured, in words for the user.
public struct MeasureError: Error, Hashable, Sendable, CustomStringConvertible {
  public var reason: String
  public init(_ reason: String) { self.reason = reason }
  public var description: String { reason }
}

/// Measures loudness as EBU R128 and ITU-R BS.1770-4 define it, with libebur128 (loaded when
/// first used): integrated loudness, true peak, and the gating blocks an album's loudness is
/// gated from again (`LoudnessBlocks`). One meter measures one track; any thread.
///
/// Mono is measured as dual mono (libebur128's EBUR128_DUAL_MONO): a mono track is heard from
/// both speakers, so a −23 dBFS sine reads −23 LUFS in mono as in stereo, as EBU Tech 3341
/// expects and ReplayGain 2.0's scanners do. 5.1 in the order WAV, FLAC and FFmpeg give it (L R
/// C LFE Ls Rs) is weighted as BS.1770 says (the LFE left out, the surrounds +1.5 dB); other
/// layouts count their first two channels as left and right and the rest not at all.
public final class LoudnessMeter {
  private var state: OpaquePointer?
  public let format: PCMFormat
  /// Frames in 100 ms, as libebur128 counts them: the step between gating blocks.
  private let step: Int
  /// Frames given since the start, and those of the step not yet given to libebur128.
  private var frames = 0
  private var pending: [Float] = []
  private var blocks = LoudnessBlocks()

  /// A meter for sound in `format`; throws when libebur128 cannot be loaded or will not take
  /// the format.
  public init(format: PCMFormat) throws(MeasureError) {
    if let failure = cebur_load() {
      throw MeasureError("libebur128 cannot be loaded (\(String(cString: failure)))")
    }
    self.format = format
    let mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue)
    guard
      let st = ebur128_init(UInt32(format.channels), UInt(format.sampleRate), mode)
    else {
      throw MeasureError(
        "libebur128 cannot measure \(format.channels) channels at \(format.sampleRate) Hz")
    }
    state = OpaquePointer(st)
    if format.channels == 1 {
      ebur128_set_channel(st, 0, Int32(EBUR128_DUAL_MONO.rawValue))
    }
    step = (format.sampleRate + 5) / 10
    pending.reserveCapacity(step * format.channels)
  }

  deinit {
    var st = UnsafeMutablePointer<ebur128_state>(state)
    ebur128_destroy(&st)
  }

  private var st: UnsafeMutablePointer<ebur128_state>? {
    UnsafeMutablePointer<ebur128_state>(state)
  }

  /// Adds interleaved frames. They go to libebur128 100 ms at a time, so that after each step
  /// the momentary loudness (the last 400 ms) is exactly the gating block just made, and is
  /// counted in `blocks`.
  public func add(_ samples: UnsafeBufferPointer<Float>) {
    let channels = format.channels
    var at = 0
    let total = samples.count - samples.count % channels
    while at < total {
      let need = step * channels - pending.count
      let take = min(need, total - at)
      pending.append(contentsOf: samples[at..<at + take])
      at += take
      guard pending.count == step * channels else { break }
      pending.withUnsafeBufferPointer { p in
        _ = ebur128_add_frames_float(st, p.baseAddress, step)
      }
      pending.removeAll(keepingCapacity: true)
      frames += step
      // libebur128 makes its first block at 400 ms; before that the momentary loudness counts
      // silence that was never there.
      if frames >= 4 * step {
        var momentary = 0.0
        if ebur128_loudness_momentary(st, &momentary) == EBUR128_SUCCESS.rawValue {
          blocks.add(blockLoudness: momentary)
        }
      }
    }
  }

  /// What was measured of all that was added.
  public func result() -> TrackLoudness {
    if !pending.isEmpty {
      // The last part of a step: into the integrated loudness's gating when libebur128 makes a
      // block of it (it makes none), and into the peak.
      pending.withUnsafeBufferPointer { p in
        _ = ebur128_add_frames_float(st, p.baseAddress, p.count / format.channels)
      }
      frames += pending.count / format.channels
      pending.removeAll()
    }
    var integrated = -Double.infinity
    ebur128_loudness_global(st, &integrated)
    var peak = 0.0
    for channel in 0..<format.channels {
      var p = 0.0
      if ebur128_true_peak(st, UInt32(channel), &p) == EBUR128_SUCCESS.rawValue {
        peak = max(peak, p)
      }
    }
    return TrackLoudness(
      integrated: integrated.isFinite ? integrated : nil, truePeak: peak, blocks: blocks,
      seconds: Double(frames) / Double(format.sampleRate))
  }

  /// Measures what `decoder` gives, to its end; `shouldStop` is asked between reads (nil is
  /// returned when it says to stop). A decoder that fails midway is a `MeasureError` with its
  /// reason: a measurement of part of a track would be wrong.
  public static func measure(
    _ decoder: any AudioDecoder, shouldStop: () -> Bool = { false }
  ) throws(MeasureError) -> TrackLoudness? {
    let meter = try LoudnessMeter(format: decoder.format)
    let channels = decoder.format.channels
    var buffer = [Float](repeating: 0, count: 16_384 * channels)
    while true {
      if shouldStop() { return nil }
      let n: Int
      do {
        n = try buffer.withUnsafeMutableBufferPointer { b throws(DecodeError) in
          try decoder.read(into: b)
        }
      } catch {
        throw MeasureError(error.reason + (error.detail.map { " (\($0))" } ?? ""))
      }
      if n == 0 { break }
      buffer.withUnsafeBufferPointer { b in
        meter.add(UnsafeBufferPointer(rebasing: b[0..<n * channels]))
      }
    }
    return meter.result()
  }

  /// The loudness of several meters' sound as one programme, by libebur128 itself (what
  /// `LoudnessBlocks.integratedLoudness` of their blocks merged must agree with).
  public static func integratedLoudness(of meters: [LoudnessMeter]) -> Double? {
    var states = meters.map { UnsafeMutablePointer<ebur128_state>($0.state) }
    var out = -Double.infinity
    ebur128_loudness_global_multiple(&states, states.count, &out)
    return out.isFinite ? out : nil
  }
}
