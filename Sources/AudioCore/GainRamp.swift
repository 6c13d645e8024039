/// A gain that glides to its target over a set number of frames, so that fades, ducking and
/// un-ducking never click. Render thread only; no allocation.
public struct GainRamp: Sendable {
  public private(set) var current: Float
  public private(set) var target: Float
  private var step: Float = 0
  private var remaining = 0

  public init(_ gain: Float = 1) {
    current = gain
    target = gain
  }

  /// Heads for `target`, arriving after `frames` frames (at once when 0).
  public mutating func ramp(to target: Float, over frames: Int) {
    self.target = target
    if frames <= 0 || target == current {
      current = target
      remaining = 0
      return
    }
    remaining = frames
    step = (target - current) / Float(frames)
  }

  public var isSettled: Bool { remaining == 0 }

  /// Multiplies interleaved frames by the gain, advancing the ramp frame by frame.
  public mutating func apply(to samples: UnsafeMutableBufferPointer<Float>, channels: Int) {
    let frames = samples.count / channels
    var i = 0
    var frame = 0
    while frame < frames && remaining > 0 {
      current += step
      remaining -= 1
      if remaining == 0 { current = target }
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
public func linearGain(decibels: Double) -> Float { Float(pow10(decibels / 20)) }

private func pow10(_ x: Double) -> Double {
  // The standard library has no pow; exp(x ln 10) is exact enough for gains.
  var result = 1.0
  var term = 1.0
  let y = x * 2.302585092994046
  for n in 1..<40 {
    term *= y / Double(n)
    result += term
  }
  return result
}
