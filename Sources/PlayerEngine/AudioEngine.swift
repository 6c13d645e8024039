import AudioCore
import Glibc
import Platform

/// Plays files through an output: a decode thread fills a `SampleRing`, a render thread drains
/// it into the device.
///
/// The render thread allocates nothing, takes no lock, and logs nothing: it talks to the rest
/// through atomics and semaphores. Files open on threads of their own (a slow disk or a
/// network mount holds neither the decode thread's commands nor the caller); devices open on
/// the decode thread, while the render thread is parked. Pause drops what the device holds (snd_pcm_drop) and
/// rewinds the ring to the last frame heard, so resume starts exactly there. Consecutive tracks
/// of one format flow through the ring without a gap; a format change lets the device play out,
/// then reopens it at the new format.
public final class AudioEngine: @unchecked Sendable {
  /// How the engine reaches files and devices; tests pass fakes.
  public struct Configuration: Sendable {
    public var deviceName: String
    public var openDecoder: @Sendable (String) throws(DecodeError) -> any AudioDecoder
    public var openOutput: @Sendable (String, PCMFormat) throws -> any AudioOutput
    /// The gain while another app ducks us (G9): −20 dB unless configured.
    public var duckGain: Float = 0.1
    /// The ramp for ducking and un-ducking.
    public var duckRamp: Duration = .milliseconds(40)
    /// The fade-in on resume, so a resumed stream never starts with a click.
    public var fadeIn: Duration = .milliseconds(5)
    /// The fade-out before a pause, a seek, a skip or a stop, for the same reason.
    public var fadeOut: Duration = .milliseconds(5)
    /// How much of what the device holds may be heard before the fade-out starts: a device
    /// that cannot take back more is cut at once instead (a pause is silent within this and
    /// the fade-out); a device that always leaves some (`framesKeptByRewind`) gets 10 ms more
    /// than those. Above what PulseStream leaves on PulseAudio (15 ms), whose count of it moves
    /// by a few frames between two readings: at 10 ms against its 10, one pause in four was cut. Not
    /// much more: a device that cannot take back is cut rather than heard on for long (ALSA's
    /// pulse plugin holds about 120 ms; on PipeWire's own ALSA plugin, whose stream may have no
    /// sink to play to while a headset switches profile, the ramp's write waited at 60 ms).
    public var fadeOutWithin: Duration = .milliseconds(25)
    /// Frames the render thread takes from the ring at a time. A pause does not wait for them
    /// (the wake pipe interrupts a write waiting for room), so they can be many: fewer wakeups.
    public var chunkFrames = Configuration.defaultChunkFrames
    /// 2048 frames: 46 ms at 44.1 kHz.
    public static let defaultChunkFrames = 2048
    /// Samples the ring holds (a power of two): about 1.5 s of 44.1 kHz stereo.
    public var ringSamples = Configuration.defaultRingSamples
    /// 131,072 samples (512 KB).
    public static let defaultRingSamples = 1 << 17
    /// How far from the end of a track (in what is left to decode) the next one starts
    /// opening, so that the decoder goes straight on at the boundary rather than wait there for
    /// a file to open on a thread of its own. Only for a track whose length is known (never a
    /// stream, which would connect early), and once a track.
    public var openAhead: Duration = .seconds(5)

    public init(
      deviceName: String,
      openDecoder: @escaping @Sendable (String) throws(DecodeError) -> any AudioDecoder,
      openOutput: @escaping @Sendable (String, PCMFormat) throws -> any AudioOutput
    ) {
      self.deviceName = deviceName
      self.openDecoder = openDecoder
      self.openOutput = openOutput
    }
  }

  /// Where a track's frames start in the ring.
  struct Segment {
    /// In the order begun; announcements go in this order.
    var id: Int
    var track: QueuedTrack
    var ringStart: Int  // absolute sample position in the ring
    var trackStartFrame: Int  // the track frame at ringStart
    var format: PCMFormat
    var duration: Double?
    var metadata: TrackMetadata
    var isSeekable: Bool
    /// A seek within the track heard before: not a new track.
    var isSeekWithin = false
    /// A stream's state, as last decoded (nil for a file).
    var live: LiveState? = nil
    /// The speed it is heard at: each frame in the ring from `ringStart` on is this many of
    /// the track's (time-stretched, the pitch kept, when not 1).
    var rate = 1.0
  }

  enum Command {
    /// `id`: the load's number, which `Shared.loadsFinished` reaches once it is over.
    case load(QueuedTrack, seconds: Double, continuing: Bool, id: Int)
    /// Within `track`, the one being heard (the decoder may be ahead, in the next one).
    /// `id`: a load's number, which `Shared.loadsFinished` reaches once the track is there
    /// again (at once, unless the decoder had moved on and the track opens afresh).
    case seek(QueuedTrack, seconds: Double, id: Int)
    case reopenDevice
    /// Closes the output and opens `name` at the same format (the user picked another output).
    case switchDevice(String)
    case unload
    case quit
  }

  struct Shared {
    var commands: [(Command, Int)] = []  // with a ticket
    var completed = 0
    var succeeded = false  // how the command with ticket `completed` went
    var segments: [Segment] = []
    var state: EngineState = .stopped
    var deviceName: String
    var decoding: QueuedTrack?  // the decode thread's current track
    var switchFailure: OutputOpenError?
    var ducked = false
    var muted = false
    /// The sleep timer's fade to silence, and its length in nanoseconds (`fadeOut`).
    var fadingOut = false
    var fadeNanoseconds: UInt64 = 0
    /// The speed asked for the track heard (`setRate`): it plays at it from where it was, and
    /// again whenever it begins anew (a seek, repeat one); other tracks ask `rateOf`.
    var rateSet: (track: QueuedTrack, rate: Double)?
    /// Why speeds other than 1× cannot be played (SoundTouch cannot be loaded), once found.
    var stretchProblem: String?
    var announced = 0  // id of the last segment said to be heard (or passed over, empty)
    /// The track of the last segment said to be heard: a seek that lands in another (the next
    /// was announced, and the seek went back into the one before) is news.
    var heardTrack: QueuedTrack?
    /// The position last shown, as (segment id, frame): it never moves back within a segment
    /// (a device whose delay reports come late would otherwise make it step back).
    var shown: (segment: Int, frame: Int) = (0, 0)
    var lastSegmentID = 0
    /// The track a load is opening, until it has opened (or nothing from it on would).
    var loading: QueuedTrack?
    var lastLoadID = 0
    var lastOpening = 0
    /// The number of the last load that is over: opened, failed, or replaced by a later command.
    var loadsFinished = 0
    /// Transport calls under way (`transport`): while any is, only they start the render thread.
    var held = 0
    /// Files that would not play, met by the decoder while the segment before them (`after`)
    /// was still to be announced: said when it is (`syncTracks`), so that a skip is news in
    /// the order it is heard, never before the track played ahead of it.
    var failuresAhead: [(after: Int, track: QueuedTrack, error: DecodeError)] = []
  }

  /// The lock-free flags between the render thread, the decode thread and control.
  let signals = EngineSignals()
  let renderWake = Platform.Semaphore()
  let decodeWake = Platform.Semaphore()
  /// Render → control: the render thread has parked (`parkRender` waits for it).
  let renderParked = Platform.Semaphore()
  /// Decode → control: a command is done (`perform` waits for it).
  let commandDone = Platform.Semaphore()
  /// Interrupts a write that waits for room in the device: written by `parkRender` and gain
  /// changes (any thread), read on the render thread. Non-blocking both ends. nil when the
  /// process had no descriptors for it: a write then waits for room without being woken.
  let wakePipe = try? WakePipe()
  let ring: SampleRing
  /// Decoders opened on their own threads, for the decode thread to take.
  let opened: OpenedFiles
  let configuration: Configuration
  let shared: Locked<Shared>
  /// Read by the render thread while it plays; replaced only while it is parked.
  nonisolated(unsafe) var output: (any AudioOutput)?
  /// The decode thread's time stretch, for tracks at a speed other than 1× (made when first
  /// needed, kept while the format stays).
  nonisolated(unsafe) var stretcher: TimeStretcher?
  let scratch: UnsafeMutableBufferPointer<Float>
  var renderThread: JoinableThread?
  var decodeThread: JoinableThread?
  let eventContinuation: AsyncStream<EngineEvent>.Continuation
  let nextTrack: @Sendable (QueuedTrack) -> QueuedTrack?
  let rateOf: @Sendable (QueuedTrack, TrackMetadata?) -> Double

  /// What the engine has to say; one consumer.
  public let events: AsyncStream<EngineEvent>

  /// The most channels a track may have: more is refused with the reason when it opens. 32
  /// covers every layout people keep (7.1.4 is 12, 22.2 is 24); a file that says more is
  /// almost always a damaged header, and each channel costs render memory up front.
  public static let maximumChannels = 32

  /// Decode thread: refuses a decoder whose channel count this engine cannot carry.
  static func checkChannels(_ decoder: any AudioDecoder, _ path: String)
    throws(DecodeError)
  {
    let channels = decoder.format.channels
    guard channels >= 1, channels <= maximumChannels else {
      throw DecodeError(
        .unsupported, path: path,
        reason: "it has \(channels) channels; hark plays files of 1 to \(maximumChannels)")
    }
  }

  /// `nextTrack` is asked, on the decode thread, what follows a track (for gapless playback);
  /// `rateOf`, what speed a track it begins plays at (given its tags), unless `setRate` said.
  public init(
    configuration: Configuration, nextTrack: @escaping @Sendable (QueuedTrack) -> QueuedTrack?,
    rateOf: @escaping @Sendable (QueuedTrack, TrackMetadata?) -> Double = { _, _ in 1 }
  ) {
    self.configuration = configuration
    self.nextTrack = nextTrack
    self.rateOf = rateOf
    ring = SampleRing(capacity: configuration.ringSamples)
    opened = OpenedFiles(waking: decodeWake)
    shared = Locked(Shared(deviceName: configuration.deviceName))
    // Room for a chunk of the most channels a track may have (more are refused when it opens:
    // the count comes from the file), allocated once for the render thread. It held 8, and a
    // 9-channel WAV overflowed it.
    // Not zero-filled: the render thread reads into it before it uses it, and left untouched
    // its pages are never made resident (a stereo track uses 16 KB of its 256).
    scratch = .allocate(capacity: configuration.chunkFrames * Self.maximumChannels)
    (events, eventContinuation) = AsyncStream.makeStream()
    do {
      renderThread = try JoinableThread(named: "hark-render") { [unowned self] in renderLoop() }
      decodeThread = try JoinableThread(named: "hark-decode") { [unowned self] in decodeLoop() }
    } catch {
      preconditionFailure("the audio engine cannot start its threads: \(error)")
    }
  }

  deinit {
    scratch.deallocate()
  }

  // MARK: Transport (any thread)

  /// Loads `track` at `seconds` and plays it (or leaves it paused there). When it will not
  /// open, says why (`trackFailed`) and loads the next one that does, from its start.
  /// `continuing`: the track heard goes on from there (the owner lines up another next track);
  /// it is not announced as starting.
  ///
  /// The file opens on a thread of its own. With `wait` (tests, and callers with nothing else
  /// to do) this returns once it has opened or nothing would; without it, at once: what was
  /// playing has stopped, `snapshot().loading` names the track, `play` and `pause` say how it
  /// starts once open, any later command replaces the load, and `loaded` says when it is ready.
  public func load(
    _ track: QueuedTrack, at seconds: Double = 0, playing: Bool, continuing: Bool = false,
    wait: Bool = true
  ) {
    transport {
      parkRender()
      let id = shared.withLock { s -> Int in
        s.lastLoadID += 1
        s.state = playing ? .playing : .paused
        return s.lastLoadID
      }
      perform(.load(track, seconds: seconds, continuing: continuing, id: id))
      if wait {
        while shared.withLock({ $0.loadsFinished < id }) { commandDone.wait(microseconds: 20_000) }
      }
      return ((), start: playing)
    }
  }

  /// Resumes from the last frame heard.
  public func play() {
    transport {
      let now = snapshot()
      if now.track == nil, now.loading != nil {
        setState(.playing)  // it starts once open
        return ((), start: true)
      }
      guard now.track != nil else { return ((), start: false) }
      let lost = signals.deviceLost.load(ordering: .acquiring) != 0
      // Already: the output is the render thread's.
      if now.state == .playing && !lost { return ((), start: false) }
      // Not playing, or stopped by a lost device, which leaves the render thread asked to play
      // (it looks at `output` whenever it is woken): park it before `output` is read or
      // replaced here. Parking a thread that plays nothing costs nothing.
      parkRender()
      // A stream the sound server ended while paused (the session server ends one that lost
      // its sink; PipeWire's ALSA plugin then fails at once): opened anew, not found gone.
      if lost || output == nil || output?.isBroken() == true { perform(.reopenDevice) }
      guard output != nil else { return ((), start: false) }
      setState(.playing)
      return ((), start: true)
    }
  }

  /// Stops at once: drops what the device holds; `play` resumes from the last frame heard.
  public func pause() {
    transport {
      parkRender()
      if snapshot().state == .playing { setState(.paused) }
      return ((), start: false)
    }
  }

  /// As `pause`, without the fade-out's ramp: what the device holds is dropped now. For an
  /// output that went away (G5), where the sound server has already moved the stream to
  /// another output (the speakers): the ramp, and what a sound server keeps before it (15 ms
  /// on PulseAudio, 25 on PipeWire), would be heard there. With the ramp, 10–50 ms of hark
  /// reached the speakers in 45 of 1,121 losses of a headset through PipeWire's pulse service
  /// (desktop-pipewire.sh's cycles); without it, none in 60.
  public func pauseAtOnce() {
    transport {
      signals.parkWithoutRamp.store(true, ordering: .releasing)
      parkRender()
      signals.parkWithoutRamp.store(false, ordering: .releasing)
      if snapshot().state == .playing { setState(.paused) }
      return ((), start: false)
    }
  }

  /// Moves within the track being heard (clamped to it); keeps playing or paused.
  ///
  /// Near the end of a track the decoder may have moved on to the next one (or to the end of
  /// the queue) while the device still plays this one: the track then opens afresh, and this
  /// waits for it up to `reopenWait`, so that the snapshot after it shows the track at its new
  /// position rather than nothing. A slower open (a network mount) is not waited for: the
  /// snapshot says it is `loading` until `loaded` says it is there again.
  public func seek(to seconds: Double) {
    transport {
      let now = snapshot()
      guard let track = now.track, now.isSeekable else { return ((), start: false) }
      reseek(track, to: seconds)
      return ((), start: now.state == .playing)
    }
  }

  /// Plays the track heard at `rate` (brought into 0.5…3, `PlaybackRate`), the pitch kept, from
  /// the frame heard now: what was decoded ahead at the old speed is decoded again, from
  /// there. It plays at it whenever it begins again (a seek, repeat one) until another track is
  /// heard; the tracks after it ask `rateOf`. A live stream plays at 1×.
  public func setRate(_ rate: Double) {
    transport {
      let now = snapshot()
      guard let track = now.track, !now.isLive else { return ((), start: false) }
      let rate = PlaybackRate(clamping: rate).value
      if rate != 1, let why = TimeStretcher.load() {
        cannotStretch(why)
        return ((), start: false)
      }
      shared.withLock { $0.rateSet = (track, rate) }
      guard abs(now.rate - rate) > 1e-6, now.isSeekable else { return ((), start: false) }
      reseek(track, to: now.position)
      return ((), start: now.state == .playing)
    }
  }

  /// Within a transport call: decodes `track`, the one heard, again from `seconds`.
  private func reseek(_ track: QueuedTrack, to seconds: Double) {
    parkRender()
    let id = shared.withLock { s -> Int in
      s.lastLoadID += 1
      return s.lastLoadID
    }
    perform(.seek(track, seconds: max(0, seconds), id: id))
    let deadline = monotonicNanoseconds() + Self.reopenWait
    while shared.withLock({ $0.loadsFinished < id }) && monotonicNanoseconds() < deadline {
      commandDone.wait(microseconds: 20_000)
    }
  }

  /// How long a seek waits for a track it has to open afresh (nanoseconds).
  static let reopenWait: UInt64 = 1_000_000_000

  /// How long a pause's ramp waits for room in the device before the pause is a cut
  /// (nanoseconds): the device holds 25 ms at most when it ramps, so room comes at once on a
  /// device that plays.
  static let rampWriteLimit: UInt64 = 100_000_000

  /// Moves playback to another device without a pause to speak of (G6): what the old one held
  /// is dropped and the new one goes on from the last frame heard. On failure the old device
  /// stays and the error is returned.
  public func setDevice(_ name: String) -> Result<Void, OutputOpenError> {
    transport {
      let wasPlaying = snapshot().state == .playing
      parkRender()
      let ok = perform(.switchDevice(name))
      let failure = shared.withLock { s -> OutputOpenError? in
        defer { s.switchFailure = nil }
        return s.switchFailure
      }
      let start = wasPlaying && output != nil
      if ok { return (.success(()), start: start) }
      return (
        .failure(failure ?? OutputOpenError(device: name, message: "cannot open it")),
        start: start
      )
    }
  }

  /// Closes the output and opens it again at the same position, paused or playing as it was:
  /// after the output went away and came back, or was replaced, a fresh device (and, through a
  /// sound server, a fresh stream on the sink that is current now).
  public func reopenOutput() {
    transport {
      let wasPlaying = snapshot().state == .playing
      parkRender()
      perform(.reopenDevice)
      return ((), start: wasPlaying && output != nil)
    }
  }

  /// Stops and forgets the track.
  public func stop() {
    transport {
      parkRender()
      perform(.unload)
      setState(.stopped)
      return ((), start: false)
    }
  }

  /// Brackets a transport call. While one runs, the decode thread never starts the render
  /// thread (a file that finishes opening leaves that to the call), so that every command runs
  /// with the render thread parked, as the call parked it: two loads in a row once had the
  /// first's opening start the render thread under the second's ring reset. At its end the
  /// render thread starts if `start` says so, the engine plays and no file is opening for it
  /// (then the opening starts it when it is done), decided under the lock the decode thread
  /// decides under, so that exactly one of them starts it.
  func transport<T>(_ body: () -> (T, start: Bool)) -> T {
    shared.withLock { $0.held += 1 }
    let (result, start) = body()
    let go = shared.withLock { s -> Bool in
      s.held -= 1
      guard start, s.held == 0, s.state == .playing, s.loading == nil else { return false }
      signals.renderWantsToPlay.store(true, ordering: .sequentiallyConsistent)
      return true
    }
    if go { renderWake.signal() }
    // The decode thread says nothing of what is heard while a call is under way
    // (`syncTracks`): it looks again now.
    decodeWake.signal()
    return result
  }

  /// Decode thread, when a file has opened: starts the render thread if the engine plays and
  /// no transport call is under way (it decides at its end).
  func startRenderIfWanted() {
    let go = shared.withLock { s -> Bool in
      guard s.held == 0, s.state == .playing else { return false }
      signals.renderWantsToPlay.store(true, ordering: .sequentiallyConsistent)
      return true
    }
    if go { renderWake.signal() }
  }

  /// Lowers the output while another app speaks (G9), or lifts it again.
  public func setDucked(_ ducked: Bool) {
    shared.withLock { $0.ducked = ducked }
    updateGain()
  }

  /// Silences the output (a game's soundtrack in silent mode, G2) without stopping it, or
  /// lets it be heard again; ramped like ducking.
  public func setMuted(_ muted: Bool) {
    shared.withLock { $0.muted = muted }
    updateGain()
  }

  /// Fades the output to silence over `seconds` (the sleep timer ended) without stopping it: it
  /// plays on, silent, until paused. `endFade` brings the gain back (after that pause).
  public func fadeOut(over seconds: Double) {
    shared.withLock { s in
      s.fadingOut = true
      s.fadeNanoseconds = UInt64(max(0, seconds) * 1e9)
    }
    updateGain()
  }

  /// Ends `fadeOut`: the gain goes back over the duck ramp (paused, the next start fades in).
  public func endFade() {
    shared.withLock { $0.fadingOut = false }
    updateGain()
  }

  func updateGain() {
    let (gain, ramp) = shared.withLock { s -> (Float, UInt64) in
      if s.fadingOut { return (0, s.fadeNanoseconds) }
      return (s.muted ? 0 : s.ducked ? configuration.duckGain : 1, 0)
    }
    signals.targetRampNanoseconds.store(ramp, ordering: .relaxed)
    signals.targetGainBits.store(gain.bitPattern, ordering: .releasing)
    wakePipe?.wake()  // heard now, not when the device's buffer has played out
  }

  /// The transport now.
  public func snapshot() -> EngineSnapshot {
    let played = ring.releasedPosition
    // Between the render thread's measurements (once a write, a period or so apart), what is
    // heard moves on with the clock, up to what the device held.
    let playing = signals.renderIsPlaying.load(ordering: .acquiring)
    let at = signals.heardAt.load(ordering: .acquiring)
    let held = signals.heardDelay.load(ordering: .relaxed)
    let now = monotonicNanoseconds()
    let advancing = playing && signals.outputRunning.load(ordering: .acquiring)
    return shared.withLock { s in
      let segment = s.segments.last { $0.ringStart <= played } ?? s.segments.first
      var position = 0.0
      if let seg = segment {
        // Frames heard of the segment, each `rate` of the track's.
        var out = max(0, played - seg.ringStart) / seg.format.channels
        if playing && at > 0 && now > at {
          out += min(held, Int(Double(now - at) * Double(seg.format.sampleRate) / 1e9))
        }
        var frames =
          seg.trackStartFrame + (seg.rate == 1 ? out : Int((Double(out) * seg.rate).rounded()))
        // Never back within a segment: between two measurements the clock may have carried it
        // a little past what the next one says was heard (a pause resumes from that frame all
        // the same; the position shown waits for it).
        if s.shown.segment == seg.id { frames = max(frames, s.shown.frame) }
        s.shown = (seg.id, frames)
        position = seg.format.seconds(frames)
        if let d = seg.duration { position = min(position, d) }
      }
      return EngineSnapshot(
        state: s.state, track: segment?.track, position: position, duration: segment?.duration,
        format: segment?.format, metadata: segment?.metadata,
        isSeekable: segment?.isSeekable ?? false,
        deviceName: s.deviceName,
        lookahead: segment == nil || s.decoding == segment?.track
          ? .undecided : s.decoding.map { .next($0) } ?? .end,
        loading: s.loading,
        isAdvancing: advancing && s.state == .playing,
        isLive: segment?.live != nil && segment?.duration == nil,
        reconnecting: segment?.live?.reconnecting, liveStation: segment?.live?.station,
        segment: segment?.id ?? 0, rate: segment?.rate ?? 1,
        canChangeRate: s.stretchProblem == nil)
    }
  }

  /// The render thread, for tests that watch what it does.
  var renderThreadID: pthread_t? { renderThread?.id }

  /// Stops both threads and closes the device.
  public func shutdown() {
    parkRender()
    signals.renderQuit.store(true, ordering: .releasing)
    wakePipe?.wake()
    renderWake.signal()
    renderThread?.join()
    renderThread = nil
    perform(.quit)
    decodeThread?.join()
    decodeThread = nil
    output = nil
    eventContinuation.finish()
  }

  // MARK: Coordination

  func setState(_ state: EngineState) { shared.withLock { $0.state = state } }

  /// Asks the render thread to stop and waits until it has: at once, even when it waits for room
  /// in the device (the wake pipe interrupts that).
  func parkRender() {
    signals.renderWantsToPlay.store(false, ordering: .sequentiallyConsistent)
    wakePipe?.wake()
    renderWake.signal()
    // It answers within a write (the wake pipe interrupts a wait for room), except while it
    // drains the device at the end of the queue or a format change: as long as that lasts.
    // Never given up on: the commands that follow replace the ring's read side and the output
    // the render thread uses, which would be a race while it still plays.
    var waited = 0
    while !signals.renderAtRest.load(ordering: .sequentiallyConsistent) {
      if !renderParked.wait(microseconds: 100_000) {
        // Again: a ramp's write waits for room on its own (`rampWriteLimit`) and looks at
        // the time only when woken.
        wakePipe?.wake()
        waited += 1
        if waited == 20 {
          eventContinuation.yield(
            .fault("the audio output has not answered for 2 s (still waiting for it)"))
        }
      }
    }
  }

  /// Hands a command to the decode thread and waits until it is done; whether it succeeded.
  @discardableResult
  func perform(_ command: Command) -> Bool {
    let ticket = shared.withLock { s -> Int in
      let t = (s.commands.last?.1 ?? s.completed) + 1
      s.commands.append((command, t))
      return t
    }
    decodeWake.signal()
    while true {
      let done = shared.withLock { s -> Bool? in s.completed < ticket ? nil : s.succeeded }
      if let done { return done }
      // Signalled after each command; another caller's completion may wake this one first,
      // so it looks again, and a signal it took from another is made up by the timeout.
      commandDone.wait(microseconds: 20_000)
    }
  }

}

/// Decoders opened off the decode thread (`AudioEngine.startOpening`), each with its ticket;
/// the decode thread takes the one it waits for and lets the others go. Held by the opening
/// threads too, so that one that answers after the engine has gone has somewhere to put it.
final class OpenedFiles: @unchecked Sendable {
  typealias Outcome = Result<(decoder: any AudioDecoder, frame: Int), DecodeError>
  private let results = Locked<[Int: UncheckedOutcome]>([:])
  private let wake: Platform.Semaphore

  /// A decoder crosses from its opening thread to the decode thread once, through the mutex.
  private struct UncheckedOutcome: @unchecked Sendable { let outcome: Outcome }

  init(waking wake: Platform.Semaphore) { self.wake = wake }

  func post(_ ticket: Int, _ outcome: Outcome) {
    results.withLock { $0[ticket] = UncheckedOutcome(outcome: outcome) }
    wake.signal()
  }

  /// The outcome for `ticket` if it has come; any others but `keeping`'s are dropped (their
  /// decoders close).
  func take(_ ticket: Int, keeping kept: Int? = nil) -> Outcome? {
    let (mine, others) = results.withLock { r -> (UncheckedOutcome?, [UncheckedOutcome]) in
      let mine = r.removeValue(forKey: ticket)
      let keep = kept.flatMap { r.removeValue(forKey: $0) }
      let others = Array(r.values)
      r = [:]
      if let kept, let keep { r[kept] = keep }
      return (mine, others)
    }
    _ = others  // closed here, on the decode thread, outside the lock
    return mine?.outcome
  }
}
