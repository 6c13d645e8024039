import AudioCore
import CPulse
import Glibc
import Platform

/// A playback stream on the sound server (PulseAudio, or PipeWire's PulseAudio service), played
/// through libpulse itself rather than ALSA's `pulse` plugin. Owns its mainloop, its context
/// and its stream, and lets go of them in `deinit`.
///
/// Why not the plugin: it runs a libpulse thread of its own beside the render thread, and every
/// write, every delay and every wait crosses between the two under a lock (through PulseAudio's
/// null sink, 250 wakeups and 1,300 system calls a second at a 100 ms buffer), and it cannot
/// take back what it has sent. Here the render thread alone drives a `pa_mainloop` (no other
/// thread), waits in one poll on the server's socket and the engine's wake pipe, and a change
/// of gain rewrites what the server still holds (`rewind`: a write with a negative seek, which
/// the server applies to its queue and, where the sink allows, to what the sink has mixed
/// ahead). So the buffer can be long (few wakeups) while a duck is still heard at once: the
/// buffer no longer decides how soon a gain change is heard.
///
/// Opened and closed by the engine off the render thread (the decode thread, with the render
/// thread parked); played by the render thread only. `AudioOutput`'s contract holds: `write`
/// takes what the stream has room for and waits for room or the wake pipe; a server that goes
/// away, or a stream it ends, is `.deviceGone`.
public final class PulseStream: AudioOutput {
  public let format: PCMFormat
  public let deviceName: String
  /// The frames the server is asked to keep queued (the stream's target length).
  public let bufferFrames: Int
  /// The frames the server asks for at a time: the render thread wakes about once per this.
  public let requestFrames: Int

  private let mainloop: OpaquePointer
  private let context: OpaquePointer
  private let stream: OpaquePointer
  private let frameBytes: Int
  /// The mainloop's poll, with the wake pipe beside libpulse's descriptors (CPulse's Wake.c).
  private let wake: UnsafeMutablePointer<cpulse_wake>
  private let wakeSlots: UnsafeMutablePointer<pollfd>
  /// What the server said, set by libpulse's callbacks on the thread that runs the mainloop.
  private let news: UnsafeMutablePointer<News>
  /// Frames written since the stream last began filling (opened, discarded, drained), less
  /// those taken back: until it starts, all of them are held and none heard.
  private var queued = 0
  /// Frames the next write goes back over (a `rewind`): it is written that far back, over what
  /// the server holds.
  private var pendingRewind = 0
  /// Frames of the last rewind not yet written again. Until they are, the writes stay in
  /// libpulse, the rewind with them: a server told of it first would play on, dry, from the
  /// few frames sent with it (on a sink mixing seconds ahead, an underrun and a restart from
  /// the prebuffer, heard as a gap, for each duck). Nor are they held to the room the server
  /// asked for: they replace what it holds.
  private var rewriting = 0
  /// 40 ms of silence, written after a fade-out's ramp (`send`).
  private let silence: UnsafeMutableBufferPointer<Float>
  /// When the last rewind was taken (monotonic ns): a rewrite not done within
  /// `rewriteWithin` of it is sent as it is.
  private var rewoundAt: UInt64 = 0
  /// Corked by `discard`; the next write uncorks it.
  private var corked = false
  /// When the mainloop last ran (monotonic ns): what was written by then has been sent.
  private var pumpedAt: UInt64 = 0
  /// Frames next to be heard that a rewind leaves alone, so that the rewrite reaches the
  /// server before it plays them: 15 ms on PulseAudio, for a render thread a little late and a
  /// server that has handed a little more to its sink than it says (with 10 ms, one run of
  /// clicks.sh in eight had a ramp come too late in part through PulseAudio's null sink; with
  /// 15, none of ten; with 30, a pause was heard 60 ms long where 50 is the limit:
  /// audio-playback.sh). 25 ms on PipeWire's pulse service, whose graph takes a whole quantum
  /// at a time and cannot give it back: a rewrite that lands behind where it has read loses its
  /// start, and a pause's ramp lost so was a cut (15 ms: 3 runs of clicks.sh in 10 had one).
  public let framesKeptByRewind: Int
  /// The server is PipeWire's pulse service: its timing is asked for afresh after a flush too.
  private let onPipeWire: Bool

  /// What libpulse's callbacks report.
  private struct News {
    /// The server started playing the stream (its prebuffer is full), since the last
    /// discard, drain or underflow.
    var started = false
    /// The server ran out of what the stream held (it plays again once its prebuffer is
    /// full): everything written before has been heard. Cleared by the render thread.
    var underflowed = false
    /// The server is PipeWire's pulse service (its name says so).
    var pipewire = false
  }

  /// The default target length: long, for few wakeups (about 0.03 s of CPU per minute
  /// played through PulseAudio's null sink at 500 ms, against 0.11 at 100 ms, libpulse alone;
  /// docs/PERFORMANCE.md). A gain change does not wait for it (`rewind`), nor does a pause
  /// (`discard`).
  ///
  /// On PipeWire's pulse service this buffer also sets the graph's quantum while hark plays
  /// alone: 2,048 frames (43 ms at 48 kHz), which the graph takes at once and cannot give
  /// back, so a pause is silent up to a quantum later than on PulseAudio. A shorter graph
  /// latency was tried and measured (the minimum request raised so that the service asks for 11
  /// or 6 ms): PipeWire, its pulse service and WirePlumber then took 1.2–1.3 and 1.6–1.8 CPU s
  /// per minute played, against 0.4–0.5 here (PipeWire 1.6.8, a null sink, hark alone): three
  /// to four times the desktop's cost for every minute played, to hear a pause sooner. Kept.
  public static let defaultLatency: Duration = .milliseconds(500)
  /// How long a connection or a stream may take to be ready before the open fails.
  static let openTimeout: Duration = .seconds(5)

  /// The stream's buffer for `format` and a target length of about `latency`, in frames: the
  /// target length; what the server asks for at a time, a third of it (the render thread wakes
  /// about three times a buffer); and the prebuffer, one request (the stream starts once that
  /// much is there: a first sound or a resume does not wait for the whole buffer, and the rest
  /// follows at once from the ring).
  public static func buffer(for format: PCMFormat, latency: Duration)
    -> (target: Int, request: Int, prebuffer: Int)
  {
    let target = max(3, format.frames(in: Double(latency.microseconds) / 1e6))
    let request = target / 3
    return (target, request, request)
  }

  /// Opens a stream on `sink` (nil: the server's default, or `$PULSE_SINK`) of `server` (nil:
  /// the one libpulse finds, `$PULSE_SERVER` or the session's), at `format`, with a target
  /// length of about `latency`; `deviceName` is the name the user gave ("pulse"). Throws
  /// `FormatRefused` for a format the server cannot take (more than 32 channels, a rate above
  /// 384 kHz), and `PulseStreamError` when the server cannot be reached or will not make the
  /// stream.
  public init(
    deviceName: String, server: String? = nil, sink: String? = nil, format: PCMFormat,
    latency: Duration = PulseStream.defaultLatency, clientName: String = "hark"
  ) throws {
    guard format.channels <= Int(PA_CHANNELS_MAX), format.sampleRate <= Int(PA_RATE_MAX) else {
      throw FormatRefused(
        device: deviceName, format: format,
        detail: "the sound server takes at most \(PA_CHANNELS_MAX) channels and \(PA_RATE_MAX) Hz")
    }
    if let why = cpulse_load() {
      throw PulseStreamError(
        device: deviceName, reason: "cannot load libpulse (\(String(cString: why)))")
    }
    guard let ml = pa_mainloop_new() else {
      throw PulseStreamError(device: deviceName, reason: "cannot make a libpulse mainloop")
    }
    // The stream's role and hark's name for the desktop's policies come from `$PULSE_PROP`,
    // which libpulse adds to the client's properties (hark's StreamIdentity sets it, as it did
    // for ALSA's pulse plugin): no role is set here, so a call's stream stays a call's.
    let props = pa_proplist_new()
    pa_proplist_sets(props, PA_PROP_APPLICATION_NAME, clientName)
    guard let ctx = pa_context_new_with_proplist(pa_mainloop_get_api(ml), clientName, props) else {
      pa_proplist_free(props)
      pa_mainloop_free(ml)
      throw PulseStreamError(device: deviceName, reason: "cannot make a libpulse context")
    }
    // Frees what was made so far, for each way out below.
    func fail(_ reason: String, stream: OpaquePointer? = nil) -> PulseStreamError {
      if let stream {
        pa_stream_disconnect(stream)
        pa_stream_unref(stream)
      }
      pa_context_disconnect(ctx)
      pa_context_unref(ctx)
      pa_proplist_free(props)
      pa_mainloop_free(ml)
      return PulseStreamError(device: deviceName, reason: reason)
    }
    let deadline = monotonicNanoseconds() / 1_000 + Self.openTimeout.microseconds
    // Autospawn as the client's configuration says, as ALSA's pulse plugin connects.
    if pa_context_connect(ctx, server, PA_CONTEXT_NOFLAGS, nil) < 0 {
      throw fail(Self.words(pa_context_errno(ctx), "cannot reach the sound server"))
    }
    while true {
      let state = pa_context_get_state(ctx)
      if state == PA_CONTEXT_READY { break }
      if cpulse_context_is_good(state) == 0 || !Self.iterate(ml, until: deadline) {
        throw fail(Self.words(pa_context_errno(ctx), "cannot reach the sound server"))
      }
    }
    var spec = pa_sample_spec(
      format: PA_SAMPLE_FLOAT32LE, rate: UInt32(format.sampleRate),
      channels: UInt8(format.channels))
    // ALSA's channel order, as the pulse plugin maps it: what the engine plays to every
    // output, so that a file sounds the same on each.
    var map = pa_channel_map()
    pa_channel_map_init_extend(&map, UInt32(format.channels), PA_CHANNEL_MAP_ALSA)
    guard let s = pa_stream_new_with_proplist(ctx, "Playback", &spec, &map, props) else {
      throw fail(Self.words(pa_context_errno(ctx), "the sound server would not make a stream"))
    }
    let frameBytes = 4 * format.channels
    let (target, request, prebuffer) = Self.buffer(for: format, latency: latency)
    var attr = pa_buffer_attr(
      maxlength: UInt32.max, tlength: UInt32(target * frameBytes),
      prebuf: UInt32(prebuffer * frameBytes), minreq: UInt32(request * frameBytes),
      fragsize: UInt32.max)
    let flags = pa_stream_flags_t(
      rawValue: PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue)
    let slots = UnsafeMutablePointer<pollfd>.allocate(capacity: Self.pollSlots)
    slots.initialize(repeating: pollfd(fd: -1, events: 0, revents: 0), count: Self.pollSlots)
    let w = UnsafeMutablePointer<cpulse_wake>.allocate(capacity: 1)
    w.initialize(
      to: cpulse_wake(wake_fd: -1, woken: 0, capacity: UInt(Self.pollSlots), fds: slots))
    let n = UnsafeMutablePointer<News>.allocate(capacity: 1)
    n.initialize(to: News())
    func release() {
      w.deallocate()
      slots.deallocate()
      n.deallocate()
    }
    pa_stream_set_started_callback(
      s, { _, news in news?.assumingMemoryBound(to: News.self).pointee.started = true }, n)
    pa_stream_set_underflow_callback(
      s,
      { _, news in
        news?.assumingMemoryBound(to: News.self).pointee.started = false
        news?.assumingMemoryBound(to: News.self).pointee.underflowed = true
      }, n)
    // Which server it is, asked now and answered while the stream is made.
    let asked = pa_context_get_server_info(
      ctx,
      { _, info, news in
        guard let name = info?.pointee.server_name else { return }
        news?.assumingMemoryBound(to: News.self).pointee.pipewire =
          String(cString: name).contains("PipeWire")
      }, n)
    if pa_stream_connect_playback(s, sink, &attr, flags, nil, nil) < 0 {
      release()
      throw fail(
        Self.words(pa_context_errno(ctx), "the sound server would not make a stream"), stream: s)
    }
    while true {
      let state = pa_stream_get_state(s)
      if state == PA_STREAM_READY { break }
      if state != PA_STREAM_CREATING || !Self.iterate(ml, until: deadline) {
        if let asked { pa_operation_unref(asked) }
        release()
        throw fail(
          Self.words(pa_context_errno(ctx), "the sound server would not make a stream"),
          stream: s)
      }
    }
    if let asked {
      // Answered before the stream was made, as a rule (asked first, on the same connection).
      while pa_operation_get_state(asked) == PA_OPERATION_RUNNING
        && Self.iterate(ml, until: deadline)
      {}
      pa_operation_unref(asked)
    }
    pa_proplist_free(props)
    mainloop = ml
    context = ctx
    stream = s
    wake = w
    wakeSlots = slots
    news = n
    pa_mainloop_set_poll_func(ml, cpulse_poll_waking, w)
    self.format = format
    self.deviceName = deviceName
    self.frameBytes = frameBytes
    // What the server settled on (it may round or cap what was asked).
    let got = pa_stream_get_buffer_attr(s)?.pointee
    bufferFrames = got.map { Int($0.tlength) / frameBytes } ?? target
    requestFrames = got.map { Int($0.minreq) / frameBytes } ?? request
    onPipeWire = n.pointee.pipewire
    framesKeptByRewind = format.frames(in: onPipeWire ? 0.025 : 0.015)
    silence = .allocate(capacity: format.frames(in: 0.04) * format.channels)
    silence.initialize(repeating: 0)
  }

  deinit {
    pa_stream_set_started_callback(stream, nil, nil)
    pa_stream_set_underflow_callback(stream, nil, nil)
    pa_stream_disconnect(stream)
    pa_stream_unref(stream)
    pa_context_disconnect(context)
    pa_context_unref(context)
    pa_mainloop_free(mainloop)
    wake.deallocate()
    wakeSlots.deallocate()
    news.deallocate()
    silence.deallocate()
  }

  /// Room for libpulse's descriptors (one or two: the server's socket, its own wakeup) and the
  /// wake pipe.
  private static let pollSlots = 16

  /// One round of the mainloop, waiting at most until `deadline` (monotonic µs); false when
  /// that has passed or the mainloop failed. Opening only.
  private static func iterate(_ ml: OpaquePointer, until deadline: UInt64) -> Bool {
    let now = monotonicNanoseconds() / 1_000
    guard now < deadline else { return false }
    guard pa_mainloop_prepare(ml, Int32(min(deadline - now, 1_000_000))) >= 0 else { return false }
    return pa_mainloop_poll(ml) >= 0 && pa_mainloop_dispatch(ml) >= 0
  }

  private static func words(_ code: Int32, _ what: String) -> String {
    guard code != 0, let text = pa_strerror(code) else { return what }
    return "\(what) (\(String(cString: text)))"
  }

  // MARK: The render thread

  /// Sends what libpulse has queued for the server and takes in what the server said, without
  /// waiting. libpulse writes to its socket only from the mainloop: a write, a cork or a flush
  /// reaches the server at the next round.
  private func pump() {
    if pa_mainloop_prepare(mainloop, 0) >= 0, pa_mainloop_poll(mainloop) >= 0 {
      _ = pa_mainloop_dispatch(mainloop)
    }
    pumpedAt = monotonicNanoseconds()
    noteUnderflow()
  }

  /// How long `delayFrames` lets written frames wait in libpulse before it sends them: the
  /// render thread writes what the server asked for in a few chunks, measuring after each, and
  /// one send for all of them (when the last fills the request) wakes the server once, not once
  /// a chunk. A render thread short of frames (a slow stream) still sends what it wrote this
  /// soon.
  static let sendWithin: UInt64 = 20_000_000
  /// How long a rewrite may stay in libpulse (see `rewriting`): the engine writes it again
  /// from its ring, a few milliseconds for seconds of sound; this is for a render thread held
  /// up, so that the server is not left playing the old frames for long.
  static let rewriteWithin: UInt64 = 40_000_000

  /// After an underflow, what was written before it has been heard.
  private func noteUnderflow() {
    guard news.pointee.underflowed else { return }
    news.pointee.underflowed = false
    queued = 0
  }

  /// Whether the server still plays the stream: `.deviceGone`'s code when not.
  private var gone: Int32? {
    if pa_context_get_state(context) != PA_CONTEXT_READY { return -EIO }
    if pa_stream_get_state(stream) != PA_STREAM_READY { return -ENODEV }
    return nil
  }

  public func write(_ samples: UnsafeBufferPointer<Float>, wakingOn wakeFD: Int32)
    -> OutputWriteResult
  {
    guard let base = samples.baseAddress else { return .written(0) }
    let frames = samples.count / format.channels
    while true {
      if let code = gone { return .deviceGone(code: code) }
      let room = pa_stream_writable_size(stream)  // (size_t)-1 on failure
      // What a rewind took back is written again over what the server holds, whatever room
      // it has asked for: the queue does not grow by it (the server counts the seek, and asks
      // for that much more later).
      let fit = (room > 0 ? room / frameBytes : 0) + rewriting
      if fit > 0 {
        let n = min(frames, fit)
        let back = pendingRewind
        let wasRewriting = rewriting > 0
        let rc = pa_stream_write(
          stream, base, n * frameBytes, nil, Int64(-back * frameBytes), PA_SEEK_RELATIVE)
        if rc < 0 { return .deviceGone(code: -EIO) }
        pendingRewind = 0
        rewriting = max(0, rewriting - n)
        queued += n - back
        if corked {
          corked = false
          pa_operation_unref(pa_stream_cork(stream, 0, nil, nil))
        }
        // Sent now when this filled what the server asked for (the render thread goes on to
        // wait), or finished rewriting what it held (a new gain, heard as soon as it is
        // there); otherwise the next write follows at once.
        if rewriting == 0 && (n == fit || wasRewriting) { pump() }
        return .written(n)
      }
      // No room: wait for the server's request, or for the engine.
      wake.pointee.wake_fd = wakeFD
      wake.pointee.woken = 0
      // A second at most: a server that stops answering is noticed by the next round.
      guard pa_mainloop_prepare(mainloop, 1_000_000) >= 0, pa_mainloop_poll(mainloop) >= 0,
        pa_mainloop_dispatch(mainloop) >= 0
      else { return .deviceGone(code: -EIO) }
      wake.pointee.wake_fd = -1
      pumpedAt = monotonicNanoseconds()
      noteUnderflow()
      if wake.pointee.woken != 0 { return .written(0) }
    }
  }

  /// Frames written and not yet heard: the server's latency for the stream once it plays; all
  /// of what was written before it has started.
  public func delayFrames() -> Int {
    max(0, serverDelayFrames() - pendingRewind)
  }

  /// What the server holds, less nothing: a rewind not yet written is still in it.
  private func serverDelayFrames() -> Int {
    let now = monotonicNanoseconds()
    if now &- pumpedAt >= Self.sendWithin
      && (rewriting == 0 || now &- rewoundAt >= Self.rewriteWithin)
    {
      pump()
    }
    guard news.pointee.started && !corked else { return max(0, queued) }
    var usec: pa_usec_t = 0
    var negative: Int32 = 0
    guard pa_stream_get_latency(stream, &usec, &negative) == 0 else { return max(0, queued) }
    if negative != 0 { return 0 }
    return Int(usec * UInt64(format.sampleRate) / 1_000_000)
  }

  /// Playing what it holds: the server said it started (its prebuffer full), or its timing
  /// says it passes the stream on to its sink. (Right after a skip the started news had at
  /// times not come in yet when an interruption paused the stream, which was then taken for
  /// not started and cut instead of ramped down.)
  public func isRunning() -> Bool {
    guard !corked else { return false }
    if news.pointee.started { return true }
    guard let timing = pa_stream_get_timing_info(stream) else { return false }
    return timing.pointee.playing != 0
  }

  /// Takes back up to `frames` of the latest frames written and not yet heard, keeping the next
  /// 15 ms alone (`framesKeptByRewind`; 25 on PipeWire): the next write goes that far back,
  /// over what the server holds. The server replaces what it has queued and, where the sink can
  /// rewind, what it has mixed ahead; where it cannot, what the sink already holds plays as it
  /// was and the rest is the new.
  public func rewind(frames: Int) -> Int {
    guard frames > 0, gone == nil else { return 0 }
    // What the server holds: its latency once the stream plays (its own count, right even
    // when an underflow's news came after the writes that refilled it), all that was written
    // before (`delayFrames`), as the server says it now, not interpolated from its last
    // report: on PipeWire's pulse service that was off by a few milliseconds at any time and
    // by up to 100 ms after a flush (its read position moves a quantum at a time); on
    // PulseAudio, with both cores busy, the last report was at times 70 ms old and the server
    // had read further than the count foretold. Either way the rewrite landed behind what the
    // server had read, and the ramp lost its start, heard as a click (clicks.sh beside two busy
    // loops on PulseAudio: 3 runs in 100 before, none in 40 since, where the ramp's start was
    // at least 2.5 ms ahead of the server's reading in all 280 pauses, seeks and skips). A
    // local server answers within a millisecond.
    refreshTiming()
    guard gone == nil else { return 0 }
    let held = serverDelayFrames() - pendingRewind
    let back = min(frames, held - framesKeptByRewind)
    guard back > 0 else { return 0 }
    pendingRewind += back
    rewriting += back
    rewoundAt = monotonicNanoseconds()
    return back
  }

  /// Asks the server for its timing now and waits for the answer (20 ms at most; a local
  /// server answers within a millisecond): before a rewind, and after a flush on PipeWire.
  private func refreshTiming() {
    guard let op = pa_stream_update_timing_info(stream, nil, nil) else { return }
    defer { pa_operation_unref(op) }
    let until = monotonicNanoseconds() + 20_000_000
    while pa_operation_get_state(op) == PA_OPERATION_RUNNING && gone == nil {
      let now = monotonicNanoseconds()
      guard now < until,
        pa_mainloop_prepare(mainloop, Int32((until - now) / 1_000)) >= 0,
        pa_mainloop_poll(mainloop) >= 0, pa_mainloop_dispatch(mainloop) >= 0
      else { break }
    }
    pumpedAt = monotonicNanoseconds()
    noteUnderflow()
  }

  /// After a fade-out's ramp, 40 ms of silence (`silence`): PipeWire's pulse service counts
  /// less than it still has to play (what its graph has taken), so the drop that follows,
  /// timed by its count, cut the ramp before it was heard (every pause on PipeWire 0.3.65 and
  /// 1.6.8 was a cut); now it drops silence. On PulseAudio the count is right and the silence
  /// is never heard either.
  public func send() -> Int {
    let frames = silence.count / format.channels
    let written =
      gone == nil
      && pa_stream_write(stream, silence.baseAddress, silence.count * 4, nil, 0, PA_SEEK_RELATIVE)
        == 0
    if written { queued += frames }
    rewriting = 0
    pump()
    return written ? frames : 0
  }

  /// Silence at once: the stream is corked (the server stops it, and lets its sink idle) and
  /// what it holds is dropped; the next write uncorks it, and it starts again once its
  /// prebuffer is full.
  public func discard() {
    guard gone == nil else { return }
    pa_operation_unref(pa_stream_cork(stream, 1, nil, nil))
    pa_operation_unref(pa_stream_flush(stream, nil, nil))
    // The server's count after the flush, rather than libpulse's interpolation from before it:
    // from that, after the next start, PipeWire's pulse service was taken to have played up to
    // 100 ms more than it had, the ring let go of what it still held, and the next pause was
    // a cut.
    pump()
    if onPipeWire { refreshTiming() }
    corked = true
    news.pointee.started = false
    queued = 0
    pendingRewind = 0
    rewriting = 0
  }

  public func prepare() {}

  /// Whether the server has ended the stream or gone: what it said since the mainloop last
  /// ran is taken in first, without waiting. While the render thread is parked only (the
  /// engine's `play`, before it resumes): the mainloop is the render thread's otherwise.
  public func isBroken() -> Bool {
    pump()
    return gone != nil
  }

  /// Plays out what the stream holds: waits for the server to say it has.
  public func drain() { _ = drain(wakingOn: -1) }

  /// Plays out what the stream holds, waiting for the server to say it has or for `wakeFD`
  /// (false then: what is left plays on, and a pause or a new gain takes it back as ever).
  /// Half a second of buffer is too long to make a pause or a duck wait for.
  public func drain(wakingOn wakeFD: Int32) -> Bool {
    guard gone == nil else { return true }
    if corked {
      corked = false
      pa_operation_unref(pa_stream_cork(stream, 0, nil, nil))
    }
    guard let op = pa_stream_drain(stream, nil, nil) else { return true }
    defer { pa_operation_unref(op) }
    wake.pointee.wake_fd = wakeFD
    defer { wake.pointee.wake_fd = -1 }
    while pa_operation_get_state(op) == PA_OPERATION_RUNNING && gone == nil {
      wake.pointee.woken = 0
      guard pa_mainloop_prepare(mainloop, 1_000_000) >= 0, pa_mainloop_poll(mainloop) >= 0,
        pa_mainloop_dispatch(mainloop) >= 0
      else { break }
      pumpedAt = monotonicNanoseconds()
      noteUnderflow()
      if wake.pointee.woken != 0 && pa_operation_get_state(op) == PA_OPERATION_RUNNING {
        return false
      }
    }
    news.pointee.started = false
    queued = 0
    pendingRewind = 0
    rewriting = 0
    return true
  }
}

/// The sound server could not be reached, or would not make the stream.
/// Said as "cannot play on '<device>': <description>" by the player.
public struct PulseStreamError: Error, Hashable, Sendable, CustomStringConvertible {
  public var device: String
  public var reason: String
  public var description: String { reason }
}

extension Duration {
  fileprivate var microseconds: UInt64 {
    UInt64(max(0, components.seconds)) * 1_000_000
      + UInt64(max(0, components.attoseconds)) / 1_000_000_000_000
  }
}
