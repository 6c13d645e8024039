import AudioCore
import AudioTestSupport
import Glibc
import Synchronization
import Testing

@testable import PlayerEngine

/// The engine against `FakeOutput` and `ToneDecoder`: every frame is a counter, so each test can
/// say exactly which frames reached the device, in what order, and which were heard.
@Suite(.timeLimit(.minutes(2))) struct AudioEngineTests {
  /// 30 s at 44.1 kHz: paced tests play in real time, so a test held up for seconds on a busy
  /// machine still acts long before the track could end.
  let long = 1_323_000

  // MARK: Playing through

  @Test func playsATrackToItsEndThenSaysEndOfQueue() async throws {
    let rig = EngineRig(queue: ["a.wav"], tracks: ["a.wav": .counter(100_003)])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.endOfQueue(), "\(rig.state)")

    let output = try #require(rig.output())
    #expect(rig.devices.opened.count == 1)
    #expect(output.format == cd)
    #expect(difference(counterFrames(output), Array(0..<100_003)) == nil)
    #expect(output.calls == [.drain(atFrame: 100_003)])
    #expect(output.overflowSamples == 0)
    #expect(rig.events == [.endOfQueue])
    let snapshot = rig.engine.snapshot()
    #expect(snapshot.state == .stopped)
    #expect(snapshot.track == rig.track("a.wav"))
    #expect(snapshot.position == cd.seconds(100_003))
  }

  @Test func gaplessTracksFollowEachOtherInOneOutputWithoutADrainBetween() async throws {
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: [
        "a.wav": .counter(30_001, maxFramesPerRead: 1_000),
        "b.wav": .counter(20_000, first: 1_000_000),
      ])
    defer { rig.shutdown() }
    rig.start("a.wav")
    try #require(await rig.endOfQueue(), "\(rig.state)")

    #expect(rig.devices.opened.count == 1)
    let expected = Array(0..<30_001) + Array(1_000_000..<1_020_000)
    #expect(difference(counterFrames(rig.output()), expected) == nil)
    // The only drain is at the end of the queue; none between the tracks.
    #expect(rig.output()?.calls == [.drain(atFrame: 50_001)])
    #expect(rig.engine.snapshot().track == rig.track("b.wav"))
    #expect(rig.engine.snapshot().position == cd.seconds(20_000))
    #expect(rig.events == [.endOfQueue])
  }

  /// `load(_:playing: true)` plays what it loaded. The decode thread goes on as soon as the
  /// track is open: with a track shorter than the ring (1.5 s) it may already have begun the
  /// next one when `load` checks what it loaded, and that must not count as a failure that
  /// leaves the engine stopped with nothing said.
  @Test func loadPlaysAShortTrackEvenWhenTheDecoderHasAlreadyMovedOn() {
    var attempts: [EngineState] = []
    for _ in 0..<10 {
      let rig = EngineRig(
        queue: ["short.wav", "b.wav"],
        tracks: ["short.wav": .counter(100), "b.wav": .counter(44_100, first: 1_000_000)],
        output: FakeOutput.Options(pacing: .realTime(speed: 1)))
      rig.engine.load(rig.track("short.wav"), playing: true)
      attempts.append(rig.engine.snapshot().state)
      rig.shutdown()
    }
    #expect(attempts.allSatisfy { $0 == .playing }, "states right after load: \(attempts)")
  }

  @Test func aFormatChangeDrainsTheOldOutputAndOpensOneAtTheNewFormat() async throws {
    let mono48 = PCMFormat(sampleRate: 48_000, channels: 1)
    let rig = EngineRig(
      queue: ["a.wav", "b.flac"],
      tracks: [
        "a.wav": .counter(20_000),
        "b.flac": .counter(15_000, first: 1_000_000, format: mono48),
      ])
    defer { rig.shutdown() }
    rig.start("a.wav")
    try #require(await rig.endOfQueue(), "\(rig.state)")

    #expect(rig.devices.opened.map(\.format) == [cd, mono48])
    let first = try #require(rig.output(0))
    let second = try #require(rig.output(1))
    #expect(difference(counterFrames(first), Array(0..<20_000)) == nil)
    #expect(first.calls == [.drain(atFrame: 20_000)])
    #expect(difference(counterFrames(second), Array(1_000_000..<1_015_000)) == nil)
    #expect(second.drainCount == 1)
    #expect(rig.engine.snapshot().format == mono48)
    #expect(rig.engine.snapshot().track == rig.track("b.flac"))
    #expect(rig.events == [.endOfQueue])
  }

  @Test func anUnderrunLosesNoFrames() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(50_000)],
      output: FakeOutput.Options(faults: [.underrun(every: 3)]))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.endOfQueue(), "\(rig.state)")
    let output = try #require(rig.output())
    #expect(output.recoveredCount > 10)
    #expect(difference(counterFrames(output), Array(0..<50_000)) == nil)
    #expect(rig.events == [.endOfQueue])
  }

  @Test func playFadesInInsteadOfStartingWithAClick() async throws {
    let rig = EngineRig(queue: ["a.wav"], tracks: ["a.wav": .counter(20_000, first: 1_000)]) {
      $0.fadeIn = .milliseconds(5)
    }
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.endOfQueue(), "\(rig.state)")
    let samples = try #require(rig.output()).recordedSamples()
    try #require(samples.count == 40_000)
    let fadeFrames = cd.frames(in: 0.005)
    let gains = (0..<fadeFrames).map { f in
      samples[2 * f] / ToneDecoder.counterValue(frame: 1_000 + f, channel: 0)
    }
    #expect(gains[0] < 0.01)
    #expect(zip(gains, gains.dropFirst()).allSatisfy { $0 <= $1 })
    // Both channels of a frame get the same gain.
    for f in 0..<fadeFrames {
      let right = samples[2 * f + 1] / ToneDecoder.counterValue(frame: 1_000 + f, channel: 1)
      #expect(abs(right - gains[f]) < 1e-6, "frame \(f)")
    }
    // Past the fade, every frame is untouched.
    let rest = ToneDecoder.counterFrames(in: Array(samples[(2 * fadeFrames)...]), channels: 2)
    #expect(difference(rest, Array((1_000 + fadeFrames)..<21_000)) == nil)
  }

  // MARK: Pause, seek, position

  /// "Resume from the exact frame last heard": the device holds 4096 frames not yet heard when
  /// the pause comes; they are thrown away, and play starts with the first of them.
  @Test func pauseDiscardsAndPlayResumesRightAfterTheLastFrameHeard() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1), latencyFrames: 4_096))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.eventually { rig.framesWritten >= 8_820 })
    rig.engine.pause()

    let output = try #require(rig.output())
    #expect(rig.engine.snapshot().state == .paused)
    #expect(output.discardCount == 1)
    // Made ready again when it plays, not at the pause: ALSA's pulse device makes a new stream
    // there and waits for the sound server (70-200 ms on PipeWire, an Alert's length while a
    // role policy holds it back), which the pause would wait for.
    #expect(output.prepareCount == 0)
    let pausedAt = try #require(discardFrame(output))
    #expect(output.calls.first == .discard(atFrame: pausedAt, dropped: 4_096))
    let heard = output.heardFrames
    #expect(heard == pausedAt - 4_096)
    #expect(output.framesWritten == pausedAt)

    rig.engine.play()
    #expect(rig.engine.snapshot().state == .playing)
    try #require(await rig.eventually { rig.framesWritten >= pausedAt + 4_410 })
    #expect(output.prepareCount == 1)
    rig.engine.pause()
    let frames = counterFrames(output)
    try #require(frames.count > pausedAt, "\(frames.count) frames recorded, paused at \(pausedAt)")
    #expect(difference(Array(frames[0..<pausedAt]), Array(0..<pausedAt)) == nil)
    #expect(frames[pausedAt] == heard)
    #expect(
      difference(Array(frames[pausedAt...].prefix(4_410)), Array(heard..<(heard + 4_410))) == nil)
    #expect(rig.events.isEmpty)
  }

  @Test func positionCountsFramesHeardNotFramesDecoded() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1), latencyFrames: 4_096))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: false)
    #expect(rig.engine.snapshot().position == 0)
    rig.engine.play()
    try #require(await rig.eventually { rig.framesWritten >= 13_230 })
    let output = try #require(rig.output())
    for _ in 0..<5 {
      // Taken before the count of frames written, so it may only lag behind it: between two
      // writes it moves on with the clock, but never past what the device was given (and far
      // behind what was decoded, which is what it must not count).
      let position = rig.engine.snapshot().position
      let written = output.framesWritten
      let decoded = rig.library.decoders(for: "a.wav").first?.framesDelivered ?? 0
      #expect(Int((position * 44_100).rounded()) <= written)
      #expect(Int((position * 44_100).rounded()) < decoded - 22_050)
      try await Task.sleep(for: .milliseconds(3))
    }
    rig.engine.pause()
    let heard = output.heardFrames
    let snapshot = rig.engine.snapshot()
    // The frame heard, or the little the clock had carried the position shown past it (it
    // never goes back): less than a write.
    #expect(snapshot.position >= cd.seconds(heard))
    #expect(snapshot.position <= cd.seconds(heard + 2_048))
    #expect(snapshot.duration == 30)
    let decoder = try #require(rig.library.decoders(for: "a.wav").first)
    #expect(decoder.framesDelivered > heard + 4_096)
  }

  @Test func seekWhilePausedMovesThePlayheadThere() async throws {
    let rig = EngineRig(queue: ["a.wav"], tracks: ["a.wav": .counter(176_400)])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: false)
    rig.engine.seek(to: 2.5)
    #expect(rig.engine.snapshot().position == 2.5)
    #expect(rig.engine.snapshot().state == .paused)
    #expect(rig.framesWritten == 0)
    rig.engine.play()
    try #require(await rig.endOfQueue(), "\(rig.state)")
    #expect(difference(counterFrames(rig.output()), Array(110_250..<176_400)) == nil)
  }

  @Test func seekWhilePlayingGoesOnFromTheRequestedFrame() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1)))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.eventually { rig.framesWritten >= 8_820 })
    rig.engine.seek(to: 20)
    #expect(rig.engine.snapshot().state == .playing)
    let output = try #require(rig.output())
    let seekedAt = try #require(discardFrame(output, first: true))
    try #require(await rig.eventually { rig.framesWritten >= seekedAt + 4_410 })
    rig.engine.pause()
    let frames = counterFrames(output)
    try #require(frames.count >= seekedAt, "\(frames.count) frames recorded, seeked at \(seekedAt)")
    // Up to the seek, the track as it was, fading out over its last 5 ms (no click); then
    // the new place, from its first frame.
    let faded = seekedAt - fadeOutFrames
    #expect(difference(Array(frames[0..<faded]), Array(0..<faded)) == nil)
    #expect(fadeOutFault(output, endingAt: seekedAt) == nil)
    #expect(
      difference(Array(frames[seekedAt...].prefix(4_410)), Array(882_000..<886_410)) == nil)
    #expect(rig.engine.snapshot().position >= 20)
  }

  /// A rig whose ring holds 11.9 s, so that the decode thread runs that far ahead of what is
  /// heard (with the default 1.5 s the same happens in a track's last 1.5 s, too short a window
  /// for a test on a busy machine).
  private func farAheadRig(_ queue: [String], _ tracks: [String: ToneDecoder.Configuration])
    -> EngineRig
  {
    EngineRig(
      queue: queue, tracks: tracks, output: FakeOutput.Options(pacing: .realTime(speed: 1)),
      configure: { $0.ringSamples = 1 << 20 })
  }

  /// Plays `a.wav` (30 s), jumps to 20 s so that the decode thread reaches its end while the
  /// last 10 s are still to be heard, then seeks to 2 s. Returns the frames the output took
  /// after that seek.
  private func seekBackAfterDecodingReachedTheEnd(of rig: EngineRig) async throws -> [Int?] {
    // Paused, the decode thread still fills the ring: it reaches the end of a.wav before
    // anything is heard, however slow the machine (under AddressSanitizer with another core
    // busy, decoding the last 10 s while they played could take longer than 10 s, and the
    // track heard was b.wav by then).
    rig.engine.load(rig.track("a.wav"), playing: false)
    rig.engine.seek(to: 20)
    try #require(
      await rig.eventually { rig.library.decoders(for: "a.wav").first?.position == long })
    rig.engine.play()
    let output = try #require(rig.output())
    try #require(await rig.eventually { rig.framesWritten >= 2_205 })
    try #require(rig.engine.snapshot().track == rig.track("a.wav"))
    rig.engine.seek(to: 2)
    let seekedAt = try #require(discardFrame(output))
    try #require(await rig.eventually { rig.framesWritten >= seekedAt + 2_205 })
    rig.engine.pause()
    let frames = counterFrames(output)
    try #require(frames.count >= seekedAt, "\(frames.count) frames recorded, seeked at \(seekedAt)")
    return Array(frames[seekedAt...].prefix(2_205))
  }

  /// The decode thread runs ahead: near the end of A it is already decoding B. A seek is within
  /// the track the user hears (what `snapshot().track` shows), not within B.
  @Test func seekMovesWithinTheTrackBeingHeardWhileTheNextIsBeingDecoded() async throws {
    let rig = farAheadRig(
      ["a.wav", "b.wav"],
      ["a.wav": .counter(long), "b.wav": .counter(441_000, first: 1_000_000)])
    defer { rig.shutdown() }
    let after = try await seekBackAfterDecodingReachedTheEnd(of: rig)
    #expect(rig.library.decoders(for: "b.wav").count >= 1)
    #expect(difference(after, Array(88_200..<90_405)) == nil)
    #expect(rig.engine.snapshot().track == rig.track("a.wav"))
  }

  /// The same in the last track: the decoder has nothing left to read, and the seek must still
  /// move within the track being heard.
  @Test func seekWorksInTheLastSecondsOfTheLastTrack() async throws {
    let rig = farAheadRig(["a.wav"], ["a.wav": .counter(long)])
    defer { rig.shutdown() }
    let after = try await seekBackAfterDecodingReachedTheEnd(of: rig)
    #expect(difference(after, Array(88_200..<90_405)) == nil)
    // Near 2 s, where the seek went, not past 20 (a loaded machine may take a while to pause).
    #expect(rig.engine.snapshot().position < 10)
  }

  @Test func loadingAnotherTrackWhilePlayingCutsOverAtOnce() async throws {
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: ["a.wav": .counter(long), "b.wav": .counter(441_000, first: 1_000_000)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1)))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.eventually { rig.framesWritten >= 4_410 })
    rig.engine.load(rig.track("b.wav"), playing: true)
    #expect(rig.engine.snapshot().track == rig.track("b.wav"))
    #expect(rig.engine.snapshot().state == .playing)
    let output = try #require(rig.output())
    let cutAt = try #require(discardFrame(output, first: true))
    try #require(await rig.eventually { rig.framesWritten >= cutAt + 4_410 })
    rig.engine.pause()
    let frames = counterFrames(output)
    try #require(frames.count >= cutAt, "\(frames.count) frames recorded, cut over at \(cutAt)")
    let after = Array(frames[cutAt...].prefix(4_410))
    #expect(difference(after, Array(1_000_000..<1_004_410)) == nil)
    #expect(rig.devices.opened.count == 1)
  }

  @Test func stopForgetsTheTrackAndSilencesTheOutput() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1)))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.eventually { rig.framesWritten >= 4_410 })
    rig.engine.stop()
    let snapshot = rig.engine.snapshot()
    #expect(snapshot.state == .stopped)
    #expect(snapshot.track == nil)
    #expect(snapshot.position == 0)
    #expect(rig.output()?.discardCount == 1)
    let written = rig.framesWritten
    try await Task.sleep(for: .milliseconds(30))
    #expect(rig.framesWritten == written)
  }

  /// With repeat on, a queue where nothing opens would lead the engine back to the same files
  /// for ever (repeat one on a broken file did: a failure a few microseconds, for good). Each is
  /// said once, and the queue ends.
  @Test func aRepeatingQueueWhereNothingOpensEndsAfterSayingEachOnce() async throws {
    let rig = EngineRig(
      queue: ["broken1.mp3", "broken2.mp3"], tracks: [:],
      unreadable: ["broken1.mp3": "not an audio file", "broken2.mp3": "not an audio file"],
      wrapping: true)
    defer { rig.shutdown() }
    rig.engine.load(rig.track("broken1.mp3"), playing: true, wait: false)
    try #require(await eventually { rig.events.contains(.endOfQueue) })
    try await Task.sleep(for: .milliseconds(100))
    let failed = rig.events.compactMap {
      if case .trackFailed(let t, _) = $0 { t.path } else { nil }
    }
    #expect(failed == ["broken1.mp3", "broken2.mp3"])
    #expect(rig.engine.snapshot().state == .stopped)
  }

  @Test func snapshotDescribesTheLoadedTrack() throws {
    let metadata = TrackMetadata(title: "Ramp", artist: "Counter", album: "Tests", trackNumber: 3)
    let rig = EngineRig(
      queue: ["a.wav", "live.ogg"],
      tracks: [
        "a.wav": ToneDecoder.Configuration(frames: 88_200, metadata: metadata),
        "live.ogg": ToneDecoder.Configuration(
          frames: 88_200, isSeekable: false, reportsLength: false),
      ])
    defer { rig.shutdown() }
    #expect(rig.engine.snapshot().track == nil)
    #expect(rig.engine.snapshot().state == .stopped)
    rig.engine.load(rig.track("a.wav"), playing: false)
    let a = rig.engine.snapshot()
    #expect(
      a
        == EngineSnapshot(
          state: .paused, track: rig.track("a.wav"), position: 0, duration: 2, format: cd,
          metadata: metadata, isSeekable: true, deviceName: "fake", lookahead: .undecided,
          segment: a.segment))
    rig.engine.load(rig.track("live.ogg"), playing: false)
    let live = rig.engine.snapshot()
    #expect(live.track == rig.track("live.ogg"))
    #expect(live.segment > a.segment, "a new stretch of sound")
    #expect(live.duration == nil)
    #expect(!live.isSeekable)
  }

  /// The owner learns which track is heard when it starts being heard, not when it is decoded.
  /// The owner learns which track is heard when it starts being heard, not when it is decoded:
  /// loaded paused, the ring holds all of a and b, and only a is announced, however long it
  /// waits; played, b is announced when its turn comes.
  @Test func nowHearingFollowsWhatIsHeardThroughAGaplessChange() async throws {
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: ["a.wav": .counter(22_050), "b.wav": .counter(22_050, first: 1_000_000)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1)))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: false)
    try #require(await rig.eventually { rig.engine.snapshot().lookahead == .end })
    try await Task.sleep(for: .milliseconds(100))
    #expect(rig.heard == [rig.track("a.wav")])
    rig.engine.play()
    try #require(await rig.endOfQueue(), "\(rig.state)")
    #expect(rig.heard == [rig.track("a.wav"), rig.track("b.wav")])
  }

  /// Near the end of a track the decoder has already moved on; the owner can see to what, to
  /// know whether an edit of the queue changed what should come next. Loaded paused, so the
  /// decoder's progress does not race the clock.
  @Test func lookaheadSaysWhatTheDecoderHasLinedUp() async throws {
    // A track longer than the ring: the decoder cannot get past it while paused.
    let long = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: ["a.wav": .counter(44_100 * 3), "b.wav": .counter(44_100, first: 1_000_000)])
    defer { long.shutdown() }
    long.engine.load(long.track("a.wav"), playing: false)
    try await Task.sleep(for: .milliseconds(100))
    #expect(long.engine.snapshot().lookahead == .undecided)

    // A short one: the decoder goes on into the next.
    let short = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: ["a.wav": .counter(22_050), "b.wav": .counter(44_100 * 30, first: 1_000_000)])
    defer { short.shutdown() }
    short.engine.load(short.track("a.wav"), playing: false)
    try #require(await short.eventually { short.engine.snapshot().lookahead != .undecided })
    #expect(short.engine.snapshot().lookahead == .next(short.track("b.wav")))
    #expect(short.engine.snapshot().track == short.track("a.wav"))

    // The last one: nothing follows.
    let last = EngineRig(queue: ["a.wav"], tracks: ["a.wav": .counter(22_050)])
    defer { last.shutdown() }
    last.engine.load(last.track("a.wav"), playing: false)
    try #require(await last.eventually { last.engine.snapshot().lookahead != .undecided })
    #expect(last.engine.snapshot().lookahead == .end)
    #expect(last.engine.snapshot().track == last.track("a.wav"))
  }

  // MARK: Picking another output (G6)

  /// The user picks another output while playing: the old device is dropped, the new one goes
  /// on from the first frame not heard, and the engine keeps playing.
  @Test func G6_aNewDeviceGoesOnFromTheLastFrameHeard() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1), latencyFrames: 2_048))
    defer { rig.shutdown() }
    rig.start("a.wav")
    try #require(await rig.eventually { rig.framesWritten >= 8_820 })
    let result = rig.engine.setDevice("headset")
    #expect((try? result.get()) != nil)
    let old = try #require(rig.output(0))
    let new = try #require(await rig.eventually { rig.output(1) != nil } ? rig.output(1) : nil)
    try #require(await rig.eventually { new.framesWritten >= 4_410 })
    rig.engine.pause()
    #expect(new.deviceName == "headset")
    #expect(rig.engine.snapshot().deviceName == "headset")
    #expect(old.discardCount >= 1)
    let resumeAt = old.heardFrames
    #expect(
      difference(Array(counterFrames(new).prefix(4_410)), Array(resumeAt..<(resumeAt + 4_410)))
        == nil)
  }

  /// An output that will not open leaves playback where it was, on the old device.
  @Test func G6_aDeviceThatWillNotOpenKeepsTheOldOne() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1)), failingOpens: [1])
    defer { rig.shutdown() }
    rig.start("a.wav")
    try #require(await rig.eventually { rig.framesWritten >= 4_410 })
    guard case .failure(let error) = rig.engine.setDevice("broken") else {
      Issue.record("switching to a device that fails succeeded")
      return
    }
    #expect(error.device == "broken")
    #expect(rig.engine.snapshot().deviceName == "fake")
    #expect(rig.engine.snapshot().state == .playing)
    let reopened = try #require(rig.output(1))
    let before = reopened.framesWritten
    #expect(await rig.eventually { reopened.framesWritten > before + 2_205 })
  }

  // MARK: Ducking

  /// The duck gain (0.1) is reached by a 40 ms linear ramp and then held bit for bit; lifting
  /// the duck ramps back to exactly 1. The ramps are found in the recording, so the test does
  /// not depend on when the render thread noticed.
  @Test func duckingScalesTheOutputByTheDuckGainAndUnduckingRestoresIt() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1)))
    defer { rig.shutdown() }
    let ramp = cd.frames(in: 0.04)
    // After a request: at most two chunks go by at the old gain, then the ramp, then 0.1 s.
    let chunk = AudioEngine.Configuration.defaultChunkFrames
    let enough = 2 * chunk + ramp + 4_410
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.eventually { rig.framesWritten >= 8_820 })
    let beforeDuck = rig.framesWritten
    rig.engine.setDucked(true)
    let duckAsked = rig.framesWritten
    try #require(await rig.eventually { rig.framesWritten >= duckAsked + enough })
    let beforeLift = rig.framesWritten
    rig.engine.setDucked(false)
    let liftAsked = rig.framesWritten
    try #require(await rig.eventually { rig.framesWritten >= liftAsked + enough })
    rig.engine.pause()

    let samples = try #require(rig.output()).recordedSamples()
    let frames = samples.count / 2
    func gain(_ f: Int) -> Float {
      samples[2 * f] / ToneDecoder.counterValue(frame: f, channel: 0)
    }
    func scaled(_ f: Int, by g: Float) -> Bool {
      (0..<2).allSatisfy { c in
        samples[2 * f + c] == ToneDecoder.counterValue(frame: f, channel: c) * g
      }
    }
    // Frame 0 is silence in the counter; start at 1.
    let duckStart = try #require((1..<frames).first { !scaled($0, by: 1) })
    #expect(duckStart >= beforeDuck)
    #expect(duckStart <= duckAsked + 2 * chunk)
    let downError =
      (0..<ramp).map { k -> Float in
        let expected: Float = 1 - 0.9 * Float(k + 1) / Float(ramp)
        return abs(gain(duckStart + k) - expected)
      }.max() ?? 1
    #expect(downError < 1e-4, "the duck ramp strays from a straight line")
    let held = duckStart + ramp - 1
    let liftStart = try #require((held..<frames).first { !scaled($0, by: 0.1) })
    #expect(liftStart >= beforeLift)
    #expect(liftStart <= liftAsked + 2 * chunk)
    #expect(liftStart - held > 4_000, "held at 0.1 from frame \(held) to \(liftStart)")
    let upError =
      (0..<ramp).map { k -> Float in
        let expected: Float = 0.1 + 0.9 * Float(k + 1) / Float(ramp)
        return abs(gain(liftStart + k) - expected)
      }.max() ?? 1
    #expect(upError < 1e-4, "the lift ramp strays from a straight line")
    // Full level from the lift's end to the pause, whose 5 ms fade-out ends the recording.
    let paused = frames - fadeOutFrames
    let restored = ((liftStart + ramp - 1)..<paused).filter { !scaled($0, by: 1) }
    #expect(restored.isEmpty, "after lifting, \(restored.count) frames were not at full level")
    #expect(paused - (liftStart + ramp) > 4_000)
    #expect(fadeOutFault(rig.output(), endingAt: frames) == nil)
  }

  // MARK: Failures

  @Test func aFileThatWillNotOpenIsReportedAndTheNextPlays() async throws {
    let rig = EngineRig(
      queue: ["a.wav", "broken.flac", "c.wav"],
      tracks: ["a.wav": .counter(10_000), "c.wav": .counter(10_000, first: 1_000_000)],
      unreadable: ["broken.flac": "not an audio file libsndfile can read"])
    defer { rig.shutdown() }
    rig.start("a.wav")
    try #require(await rig.endOfQueue(), "\(rig.state)")
    let failure = DecodeError(
      .unreadable, path: "broken.flac", reason: "not an audio file libsndfile can read",
      detail: "ToneLibrary")
    #expect(rig.events == [.trackFailed(rig.track("broken.flac"), failure), .endOfQueue])
    let expected = Array(0..<10_000) + Array(1_000_000..<1_010_000)
    #expect(difference(counterFrames(rig.output()), expected) == nil)
    #expect(rig.devices.opened.count == 1)
  }

  /// A file that opens but holds not one frame (empty, an Ogg cut before its first audio page, a
  /// FLAC cut in its header) is reported with its reason like one that will not open, and the track
  /// after it is announced as heard, first in the queue or in the middle, on a paced device and on
  /// one that takes everything at once (ALSA's null), which used to pass over tracks between two
  /// looks.
  @Test(arguments: [FakeOutput.Pacing.unpaced, .realTime(speed: 4)])
  func aFileThatDecodesToNothingIsReportedAndTheNextIsAnnounced(pacing: FakeOutput.Pacing)
    async throws
  {
    let rig = EngineRig(
      queue: ["cut.ogg", "b.wav", "empty.wav", "d.wav", "e.wav"],
      tracks: [
        "cut.ogg": .counter(0), "b.wav": .counter(5_000), "empty.wav": .counter(0),
        "d.wav": .counter(5_000, first: 1_000_000), "e.wav": .counter(5_000, first: 2_000_000),
      ],
      output: FakeOutput.Options(pacing: pacing))
    defer { rig.shutdown() }
    rig.start("cut.ogg")
    try #require(await rig.endOfQueue(), "\(rig.state)")
    let nothing = "no sound in it (empty, or cut short)"
    #expect(
      rig.events == [
        .trackFailed(rig.track("cut.ogg"), DecodeError(.damaged, path: "cut.ogg", reason: nothing)),
        .trackFailed(
          rig.track("empty.wav"), DecodeError(.damaged, path: "empty.wav", reason: nothing)),
        .endOfQueue,
      ])
    #expect(rig.heard == [rig.track("b.wav"), rig.track("d.wav"), rig.track("e.wav")])
    let expected = Array(0..<5_000) + Array(1_000_000..<1_005_000) + Array(2_000_000..<2_005_000)
    #expect(difference(counterFrames(rig.output()), expected) == nil)
  }

  /// A seek to the very end of a track leaves nothing to decode from there: that is not a file
  /// with no sound in it.
  @Test func aSeekToTheEndIsNotAFailure() async throws {
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: ["a.wav": .counter(44_100), "b.wav": .counter(5_000, first: 1_000_000)])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), at: 1.0, playing: false)
    rig.engine.play()
    try #require(await rig.endOfQueue(), "\(rig.state)")
    #expect(rig.events == [.endOfQueue])
    #expect(rig.heard.last == rig.track("b.wav"))
  }

  /// A format the device will not take (a rate or channel count neither it nor the plug layer
  /// converts) is the track's problem, not the device's: skipped with the reason, first in the
  /// queue, met at a format change in the middle, or last; the queue goes on.
  @Test func aFormatTheDeviceRefusesIsSkippedAndTheQueueGoesOn() async throws {
    let odd = PCMFormat(sampleRate: 1_000_000, channels: 2)
    let tone = { (first: Int) in ToneDecoder.Configuration.counter(5_000, first: first, format: odd)
    }
    let rig = EngineRig(
      queue: ["odd1.wav", "a.wav", "odd2.wav", "b.wav", "odd3.wav"],
      tracks: [
        "odd1.wav": tone(0), "a.wav": .counter(5_000, first: 100_000), "odd2.wav": tone(0),
        "b.wav": .counter(5_000, first: 200_000), "odd3.wav": tone(0),
      ],
      refusing: [odd])
    defer { rig.shutdown() }
    rig.start("odd1.wav")
    try #require(await rig.endOfQueue(), "\(rig.state)")
    let refused = { (path: String) in
      EngineEvent.trackFailed(
        rig.track(path),
        DecodeError(
          .outputRefused, path: path,
          reason:
            "the output \(FormatRefused(device: "fake", format: odd, detail: "Invalid argument"))"))
    }
    #expect(
      rig.events == [refused("odd1.wav"), refused("odd2.wav"), refused("odd3.wav"), .endOfQueue])
    #expect(rig.heard == [rig.track("a.wav"), rig.track("b.wav")])
    let heard = rig.devices.opened.flatMap { counterFrames($0).compactMap { $0 } }
    #expect(heard == Array(100_000..<105_000) + Array(200_000..<205_000))
  }

  /// A render thread that does not answer a pause in time (a device stuck in its drain) is reported
  /// as a fault after 2 s, and the pause waits for it rather than replace what it uses under it
  /// (giving up after 2 s, as it did, would be a race on the output).
  @Test(.timeLimit(.minutes(2))) func aRenderThreadThatDoesNotAnswerIsAFaultNotARace()
    async throws
  {
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: [
        "a.wav": .counter(2_000),
        "b.wav": .counter(
          2_000, first: 100_000, format: PCMFormat(sampleRate: 48_000, channels: 2)),
      ],
      output: FakeOutput.Options(drainStalls: true))
    defer { rig.shutdown() }
    rig.start("a.wav")
    // a's frames go at once; the format change drains the old output, which hangs.
    let output = try #require(
      await rig.eventually { rig.output()?.isStalledInDrain == true } ? rig.output() : nil)
    // On a thread of its own: blocked for seconds, it must not hold one of the two threads of
    // Swift's cooperative pool that the other tests share.
    let engine = rig.engine
    let pause = TestThread { engine.pause() }
    try #require(
      await rig.eventually(.seconds(10)) {
        rig.events.contains { if case .fault = $0 { true } else { false } }
      }, "no fault reported: \(rig.events)")
    #expect(output.isStalledInDrain, "the pause did not wait for the render thread")
    output.endDrainStall()
    try #require(await rig.eventually { pause.isFinished }, "the pause did not return")
    pause.join()
    #expect(rig.engine.snapshot().state == .paused)
  }

  /// A device that always leaves some of what it holds when it takes back (PipeWire's pulse
  /// service through PulseStream keeps 25 ms, its graph's quantum) still ramps a pause out, after
  /// what it kept: the fade-out's limit counts on top of that (at 25 ms in all, every pause
  /// there was cut).
  @Test func aPauseRampsAfterWhatTheDeviceKeepsWhenItTakesBack() async throws {
    let held = 8_820
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(
        pacing: .realTime(speed: 1), latencyFrames: held, rewindable: true,
        keptByRewind: cd.frames(in: 0.030)))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    let output = try #require(
      await rig.eventually { rig.framesWritten >= held + 4_410 } ? rig.output() : nil)
    rig.engine.pause()
    let rewoundTo = try #require(
      output.calls.lazy.compactMap { c -> Int? in
        if case .rewind(let at, _) = c { at } else { nil }
      }.first, "nothing was taken back: \(output.calls)")
    #expect(fadeOutFault(output, endingAt: rewoundTo + fadeOutFrames) == nil)
    #expect(rig.engine.snapshot().state == .paused)
  }

  /// G5: when the output went, the pause drops what the device holds at once, with no ramp and
  /// nothing taken back to write one: the sound server has moved the stream to the speakers,
  /// where the ramp (and what a server keeps before it) would be heard. Playing again goes on
  /// from the first frame not heard, as after any pause.
  @Test func G5_aPauseAtOnceDropsWithoutARampAndResumesAfterTheLastFrameHeard() async throws {
    let held = 8_820
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(
        pacing: .realTime(speed: 1), latencyFrames: held, rewindable: true,
        keptByRewind: cd.frames(in: 0.015)))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    let output = try #require(
      await rig.eventually { rig.framesWritten >= held + 4_410 } ? rig.output() : nil)
    rig.engine.pauseAtOnce()
    #expect(rig.engine.snapshot().state == .paused)
    let calls = output.calls
    #expect(
      !calls.contains { if case .rewind = $0 { true } else { false } },
      "something was taken back for a ramp: \(calls)")
    let pausedAt = try #require(discardFrame(output))
    #expect(calls.first == .discard(atFrame: pausedAt, dropped: held))
    #expect(output.framesWritten == pausedAt)
    // Every frame written was the track's own, at full level: no ramp went after them.
    let frames = counterFrames(output)
    #expect(difference(Array(frames.prefix(pausedAt)), Array(0..<pausedAt)) == nil)
    let heard = output.heardFrames
    #expect(heard == pausedAt - held)

    // The next pause ramps again: the flag was the one pause's.
    rig.engine.play()
    try #require(await rig.eventually { rig.framesWritten >= pausedAt + held + 4_410 })
    rig.engine.pause()
    let rewoundTo = try #require(
      output.calls.lazy.compactMap { c -> Int? in
        if case .rewind(let at, _) = c { at } else { nil }
      }.first, "the pause after it took nothing back: \(output.calls)")
    #expect(
      fadeOutFault(output, endingAt: rewoundTo + fadeOutFrames, first: heard - pausedAt) == nil)
    #expect(counterFrames(output)[pausedAt] == heard, "the resume's first frame")
    #expect(rig.events.isEmpty)
  }

  /// The position shown after a pause is where playing resumes, the frame its ramp began
  /// with, however often it was asked during the pause: the clock that carries the position
  /// between measurements stopped at what the device held before it took back, and a status
  /// asked during the ramp showed the position past it (by 45 ms on PulseAudio, a pause right
  /// after a resume seemed not to have moved it at all), and it never steps back.
  @Test func thePositionAskedDuringAPauseStaysWherePlayingResumes() async throws {
    let held = 22_050  // half a second, as the sound server holds
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(
        pacing: .realTime(speed: 1), latencyFrames: held, rewindable: true,
        silenceAfterRamp: cd.frames(in: 0.040)))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    let output = try #require(
      await rig.eventually { rig.framesWritten >= held + 4_410 } ? rig.output() : nil)
    let engine = rig.engine
    let done = Atomic<Bool>(false)
    // Asked from the moment the pause takes back what the device holds, every half
    // millisecond. (Not before: the fake's count of what it has played steps at each write,
    // and the clock between two of them, carrying the position on in real time, can run ahead
    // of the next step by as long as the render thread is late; beside ThreadSanitizer it was
    // 40 ms.)
    let asking = TestThread {
      func rewound() -> Bool {
        output.calls.contains { if case .rewind = $0 { true } else { false } }
      }
      while !done.load(ordering: .acquiring) && !rewound() { usleep(200) }
      while !done.load(ordering: .acquiring) {
        _ = engine.snapshot()
        usleep(500)
      }
    }
    engine.pause()
    done.store(true, ordering: .releasing)
    asking.join()
    let rewoundTo = try #require(
      output.calls.lazy.compactMap { c -> Int? in
        if case .rewind(let at, _) = c { at } else { nil }
      }.first, "nothing was taken back: \(output.calls)")
    let shown = cd.frames(in: engine.snapshot().position)
    // With the clock running on through the ramp and the silence after it, it was 40 ms past.
    #expect(
      shown <= rewoundTo + cd.frames(in: 0.005),
      "the position shown is \(shown - rewoundTo) frames past the ramp's first frame")
    #expect(shown >= rewoundTo - cd.frames(in: 0.005), "shown \(shown), resumes at \(rewoundTo)")
  }

  /// A pause on a device that stopped playing without a word (PipeWire's ALSA plugin once the
  /// session server has ended its stream, the sink it played on gone) gives up its ramp and
  /// returns: it waited for room in the device for ever, and the player with it (G5's pause
  /// was never said).
  @Test(.timeLimit(.minutes(2))) func aPauseOnADeviceThatStoppedPlayingReturns() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(long)],
      output: FakeOutput.Options(
        pacing: .realTime(speed: 1), latencyFrames: 441, faults: [.stall(afterFrames: 8_820)],
        rewindable: true))
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    let output = try #require(
      await rig.eventually(.seconds(10)) { rig.output()?.isStalled == true } ? rig.output() : nil)
    defer { output.endStall() }
    let engine = rig.engine
    let pause = TestThread { engine.pause() }
    try #require(
      await rig.eventually(.seconds(10)) { pause.isFinished },
      "the pause waited on a device that does not play")
    pause.join()
    #expect(rig.engine.snapshot().state == .paused)
  }

  /// Memory safety: a file's channel count sizes what the engine uses for it. Every count the
  /// engine takes plays to its end (9 channels overflowed the render scratch buffer, 19 and more
  /// never left the decoder: four chunks did not fit in the ring).
  @Test(.timeLimit(.minutes(2)), arguments: [1, 2, 6, 8, 9, 12, 19, 24, 32])
  func everyChannelCountUpToTheMostPlaysToItsEnd(channels: Int) async throws {
    let tone = ToneDecoder.Configuration(
      path: "many.wav", format: PCMFormat(sampleRate: 48_000, channels: channels),
      frames: 48_000, signal: .sine(hertz: 440, amplitude: 0.5))
    // With a fade-in, as the player has, so that the first chunk goes through the scratch
    // buffer (at unity gain samples go to the device straight from the ring).
    let rig = EngineRig(
      queue: ["many.wav"], tracks: ["many.wav": tone],
      configure: { $0.fadeIn = .milliseconds(5) })
    defer { rig.shutdown() }
    rig.start("many.wav")
    try #require(await rig.endOfQueue(), "\(rig.state)")
    #expect(rig.output()?.format.channels == channels)
    #expect(rig.output()?.framesWritten == 48_000)
    #expect(!rig.events.contains { if case .trackFailed = $0 { true } else { false } })
  }

  /// More channels than the engine carries: refused with the reason when it opens (first in
  /// the queue or reached from another track), and the next track plays.
  @Test(.timeLimit(.minutes(2)), arguments: [33, 745, 1024])
  func tooManyChannelsAreRefusedWithTheReasonAndTheNextPlays(channels: Int) async throws {
    let many = ToneDecoder.Configuration(
      path: "many.wav", format: PCMFormat(sampleRate: 44_100, channels: channels), frames: 1_000,
      signal: .sine(hertz: 440, amplitude: 0.5))
    let rig = EngineRig(
      queue: ["a.wav", "many.wav", "c.wav"],
      tracks: [
        "a.wav": .counter(10_000), "many.wav": many, "c.wav": .counter(10_000, first: 1_000_000),
      ])
    defer { rig.shutdown() }
    rig.start("a.wav")
    try #require(await rig.endOfQueue(), "\(rig.state)")
    let refusal = DecodeError(
      .unsupported, path: "many.wav",
      reason: "it has \(channels) channels; hark plays files of 1 to 32")
    #expect(rig.events == [.trackFailed(rig.track("many.wav"), refusal), .endOfQueue])
    #expect(
      difference(counterFrames(rig.output()), Array(0..<10_000) + Array(1_000_000..<1_010_000))
        == nil)
  }

  /// Acceptance scenario 8 when the bad file is the one asked for (the first of the queue, or
  /// the one "next" lands on): the next track plays.
  @Test func aTrackAskedForThatWillNotOpenHandsOverToTheNext() async throws {
    let rig = EngineRig(
      queue: ["broken.flac", "b.wav"], tracks: ["b.wav": .counter(10_000, first: 1_000_000)],
      unreadable: ["broken.flac": "not an audio file libsndfile can read"])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("broken.flac"), playing: true)
    #expect(await rig.endOfQueue())
    #expect(rig.events.first.flatMap(failedPath) == "broken.flac")
    #expect(rig.engine.snapshot().track == rig.track("b.wav"))
    #expect(difference(counterFrames(rig.output()), Array(1_000_000..<1_010_000)) == nil)
  }

  /// The position asked for belongs to the track asked for; the one after it starts at 0.
  @Test func aTrackThatWillNotOpenDoesNotPassItsStartPositionOn() throws {
    let rig = EngineRig(
      queue: ["broken.flac", "b.wav"], tracks: ["b.wav": .counter(176_400, first: 1_000_000)],
      unreadable: ["broken.flac": "not an audio file libsndfile can read"])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("broken.flac"), at: 2, playing: false)
    let snapshot = rig.engine.snapshot()
    #expect(snapshot.track == rig.track("b.wav"))
    #expect(snapshot.position == 0)
  }

  @Test func aTrackThatFailsMidwayIsReportedAndTheNextPlays() async throws {
    let rig = EngineRig(
      queue: ["a.wav", "b.wav"],
      tracks: [
        "a.wav": .counter(20_000, failAfterFrames: 5_000),
        "b.wav": .counter(10_000, first: 1_000_000),
      ])
    defer { rig.shutdown() }
    rig.start("a.wav")
    try #require(await rig.endOfQueue(), "\(rig.state)")
    let events = rig.events
    try #require(events.count == 2)
    guard case .trackFailed(let track, let error) = events[0] else {
      Issue.record("expected trackFailed first, got \(events)")
      return
    }
    #expect(track == rig.track("a.wav"))
    #expect(error.path == "a.wav")
    #expect(events[1] == .endOfQueue)
    let expected = Array(0..<5_000) + Array(1_000_000..<1_010_000)
    #expect(difference(counterFrames(rig.output()), expected) == nil)
  }

  @Test func aDeviceThatWillNotOpenIsReported() async throws {
    let rig = EngineRig(queue: ["a.wav"], tracks: ["a.wav": .counter(10_000)], failingOpens: [0])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.eventually { !rig.events.isEmpty })
    #expect(rig.events == [.deviceFailed("no audio device 'fake'")])
    #expect(rig.engine.snapshot().state == .stopped)
    #expect(rig.devices.opened.isEmpty)
  }

  /// G5 at the engine: the device vanishes after 10,000 frames (mid-chunk). The engine pauses
  /// and says so; play reopens the device and goes on with frame 10,000, the first not heard.
  @Test func aLostDeviceIsReportedAndPlayReopensItFromTheLastFrameHeard() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(88_200)],
      perOpening: [0: FakeOutput.Options(faults: [.unplug(afterFrames: 10_000)])])
    defer { rig.shutdown() }
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.eventually { !rig.events.isEmpty })
    #expect(rig.events == [.deviceLost(device: "fake", code: -ENODEV)])
    #expect(await rig.eventually { rig.engine.snapshot().state == .paused })
    let lost = try #require(rig.output(0))
    #expect(lost.isGone)
    #expect(lost.heardFrames == 10_000)
    #expect(rig.engine.snapshot().position == cd.seconds(10_000))

    rig.engine.play()
    try #require(await rig.endOfQueue(), "\(rig.state)")
    #expect(rig.devices.opened.count == 2)
    let reopened = try #require(rig.output(1))
    #expect(reopened.format == cd)
    #expect(difference(counterFrames(reopened), Array(10_000..<88_200)) == nil)
  }

  private func failedPath(_ event: EngineEvent) -> String? {
    if case .trackFailed(let track, _) = event { track.path } else { nil }
  }

  // MARK: Shutdown

  @Test func shutdownWhilePlayingJoinsBothThreadsAndEndsTheEvents() async throws {
    let rig = EngineRig(
      queue: ["a.wav"], tracks: ["a.wav": .counter(441_000)],
      output: FakeOutput.Options(pacing: .realTime(speed: 1)))
    rig.engine.load(rig.track("a.wav"), playing: true)
    try #require(await rig.eventually { rig.framesWritten >= 4_410 })
    // On its own thread, so a hang fails this test instead of stalling the others.
    let stopper = TestThread { rig.shutdown() }
    #expect(await rig.eventually { stopper.isFinished })
    #expect(await rig.eventually { rig.log.isFinished })
    if stopper.isFinished { stopper.join() }
    let written = rig.framesWritten
    try await Task.sleep(for: .milliseconds(30))
    #expect(rig.framesWritten == written)
  }

  @Test func shutdownOfAnIdleEngineReturns() async {
    let rig = EngineRig(queue: ["a.wav"], tracks: ["a.wav": .counter(10)])
    let stopper = TestThread { rig.shutdown() }
    #expect(await rig.eventually { stopper.isFinished })
    #expect(await rig.eventually { rig.log.isFinished })
    if stopper.isFinished { stopper.join() }
  }
}
