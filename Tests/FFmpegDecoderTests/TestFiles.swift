import AudioCore
import CSndFile
import Glibc
import Platform
import Testing

@testable import FFmpegDecoder

/// A temporary folder of sound files made for one test with the ffmpeg command and libsndfile;
/// removed with it.
final class TestFiles {
  let folder: String = {
    var template = Array("/tmp/hark-ffmpeg-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()

  deinit { _ = system("rm -rf '\(folder)'") }

  /// Runs `ffmpeg -v error -y <arguments>` and waits for it; whether it succeeded.
  @discardableResult
  func ffmpeg(_ arguments: [String]) -> Bool {
    run(["ffmpeg", "-nostdin", "-v", "error", "-y"] + arguments) == 0
  }

  /// `seconds` of a 440 Hz sine at `rate`, in `channels` channels, encoded with `codec`
  /// (ffmpeg's output options) into `name`; its path.
  func tone(
    _ name: String, _ codec: [String], seconds: Double = 2, rate: Int = 44_100, channels: Int = 2,
    metadata: [String: String] = [:]
  ) throws -> String {
    let path = folder + "/" + name
    var arguments = [
      "-f", "lavfi", "-i", "sine=f=440:d=\(seconds):r=\(rate)", "-ac", String(channels),
    ]
    arguments += codec
    for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
      arguments += ["-metadata", "\(key)=\(value)"]
    }
    arguments.append(path)
    try #require(ffmpeg(arguments), "ffmpeg could not make \(name) (is ffmpeg installed?)")
    return path
  }

  /// `frames` frames of a 440 Hz sine at 44.1 kHz stereo (the left a little louder than the
  /// right, so that swapped channels show) written as 16-bit WAV by libsndfile; its path.
  func wav(_ name: String, frames: Int = 88_200) throws -> String {
    let path = folder + "/" + name
    var info = SF_INFO()
    info.samplerate = 44_100
    info.channels = 2
    info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
    let file = try #require(sf_open(path, Int32(SFM_WRITE), &info), "cannot write \(name)")
    var samples = [Float](repeating: 0, count: frames * 2)
    for i in 0..<frames {
      let v = Float(0.5 * sin(2 * Double.pi * 440 * Double(i) / 44_100))
      samples[2 * i] = v
      samples[2 * i + 1] = v * 0.5
    }
    _ = sf_writef_float(file, samples, sf_count_t(frames))
    sf_close(file)
    return path
  }

  /// Every sample of a file read with libsndfile, as floats.
  func samplesBySndFile(_ path: String) throws -> [Float] {
    var info = SF_INFO()
    let file = try #require(sf_open(path, Int32(SFM_READ), &info), "libsndfile cannot read \(path)")
    defer { sf_close(file) }
    var samples = [Float](repeating: 0, count: Int(info.frames) * Int(info.channels))
    let n = sf_readf_float(file, &samples, info.frames)
    return Array(samples.prefix(Int(n) * Int(info.channels)))
  }

  /// A file of `bytes` bytes: the first `bytes` of `path`.
  func cut(_ path: String, to bytes: Int, as name: String) -> String {
    let cut = folder + "/" + name
    _ = system("head -c \(bytes) '\(path)' > '\(cut)'")
    return cut
  }

  /// An executable shell script named `name` with `body`; its path. Written by a shell of its
  /// own: a descriptor of this process open on it, inherited by a child another test spawns
  /// meanwhile, would make running it fail with ETXTBSY.
  func script(_ name: String, _ body: String) -> String {
    let path = folder + "/" + name
    let status = run([
      "/bin/sh", "-c", "printf '#!/bin/sh\\n%s\\n' \"$1\" > \"$2\" && chmod +x \"$2\"", "sh",
      body, path,
    ])
    precondition(status == 0, "cannot write \(path)")
    return path
  }
}

/// The size of the file at `path`, in bytes.
func size(_ path: String) -> Int {
  var st = stat()
  return stat(path, &st) == 0 ? Int(st.st_size) : 0
}

/// Runs `arguments` (the first found on PATH) with stdin from /dev/null and waits; its exit
/// status, or -1 when it could not start or a signal ended it.
func run(_ arguments: [String]) -> Int32 {
  guard let pid = try? spawn(arguments[0], Array(arguments.dropFirst())),
    case .exited(let status) = waitForChild(pid)
  else { return -1 }
  return status
}

/// Reads `file` to its end in reads of 4096 frames; the samples and the error that ended it.
func readAll(_ file: FFmpegFile, reads: Int = .max) -> (samples: [Float], error: DecodeError?) {
  var buffer = [Float](repeating: 0, count: 4_096 * file.format.channels)
  var samples: [Float] = []
  var count = 0
  while count < reads {
    count += 1
    do throws(DecodeError) {
      let n = try buffer.withUnsafeMutableBufferPointer { b throws(DecodeError) in
        try file.read(into: b)
      }
      if n == 0 { return (samples, nil) }
      samples += buffer[0..<(n * file.format.channels)]
    } catch {
      return (samples, error)
    }
  }
  return (samples, nil)
}

/// The largest difference between two runs of samples of the same length (infinity when the
/// lengths differ).
func largestDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Float {
  guard a.count == b.count else { return .infinity }
  return zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
}

/// Whether the process `pid` is gone and reaped: waitpid finds no such child.
func isReaped(_ pid: pid_t) -> Bool {
  var status: Int32 = 0
  return waitpid(pid, &status, WNOHANG) < 0 && errno == ECHILD
}

/// The monotonic clock, in seconds.
func now() -> Double {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A file's text (/proc's too, which stat says is empty); nil when it cannot be opened.
func fileText(_ path: String) -> String? {
  guard let f = fopen(path, "r") else { return nil }
  defer { fclose(f) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 4_096)
  while true {
    let n = fread(&chunk, 1, chunk.count, f)
    if n <= 0 { break }
    bytes += chunk[..<n]
  }
  return String(decoding: bytes, as: UTF8.self)
}
