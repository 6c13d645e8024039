import AudioCore
import AudioTestSupport
import Platform
import PlayerEngine
import Synchronization
import Testing

/// A seek back in the last moments of a track, on a deep device (a sound server's 2 s, a
/// Bluetooth headset): the decoder has moved on to the next track while the device still plays
/// this one. The seek goes to the track heard, the snapshot stays on it, and the next track is
/// announced once, when it is heard.
@Suite(.timeLimit(.minutes(1))) struct SeekNearEndTests {
  /// A second held in the device: after a seek, nothing is heard for that long.
  let held = 44_100

  @Test func aSeekBackFromTheNextTrackDecodedStaysInTheTrackHeard() async throws {
    let outputs = ServerOutputs(
      FakeOutput.Options(pacing: .realTime(speed: 2), latencyFrames: held))
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: ["a.wav": .counter(44_100 * 3), "b.wav": .counter(44_100 * 3, first: 1_000_000)]
    ) { configuration in
      configuration.openOutput = { name, format in outputs.open(name, format) }
    }
    defer { rig.shutdown() }
    let a = rig.track("a.wav")
    let b = rig.track("b.wav")
    rig.start("a.wav")
    try #require(await rig.eventually { rig.heard == [a] }, "\(rig.state)")

    rig.engine.seek(to: 2.9)
    let output = try #require(outputs.last)
    let seekedAt = output.framesWritten
    // The decoder is in b, and b's first frames are in the device; a is still heard.
    try #require(
      await rig.eventually {
        rig.engine.snapshot().lookahead == .next(b)
          && output.framesWritten >= seekedAt + cd.frames(in: 0.3)
      }, "\(rig.state)")
    try #require(rig.engine.snapshot().track == a, "\(rig.state)")

    // Parked for the seek, the device says it has played everything it was given (as
    // PulseAudio's does before its stream has really started): b's first frames among them.
    outputs.overstatesWhatWasHeard(true)
    rig.engine.seek(to: 1)
    outputs.overstatesWhatWasHeard(false)
    let seekedBackAt = output.framesWritten

    let now = rig.engine.snapshot()
    #expect(now.track == a, "\(rig.state)")
    #expect(abs(now.position - 1) < 0.05, "at \(now.position)")
    #expect(now.duration == 3)
    // Nothing heard of b yet, and nothing said of it.
    try await Task.sleep(for: .milliseconds(200))
    #expect(rig.heard == [a], "\(rig.state)")
    #expect(rig.engine.snapshot().track == a)
    // a plays on from 1 s, then b is heard, and said once.
    try #require(await rig.eventually { rig.heard.count >= 2 }, "\(rig.state)")
    try await Task.sleep(for: .milliseconds(200))
    #expect(rig.heard == [a, b], "\(rig.state)")
    let after = counterFrames(output, fromFrame: seekedBackAt)
    #expect(after.first == 44_100, "a went on from \(String(describing: after.first))")
  }
}

/// Outputs like a sound server's: deep, and on request saying they have played all they were
/// given (PulseAudio's ALSA device answers 0 for its delay before its stream has really
/// started).
final class ServerOutputs: Sendable {
  private let options: FakeOutput.Options
  private let opened = Locked<[FakeOutput]>([])
  private let overstating = Atomic<Bool>(false)

  init(_ options: FakeOutput.Options) { self.options = options }

  func open(_ name: String, _ format: PCMFormat) -> any AudioOutput {
    let fake = FakeOutput(format: format, deviceName: name, options: options)
    opened.withLock { $0.append(fake) }
    return ServerOutput(fake, of: self)
  }

  /// The last output opened.
  var last: FakeOutput? { opened.withLock { $0.last } }

  func overstatesWhatWasHeard(_ on: Bool) { overstating.store(on, ordering: .releasing) }

  /// Render thread: whether the delay reads 0 now.
  var isOverstating: Bool { overstating.load(ordering: .acquiring) }
}

/// A `FakeOutput` whose delay reads 0 while its maker says so.
final class ServerOutput: AudioOutput, @unchecked Sendable {
  let fake: FakeOutput
  let outputs: ServerOutputs
  init(_ fake: FakeOutput, of outputs: ServerOutputs) {
    self.fake = fake
    self.outputs = outputs
  }
  var format: PCMFormat { fake.format }
  var deviceName: String { fake.deviceName }
  func write(_ samples: UnsafeBufferPointer<Float>, wakingOn wakeFD: Int32) -> OutputWriteResult {
    fake.write(samples, wakingOn: wakeFD)
  }
  func delayFrames() -> Int { outputs.isOverstating ? 0 : fake.delayFrames() }
  func isRunning() -> Bool { fake.isRunning() }
  func rewind(frames: Int) -> Int { fake.rewind(frames: frames) }
  func discard() { fake.discard() }
  func prepare() { fake.prepare() }
  func drain() { fake.drain() }
}
