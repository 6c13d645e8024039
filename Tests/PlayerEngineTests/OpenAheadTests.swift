import AudioCore
import AudioTestSupport
import Platform
import Testing

@testable import PlayerEngine

/// The next track opens while the decoder is still in the one before it, within
/// `Configuration.openAhead` of its end, so that the decoder goes straight on at the boundary: it
/// used to wait there for a thread to open the file, and on a loaded machine a queue played to
/// ALSA's null device spent more of its time waiting than decoding. Each test loads the first
/// track paused: the decoder fills the ring (65,536 frames of stereo) and stops, short of the
/// end of a track longer than that, so what it has done by then does not depend on the
/// machine's speed.
@Suite(.timeLimit(.minutes(2))) struct OpenAheadTests {
  /// 100,000 frames: the ring holds 65,536 of them, and the last 34,464 (0.78 s) are within the
  /// second of `openAhead` these tests set.
  let length = 100_000

  @Test func theNextTrackOpensBeforeTheDecoderReachesTheEndAndIsTakenThere() async throws {
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: ["a.wav": .counter(length), "b.wav": .counter(20_000, first: 1_000_000)],
      slowOpens: ["b.wav": .seconds(60)], configure: { $0.openAhead = .seconds(1) })
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: false)
    try #require(await rig.eventually { rig.library.slowOpensWaiting == 1 })
    let a = try #require(rig.library.decoders(for: "a.wav").first)
    #expect(a.framesDelivered < length, "b opens while a still has frames to decode")
    #expect(rig.engine.snapshot().lookahead == .undecided, "nothing of b is decoded yet")
    rig.library.releaseSlowOpens()
    rig.engine.play()
    try #require(await rig.endOfQueue(), "\(rig.state)")
    // Opened once, ahead, and played straight after a: gapless, in one output.
    #expect(rig.library.openedPaths == ["a.wav", "b.wav"])
    let expected = Array(0..<length) + Array(1_000_000..<1_020_000)
    #expect(difference(counterFrames(rig.output()), expected) == nil)
    #expect(rig.devices.opened.count == 1)
    #expect(rig.heard == [rig.track("a.wav"), rig.track("b.wav")])
  }

  @Test func aTrackFarFromItsEndOpensNothingAhead() async throws {
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: ["a.wav": .counter(length), "b.wav": .counter(20_000, first: 1_000_000)],
      configure: { $0.openAhead = .milliseconds(100) })
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: false)
    // The ring is full: the decoder has stopped, 0.78 s from a's end.
    try #require(await rig.eventually { rig.engine.ringIsFull })
    #expect(rig.library.openedPaths == ["a.wav"])
    rig.engine.play()
    try #require(await rig.endOfQueue(), "\(rig.state)")
    #expect(rig.library.openedPaths == ["a.wav", "b.wav"])
  }

  /// A stream (no length) would connect early: what follows it opens at its end, as before.
  @Test func whatFollowsATrackOfUnknownLengthOpensOnlyAtItsEnd() async throws {
    var stream = ToneDecoder.Configuration.counter(length)
    stream.reportsLength = false
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: ["a.wav": stream, "b.wav": .counter(20_000, first: 1_000_000)],
      configure: { $0.openAhead = .seconds(60) })
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: false)
    try #require(await rig.eventually { rig.engine.ringIsFull })
    #expect(rig.library.openedPaths == ["a.wav"])
    rig.engine.play()
    try #require(await rig.endOfQueue(), "\(rig.state)")
    #expect(rig.library.openedPaths == ["a.wav", "b.wav"])
    #expect(rig.heard == [rig.track("a.wav"), rig.track("b.wav")])
  }

  /// What follows may change while the next track opens (an edit of the queue): at the
  /// boundary the track that follows then is opened, and the one opened ahead let go.
  @Test func anEditOfTheQueueMeanwhileOpensWhatFollowsAtTheBoundary() async throws {
    let library = ToneLibrary([
      "a.wav": .counter(length), "b.wav": .counter(20_000, first: 1_000_000),
      "c.wav": .counter(10_000, first: 2_000_000),
    ])
    let devices = FakeDevices()
    var configuration = AudioEngine.Configuration(
      deviceName: "fake",
      openDecoder: { path throws(DecodeError) in try library.open(path) },
      openOutput: { name, format in try devices.open(name, format) })
    configuration.fadeIn = .zero
    configuration.openAhead = .seconds(1)
    let a = QueuedTrack(id: 0, path: "a.wav")
    let b = QueuedTrack(id: 1, path: "b.wav")
    let c = QueuedTrack(id: 2, path: "c.wav")
    let next = Locked<[Int: QueuedTrack]>([0: b])
    let engine = AudioEngine(configuration: configuration) { track in
      next.withLock { $0[track.id] }
    }
    defer { engine.shutdown() }
    engine.load(a, playing: false)
    try #require(await eventually { library.openedPaths == ["a.wav", "b.wav"] })
    next.withLock { $0 = [0: c] }
    engine.play()
    try #require(await eventually { engine.snapshot().state == .stopped })
    #expect(library.openedPaths == ["a.wav", "b.wav", "c.wav"])
    #expect(library.decoders(for: "b.wav").first?.framesDelivered == 0, "b was let go")
    let output = try #require(devices.opened.first)
    let expected = Array(0..<length) + Array(2_000_000..<2_010_000)
    #expect(difference(counterFrames(output), expected) == nil)
  }
}

extension AudioEngine {
  /// The decoder has filled the ring and waits for room.
  var ringIsFull: Bool { ring.writableCount < ring.capacity / 4 }
}
