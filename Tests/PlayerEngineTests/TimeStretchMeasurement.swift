import AudioCore
import Glibc
import Platform
import Testing

@testable import PlayerEngine

/// What the speed control costs, for docs/PERFORMANCE.md ("Speed"): the stretcher's CPU time
/// per minute of 44.1 kHz stereo at each speed (the least of three runs, this thread's CPU
/// clock, the input made beforehand), and the pitch it keeps; Rubber Band's command (R2, its
/// default, and R3, `--fine`) on the same minute beside it when `rubberband` is on PATH. Only
/// when asked, as it takes a minute and its figures are no assertion:
///
///     HARK_MEASURE_SPEED=1 swift test --skip-build --filter TimeStretchMeasurement
@Suite(.enabled(if: getenv("HARK_MEASURE_SPEED") != nil, "set HARK_MEASURE_SPEED=1 to measure"))
struct TimeStretchMeasurement {
  static let sampleRate = 44_100
  static let speeds = [50, 100, 150, 200, 300]

  @Test func cpuAndPitchPerMinute() throws {
    let sampleRate = Self.sampleRate
    // A minute of the tests' two voices: 140 Hz on the left, 220 Hz on the right between them.
    let input = interleave(
      Buzz().samples(seconds: 60, sampleRate: sampleRate),
      Buzz(fundamental: 220, offset: 0.125).samples(seconds: 60, sampleRate: sampleRate))
    print("SoundTouch \(TimeStretcher.libraryVersion ?? "?"), 60 s of 44.1 kHz stereo:")
    print("| speed | CPU s per minute of input | pitch error left, right |")
    for hundredths in Self.speeds {
      let rate = PlaybackRate(clampingHundredths: hundredths)
      var best = Double.infinity
      var output: [Float] = []
      for _ in 0..<3 {
        let (cpu, out) = try timedStretch(input, rate: rate)
        best = min(best, cpu)
        output = out
      }
      print("| \(rate) | \(rounded(best, 3)) | \(pitchErrors(output)) |")
    }

    guard let rubberband = onPath("rubberband") else {
      print("rubberband is not installed: no comparison (apt-get install rubberband-cli)")
      return
    }
    let folder = try #require(mkdtemp(strdup("/tmp/hark-speed-XXXXXX")).map { String(cString: $0) })
    defer {
      for name in ["in.wav", "out.wav"] { unlink(folder + "/" + name) }
      rmdir(folder)
    }
    try writeFloatWAV(input, channels: 2, sampleRate: sampleRate, to: folder + "/in.wav")
    print("Rubber Band's command (\(rubberband)) on the same minute, as a 32-bit float WAV:")
    print("| speed | engine | CPU s per minute of input | pitch error left, right |")
    for hundredths in Self.speeds where hundredths != 100 {
      let rate = PlaybackRate(clampingHundredths: hundredths)
      for (engine, flag) in [("R2", "--fast"), ("R3", "--fine")] {
        var best = Double.infinity
        for _ in 0..<3 {
          let before = childrenCPU()
          let run = try runHelper(
            rubberband, ["-q", flag, "-T\(rate.value)", folder + "/in.wav", folder + "/out.wav"],
            timeout: .seconds(600))
          try #require(run.status == 0, "rubberband: \(run.errorLine)")
          best = min(best, childrenCPU() - before)
        }
        let output = try readWAV(folder + "/out.wav")
        print("| \(rate) | \(engine) | \(rounded(best, 3)) | \(pitchErrors(output)) |")
      }
    }
  }

  /// Seconds of this thread's CPU time to stretch `input`, and the output.
  func timedStretch(_ input: [Float], rate: PlaybackRate) throws -> (Double, [Float]) {
    let stretcher = try TimeStretcher(channels: 2, sampleRate: Self.sampleRate, rate: rate)
    var output = [Float](repeating: 0, count: Int(Double(input.count) / rate.value) + 16_384)
    var written = 0
    let start = threadCPU()
    input.withUnsafeBufferPointer { all in
      output.withUnsafeMutableBufferPointer { out in
        func receiveAll() {
          while true {
            let free = UnsafeMutableBufferPointer(rebasing: out[written...])
            let n = stretcher.receive(into: free)
            if n == 0 { return }
            written += n * 2
          }
        }
        var at = 0
        while at < all.count {
          let n = min(4_096 * 2, all.count - at)
          stretcher.put(UnsafeBufferPointer(rebasing: all[at..<(at + n)]))
          receiveAll()
          at += n
        }
        stretcher.finish()
        receiveAll()
      }
    }
    let cpu = threadCPU() - start
    return (cpu, Array(output[0..<written]))
  }

  /// "0.01 %, 0.02 %": how far each channel's fundamental is from its voice's.
  func pitchErrors(_ stereo: [Float]) -> String {
    [(0, 140.0), (1, 220.0)].map { c, f0 in
      guard
        let f = fundamental(of: channel(c, of: stereo, channels: 2), sampleRate: Self.sampleRate)
      else { return "no voice" }
      return "\(rounded(abs(f - f0) / f0 * 100, 2)) %"
    }.joined(separator: ", ")
  }
}

private func rounded(_ x: Double, _ places: Int) -> Double {
  var scale = 1.0
  for _ in 0..<places { scale *= 10 }
  return (x * scale).rounded() / scale
}

private func threadCPU() -> Double {
  var t = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
  return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// User and system seconds of the children reaped so far.
private func childrenCPU() -> Double {
  var u = rusage()
  getrusage(RUSAGE_CHILDREN.rawValue, &u)
  return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6
    + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
}

private func onPath(_ name: String) -> String? {
  let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
  for folder in path.split(separator: ":") {
    let candidate = "\(folder)/\(name)"
    if access(candidate, X_OK) == 0 { return candidate }
  }
  return nil
}

/// Writes interleaved samples as a 32-bit float WAV (format 3).
private func writeFloatWAV(_ samples: [Float], channels: Int, sampleRate: Int, to path: String)
  throws
{
  var bytes: [UInt8] = []
  func le(_ v: Int, _ n: Int) { for i in 0..<n { bytes.append(UInt8((v >> (8 * i)) & 0xFF)) } }
  let data = samples.count * 4
  bytes += Array("RIFF".utf8)
  le(36 + data, 4)
  bytes += Array("WAVEfmt ".utf8)
  le(16, 4)
  le(3, 2)
  le(channels, 2)
  le(sampleRate, 4)
  le(sampleRate * channels * 4, 4)
  le(channels * 4, 2)
  le(32, 2)
  bytes += Array("data".utf8)
  le(data, 4)
  let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  try #require(fd >= 0, "cannot write \(path)")
  defer { close(fd) }
  _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
  _ = samples.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

/// The samples of a WAV of 32-bit floats or 16-bit integers (plain or extensible).
private func readWAV(_ path: String) throws -> [Float] {
  let fd = open(path, O_RDONLY)
  try #require(fd >= 0, "cannot read \(path)")
  defer { close(fd) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 1 << 20)
  while true {
    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if n <= 0 { break }
    bytes += chunk[0..<n]
  }
  func le(_ at: Int, _ n: Int) -> Int {
    (0..<n).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
  }
  var at = 12
  var bits = 0
  while at + 8 <= bytes.count {
    let id = String(decoding: bytes[at..<(at + 4)], as: UTF8.self)
    let size = le(at + 4, 4)
    if id == "fmt " { bits = le(at + 8 + 14, 2) }
    if id == "data" {
      let body = at + 8
      let end = min(bytes.count, body + size)
      if bits == 32 {
        return stride(from: body, to: end - 3, by: 4).map {
          Float(bitPattern: UInt32(le($0, 4)))
        }
      }
      try #require(bits == 16, "a WAV of \(bits)-bit samples")
      return stride(from: body, to: end - 1, by: 2).map {
        Float(Int16(truncatingIfNeeded: le($0, 2))) / 32_768
      }
    }
    at += 8 + size + size % 2
  }
  Issue.record("\(path) has no data")
  return []
}
