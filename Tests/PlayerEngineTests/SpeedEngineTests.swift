import AudioCore
import AudioTestSupport
import Testing

@testable import PlayerEngine

/// The speed control in the engine (TimeStretchTests checks the stretch itself, its pitch and
/// length): a track at 2× is heard in half its time, its position and length stay the file's,
/// a change of speed goes on from the frame heard, and tracks join without a gap at any speed,
/// each at its own.
@Suite struct SpeedEngineTests {
  /// A 441 Hz sine (a whole number of periods a second, so that tracks join in phase).
  static func tone(_ seconds: Double) -> ToneDecoder.Configuration {
    ToneDecoder.Configuration(
      frames: cd.frames(in: seconds), signal: .sine(hertz: 441, amplitude: 0.5))
  }

  /// The frames of `samples` (stereo) from the first sound to the last, and the longest run of
  /// silent frames between them.
  static func soundAndLongestGap(_ samples: [Float]) -> (frames: Int, gap: Int) {
    let loud = stride(from: 0, to: samples.count - 1, by: 2).map {
      max(abs(samples[$0]), abs(samples[$0 + 1])) > 1e-3
    }
    guard let first = loud.firstIndex(of: true), let last = loud.lastIndex(of: true) else {
      return (0, 0)
    }
    var gap = 0
    var run = 0
    for isLoud in loud[first...last] {
      run = isLoud ? 0 : run + 1
      gap = max(gap, run)
    }
    return (last - first + 1, gap)
  }

  @Test func aTrackAtTwiceTheSpeedIsHeardInHalfItsTimeAndKeepsItsLength() async throws {
    let rig = EngineRig(
      queue: ["talk.wav"], tracks: ["talk.wav": Self.tone(4)], rates: ["talk.wav": 2])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("talk.wav"), playing: true)
    #expect(rig.engine.snapshot().duration == 4)
    #expect(rig.engine.snapshot().rate == 2)
    try #require(await rig.endOfQueue(), "\(rig.state)")
    let (heard, gap) = Self.soundAndLongestGap(try #require(rig.output()).recordedSamples())
    #expect(abs(heard - cd.frames(in: 2)) < cd.frames(in: 0.05), "4 s at 2× made \(heard) frames")
    #expect(gap < cd.frames(in: 0.001), "a silence of \(gap) frames inside the track")
  }

  @Test func tracksJoinWithoutAGapEachAtItsOwnSpeed() async throws {
    // Two spoken tracks at 2×, then music at 1×: 0.5 + 0.5 + 1 s heard, one device, no gap.
    let rig = EngineRig(
      queue: ["1.wav", "2.wav", "song.wav"],
      tracks: ["1.wav": Self.tone(1), "2.wav": Self.tone(1), "song.wav": Self.tone(1)],
      rates: ["1.wav": 2, "2.wav": 2])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("1.wav"), playing: true)
    try #require(await rig.endOfQueue(), "\(rig.state)")
    #expect(rig.devices.opened.count == 1, "the output was opened again between tracks")
    let (heard, gap) = Self.soundAndLongestGap(try #require(rig.output()).recordedSamples())
    #expect(abs(heard - cd.frames(in: 2)) < cd.frames(in: 0.05), "made \(heard) frames")
    #expect(gap < cd.frames(in: 0.001), "a gap of \(gap) frames between tracks")
  }

  @Test func thePositionIsTheFilesAndAChangeOfSpeedGoesOnFromIt() async throws {
    let rig = EngineRig(
      queue: ["talk.wav"], tracks: ["talk.wav": Self.tone(20)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1)), rates: ["talk.wav": 2])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("talk.wav"), playing: true)
    try #require(await rig.eventually { rig.framesWritten >= cd.frames(in: 1) })
    // A second heard at 2× is two of the file (the fake device holds nothing: heard = written).
    let written = Double(rig.framesWritten) / 44_100
    let atTwice = rig.engine.snapshot()
    #expect(atTwice.rate == 2)
    #expect(
      abs(atTwice.position - 2 * written) < 0.2,
      "\(written) s heard at 2×, the position says \(atTwice.position)")

    rig.engine.setRate(1)
    let atOnce = rig.engine.snapshot()
    #expect(atOnce.rate == 1)
    #expect(abs(atOnce.position - atTwice.position) < 0.2, "the speed change moved the place")
    let from = (frames: rig.framesWritten, position: atOnce.position)
    try #require(await rig.eventually { rig.framesWritten >= from.frames + cd.frames(in: 1) })
    let later = rig.engine.snapshot().position
    let heard = Double(rig.framesWritten - from.frames) / 44_100
    #expect(
      abs(later - from.position - heard) < 0.2,
      "\(heard) s heard at 1×, the position went from \(from.position) to \(later)")
    #expect(rig.engine.snapshot().duration == 20)
  }
}

/// Every start of the sound fades in (AudioEngine.Configuration.fadeIn, 5 ms): after a pause,
/// and after a seek, whose new place would otherwise start at full level, a click.
@Suite struct FadeInTests {
  /// The gains of the `frames` frames of `output`'s recording from `start` (a counter track
  /// whose frame f is counter frame `first + f`).
  static func gains(_ output: FakeOutput, from start: Int, frames: Int, first: Int) -> [Float] {
    let samples = output.recordedSamples()
    return (start..<min(start + frames, samples.count / 2)).map {
      samples[2 * $0] / ToneDecoder.counterValue(frame: first + $0 - start, channel: 0)
    }
  }

  @Test func aSeekWhilePlayingFadesInAtItsNewPlace() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(44_100 * 30)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1), latencyFrames: 4_410),
      configure: { $0.fadeIn = .milliseconds(5) })
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.eventually { rig.framesWritten >= 8_820 })
    rig.engine.seek(to: 20)
    let output = try #require(rig.output())
    let seekedAt = try #require(discardFrame(output, first: true))
    try #require(await rig.eventually { rig.framesWritten >= seekedAt + 4_410 })
    let gains = Self.gains(output, from: seekedAt, frames: fadeOutFrames + 10, first: 882_000)
    #expect(
      gains.first.map { $0 < 0.1 } == true, "the new place starts at gain \(gains.first ?? -1)")
    #expect(zip(gains, gains.dropFirst()).allSatisfy { $0 <= $1 + 1e-4 }, "not a fade-in: \(gains)")
    #expect(gains.last.map { abs($0 - 1) < 1e-4 } == true)
  }
}
