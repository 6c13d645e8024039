import ALSAOutput
import AudioCore
import Glibc
import Platform
import PlayerEngine
import Testing

@testable import hark

/// Which output plays a device, and how long a buffer the sound server is asked for.
@Suite struct OutputChoiceTests {
  let ring = AudioEngine.Configuration.defaultRingSamples

  /// Half a second where it leaves the decoder half the ring; less where half a second would
  /// take more (a deep device starved the render thread: 150 wakeups a second).
  @Test func theSoundServerBufferIsHalfASecondOrHalfTheRing() {
    let cases: [(PCMFormat, Double)] = [
      (PCMFormat(sampleRate: 44_100, channels: 2), 0.5),
      (PCMFormat(sampleRate: 48_000, channels: 2), 0.5),
      (PCMFormat(sampleRate: 48_000, channels: 1), 0.5),
      (PCMFormat(sampleRate: 96_000, channels: 2), 32_768 / 96_000),
      (PCMFormat(sampleRate: 192_000, channels: 2), 32_768 / 192_000),
      (PCMFormat(sampleRate: 48_000, channels: 6), 10_922 / 48_000),
    ]
    for (format, seconds) in cases {
      let latency = AudioEngine.Configuration.soundServerLatency(format, ringSamples: ring)
      #expect(abs(Platform.seconds(latency) - seconds) < 1e-5, "\(format): \(latency)")
      let frames = format.frames(in: Platform.seconds(latency))
      #expect(frames * format.channels <= ring / 2, "\(format) leaves the decoder half the ring")
    }
  }

  /// A device that is not the sound server's plays through ALSA as before.
  @Test func anotherDevicePlaysThroughALSA() throws {
    let output = try AudioEngine.Configuration.openOutput(
      "null", PCMFormat(sampleRate: 48_000, channels: 2), ringSamples: ring)
    #expect(output is PlaybackDevice)
  }

  /// The sound server through libpulse unless ALSA's plugin is asked for by name.
  @Test func libpulseUnlessALSAIsAskedFor() {
    #expect(AudioEngine.Configuration.playsThroughLibpulse(nil))
    #expect(AudioEngine.Configuration.playsThroughLibpulse("libpulse"))
    #expect(AudioEngine.Configuration.playsThroughLibpulse(""))
    #expect(!AudioEngine.Configuration.playsThroughLibpulse("alsa"))
  }

  /// ALSA's `default` that is no card at all (no card on the machine, a server unpacked rather
  /// than installed) plays on the sound server; any other device, any other failure, or ALSA's
  /// plugin asked for by name, stays the error it was.
  @Test func onlyAMissingDefaultPlaysOnTheSoundServerInstead() {
    typealias C = AudioEngine.Configuration
    #expect(C.playsThroughSoundServerInstead("default", code: -ENOENT, nil))
    #expect(!C.playsThroughSoundServerInstead("default", code: -EBUSY, nil))
    #expect(!C.playsThroughSoundServerInstead("default", code: -EINVAL, nil))
    #expect(!C.playsThroughSoundServerInstead("hw:0", code: -ENOENT, nil))
    #expect(!C.playsThroughSoundServerInstead("sysdefault", code: -ENOENT, nil))
    #expect(!C.playsThroughSoundServerInstead("default", code: -ENOENT, "alsa"))
  }

  /// The code that test stands on: a card that is not there (the last index ALSA allows) is
  /// ENOENT to snd_pcm_open, as `default` is on a machine with no card.
  @Test func aMissingCardIsNoSuchFile() {
    do {
      _ = try PlaybackDevice(name: "hw:31", format: PCMFormat(sampleRate: 48_000, channels: 2))
      Issue.record("hw:31 opened")
    } catch let error as ALSAError {
      #expect(error.code == -ENOENT, "\(error)")
    } catch {
      Issue.record("not an ALSA error: \(error)")
    }
  }
}
