import AudioCore
import CALSA
import Glibc

/// An ALSA PCM opened for playback at one format (float, interleaved; ALSA's plug layer converts
/// what the hardware does not take). Owns the snd_pcm_t and closes it in `deinit`.
///
/// Opened non-blocking: `write` takes what there is room for and, when there is none, waits in
/// `poll` on the device's descriptors and the engine's wake pipe together, so a pause never
/// waits for the device to make room (docs/HACKING.md, "The audio path": the render thread blocks on the device only).
public final class PlaybackDevice: AudioOutput {
  private let pcm: OpaquePointer
  public let format: PCMFormat
  public let deviceName: String
  /// The device's buffer and period, in frames, as negotiated.
  public let bufferFrames: Int
  public let periodFrames: Int
  /// Whether frames written can be taken back and written again (`rewind`): a card's own
  /// device (hw, plughw), whose buffer ALSA holds until the card plays it. A sound server's
  /// plugin (pulse, pipewire, the `default` of a desktop) sends what it is given on to the
  /// server at once: its snd_pcm_rewind answers that it rewound, and the server plays the old
  /// frames anyway (measured: 0.97 s of a 1 s tone heard at full level after a rewind of 0.18 s
  /// and a quieter rewrite). dmix and the like mix into a shared buffer: not trusted either.
  public let canRewind: Bool
  /// The device's poll descriptors, and one more slot for the engine's wake pipe; allocated
  /// once, filled on the render thread.
  private let polls: UnsafeMutableBufferPointer<pollfd>
  private let deviceFDs: Int
  /// Frames next to be played that a rewind leaves alone: the card may already be reading them.
  private let rewindMargin: Int

  /// Opens `name` with about `latency` of buffer; by default 300 ms where frames written can
  /// be taken back (`canRewind`), 100 ms where they cannot.
  ///
  /// A long buffer lets the render thread and the sound server wake less often, once a period
  /// (measured through ALSA's pulse device, 300 ms cost 0.21 s of CPU per minute of audio
  /// against 0.40 s at 100 ms), and costs nothing in responsiveness where the device can take
  /// back what it holds: a pause drops it at once, and a change of gain (a duck, G9) rewinds
  /// it and writes it again. Where it cannot, a new gain is heard only once what the device
  /// holds has played: that is the buffer plus the server's own latency (through PulseAudio's
  /// null sink: 376 ms on average with a 300 ms buffer, 122 ms with 100 ms, 71 ms with 60 ms),
  /// and 100 ms keeps a navigation prompt's duck within about 150 ms of its start.
  /// Throws `FormatRefused` when the device opens but will not take `format`, else `ALSAError`.
  public init(name: String, format: PCMFormat, latency: Duration? = nil) throws {
    var opened: OpaquePointer?
    try ALSAError.check(
      snd_pcm_open(&opened, name, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK)),
      "opening ALSA device '\(name)'")
    guard let opened else {
      throw ALSAError(code: -EINVAL, operation: "opening ALSA device '\(name)'")
    }
    let rewinds =
      snd_pcm_type(opened) == SND_PCM_TYPE_HW || name.hasPrefix("hw:") || name.hasPrefix("plughw:")
    let rc = Self.configure(
      opened, format, latency: latency ?? .milliseconds(rewinds ? 300 : 100))
    if rc < 0 {
      snd_pcm_close(opened)
      // The device is there; what it was asked for is not (EINVAL from hw_params: a rate or a
      // channel count neither it nor the plug layer takes).
      if rc == -EINVAL {
        throw FormatRefused(device: name, format: format, detail: String(cString: snd_strerror(rc)))
      }
      throw ALSAError(code: rc, operation: "setting up '\(name)' for \(format)")
    }
    var buffer: snd_pcm_uframes_t = 0
    var period: snd_pcm_uframes_t = 0
    snd_pcm_get_params(opened, &buffer, &period)
    let count = max(0, Int(snd_pcm_poll_descriptors_count(opened)))
    polls = .allocate(capacity: count + 1)
    polls.initialize(repeating: pollfd(fd: -1, events: 0, revents: 0))
    if count > 0, let base = polls.baseAddress {
      deviceFDs = max(0, Int(snd_pcm_poll_descriptors(opened, base, UInt32(count))))
    } else {
      deviceFDs = 0
    }
    pcm = opened
    self.format = format
    deviceName = name
    bufferFrames = Int(buffer)
    periodFrames = max(1, Int(period))
    canRewind = rewinds
    rewindMargin = format.frames(in: 0.01)
  }

  deinit {
    snd_pcm_close(pcm)
    polls.deallocate()
  }

  /// Float interleaved at the file's rate and channels (the plug layer converts), a buffer of
  /// about `latency` in two periods: the render thread and the sound server wake once per
  /// period, so two long ones cost half the wakeups of snd_pcm_set_params's four.
  private static func configure(_ pcm: OpaquePointer, _ format: PCMFormat, latency: Duration)
    -> Int32
  {
    var hw: OpaquePointer?
    guard snd_pcm_hw_params_malloc(&hw) == 0, let hw else { return -ENOMEM }
    defer { snd_pcm_hw_params_free(hw) }
    var rc = snd_pcm_hw_params_any(pcm, hw)
    if rc >= 0 { rc = snd_pcm_hw_params_set_rate_resample(pcm, hw, 1) }
    if rc >= 0 { rc = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED) }
    if rc >= 0 { rc = snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_FLOAT_LE) }
    if rc >= 0 { rc = snd_pcm_hw_params_set_channels(pcm, hw, UInt32(format.channels)) }
    if rc >= 0 {
      var rate = UInt32(format.sampleRate)
      rc = snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, nil)
    }
    guard rc >= 0 else { return rc }
    var buffer = UInt32(
      latency.components.seconds * 1_000_000 + latency.components.attoseconds / 1_000_000_000_000)
    var periods: UInt32 = 2
    // Near, not exact: a device that cannot do it gets what it can.
    _ = snd_pcm_hw_params_set_buffer_time_near(pcm, hw, &buffer, nil)
    _ = snd_pcm_hw_params_set_periods_near(pcm, hw, &periods, nil)
    rc = snd_pcm_hw_params(pcm, hw)
    guard rc >= 0 else { return rc }
    var sw: OpaquePointer?
    guard snd_pcm_sw_params_malloc(&sw) == 0, let sw else { return -ENOMEM }
    defer { snd_pcm_sw_params_free(sw) }
    var bufferFrames: snd_pcm_uframes_t = 0
    var periodFrames: snd_pcm_uframes_t = 0
    snd_pcm_get_params(pcm, &bufferFrames, &periodFrames)
    rc = snd_pcm_sw_params_current(pcm, sw)
    // Start once the buffer is full; wake the writer when a period is free.
    if rc >= 0 { rc = snd_pcm_sw_params_set_start_threshold(pcm, sw, bufferFrames) }
    if rc >= 0 { rc = snd_pcm_sw_params_set_avail_min(pcm, sw, periodFrames) }
    if rc >= 0 { rc = snd_pcm_sw_params(pcm, sw) }
    return rc
  }

  /// Writes what the device has room for; with no room, waits for it or for `wakeFD`.
  public func write(_ samples: UnsafeBufferPointer<Float>, wakingOn wakeFD: Int32)
    -> OutputWriteResult
  {
    guard let base = samples.baseAddress else { return .written(0) }
    let frames = snd_pcm_uframes_t(samples.count / format.channels)
    while true {
      // No more than there is room for: a non-blocking write that does not fit takes nothing
      // at all while less than avail_min is free, so the last sliver of the buffer (942 frames
      // of 13,230 after six chunks) would stay unwritten, the device would not reach its start
      // threshold (nor PulseAudio its prebuffer), and the first sound would wait for poll's
      // timeout: a second or more.
      let room = snd_pcm_avail_update(pcm)
      let n = snd_pcm_writei(pcm, base, room > 0 ? min(frames, snd_pcm_uframes_t(room)) : frames)
      if n > 0 { return .written(Int(n)) }
      if n == 0 || n == -Int(EAGAIN) {
        // No room: wait for the device or the engine, whichever comes first.
        switch waitForRoom(wakeFD) {
        case .room: continue
        case .woken: return .written(0)
        case .problem(let code): return recover(code)
        }
      }
      return recover(Int32(n))
    }
  }

  private enum Wait { case room, woken, problem(Int32) }

  /// Render thread: poll on the device and the wake pipe. No allocation.
  private func waitForRoom(_ wakeFD: Int32) -> Wait {
    guard let base = polls.baseAddress else { return .room }
    polls[deviceFDs] = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
    for i in 0..<deviceFDs { polls[i].revents = 0 }
    // A second at most: a device that stops answering is noticed by the next write.
    let rc = poll(base, nfds_t(deviceFDs + 1), 1_000)
    if rc < 0 { return errno == EINTR ? .room : .problem(-errno) }
    if polls[deviceFDs].revents != 0 { return .woken }
    var revents: UInt16 = 0
    if deviceFDs > 0 {
      let err = snd_pcm_poll_descriptors_revents(pcm, base, UInt32(deviceFDs), &revents)
      if err < 0 { return .problem(err) }
    }
    if revents & UInt16(POLLERR) != 0 {
      // The state says why: an underrun, a suspend, or a device that is gone.
      switch snd_pcm_state(pcm) {
      case SND_PCM_STATE_XRUN: return .problem(-EPIPE)
      case SND_PCM_STATE_SUSPENDED: return .problem(-ESTRPIPE)
      case SND_PCM_STATE_DISCONNECTED: return .problem(-ENODEV)
      default: return .room
      }
    }
    return .room
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
    case EBADFD where snd_pcm_state(pcm) == SND_PCM_STATE_SETUP:
      // Stopped, not gone (drained or dropped and not prepared): get it ready again.
      return snd_pcm_prepare(pcm) < 0 ? .deviceGone(code: code) : .recovered
    default:
      // ENODEV, EBADFD, EIO, ENOTTY...: the device went away (unplugged, disconnected).
      return .deviceGone(code: code)
    }
  }

  /// Frames written and not yet heard. Until the device has started (it starts once its start
  /// threshold is written), that is everything written: computed from `avail` then, because
  /// ALSA's pulse device answers `snd_pcm_delay` with 0 before its stream runs, which would
  /// count a whole buffer as heard that nobody heard (a position ahead by up to 0.3 s, and a
  /// pause right after a start or resume that skips what the device held).
  public func delayFrames() -> Int {
    if snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED {
      let avail = snd_pcm_avail_update(pcm)
      return avail < 0 ? 0 : max(0, bufferFrames - Int(avail))
    }
    var d: snd_pcm_sframes_t = 0
    guard snd_pcm_delay(pcm, &d) == 0 else { return 0 }
    return max(0, Int(d))
  }

  public func isRunning() -> Bool {
    let state = snd_pcm_state(pcm)
    return state == SND_PCM_STATE_RUNNING || state == SND_PCM_STATE_DRAINING
  }

  /// Takes back the latest frames written, where the device can (`canRewind`), keeping the
  /// next 10 ms alone. Render thread; no allocation.
  public func rewind(frames: Int) -> Int {
    guard canRewind, frames > 0 else { return 0 }
    _ = snd_pcm_avail(pcm)  // brings ALSA's idea of the card's position up to date
    let room = Int(snd_pcm_rewindable(pcm)) - rewindMargin
    guard room > 0 else { return 0 }
    let back = snd_pcm_rewind(pcm, snd_pcm_uframes_t(min(frames, room)))
    return back > 0 ? Int(back) : 0
  }

  /// Whether the plugin says its stream failed: PipeWire's ALSA plugin keeps the error of a
  /// stream the sound server ended (pw->error), ALSA's pulse plugin its stream's failed state,
  /// and both return it from the poll descriptors' revents. Not called while the render thread
  /// writes (it shares the poll descriptors).
  public func isBroken() -> Bool {
    guard deviceFDs > 0, let base = polls.baseAddress else { return false }
    for i in 0..<deviceFDs { polls[i].revents = 0 }
    var revents: UInt16 = 0
    return snd_pcm_poll_descriptors_revents(pcm, base, UInt32(deviceFDs), &revents) < 0
  }

  public func discard() { snd_pcm_drop(pcm) }
  public func prepare() { snd_pcm_prepare(pcm) }

  /// Plays out what the device holds, and makes it ready for what comes next. A non-blocking
  /// PCM's drain returns at once with EAGAIN, so this switches to blocking mode for it. A
  /// drained PCM is left in the SETUP state, where a write fails with EBADFD: the next track
  /// played after the end of the queue was taken for a device gone ("Paused: 'pulse' went
  /// away"), so it is prepared again here.
  public func drain() {
    snd_pcm_nonblock(pcm, 0)
    snd_pcm_drain(pcm)
    snd_pcm_nonblock(pcm, 1)
    snd_pcm_prepare(pcm)
  }
}
