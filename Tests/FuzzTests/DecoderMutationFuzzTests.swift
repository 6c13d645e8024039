import AudioCore
import Glibc
import Platform
import SndFileDecoder
import Synchronization
import Testing

@testable import PlayerCore  // SplitMix64, the queue's seeded generator

/// Bounded mutation fuzzing of the decoder hark plays with, as a hostile file would feed it:
/// `SoundFile`, that is libsndfile with libFLAC, libvorbis, libopus and mpg123 behind it, fed the
/// seeds of Corpus/decoders (tiny WAV, AIFF, FLAC, Ogg Vorbis, Opus and MP3 files;
/// scripts/make-fuzz-seeds says how each was made) mutated by the shared loop, with format-aware
/// mutations on top (AudioFileMutations.swift). Each input is written to a file and played the way
/// the engine plays one (AudioEngine's decode thread): opened by path, its format and length read,
/// read to the end in chunks of varied sizes, then seeks to the start, the middle, the last frame
/// and beyond, each followed by reads; after a failed open, read or seek the decoder is dropped
/// and, for the next seek, the file opened again, as the engine does. The decoder contract
/// (AudioCore/Contracts.swift) is checked on every input, see `Play`.
///
/// The decoding happens in a worker: this test binary started again (posix_spawn) to run this
/// test with HARK_FUZZ_DECODER_WORKER set. A crash inside libsndfile or the codecs behind it is
/// then a failure of this test, with the worker's stack printed by the Swift runtime and the
/// input kept, not the end of every test in the process; and the fuzzing goes on from the next
/// input, so one run shows every crash it meets (up to `maxCrashes`). An input the worker is
/// still decoding after `hangSeconds` is a hang: the thread decoding it is sent SIGABRT, so that
/// the stack printed shows where it hung. Inputs that crashed, hung or broke the contract are
/// kept in /tmp/hark-fuzz-decoders/ (and the last input tried in HARK_FUZZ_LAST.decoders, as
/// for the parsers); minimised, they go in Corpus/decoders/regressions, named with their
/// format's extension (libsndfile goes by it when the content says nothing), and are replayed
/// first. HARK_FUZZ_TRACE=1 prints every decoder call, to replay one.
///
/// Decoding a file costs far more than a parser call: HARK_FUZZ_ITERATIONS / `divisor` inputs.
///
/// Corpus/decoders/regressions, each a seed with a byte or two changed (Ogg CRCs made right):
/// - vorbis-damaged-codebooks-seek-crash.ogg: libsndfile (1.2.0 and its master) ignores a Vorbis
///   setup header that fails to parse; the file opens, decodes to nothing, and a seek that skips
///   packets calls vorbis_synthesis_trackonly on a decoder never set up: SIGSEGV.
/// - opus-trailing-byte-far-seek-hang.opus (a byte after the last page: the length unknown),
///   opus-bad-rate-page-gap-seek-to-start-hang.opus: ogg_opus_null_read casts the frames still
///   to skip to int, and spins for ever when that is negative: a seek 2^31 frames ahead, or a
///   seek to the start once bad granule arithmetic has made the position huge.
/// - opus-seek-lands-short.opus: sf_seek stops short of the frame asked for, without an error;
///   SoundFile took it for done (fixed: it throws).
@Suite(.serialized) struct DecoderMutationFuzzTests {
  /// HARK_FUZZ_ITERATIONS / 3 inputs. At 150,000 (scripts/test), 50,000: 35 s on this
  /// project's 2-core machine in a debug build, beside the parser suite (0.7 ms an input), plus
  /// at most `maxCrashes` new workers (a second or two each, 13 s for a hang). The default
  /// 4,000 gives 1,333 in about a second.
  static let divisor = 3
  /// The slowest input seen took 0.6 s (a debug build, the machine loaded three times over by
  /// other work): 10 s is a hang.
  static let hangSeconds = 10
  /// Crashes and hangs after which the run stops (each costs a new worker, a hang 10 s more).
  static let maxCrashes = 5
  static let kept = "/tmp/hark-fuzz-decoders"

  @Test(.timeLimit(.minutes(10))) func soundFile() {
    if let folder = environment("HARK_FUZZ_DECODER_WORKER") {
      work(in: folder, from: Int(environment("HARK_FUZZ_DECODER_START") ?? "") ?? 0)
    } else {
      supervise()
    }
  }

  // MARK: The worker

  /// Runs the loop, from its input number `start` on (those before are made, not tried). Before
  /// each decoder call it writes the input's number, extension and seed, and the call, to
  /// `folder`/progress.
  private func work(in folder: String, from start: Int) {
    Worker.watch(hangMarker: folder + "/hung")
    let progress = open(folder + "/progress", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let reports = open(folder + "/broken", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    defer {
      close(progress)
      close(reports)
    }
    // Told by the supervisor, which outlives a crash of this worker.
    func report(_ text: String) {
      let bytes = Array((text + "\n\n\n").utf8)
      _ = Glibc.write(reports, bytes, bytes.count)
    }
    var stats = Play.Stats()
    var broken = 0
    var index = -1
    let started = Self.now()
    FuzzLoop.run(
      "decoders", iterations: FuzzLoop.iterations / Self.divisor, mutate: AudioMutations.mutate
    ) { input, origin in
      index += 1
      guard index >= start else { return }
      // The extension of the seed it came from: libsndfile guesses by it when the bytes do not
      // say (an MP3 without an ID3 tag or a frame sync at its start, raw formats).
      let ext = origin.lastIndex(of: ".").map { String(origin[origin.index(after: $0)...]) }
      let path = folder + "/input." + (ext ?? "bin")
      guard Self.write(input, to: path) else {
        report("cannot write \(path)")
        return
      }
      // Each call is noted before it is made, for the report of a crash or a hang.
      var play = Play(path: path, seed: fnv1a(input)) { call in
        let record = Array("\(index) \(ext ?? "bin") \(origin) \(call)\n".utf8)
        _ = ftruncate(progress, 0)
        _ = pwrite(progress, record, record.count, 0)
      }
      let began = Self.now()
      Worker.arm(seconds: Self.hangSeconds)
      play.run()
      Worker.disarm()
      stats.add(play, nanoseconds: Self.now() - began)
      guard !play.problems.isEmpty else { return }
      broken += 1
      report(
        """
        the decoder broke its contract on a \(input.count)-byte input from \(origin), kept in \
        \(Self.keep(input, ext ?? "bin")):
        \(play.problems.prefix(5).joined(separator: "\n"))
        """)
    }
    let seconds = Int(Double(Self.now() - started) / 1e9)
    print("DecoderMutationFuzzTests: \(stats) in \(seconds) s; \(broken) broke the contract")
    close(open(folder + "/done", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600))
  }

  // MARK: The supervisor

  /// Starts workers until one gets to the end, or `maxCrashes` crashed or hung; then says what
  /// broke the contract.
  private func supervise() {
    let folder = makeTemporaryFolder()
    defer { _ = system("rm -rf '\(folder)'") }
    let began = Self.now()
    let crashes = runWorkers(folder)
    let seconds = Double(Self.now() - began) / 1e9
    print(
      "DecoderMutationFuzzTests: \(crashes) crashes and hangs, \(Int(seconds)) s in all "
        + "(\(crashes + 1) workers)")
    let text = String(decoding: Corpus.read(folder + "/broken") ?? [], as: UTF8.self)
    let reports = text.split(separator: "\n\n\n").filter { !$0.isEmpty }
    for r in reports.prefix(20) { Issue.record(Comment(rawValue: String(r))) }
    if reports.count > 20 { Issue.record("and \(reports.count - 20) more inputs broke it") }
  }

  /// The crashes and hangs.
  private func runWorkers(_ folder: String) -> Int {
    var start = 0
    var crashes = 0
    while true {
      let outcome = Worker.run(folder: folder, from: start, hangSeconds: Self.hangSeconds)
      switch outcome {
      case .finished(let status):
        if status != 0 {
          Issue.record("the decoder worker ended with status \(status) (see its output above)")
        }
        return crashes
      case .failedToStart:
        Issue.record("cannot start the decoder worker")
        return crashes
      case .crashed, .hung:
        crashes += 1
        let (index, ext, origin, call) = Worker.progress(folder)
        let input = Corpus.read(folder + "/input." + ext) ?? []
        let what =
          if case .crashed(let how) = outcome {
            "crashed (\(how))"
          } else {
            "hung (still decoding after \(Self.hangSeconds) s)"
          }
        Issue.record(
          """
          the decoder \(what) in \(call), on input \(index) (\(input.count) bytes, from \
          \(origin)), kept in \(Self.keep(input, ext)): its stack is above. HARK_FUZZ_TRACE=1 \
          with the input in Corpus/decoders/regressions shows the calls that led there.
          """)
        guard crashes < Self.maxCrashes else {
          Issue.record("stopped after \(crashes) crashes and hangs")
          return crashes
        }
        start = index + 1
      }
    }
  }

  static func now() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
  }

  static func write(_ bytes: [UInt8], to path: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count
  }

  /// Saves an input that crashed, hung or broke the contract, named by its hash: the path.
  static func keep(_ bytes: [UInt8], _ ext: String) -> String {
    mkdir(kept, 0o755)
    let path = "\(kept)/\(String(fnv1a(bytes), radix: 16)).\(ext)"
    return write(bytes, to: path) ? path : "(not kept: cannot write \(path))"
  }
}

func fnv1a(_ bytes: [UInt8]) -> UInt64 {
  bytes.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
}

/// One input played as the engine plays a file, with the decoder contract checked at each call:
/// - `read` returns a count of whole frames, never negative, never more than the buffer holds,
///   and writes nothing past the buffer;
/// - a failure is a `DecodeError` with a reason in words and the path it was about;
/// - a decoder that says its length (`frameCount`) gives no more frames than that from any
///   position, give or take `tolerance`;
/// - the format is one a device could be asked for (channels and rate above 0).
/// What is read is bounded (`cap`), so that a lying header cannot keep an input going for long.
struct Play {
  let path: String
  private var rng: SplitMix64
  private(set) var problems: [String] = []
  private(set) var opened = false
  private(set) var capped = false
  private(set) var failures = 0
  private(set) var framesRead = 0

  /// With HARK_FUZZ_TRACE set, each call is printed before it is made (to replay a crash).
  static let trace = environment("HARK_FUZZ_TRACE") != nil

  /// Samples (frames times channels) read from one position before giving up on its end:
  /// 2^21, 22 s of 48 kHz stereo, over 4 minutes of the seeds' 8 kHz mono, while an input is at
  /// most 64 KiB; an input reads from nine positions at most. A legitimate file of that size can
  /// decode to more (Opus codes up to 120 ms in a packet of a byte or two), so reaching the cap
  /// is counted, not a failure; where the length is claimed, reading past it fails first.
  static let cap = 1 << 21
  /// Frames a decoder may give past the length it claimed: none. libsndfile clamps every read to
  /// the length it reports (sf_readf_float stops at SF_INFO.frames, for every format), and the
  /// engine trusts that length (a seek is clamped to frameCount - 1, the duration shown is
  /// frameCount): a frame past it would be a position past the end the user is shown.
  static let tolerance = 0
  /// The sizes of the buffers read into, in frames: a frame, odd sizes, the engine's chunk
  /// (2,048) and its four-chunk reads (8,192); never more samples than half the engine's ring.
  static let chunkFrames = [1, 2, 3, 7, 64, 100, 479, 1024, 2048, 2048, 4096, 8192, 8192]
  static let maxSamples = 1 << 16

  /// Told of each decoder call before it is made.
  private let onCall: (String) -> Void

  init(path: String, seed: UInt64, onCall: @escaping (String) -> Void = { _ in }) {
    self.path = path
    rng = SplitMix64(seed: seed)
    self.onCall = onCall
  }

  mutating func run() {
    guard var decoder = open() else { return }
    opened = true
    let claimed = decoder.frameCount
    if decoder.format.channels < 1 || decoder.format.sampleRate < 1 {
      problems.append("open: a format a device cannot take: \(decoder.format)")
      return
    }
    if let claimed, claimed < 1 { problems.append("open: frameCount \(claimed)") }
    // A few frames in, back to the start (the user restarts the track): a seek with decoded
    // audio still held (what libsndfile decoded of the first packet). Then from the start to
    // the end, as when a track plays through.
    let little = 1 + Int(rng.next() % 100)
    var restarted = read(decoder, from: 0, chunks: 1, frames: little).ended
    restarted = restarted && seek(decoder, to: 0)
    if !restarted {
      guard let again = open() else { return }
      decoder = again
    }
    let (first, ended) = read(decoder, from: 0, chunks: nil)
    // Seeks as the engine makes them (a seek clamped to frameCount - 1), and as it would without
    // the clamp, or with a length the header made up.
    let length = claimed ?? first
    var current: SoundFile? = ended ? decoder : nil
    var targets = [0, length / 2, max(0, length - 1), length, length + 1, length + 4096, 1 << 40]
    // In an order of their own each time: what a decoder went through before a seek matters.
    for i in targets.indices.reversed() { targets.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
    for target in targets {
      if current == nil {
        // Opened again, as the engine does after a failure; then, half the time, played a
        // little (the user seeks in a track that is playing), else sought at once (the engine
        // opens a track at a position).
        guard let again = open() else { return }
        decoder = again
        current = decoder
        if rng.next() % 2 == 0, !read(decoder, from: 0, chunks: 1).ended {
          current = nil
          continue
        }
      }
      guard seek(decoder, to: target) else {
        current = nil
        continue
      }
      let chunks = target == 0 ? nil : 1 + Int(rng.next() % 4)
      if !read(decoder, from: target, chunks: chunks).ended { current = nil }
    }
  }

  /// Whether the seek worked.
  private mutating func seek(_ decoder: SoundFile, to target: Int) -> Bool {
    call("seek(toFrame: \(target))")
    do throws(DecodeError) {
      try decoder.seek(toFrame: target)
      return true
    } catch {
      result("threw \(error)")
      check(error, "seek to \(target)")
      return false
    }
  }

  private func call(_ what: String) {
    onCall(what)
    if Self.trace { print("  " + what) }
  }

  private func result(_ what: @autoclosure () -> String) {
    if Self.trace { print("    " + what()) }
  }

  private mutating func open() -> SoundFile? {
    call("SoundFile(path:)")
    do throws(DecodeError) {
      let decoder = try SoundFile(path: path)
      result("\(decoder.format), frameCount \(String(describing: decoder.frameCount))")
      return decoder
    } catch {
      result("threw \(error)")
      check(error, "open")
      return nil
    }
  }

  /// Reads from `start` until the end (0), a failure, `chunks` reads or the cap, into buffers
  /// of `size` frames (by default, sizes from `chunkFrames`). The frames read, and whether it
  /// stopped without a failure.
  private mutating func read(
    _ decoder: SoundFile, from start: Int, chunks: Int?, frames size: Int? = nil
  ) -> (frames: Int, ended: Bool) {
    let channels = decoder.format.channels
    let canary = Float(bitPattern: 0x7FA5_A5A5)
    var total = 0
    var reads = 0
    while chunks.map({ reads < $0 }) ?? true {
      reads += 1
      let frames = size ?? Self.chunkFrames[Int(rng.next() % UInt64(Self.chunkFrames.count))]
      var samples = max(channels, min(frames * channels, Self.maxSamples / channels * channels))
      // Now and then a buffer that is not a whole number of frames.
      if rng.next() % 8 == 0 { samples += Int(rng.next() % UInt64(channels)) }
      var buffer = [Float](repeating: 0, count: samples + 16)
      for i in samples..<buffer.count { buffer[i] = canary }
      call("read(into: \(samples) samples) at frame \(start + total)")
      let n: Int
      do throws(DecodeError) {
        n = try buffer.withUnsafeMutableBufferPointer { b throws(DecodeError) in
          try decoder.read(into: UnsafeMutableBufferPointer(rebasing: b[0..<samples]))
        }
      } catch {
        result("threw \(error)")
        check(error, "read at frame \(start + total)")
        return (total, false)
      }
      let at = "read of \(samples / channels) frames at frame \(start + total)"
      if n < 0 { problems.append("\(at): returned \(n)") }
      if n > samples / channels {
        problems.append("\(at): returned \(n), more than the buffer holds")
      }
      if buffer[samples...].contains(where: { $0.bitPattern != canary.bitPattern }) {
        problems.append("\(at): wrote past the end of the buffer")
      }
      guard n > 0 else { return (total, true) }
      total += n
      framesRead += n
      if let claimed = decoder.frameCount, start + total > claimed + Self.tolerance {
        problems.append(
          "\(at): frame \(start + total) reached, past the \(claimed) the file claims")
        return (total, false)
      }
      if total * channels >= Self.cap {
        capped = true
        return (total, false)
      }
    }
    return (total, true)
  }

  private mutating func check(_ error: DecodeError, _ during: String) {
    failures += 1
    if error.reason.isEmpty { problems.append("\(during): an error without a reason: \(error)") }
    if error.path != path || !error.description.contains(path) {
      problems.append("\(during): an error that does not name the file: \(error)")
    }
  }

  struct Stats: CustomStringConvertible {
    var inputs = 0
    var opened = 0
    var failures = 0
    var capped = 0
    var frames = 0
    var slowest: Int64 = 0

    mutating func add(_ play: Play, nanoseconds: Int64) {
      inputs += 1
      slowest = max(slowest, nanoseconds)
      opened += play.opened ? 1 : 0
      failures += play.failures
      capped += play.capped ? 1 : 0
      frames += play.framesRead
    }

    var description: String {
      "\(inputs) inputs, \(opened) opened, \(failures) errors thrown, \(frames) frames read, "
        + "\(capped) stopped at the cap, the slowest \(slowest / 1_000_000) ms"
    }
  }
}

/// A worker: this test binary, started to run DecoderMutationFuzzTests/soundFile() alone with
/// HARK_FUZZ_DECODER_WORKER set, its output the test's own.
enum Worker {
  enum Outcome: Equatable {
    /// It tried every input, and exited with this status (LeakSanitizer's is 23).
    case finished(status: Int32)
    /// Killed by a signal, or ended before the last input (AddressSanitizer ends a process it
    /// catches faulting with status 1).
    case crashed(String)
    case hung
    case failedToStart
  }

  static func run(folder: String, from start: Int, hangSeconds: Int) -> Outcome {
    let progress = folder + "/progress"
    unlink(progress)
    var environment: [String] = []
    var e = environ
    while let entry = e.pointee {
      let s = String(cString: entry)
      if !s.hasPrefix("HARK_FUZZ_DECODER_") { environment.append(s) }
      e += 1
    }
    environment += ["HARK_FUZZ_DECODER_WORKER=\(folder)", "HARK_FUZZ_DECODER_START=\(start)"]
    let arguments = [
      "--testing-library", "swift-testing", "--quiet", "--filter", "DecoderMutationFuzzTests",
    ]
    // Its standard error through a pipe, to leave out mpg123's notes on damaged MP3s (libsndfile
    // does not quiet it): tens of thousands of lines a run, all of them expected.
    guard let ends = try? makePipe(nonBlockingRead: true) else { return .failedToStart }
    defer { close(ends.read) }
    // Signals as a fresh process has them (the test process blocks signals on its threads, and
    // the worker is to die of SIGABRT, and its runtime to catch it and print the stack). A
    // process group of its own, so that what it leaves behind goes with it: the runtime's
    // backtracer runs as a child process (swift-backtrace), which under AddressSanitizer can
    // stay, holding the test's output open, and `swift test` would wait for it for ever.
    let spawned = try? spawn(
      "/proc/self/exe", arguments, descriptors: [1: .parent(1), 2: .parent(ends.write)],
      detachment: .newProcessGroup, environment: environment)
    close(ends.write)
    guard let pid = spawned else { return .failedToStart }
    var errors = StandardError()
    // The worker ends itself on an input that hangs (`watch`); should it not, it is killed once
    // the same input has been going for 15 s more.
    var last = Self.progress(folder).index
    var since = DecoderMutationFuzzTests.now()
    var killed = false
    var status: Int32 = 0
    while waitpid(pid, &status, WNOHANG) == 0 {
      usleep(50_000)
      errors.pass(from: ends.read)
      let now = DecoderMutationFuzzTests.now()
      let index = Self.progress(folder).index
      if index != last {
        last = index
        since = now
      } else if !killed, now - since > Int64(hangSeconds + 15) * 1_000_000_000 {
        killed = true
        kill(pid, SIGKILL)
      }
    }
    kill(-pid, SIGKILL)
    errors.pass(from: ends.read, toTheEnd: true)
    let marked = unlink(folder + "/hung") == 0
    if killed || marked { return .hung }
    switch ProcessEnd(waitStatus: status) {
    case .signaled(let signal): return .crashed(String(cString: strsignal(signal)))
    case .exited(let code) where unlink(folder + "/done") == 0: return .finished(status: code)
    case .exited(let code): return .crashed("ended with status \(code) before the last input")
    }
  }

  /// The number, extension and seed of the input the worker tried last (-1 before the
  /// first), and the decoder call it made last.
  static func progress(_ folder: String) -> (index: Int, ext: String, origin: String, call: String)
  {
    let none = (-1, "bin", "", "")
    guard let bytes = Corpus.read(folder + "/progress") else { return none }
    let line = String(decoding: bytes, as: UTF8.self).trimmingSuffix("\n")
    let fields = line.split(separator: " ", maxSplits: 3)
    guard fields.count == 4, let index = Int(fields[0]) else { return none }
    return (index, String(fields[1]), String(fields[2]), String(fields[3]))
  }

  // MARK: In the worker

  private static let deadline = Atomic<Int64>(0)
  nonisolated(unsafe) private static var parent: pid_t = 0
  nonisolated(unsafe) private static var decoding = pthread_self()
  nonisolated(unsafe) private static var marker = ""

  /// Watches the calling thread, which decodes: past the deadline `arm` set, it writes
  /// `hangMarker` and sends that thread SIGABRT, so that the stack the runtime prints is the one
  /// that hangs, then ends the worker. Ends it too when the test process that started it has
  /// gone (killed by a time limit, say), instead of leaving a hung decoder spinning.
  static func watch(hangMarker: String) {
    parent = getppid()
    decoding = pthread_self()
    // The test's threads block signals; SIGABRT sent to this one would wait for ever.
    var abort = sigset_t()
    sigemptyset(&abort)
    sigaddset(&abort, SIGABRT)
    pthread_sigmask(SIG_UNBLOCK, &abort, nil)
    marker = hangMarker
    var thread = pthread_t()
    pthread_create(
      &thread, nil,
      { _ in
        while Worker.parent == getppid() {
          usleep(100_000)
          let d = Worker.deadline.load(ordering: .acquiring)
          if d != 0, DecoderMutationFuzzTests.now() > d {
            close(open(Worker.marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600))
            pthread_kill(Worker.decoding, SIGABRT)
            // The runtime prints the stack and returns from its handler: a signal sent from
            // outside, unlike a fault, does not come again, and the thread spins on.
            sleep(3)
            _exit(70)
          }
        }
        _exit(3)
      }, nil)
    pthread_detach(thread)
  }

  static func arm(seconds: Int) {
    deadline.store(
      DecoderMutationFuzzTests.now() + Int64(seconds) * 1_000_000_000, ordering: .releasing)
  }

  static func disarm() { deadline.store(0, ordering: .releasing) }
}

extension String {
  fileprivate func trimmingSuffix(_ suffix: String) -> String {
    hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
  }
}

/// The worker's standard error, passed on line by line, less mpg123's notes.
struct StandardError {
  private var pending: [UInt8] = []
  private var left = 0

  /// Reads what there is (all of it, to the end, once the worker is gone) and passes it on.
  mutating func pass(from fd: Int32, toTheEnd: Bool = false) {
    var buffer = [UInt8](repeating: 0, count: 65536)
    var idle = 0
    while true {
      let n = read(fd, &buffer, buffer.count)
      if n > 0 {
        pending += buffer[0..<n]
        idle = 0
      } else if n == 0 || !toTheEnd || idle >= 20 {
        break
      } else {
        // Not at its end yet: whatever the worker left behind still holds it, for a moment.
        idle += 1
        usleep(50_000)
      }
    }
    while let newline = pending.firstIndex(of: 0x0A) {
      let line = pending[...newline]
      pending.removeSubrange(...newline)
      if Self.isNoise(line) {
        left += 1
      } else {
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
      }
    }
    if toTheEnd {
      pending.append(0x0A)
      if pending.count > 1 { _ = pending.withUnsafeBytes { write(2, $0.baseAddress, $0.count) } }
      pending = []
      if left > 0 {
        let note = Array("(\(left) lines of mpg123's notes on damaged input left out)\n".utf8)
        _ = write(2, note, note.count)
      }
      left = 0
    }
  }

  /// "Note: Illegal Audio-MPEG-Header…", "Warning: Xing stream size off…",
  /// "[src/libmpg123/layer3.c:INT123_do_layer3():1771] error: part2_3_length…".
  private static func isNoise(_ line: ArraySlice<UInt8>) -> Bool {
    ["Note: ", "Warning: ", "[src/libmpg123/"].contains { line.starts(with: $0.utf8) }
  }
}
