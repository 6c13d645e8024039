/// A gain that glides to its target over a set number of frames, so that fades, ducking and
/// un-ducking never click. Render thread only; no allocation.
///
/// Straight (the same step each frame: ducking, the sleep timer's fade) or, for the few
/// milliseconds a start or a stop of the sound takes, along an S (`smooth`: 3u² − 2u³, as a
/// raised cosine, without one): it leaves and reaches its ends at a standstill, which puts far
/// less of it above 2 kHz than a straight ramp of the same length (a 200 Hz tone faded out over
/// 5 ms: −78 dB against −62 dB of the tone's level, and a cut −28 dB;
/// Tests/EndToEnd/audio_probe.py's `click`).
public struct GainRamp: Sendable {
  public private(set) var current: Float
  public private(set) var target: Float
  private var step: Float = 0
  private var remaining = 0
  /// Along the S, from `from` over `total` frames.
  private var smooth = false
  private var from: Float = 0
  private var total = 0

  public init(_ gain: Float = 1) {
    current = gain
    target = gain
  }

  /// Heads for `target`, arriving after `frames` frames (at once when 0); `smooth`: along a
  /// S rather than straight.
  public mutating func ramp(to target: Float, over frames: Int, smooth: Bool = false) {
    self.target = target
    if frames <= 0 || target == current {
      current = target
      remaining = 0
      return
    }
    remaining = frames
    step = (target - current) / Float(frames)
    self.smooth = smooth
    from = current
    total = frames
  }

  public var isSettled: Bool { remaining == 0 }

  /// Multiplies interleaved frames by the gain, advancing the ramp frame by frame.
  public mutating func apply(to samples: UnsafeMutableBufferPointer<Float>, channels: Int) {
    let frames = samples.count / channels
    var i = 0
    var frame = 0
    while frame < frames && remaining > 0 {
      remaining -= 1
      if smooth {
        let u = Float(total - remaining) / Float(total)
        current = from + (target - from) * (u * u * (3 - 2 * u))
      } else {
        // Counted back from the target, not summed step by step: the sleep timer's fade of
        // seconds is a quarter million steps, whose sum strayed below silence's 0 before it
        // landed there.
        current = target - step * Float(remaining)
      }
      for _ in 0..<channels {
        samples[i] *= current
        i += 1
      }
      frame += 1
    }
    if current == 1 { return }
    let g = current
    while i < samples.count {
      samples[i] *= g
      i += 1
    }
  }
}

/// Decibels to a linear gain: -20 dB is 0.1.
public func linearGain(decibels: Double) -> Float { Float(exp(decibels / 20 * ln10)) }

private let ln10 = 2.302_585_092_994_046

/// e^x for the gains above. The standard library has no exp; this reduces x to r + k ln 2 with
/// |r| ≤ ln 2 / 2, sums the series for e^r (which converges fast there), and scales by 2^k, so
/// it stays accurate from unity down to far below audibility and never turns negative.
private func exp(_ x: Double) -> Double {
  if x < -700 { return 0 }
  if x > 700 { return .infinity }
  let ln2 = 0.693_147_180_559_945_3
  let k = (x / ln2).rounded()
  let r = x - k * ln2
  var sum = 1.0
  var term = 1.0
  for n in 1..<20 {
    term *= r / Double(n)
    sum += term
  }
  return Double(sign: .plus, exponent: Int(k), significand: sum)
}
