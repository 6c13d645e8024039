import Testing

@testable import ALSAOutput

/// Which ALSA devices are PulseAudio's plugin, read from ALSA's configuration: those play through
/// libpulse itself (PulseStream). The plugin's configuration comes with libasound2-plugins, which
/// scripts/packages.sh installs.
@Suite struct SoundServerDeviceTests {
  @Test func pulseIsTheSoundServerOnItsDefaultSinkAndPulseColonNameOnThatSink() {
    #expect(SoundServerDevice.behind("pulse") == SoundServerDevice(sink: nil))
    #expect(SoundServerDevice.behind("pulse:out") == SoundServerDevice(sink: "out"))
    #expect(SoundServerDevice.behind("pulse:DEVICE=other") == SoundServerDevice(sink: "other"))
  }

  @Test func otherDevicesAndUnknownNamesAreNot() {
    #expect(SoundServerDevice.behind("null") == nil)
    #expect(SoundServerDevice.behind("hw:99") == nil)
    #expect(SoundServerDevice.behind("no-such-device-hark") == nil)
  }
}
