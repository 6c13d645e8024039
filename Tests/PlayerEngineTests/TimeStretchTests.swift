import AudioCore
import Glibc
import Testing

@testable import PlayerEngine

/// The speed control's stretcher (SoundTouch): the output is as long as the speed says, keeps
/// its pitch, gains no silences, keeps channels apart, forgets everything at a reset, and says
/// where in the input it is. Needs libsoundtouch1, which scripts/packages.sh installs.
@Suite struct TimeStretchTests {
  // MARK: Length, pitch, silences

  @Test(arguments: [50, 150, 200, 300], [44_100, 48_000])
  func monoSpeechKeepsItsPitchAndLengthAndGainsNoSilence(hundredths: Int, sampleRate: Int)
    throws
  {
    let rate = PlaybackRate(clampingHundredths: hundredths)
    let input = Buzz().samples(seconds: 5, sampleRate: sampleRate)
    let output = try stretched(input, channels: 1, sampleRate: sampleRate, rate: rate)
    try expectSpeed(
      rate, input: input, output: output, channels: 1, sampleRate: sampleRate, fundamentals: [140])
  }

  /// Left a 140 Hz voice, right a 220 Hz one speaking between the left's syllables: each side
  /// keeps its own pitch, so the channels were not mixed or swapped.
  @Test(arguments: [50, 150, 200, 300], [44_100, 48_000])
  func stereoKeepsEachChannelItsOwn(hundredths: Int, sampleRate: Int) throws {
    let rate = PlaybackRate(clampingHundredths: hundredths)
    let left = Buzz().samples(seconds: 5, sampleRate: sampleRate)
    let right = Buzz(fundamental: 220, offset: 0.125).samples(seconds: 5, sampleRate: sampleRate)
    let input = interleave(left, right)
    let output = try stretched(input, channels: 2, sampleRate: sampleRate, rate: rate)
    try expectSpeed(
      rate, input: input, output: output, channels: 2, sampleRate: sampleRate,
      fundamentals: [140, 220])
  }

  func expectSpeed(
    _ rate: PlaybackRate, input: [Float], output: [Float], channels: Int, sampleRate: Int,
    fundamentals: [Double]
  ) throws {
    let inFrames = input.count / channels
    let outFrames = output.count / channels
    // As long as the speed says, within 10 ms.
    let expected = Double(inFrames) / rate.value
    #expect(
      abs(Double(outFrames) - expected) <= 0.010 * Double(sampleRate),
      "\(rate): \(outFrames) frames for \(inFrames)")
    for (c, f0) in fundamentals.enumerated() {
      let heard = try #require(
        fundamental(of: channel(c, of: output, channels: channels), sampleRate: sampleRate))
      #expect(abs(heard - f0) / f0 < 0.02, "\(rate), channel \(c): \(heard) Hz for \(f0) Hz")
    }
    // No silence longer than the input's own, sped up, and 20 ms.
    let inSilence = Double(longestSilence(input, channels: channels)) / Double(sampleRate)
    let outSilence = Double(longestSilence(output, channels: channels)) / Double(sampleRate)
    #expect(
      outSilence <= inSilence / rate.value + 0.020,
      "\(rate): a silence of \(outSilence) s where the input's longest was \(inSilence) s")
  }

  /// Slowed down, each syllable starts once: SoundTouch's own settings (90 ms sequences at
  /// 0.5×) repeat a syllable's start after a gap, 36 starts for these 20 syllables.
  @Test(arguments: [50, 75])
  func slowedSyllablesStartOnce(hundredths: Int) throws {
    let input = Buzz().samples(seconds: 5, sampleRate: 44_100)
    #expect(starts(input, sampleRate: 44_100) == 20)
    let rate = PlaybackRate(clampingHundredths: hundredths)
    let output = try stretched(input, channels: 1, sampleRate: 44_100, rate: rate)
    #expect(starts(output, sampleRate: 44_100) == 20)
  }

  /// The pitch check can fail: speeding up by dropping every other frame doubles the pitch.
  @Test func droppingFramesFailsThePitchCheck() throws {
    let input = Buzz().samples(seconds: 5, sampleRate: 44_100)
    let halved = stride(from: 0, to: input.count, by: 2).map { input[$0] }
    let heard = try #require(fundamental(of: halved, sampleRate: 44_100))
    #expect(abs(heard - 140) / 140 > 0.02)
    #expect(abs(heard - 280) / 280 < 0.02, "\(heard) Hz")
    let original = try #require(fundamental(of: input, sampleRate: 44_100))
    #expect(abs(original - 140) < 0.5, "\(original) Hz")
  }

  // MARK: Where the output is in the input

  /// On noise every stretch of output is a copy of some input: found by correlation, it lies
  /// within 40 ms × |rate − 1| + 20 ms of the file of where `sourcePosition` puts it, at fixed
  /// speeds and across changes of speed, and the end covers the input exactly.
  @Test(arguments: [[50], [150], [200], [300], [100, 200, 75], [300, 50, 125]])
  func sourcePositionSaysWhereTheOutputCameFrom(speeds: [Int]) throws {
    let sampleRate = 44_100
    let channels = 1
    let input = noise(frames: sampleRate * 4)
    let stretcher = try TimeStretcher(
      channels: channels, sampleRate: sampleRate,
      rate: PlaybackRate(clampingHundredths: speeds[0]))
    var output: [Float] = []
    var marks: [(output: Int, source: Double, rate: Double)] = []
    var buffer = [Float](repeating: 0, count: 1_000)
    func receiveAll() {
      buffer.withUnsafeMutableBufferPointer { b in
        while true {
          let source = stretcher.sourcePosition
          let rate = stretcher.outputRate
          let n = stretcher.receive(into: b)
          if n == 0 { return }
          marks.append((output.count, source, rate))
          output.append(contentsOf: b[0..<n])
        }
      }
    }
    let part = input.count / speeds.count
    input.withUnsafeBufferPointer { all in
      for (i, speed) in speeds.enumerated() {
        stretcher.rate = PlaybackRate(clampingHundredths: speed)
        var at = i * part
        while at < (i + 1) * part {
          let n = min(4_096, (i + 1) * part - at)
          stretcher.put(UnsafeBufferPointer(rebasing: all[at..<(at + n)]))
          receiveAll()
          at += n
        }
      }
    }
    stretcher.finish()
    receiveAll()
    #expect(stretcher.availableFrames == 0)
    #expect(abs(stretcher.sourcePosition - Double(input.count)) < 1)

    let worst = speeds.map { abs(Double($0) / 100 - 1) }.max() ?? 0
    let bound = (0.040 * worst + 0.020) * Double(sampleRate)
    let window = 220
    var checked = 0
    var lags: [Double] = []
    var mark = 0
    for k in stride(from: sampleRate / 5, to: output.count - window, by: sampleRate / 20) {
      while mark + 1 < marks.count && marks[mark + 1].output <= k { mark += 1 }
      let m = marks[mark]
      let said = m.source + Double(k - m.output) * m.rate
      let from = max(0, Int(said - bound) - window)
      let to = min(input.count - window, Int(said + bound) + window)
      guard from < to,
        let found = bestMatch(output, at: k, count: window, in: input, from: from, to: to)
      else { continue }
      checked += 1
      lags.append((Double(found) - said) / Double(sampleRate))
      #expect(
        abs(Double(found) - said) <= bound,
        "speeds \(speeds): output frame \(k) came from input \(found), said \(said)")
    }
    // Most windows are plain copies (the rest straddle a join).
    #expect(checked >= (output.count - sampleRate / 5) / (sampleRate / 20) * 3 / 5)
    func ms(_ seconds: Double) -> Double { (seconds * 10_000).rounded() / 10 }
    let mean = ms(lags.reduce(0, +) / Double(max(1, lags.count)))
    let (low, high) = (ms(lags.min() ?? 0), ms(lags.max() ?? 0))
    print("speeds \(speeds): sound from sourcePosition \(low)…\(high) ms, \(mean) ms on average")
  }

  // MARK: Ends, seeks, the library

  @Test func aResetForgetsEverythingBeforeIt() throws {
    let sampleRate = 44_100
    for hundredths in [50, 200, 300] {
      let rate = PlaybackRate(clampingHundredths: hundredths)
      let stretcher = try TimeStretcher(channels: 2, sampleRate: sampleRate, rate: rate)
      let loud = interleave(
        Buzz().samples(seconds: 1, sampleRate: sampleRate),
        Buzz(fundamental: 220).samples(seconds: 1, sampleRate: sampleRate))
      var before = 0
      loud.withUnsafeBufferPointer { stretcher.process($0) { before += $0.count } }
      #expect(before > 0)
      stretcher.reset()
      #expect(stretcher.framesIn == 0 && stretcher.framesOut == 0)
      #expect(stretcher.sourcePosition == 0 && stretcher.availableFrames == 0)
      // After the reset, a second of silence: not one sample of the buzz may come out.
      let quiet = [Float](repeating: 0, count: sampleRate * 2)
      var after: [Float] = []
      quiet.withUnsafeBufferPointer { stretcher.process($0) { after.append(contentsOf: $0) } }
      stretcher.finish { after.append(contentsOf: $0) }
      #expect(after.count / 2 == Int((Double(sampleRate) / rate.value).rounded()))
      #expect(after.allSatisfy { $0 == 0 }, "\(rate): the old sound came out after the reset")
    }
  }

  @Test func afterTheEndTheNextInputIsANewStream() throws {
    let rate = PlaybackRate(clampingHundredths: 150)
    let stretcher = try TimeStretcher(channels: 1, sampleRate: 48_000, rate: rate)
    let input = Buzz().samples(seconds: 1, sampleRate: 48_000)
    for _ in 0..<2 {
      var frames = 0
      input.withUnsafeBufferPointer { stretcher.process($0) { frames += $0.count } }
      stretcher.finish { frames += $0.count }
      #expect(frames == 32_000)
      #expect(stretcher.framesIn == 48_000 && stretcher.framesOut == 32_000)
      #expect(stretcher.sourcePosition == 48_000)
    }
    // Nothing put: nothing comes out, and finishing twice is harmless.
    stretcher.reset()
    var frames = 0
    stretcher.finish { frames += $0.count }
    stretcher.finish { frames += $0.count }
    #expect(frames == 0)
  }

  @Test func soundTouchIsHereAndRefusesWhatItCannotDo() throws {
    #expect(TimeStretcher.load() == nil)
    #expect(TimeStretcher.libraryVersion?.first?.isNumber == true)
    #expect(throws: TimeStretchError.self) {
      _ = try TimeStretcher(channels: 17, sampleRate: 44_100, rate: .normal)
    }
    do {
      _ = try TimeStretcher(channels: 17, sampleRate: 44_100, rate: .normal)
    } catch {
      #expect(error.kind == .formatRefused)
      #expect(error.reason == "SoundTouch cannot play 17 channels at other speeds (16 at most)")
    }
  }

  @Test func aMissingLibraryIsSaidPlainly() {
    #expect(TimeStretcher.check(soname: "libSoundTouchDll.so.1") == nil)
    #expect(
      TimeStretcher.check(soname: "libSoundTouchDll.so.0")
        == "speeds other than 1× need SoundTouch, which cannot be loaded; install libsoundtouch1 "
        + "(libSoundTouchDll.so.0: cannot open shared object file: No such file or directory)")
    #expect(
      TimeStretcher.check(soname: "libm.so.6")
        == "speeds other than 1× need SoundTouch, which cannot be loaded; install libsoundtouch1 "
        + "(libm.so.6 has no soundtouch_createInstance)")
  }
}

// MARK: Test sounds

// The sounds and measures below are written for a debug build and the sanitizers' builds: loops
// over raw pointers and plain arithmetic, which the compiler makes straight code of even
// unoptimized (a range's iterator, a buffer's checked subscript or Double(Float) is a call
// each). Written with those, the speed tests took 18 s of the unit tests' CPU and 44 s of
// ThreadSanitizer's, most of it here.

/// A speech-like test sound: a buzz (harmonics to 4 kHz at 1/n, as a glottal pulse train's
/// fall), in syllables four a second: 180 ms voiced under a rounded envelope, then 70 ms of
/// silence; `offset` seconds later than the first syllable at 0.
struct Buzz {
  var fundamental = 140.0
  var offset = 0.0

  func samples(seconds: Double, sampleRate: Int) -> [Float] {
    let frames = Int(seconds * Double(sampleRate))
    let harmonics = Int(4_000 / fundamental)
    var wave = [Double](repeating: 0, count: frames)
    var peak = 0.0
    wave.withUnsafeMutableBufferPointer { buffer in
      guard let w = buffer.baseAddress else { return }
      for h in 1...harmonics {
        // sin(step·i + phase) by turning a phasor a step at a time (it strays from the sine by
        // about 1e-10 over a minute of samples).
        let step = 2 * Double.pi * fundamental * Double(h) / Double(sampleRate)
        let phase = Double(h * h) * 0.3
        let gain = 1 / Double(h)
        let (turnCos, turnSin) = (cos(step), sin(step))
        var (c, s) = (cos(phase), sin(phase))
        var i = 0
        while i < frames {
          w[i] += s * gain
          (c, s) = (c * turnCos - s * turnSin, s * turnCos + c * turnSin)
          i += 1
        }
      }
      var i = 0
      while i < frames {
        peak = max(peak, abs(w[i]))
        i += 1
      }
    }
    if peak == 0 { peak = 1 }
    var out = [Float](repeating: 0, count: frames)
    out.withUnsafeMutableBufferPointer { buffer in
      guard let o = buffer.baseAddress else { return }
      wave.withUnsafeBufferPointer { wave in
        guard let w = wave.baseAddress else { return }
        var i = 0
        while i < frames {
          let t = Double(i) / Double(sampleRate) - offset
          let p = t - (t / 0.25).rounded(.down) * 0.25
          let envelope = p < 0.18 ? sin(Double.pi * p / 0.18).squareRoot() : 0
          o[i] = Float(0.5 * w[i] / peak * envelope)
          i += 1
        }
      }
    }
    return out
  }
}

/// Uniform noise at ±0.2, the same every run.
func noise(frames: Int) -> [Float] {
  var state: UInt64 = 0x9E37_79B9_7F4A_7C15
  var out = [Float](repeating: 0, count: frames)
  out.withUnsafeMutableBufferPointer { buffer in
    guard let o = buffer.baseAddress else { return }
    var i = 0
    while i < frames {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      o[i] = Float(Double(state >> 11) / Double(1 << 53) - 0.5) * 0.4
      i += 1
    }
  }
  return out
}

func interleave(_ left: [Float], _ right: [Float]) -> [Float] {
  var out = [Float](repeating: 0, count: left.count * 2)
  out.withUnsafeMutableBufferPointer { buffer in
    left.withUnsafeBufferPointer { l in
      right.withUnsafeBufferPointer { r in
        guard let o = buffer.baseAddress, let a = l.baseAddress, let b = r.baseAddress
        else { return }
        var i = 0
        while i < l.count {
          o[2 * i] = a[i]
          o[2 * i + 1] = b[i]
          i += 1
        }
      }
    }
  }
  return out
}

func channel(_ c: Int, of samples: [Float], channels: Int) -> [Float] {
  let frames = samples.count / channels
  var out = [Float](repeating: 0, count: frames)
  out.withUnsafeMutableBufferPointer { buffer in
    samples.withUnsafeBufferPointer { all in
      guard let o = buffer.baseAddress, let x = all.baseAddress else { return }
      var f = 0
      while f < frames {
        o[f] = x[f * channels + c]
        f += 1
      }
    }
  }
  return out
}

/// Runs `input` through a stretcher in 4096-frame pieces, as a decoder hands them, and its tail.
func stretched(_ input: [Float], channels: Int, sampleRate: Int, rate: PlaybackRate) throws
  -> [Float]
{
  let stretcher = try TimeStretcher(channels: channels, sampleRate: sampleRate, rate: rate)
  var out: [Float] = []
  out.reserveCapacity(Int(Double(input.count) / rate.value) + 8_192 * channels)
  input.withUnsafeBufferPointer { all in
    var at = 0
    while at < all.count {
      let n = min(4_096 * channels, all.count - at)
      stretcher.process(UnsafeBufferPointer(rebasing: all[at..<(at + n)])) {
        out.append(contentsOf: $0)
      }
      at += n
    }
  }
  stretcher.finish { out.append(contentsOf: $0) }
  return out
}

// MARK: Measures

/// Σ a[i]·b[i] for i < n, each product and the sum in Double, as Double(a[i]) * Double(b[i]).
func dot(_ a: UnsafePointer<Double>, _ b: UnsafePointer<Double>, _ n: Int) -> Double {
  var sum = 0.0
  var i = 0
  while i < n {
    sum += a[i] * b[i]
    i += 1
  }
  return sum
}

/// The fundamental in Hz (median over voiced 30 ms windows, 100 ms apart): each window's
/// autocorrelation peak between 70 and 400 Hz, the shortest lag within 10 % of the highest peak
/// (so that a period's multiple is not taken for it), refined between samples. Nil with no voice.
func fundamental(of samples: [Float], sampleRate: Int) -> Double? {
  let w = sampleRate * 30 / 1_000
  let lo = sampleRate / 400
  let hi = sampleRate / 70
  var found: [Double] = []
  var wide = [Double](repeating: 0, count: samples.count)
  wide.withUnsafeMutableBufferPointer { buffer in
    samples.withUnsafeBufferPointer { all in
      guard let o = buffer.baseAddress, let x = all.baseAddress else { return }
      var i = 0
      while i < all.count {
        o[i] = Double(x[i])
        i += 1
      }
    }
  }
  wide.withUnsafeBufferPointer { buffer in
    guard let x = buffer.baseAddress else { return }
    var ac = [Double](repeating: 0, count: hi + 2)
    for start in stride(from: 0, to: buffer.count - w - hi - 2, by: sampleRate / 10) {
      let energy = dot(x + start, x + start, w)
      guard energy / Double(w) > 0.05 * 0.05 else { continue }
      ac.withUnsafeMutableBufferPointer { ac in
        var lag = lo - 1
        while lag <= hi + 1 {
          ac[lag] = dot(x + start, x + start + lag, w) / energy
          lag += 1
        }
      }
      let best = (lo...hi).map { ac[$0] }.max() ?? 0
      guard best > 0.5,
        let k = (lo...hi).first(where: {
          ac[$0] >= 0.9 * best && ac[$0] >= ac[$0 - 1] && ac[$0] >= ac[$0 + 1]
        })
      else { continue }
      let (a, b, c) = (ac[k - 1], ac[k], ac[k + 1])
      let d = a - 2 * b + c == 0 ? 0 : 0.5 * (a - c) / (a - 2 * b + c)
      found.append(Double(sampleRate) / (Double(k) + d))
    }
  }
  guard !found.isEmpty else { return nil }
  return found.sorted()[found.count / 2]
}

/// The longest run of frames, not at either end, where every channel is below 0.01.
func longestSilence(_ samples: [Float], channels: Int) -> Int {
  var longest = 0
  var run = 0
  var seenSound = false
  samples.withUnsafeBufferPointer { all in
    guard let x = all.baseAddress else { return }
    let frames = all.count / channels
    var f = 0
    while f < frames {
      var quiet = true
      var c = 0
      while c < channels {
        if abs(x[f * channels + c]) >= 0.01 { quiet = false }
        c += 1
      }
      if quiet {
        run += 1
      } else {
        if seenSound { longest = max(longest, run) }
        seenSound = true
        run = 0
      }
      f += 1
    }
  }
  return longest
}

/// How many sounds start after at least 20 ms below 0.02 (or at the beginning).
func starts(_ samples: [Float], sampleRate: Int) -> Int {
  var count = 0
  var quiet = Int.max
  samples.withUnsafeBufferPointer { all in
    guard let x = all.baseAddress else { return }
    var i = 0
    while i < all.count {
      if abs(x[i]) > 0.02 {
        if quiet > sampleRate / 50 { count += 1 }
        quiet = 0
      } else if quiet < Int.max {
        quiet += 1
      }
      i += 1
    }
  }
  return count
}

/// Where in `input[from..<to]` the `count` samples of `output` at `at` are copied from: the
/// offset of the highest correlation, if it is a copy (normalized correlation above 0.8).
func bestMatch(_ output: [Float], at: Int, count: Int, in input: [Float], from: Int, to: Int)
  -> Int?
{
  output.withUnsafeBufferPointer { output in
    input.withUnsafeBufferPointer { input in
      guard let outputStart = output.baseAddress, let x = input.baseAddress else { return nil }
      let o = outputStart + at
      var e = 0.0
      var ex = 0.0
      var i = 0
      while i < count {
        e += Double(o[i]) * Double(o[i])
        i += 1
      }
      var best = -Double.infinity
      var position = from
      var s = from
      while s < to {
        let candidate = x + s
        var sum: Float = 0
        i = 0
        while i < count {
          sum += o[i] * candidate[i]
          i += 1
        }
        if Double(sum) > best {
          best = Double(sum)
          position = s
        }
        s += 1
      }
      i = 0
      while i < count {
        ex += Double(x[position + i]) * Double(x[position + i])
        i += 1
      }
      return best / (e * ex).squareRoot() > 0.8 ? position : nil
    }
  }
}
