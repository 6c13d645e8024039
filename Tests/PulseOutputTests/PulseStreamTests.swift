import AudioCore
import Testing

@testable import PulseOutput

/// What can be checked of the sound-server output without a sound server: the buffer it asks
/// for, and what it refuses before connecting. Playing through it, pausing, ducking and a
/// position that never goes back are end to end (Tests/EndToEnd/audio-playback.sh,
/// deep-buffers.sh), on a private PulseAudio.
@Suite struct PulseStreamTests {
  @Test func theBufferIsHalfASecondAskedForInThirdsAndStartsAtTheFirstThird() {
    let at48 = PulseStream.buffer(
      for: PCMFormat(sampleRate: 48_000, channels: 2), latency: PulseStream.defaultLatency)
    #expect(at48.target == 24_000)
    #expect(at48.request == 8_000)
    #expect(at48.prebuffer == 8_000)
    let at44 = PulseStream.buffer(
      for: PCMFormat(sampleRate: 44_100, channels: 6), latency: .milliseconds(300))
    #expect(at44.target == 13_230)
    #expect(at44.request == 4_410)
    #expect(at44.prebuffer == at44.request)
  }

  @Test func aVeryShortBufferStillHasThreeRequestsOfAFrame() {
    let tiny = PulseStream.buffer(
      for: PCMFormat(sampleRate: 8_000, channels: 1), latency: .microseconds(10))
    #expect(tiny.target == 3)
    #expect(tiny.request == 1)
  }

  @Test func moreChannelsThanTheServerTakesAreRefusedAsAFormat() throws {
    let format = PCMFormat(sampleRate: 48_000, channels: 33)
    #expect(throws: FormatRefused.self) {
      try PulseStream(deviceName: "pulse", server: "unix:/nonexistent/hark-test", format: format)
    }
  }

  @Test func aServerThatIsNotThereIsSaidInWords() throws {
    do {
      _ = try PulseStream(
        deviceName: "pulse", server: "unix:/nonexistent/hark-test",
        format: PCMFormat(sampleRate: 48_000, channels: 2))
      Issue.record("a stream opened on a server that is not there")
    } catch let error as PulseStreamError {
      #expect(error.device == "pulse")
      #expect(error.description.hasPrefix("cannot reach the sound server"), "\(error)")
    }
  }
}
