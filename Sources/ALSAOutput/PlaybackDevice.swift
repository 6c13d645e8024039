import AudioCore
import CALSA
import Glibc

/// An ALSA PCM opened for playback at one format (float, interleaved; ALSA's plug layer converts
/// what the hardware does not take). Owns the snd_pcm_t and closes it in `deinit`.
public final class PlaybackDevice: AudioOutput {
  private let pcm: OpaquePointer
  public let format: PCMFormat
  public let deviceName: String
  /// The device's buffer and period, in frames, as negotiated.
  public let bufferFrames: Int
  public let periodFrames: Int

  /// Opens `name` (snd_pcm_open, snd_pcm_set_params) with about `latency` of buffer: small
  /// enough that what is queued is soon heard, large enough not to underrun on a busy machine.
  public init(name: String, format: PCMFormat, latency: Duration = .milliseconds(60))
    throws(ALSAError)
  {
    var opened: OpaquePointer?
    try ALSAError.check(
      snd_pcm_open(&opened, name, SND_PCM_STREAM_PLAYBACK, 0), "opening ALSA device '\(name)'")
    guard let opened else {
      throw ALSAError(code: -EINVAL, operation: "opening ALSA device '\(name)'")
    }
    let micros = UInt32(
      latency.components.seconds * 1_000_000 + latency.components.attoseconds / 1_000_000_000_000)
    let rc = snd_pcm_set_params(
      opened, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(format.channels),
      UInt32(format.sampleRate), 1, micros)
    if rc < 0 {
      snd_pcm_close(opened)
      throw ALSAError(code: rc, operation: "setting up '\(name)' for \(format)")
    }
    var buffer: snd_pcm_uframes_t = 0
    var period: snd_pcm_uframes_t = 0
    snd_pcm_get_params(opened, &buffer, &period)
    pcm = opened
    self.format = format
    deviceName = name
    bufferFrames = Int(buffer)
    periodFrames = max(1, Int(period))
  }

  deinit { snd_pcm_close(pcm) }

  public func write(_ samples: UnsafeBufferPointer<Float>) -> OutputWriteResult {
    guard let base = samples.baseAddress else { return .written(0) }
    let frames = snd_pcm_uframes_t(samples.count / format.channels)
    let n = snd_pcm_writei(pcm, base, frames)
    if n >= 0 { return .written(Int(n)) }
    return recover(Int32(n))
  }

  /// The one place device states are handled. Render thread; no allocation.
  private func recover(_ code: Int32) -> OutputWriteResult {
    switch -code {
    case EAGAIN, EINTR:
      return .written(0)
    case EPIPE:
      // Underrun: the device ran dry. Get it ready again; the next write restarts it.
      return snd_pcm_prepare(pcm) < 0 ? .deviceGone(code: code) : .recovered
    case ESTRPIPE:
      // Suspended (the machine slept): wait for it to come back, else start it afresh.
      var rc = snd_pcm_resume(pcm)
      var tries = 0
      while rc == -EAGAIN && tries < 100 {
        usleep(10_000)
        rc = snd_pcm_resume(pcm)
        tries += 1
      }
      if rc < 0 { rc = snd_pcm_prepare(pcm) }
      return rc < 0 ? .deviceGone(code: code) : .recovered
    default:
      // ENODEV, EBADFD, EIO, ENOTTY...: the device went away (unplugged, disconnected).
      return .deviceGone(code: code)
    }
  }

  public func delayFrames() -> Int {
    var d: snd_pcm_sframes_t = 0
    guard snd_pcm_delay(pcm, &d) == 0 else { return 0 }
    return max(0, Int(d))
  }

  public func discard() { snd_pcm_drop(pcm) }
  public func prepare() { snd_pcm_prepare(pcm) }
  public func drain() { snd_pcm_drain(pcm) }
}
