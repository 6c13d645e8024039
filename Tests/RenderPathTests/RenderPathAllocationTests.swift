import AudioCore
import AudioTestSupport
import CMallocCounter
import Glibc
import Testing

@testable import PlayerEngine

/// docs/HACKING.md ("The audio path") and the engine's contract: the render thread allocates nothing once it runs.
/// A test-only C target replaces malloc and its kin for this test binary and counts the calls
/// made on the render thread while it plays, is paused and resumed, is ducked, fades out for the
/// sleep timer, seeks, and crosses a gapless track change.
/// Not in a build under a sanitizer, which owns malloc (the counter is absent there).
@Suite(.serialized, .enabled(if: cmc_available() != 0, "malloc belongs to the sanitizer here"))
struct RenderPathAllocationTests {
  @Test func theRenderThreadAllocatesNothingWhilePlaying() async throws {
    let cd = PCMFormat(sampleRate: 44_100, channels: 2)
    let library = ToneLibrary([
      "a.wav": ToneDecoder.Configuration(
        format: cd, frames: 44_100 * 20, signal: .sine(hertz: 440, amplitude: 0.5)),
      "b.wav": ToneDecoder.Configuration(
        format: cd, frames: 44_100 * 20, signal: .sine(hertz: 660, amplitude: 0.5)),
    ])
    let devices = FakeDevices(FakeOutput.Options(pacing: .realTime(speed: 4), latencyFrames: 1_024))
    let configuration = AudioEngine.Configuration(
      deviceName: "fake",
      openDecoder: { path throws(DecodeError) in try library.open(path) },
      openOutput: { name, format in try devices.open(name, format) })
    let a = QueuedTrack(id: 0, path: "a.wav")
    let b = QueuedTrack(id: 1, path: "b.wav")
    let engine = AudioEngine(configuration: configuration) { $0.id == 0 ? b : nil }
    defer { engine.shutdown() }
    let render = try #require(engine.renderThreadID)

    // Warm up: every path the render thread takes, once (first calls may create metadata).
    engine.load(a, playing: true)
    try await Task.sleep(for: .milliseconds(150))
    engine.setDucked(true)
    try await Task.sleep(for: .milliseconds(100))
    engine.setDucked(false)
    engine.fadeOut(over: 1)
    try await Task.sleep(for: .milliseconds(60))
    engine.pause()
    engine.endFade()
    engine.play()
    try await Task.sleep(for: .milliseconds(100))

    cmc_watch(render)
    defer { cmc_unwatch() }
    for _ in 0..<3 {
      engine.setDucked(true)
      try await Task.sleep(for: .milliseconds(80))
      engine.setDucked(false)
      // The sleep timer's fade: a ramp of seconds, then its end after the pause.
      engine.fadeOut(over: 1)
      try await Task.sleep(for: .milliseconds(60))
      engine.pause()
      engine.endFade()
      engine.play()
      engine.seek(to: 2)
      try await Task.sleep(for: .milliseconds(80))
    }
    // Near the end of a: the ring crosses into b without a gap.
    engine.seek(to: 19.5)
    let output = try #require(devices.opened.first)
    let before = output.framesWritten
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    while engine.snapshot().track != b && clock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    try await Task.sleep(for: .milliseconds(100))
    #expect(engine.snapshot().track == b, "the test meant to cross into b")
    #expect(output.framesWritten > before + 4_410, "the render thread did not play meanwhile")
    let count = cmc_count()
    #expect(count == 0, "the render thread allocated \(count) times")
  }

  /// The counter works: a thread that allocates is caught.
  @Test func theCounterSeesAnAllocation() {
    cmc_watch(pthread_self())
    let p = malloc(64)
    let n = cmc_count()
    cmc_unwatch()
    free(p)
    #expect(n >= 1)
  }
}
