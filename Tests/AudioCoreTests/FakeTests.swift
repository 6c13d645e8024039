import AudioCore
import AudioTestSupport
import Glibc
import Testing

/// The fakes the engine's tests rely on do what they say.
@Suite(.timeLimit(.minutes(2))) struct FakeTests {
  let stereo = PCMFormat(sampleRate: 44_100, channels: 2)

  private func write(_ output: FakeOutput, frames: Int, from first: Int = 0) -> OutputWriteResult {
    let samples = (first..<(first + frames)).flatMap { f in
      (0..<2).map { ToneDecoder.counterValue(frame: f, channel: $0) }
    }
    return samples.withUnsafeBufferPointer { output.write($0, wakingOn: -1) }
  }

  @Test func fakeOutputRecordsEveryFrameInOrder() {
    let output = FakeOutput(format: stereo)
    #expect(write(output, frames: 100) == .written(100))
    #expect(write(output, frames: 50, from: 100) == .written(50))
    #expect(output.framesWritten == 150)
    #expect(
      ToneDecoder.counterFrames(in: output.recordedSamples(), channels: 2) == Array(0..<150))
    #expect(
      ToneDecoder.counterFrames(in: output.recordedSamples(fromFrame: 140), channels: 2)
        == Array(140..<150))
    #expect(output.overflowSamples == 0)
  }

  @Test func fakeOutputHoldsItsLatencyUntilDiscardedOrDrained() {
    let output = FakeOutput(format: stereo, options: .init(latencyFrames: 256))
    _ = write(output, frames: 100)
    #expect(output.delayFrames() == 100)
    _ = write(output, frames: 900)
    #expect(output.delayFrames() == 256)
    #expect(output.heardFrames == 744)
    output.discard()
    output.prepare()
    #expect(output.delayFrames() == 0)
    #expect(output.framesDiscarded == 256)
    #expect(output.heardFrames == 744)
    _ = write(output, frames: 300)
    output.drain()
    #expect(output.heardFrames == 1044)
    #expect(
      output.calls == [
        .discard(atFrame: 1000, dropped: 256), .prepare(atFrame: 1000), .drain(atFrame: 1300),
      ])
    #expect(output.discardCount == 1)
    #expect(output.prepareCount == 1)
    #expect(output.drainCount == 1)
  }

  @Test func fakeOutputUnplugsAfterTheFramesGiven() {
    let output = FakeOutput(
      format: stereo, options: .init(latencyFrames: 10, faults: [.unplug(afterFrames: 300)]))
    #expect(write(output, frames: 256) == .written(256))
    #expect(write(output, frames: 256, from: 256) == .written(44))
    #expect(!output.isGone)
    #expect(write(output, frames: 212, from: 300) == .deviceGone(code: -ENODEV))
    #expect(output.isGone)
    #expect(write(output, frames: 1, from: 300) == .deviceGone(code: -ENODEV))
    #expect(output.framesWritten == 300)
    // What the device held is lost with it.
    #expect(output.heardFrames == 290)
  }

  @Test func fakeOutputUnderrunsEveryNthWrite() {
    let output = FakeOutput(format: stereo, options: .init(faults: [.underrun(every: 3)]))
    let results = (0..<7).map { write(output, frames: 10, from: $0 * 10) }
    #expect(results.map { $0 == .recovered } == [false, false, true, false, false, true, false])
    #expect(output.recoveredCount == 2)
    #expect(output.framesWritten == 50)
  }

  @Test func pacedFakeOutputTakesAsLongAsTheAudioLastsOverTheSpeed() {
    let output = FakeOutput(format: stereo, options: .init(pacing: .realTime(speed: 10)))
    let clock = ContinuousClock()
    let start = clock.now
    for i in 0..<20 { _ = write(output, frames: 441, from: i * 441) }  // 0.2 s of audio
    #expect(clock.now - start >= .milliseconds(18))
  }

  @Test func fakeOutputKeepsWhatFitsAndCountsTheRest() {
    let output = FakeOutput(format: stereo, options: .init(capacitySamples: 100))
    #expect(write(output, frames: 80) == .written(80))
    #expect(output.recordedSamples().count == 100)
    #expect(output.overflowSamples == 60)
  }

  @Test func toneDecoderCountsFramesAndChannels() throws {
    let decoder = ToneDecoder(
      .init(
        format: PCMFormat(sampleRate: 48_000, channels: 3), frames: 10,
        signal: .counter(first: 500)))
    var buffer = [Float](repeating: 0, count: 3 * 4)
    let n = try buffer.withUnsafeMutableBufferPointer { try decoder.read(into: $0) }
    #expect(n == 4)
    #expect(ToneDecoder.counterFrames(in: buffer, channels: 3) == [500, 501, 502, 503])
    #expect(ToneDecoder.counterFrame(of: buffer[5])?.channel == 2)
    try decoder.seek(toFrame: 8)
    let m = try buffer.withUnsafeMutableBufferPointer { try decoder.read(into: $0) }
    #expect(m == 2)
    #expect(ToneDecoder.counterFrames(in: Array(buffer[0..<6]), channels: 3) == [508, 509])
    #expect(try buffer.withUnsafeMutableBufferPointer { try decoder.read(into: $0) } == 0)
    #expect(decoder.framesDelivered == 6)
    #expect(decoder.frameCount == 10)
  }

  @Test func aScaledCounterSampleNamesNoFrame() {
    let value = ToneDecoder.counterValue(frame: 1234, channel: 1)
    #expect(ToneDecoder.counterFrame(of: value)?.frame == 1234)
    #expect(ToneDecoder.counterFrame(of: value * 0.1) == nil)
    #expect(ToneDecoder.counterFrames(in: [value, value], channels: 2) == [nil])
  }

  @Test func toneDecoderFailsMidwayWhenAsked() throws {
    let decoder = ToneDecoder(.init(path: "bad.flac", frames: 100, failAfterFrames: 30))
    var buffer = [Float](repeating: 0, count: 2 * 64)
    #expect(try buffer.withUnsafeMutableBufferPointer { try decoder.read(into: $0) } == 30)
    #expect(throws: DecodeError.self) {
      try buffer.withUnsafeMutableBufferPointer { try decoder.read(into: $0) }
    }
  }

  @Test func toneDecoderHonoursShortReadsAndRefusesToSeekWhenUnseekable() {
    let decoder = ToneDecoder(
      .init(frames: 100, isSeekable: false, reportsLength: false, maxFramesPerRead: 7))
    var buffer = [Float](repeating: 0, count: 2 * 64)
    #expect((try? buffer.withUnsafeMutableBufferPointer { try decoder.read(into: $0) }) == 7)
    #expect(decoder.frameCount == nil)
    #expect(throws: DecodeError.self) { try decoder.seek(toFrame: 3) }
  }

  @Test func toneLibraryOpensByPathAndFailsTheRest() throws {
    let library = ToneLibrary(
      ["a.wav": .init(frames: 10)], unreadable: ["b.flac": "not an audio file"])
    let a = try library.open("a.wav")
    #expect(a.configuration.path == "a.wav")
    #expect(
      throws: DecodeError(
        .unreadable, path: "b.flac", reason: "not an audio file", detail: "ToneLibrary")
    ) {
      try library.open("b.flac")
    }
    #expect(throws: DecodeError.self) { try library.open("c.ogg") }
    #expect(library.openedPaths == ["a.wav"])
    #expect(library.decoders(for: "a.wav").count == 1)
  }

  @Test func fakeDevicesHandOutOutputsAsPlanned() throws {
    let devices = FakeDevices(
      .init(latencyFrames: 5), perOpening: [1: .init(latencyFrames: 9)], failing: [2])
    let first = try devices.open("dev", stereo)
    let second = try devices.open("dev", PCMFormat(sampleRate: 8_000, channels: 1))
    #expect(throws: FakeDeviceError(deviceName: "dev")) { try devices.open("dev", stereo) }
    #expect(first.options.latencyFrames == 5)
    #expect(second.options.latencyFrames == 9)
    #expect(devices.opened.map(\.format.sampleRate) == [44_100, 8_000])
  }
}
