import AudioCore
import Glibc
import Testing

@Suite(.timeLimit(.minutes(2))) struct GainRampTests {
  /// Applies `ramp` to `frames` frames of 1.0 and returns the gains it gave each sample.
  private func gains(
    _ ramp: inout GainRamp, frames: Int, channels: Int = 1, blocks: Int = 1
  ) -> [Float] {
    var samples = [Float](repeating: 1, count: frames * channels)
    let perBlock = (frames + blocks - 1) / blocks * channels
    samples.withUnsafeMutableBufferPointer { all in
      var start = 0
      while start < all.count {
        let end = min(start + perBlock, all.count)
        ramp.apply(to: UnsafeMutableBufferPointer(rebasing: all[start..<end]), channels: channels)
        start = end
      }
    }
    return samples
  }

  @Test func reachesItsTargetExactlyAfterTheFramesGiven() {
    var ramp = GainRamp(0)
    ramp.ramp(to: 1, over: 4)
    #expect(!ramp.isSettled)
    #expect(gains(&ramp, frames: 6) == [0.25, 0.5, 0.75, 1, 1, 1])
    #expect(ramp.isSettled)
    #expect(ramp.current == 1)
    #expect(ramp.target == 1)
  }

  /// The ramp of a start or a stop of the sound: an S that leaves and lands at a standstill,
  /// exact at its ends, the same in any number of blocks, and never past its ends.
  @Test func aSmoothRampIsAnSThatLandsExactly() {
    var ramp = GainRamp(1)
    ramp.ramp(to: 0, over: 220, smooth: true)  // 5 ms at 44.1 kHz
    let g = gains(&ramp, frames: 240)
    #expect(g[219] == 0)
    #expect(g[220...].allSatisfy { $0 == 0 })
    #expect(zip(g, g.dropFirst()).allSatisfy { $0 >= $1 }, "it only goes down")
    // A standstill at both ends: the first and last steps are far smaller than the middle's.
    let first = 1 - g[0]
    let middle = g[109] - g[110]
    let last = g[218] - g[219]
    #expect(first < middle / 50 && last < middle / 50, "\(first) \(middle) \(last)")
    #expect(abs(g[109] - 0.5) < 0.01, "halfway at half the frames")
    var pieces = GainRamp(1)
    pieces.ramp(to: 0, over: 220, smooth: true)
    #expect(gains(&pieces, frames: 240, blocks: 7) == g)
    // Upward the same, from where it is.
    var up = GainRamp(0.2)
    up.ramp(to: 1, over: 100, smooth: true)
    let u = gains(&up, frames: 100)
    #expect(u.allSatisfy { $0 >= 0.2 && $0 <= 1 })
    #expect(u[99] == 1)
  }

  /// The duck ramp the engine uses: 40 ms at 44.1 kHz from 1 to −20 dB.
  @Test func aLongRampLandsOnItsTargetBitForBit() {
    var ramp = GainRamp(1)
    ramp.ramp(to: 0.1, over: 1764)
    let g = gains(&ramp, frames: 2000)
    #expect(g[1762] > 0.1)
    #expect(g[1763] == 0.1)
    #expect(g[1764...].allSatisfy { $0 == 0.1 })
    #expect(ramp.current == 0.1)
    #expect(ramp.isSettled)
  }

  /// The sleep timer's fade: 5 s at 48 kHz to silence, in the render thread's blocks. Float
  /// steps that small add up with some error; it still falls all the way, never below 0, and
  /// ends on 0 exactly.
  @Test func aFadeOfSecondsFallsSteadilyToSilence() {
    var ramp = GainRamp(1)
    ramp.ramp(to: 0, over: 240_000)
    let g = gains(&ramp, frames: 250_000, channels: 2, blocks: 122)
    let left = stride(from: 0, to: g.count, by: 2).map { g[$0] }
    #expect(zip(left, left.dropFirst()).allSatisfy { $0 >= $1 })
    #expect(abs(left[119_999] - 0.5) < 0.01)
    #expect(left[239_999] == 0)
    #expect(left.allSatisfy { $0 >= 0 })
    #expect(ramp.isSettled)
  }

  @Test func isLinear() {
    var ramp = GainRamp(0.2)
    ramp.ramp(to: 0.9, over: 700)
    let g = gains(&ramp, frames: 700)
    let step: Float = 0.7 / 700
    for k in 0..<700 {
      #expect(abs(g[k] - (0.2 + step * Float(k + 1))) < 1e-5, "frame \(k)")
    }
  }

  @Test func givesEveryChannelOfAFrameTheSameGain() {
    var ramp = GainRamp(0)
    ramp.ramp(to: 1, over: 4)
    #expect(
      gains(&ramp, frames: 5, channels: 3) == [
        0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 0.75, 0.75, 0.75, 1, 1, 1, 1, 1, 1,
      ])
  }

  @Test func carriesOnAcrossBuffers() {
    var whole = GainRamp(1)
    whole.ramp(to: 0, over: 10)
    var pieces = GainRamp(1)
    pieces.ramp(to: 0, over: 10)
    #expect(
      gains(&pieces, frames: 13, channels: 2, blocks: 5) == gains(&whole, frames: 13, channels: 2))
  }

  @Test func zeroFramesIsImmediate() {
    var ramp = GainRamp(1)
    ramp.ramp(to: 0.5, over: 0)
    #expect(ramp.isSettled)
    #expect(ramp.current == 0.5)
    #expect(gains(&ramp, frames: 3, channels: 2) == [Float](repeating: 0.5, count: 6))
  }

  @Test func aRampToWhereItIsIsImmediate() {
    var ramp = GainRamp(0.3)
    ramp.ramp(to: 0.3, over: 100)
    #expect(ramp.isSettled)
    #expect(gains(&ramp, frames: 2) == [0.3, 0.3])
  }

  @Test func aNewRampStartsFromWhereTheOldOneIs() {
    var ramp = GainRamp(1)
    ramp.ramp(to: 0, over: 10)
    let down = gains(&ramp, frames: 5)
    #expect(abs(down[4] - 0.5) < 1e-6)
    ramp.ramp(to: 1, over: 5)
    let up = gains(&ramp, frames: 6)
    for (k, expected) in [Float(0.6), 0.7, 0.8, 0.9, 1, 1].enumerated() {
      #expect(abs(up[k] - expected) < 1e-6, "frame \(k)")
    }
    #expect(up[4] == 1)
  }

  @Test func aSettledGainOfOneLeavesSamplesUntouched() {
    var ramp = GainRamp()
    var samples: [Float] = [0.123_456_7, -0.999_999_9, .leastNonzeroMagnitude, 1e-30]
    let before = samples
    samples.withUnsafeMutableBufferPointer { ramp.apply(to: $0, channels: 2) }
    #expect(samples.map(\.bitPattern) == before.map(\.bitPattern))
  }

  @Test(arguments: [(-20.0, Float(0.1)), (0, 1), (-6.0206, 0.5), (20, 10), (-40, 0.01)])
  func linearGainOfCommonLevels(decibels: Double, expected: Float) {
    #expect(abs(linearGain(decibels: decibels) - expected) <= 1e-4 * max(1, expected))
  }

  @Test func zeroDecibelsIsUnity() {
    #expect(linearGain(decibels: 0) == 1)
  }

  /// Fades and the duck level may go far down; the gain must stay the right size and never turn
  /// negative (which would invert the signal and, below −140 dB, amplify it).
  @Test(arguments: [-60.0, -80, -96, -100, -120, -140])
  func linearGainIsAccurateDownToSilence(decibels: Double) {
    let expected = pow(10, decibels / 20)
    let gain = Double(linearGain(decibels: decibels))
    #expect(gain >= 0)
    #expect(abs(gain - expected) <= expected * 1e-3, "\(decibels) dB gave \(gain), not \(expected)")
  }
}
