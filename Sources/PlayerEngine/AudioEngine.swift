import AudioCore
import Glibc
import Synchronization

/// A queue entry the engine plays: an identity the queue understands and a file.
public struct QueuedTrack: Hashable, Sendable {
  public var id: Int
  public var path: String
  public init(id: Int, path: String) {
    self.id = id
    self.path = path
  }
}

/// What the engine tells its owner.
public enum EngineEvent: Sendable, Equatable {
  /// A file could not be opened or failed midway; the engine went on with the next one.
  case trackFailed(QueuedTrack, DecodeError)
  /// The output device went away mid-write (ENODEV, EBADFD, EIO...): playback is paused.
  case deviceLost(device: String, code: Int32)
  /// The output device could not be opened.
  case deviceFailed(String)
  /// Everything queued has been heard.
  case endOfQueue
  /// The track being heard is now this one (the previous one ended, gaplessly or not).
  case nowHearing(QueuedTrack)
  /// The device has started playing what it was given (after a start, a resume or a seek):
  /// from now on the position moves with the clock (`EngineSnapshot.isAdvancing`).
  case outputStarted
}

/// An output that would not open.
public struct OutputOpenError: Error, Hashable, Sendable, CustomStringConvertible {
  public var device: String
  public var message: String
  public init(device: String, message: String) {
    self.device = device
    self.message = message
  }
  public var description: String { message }
}

/// The transport's state, as the owner sees it.
public enum EngineState: Sendable, Equatable {
  case stopped, playing, paused
}

/// A moment's view of the engine, cheap to take from any thread.
public struct EngineSnapshot: Sendable, Equatable {
  public var state: EngineState
  public var track: QueuedTrack?
  /// Seconds heard of the current track (from the device's delay, not what was decoded).
  public var position: Double
  public var duration: Double?
  public var format: PCMFormat?
  public var metadata: TrackMetadata?
  public var isSeekable: Bool
  public var deviceName: String
  /// What the engine has already lined up after the track being heard.
  public var lookahead: Lookahead
  /// Playing, and the device has started: what is heard moves on with the clock. Between a
  /// start (or a resume, or a seek) and the device's start, through a sound server a few
  /// hundred milliseconds, the position stays where it is.
  public var isAdvancing: Bool = false
}

/// What an engine has lined up after the track being heard: the decoder runs up to a ring's
/// length (about 1.5 s) ahead, so near the end of a track it has already asked what comes next.
public enum Lookahead: Sendable, Equatable {
  /// The decoder is still in the track being heard: it will ask what follows when it gets there.
  case undecided
  /// The decoder has moved on to this track.
  case next(QueuedTrack)
  /// The decoder found nothing after the track being heard: playback ends with it.
  case end
}

/// Plays files through an output: a decode thread fills a `SampleRing`, a render thread drains
/// it into the device.
///
/// The render thread allocates nothing, takes no lock, and logs nothing: it talks to the rest
/// through atomics and semaphores. Opening devices and decoders happens on the decode thread,
/// while the render thread is parked. Pause drops what the device holds (snd_pcm_drop) and
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
    /// Frames the render thread takes from the ring at a time. A pause does not wait for them
    /// (the wake pipe interrupts a write waiting for room), so they can be many: fewer wakeups.
    public var chunkFrames = Configuration.defaultChunkFrames
    /// 2048 frames: 46 ms at 44.1 kHz.
    public static let defaultChunkFrames = 2048
    /// Samples the ring holds (a power of two): about 1.5 s of 44.1 kHz stereo.
    public var ringSamples = 1 << 17

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
  private struct Segment {
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
  }

  private enum Command {
    case load(QueuedTrack, seconds: Double, continuing: Bool)
    /// Within `track`, the one being heard (the decoder may be ahead, in the next one).
    case seek(QueuedTrack, seconds: Double)
    case reopenDevice
    /// Closes the output and opens `name` at the same format (the user picked another output).
    case switchDevice(String)
    case unload
    case quit
  }

  private struct Shared {
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
    var announced = 0  // id of the last segment said to be heard (or passed over, empty)
    /// The position last shown, as (segment id, frame): it never moves back within a segment
    /// (a device whose delay reports come late would otherwise make it step back).
    var shown: (segment: Int, frame: Int) = (0, 0)
    var lastSegmentID = 0
  }

  // Render ↔ decode/control, lock-free.
  private let renderWantsToPlay = Atomic<Bool>(false)
  private let renderIsPlaying = Atomic<Bool>(false)
  private let renderQuit = Atomic<Bool>(false)
  private let targetGainBits = Atomic<UInt32>(Float(1).bitPattern)
  private let inputEnd = Atomic<Int>(-1)  // ring position after which nothing comes
  private let formatBoundary = Atomic<Int>(-1)  // ring position where the format changes
  private let deviceLost = Atomic<Int32>(0)  // the error code, once lost
  private let reachedEnd = Atomic<Bool>(false)
  private let reachedBoundary = Atomic<Bool>(false)
  /// The render thread waits for samples with the device empty (starting, resuming): the decode
  /// thread wakes it with the first chunk. Otherwise it is woken once a good part of the ring
  /// is there, not for every chunk: an unpaced device would otherwise ping-pong the threads.
  private let renderNeedsAny = Atomic<Bool>(false)

  private let renderWake = Semaphore()
  private let decodeWake = Semaphore()
  /// Interrupts a write that waits for room in the device: written by `parkRender` and gain
  /// changes (any thread), read on the render thread. Non-blocking both ends.
  private let wakePipe = WakePipe()
  /// The ring position where the next track to announce starts (-1: none): the render thread
  /// wakes the decode thread when playback gets there, so `nowHearing` is on time.
  private let announceAt = Atomic<Int>(-1)
  /// When the render thread last measured what was heard (monotonic ns), and how many frames
  /// the device held then: between measurements, the position moves on with the clock.
  private let heardAt = Atomic<UInt64>(0)
  private let heardDelay = Atomic<Int>(0)
  /// Render thread: the device is playing what it holds (it has started since the render
  /// thread last started or took back); `startedNews` tells the decode thread, which tells
  /// the owner (`outputStarted`), so that what it publishes moves on from then.
  private let outputRunning = Atomic<Bool>(false)
  private let startedNews = Atomic<Bool>(false)
  private let ring: SampleRing
  private let configuration: Configuration
  private let shared: Mutex<Shared>
  /// Read by the render thread while it plays; replaced only while it is parked.
  private nonisolated(unsafe) var output: (any AudioOutput)?
  private let scratch: UnsafeMutableBufferPointer<Float>
  private var renderThread: JoinableThread?
  private var decodeThread: JoinableThread?
  private let eventContinuation: AsyncStream<EngineEvent>.Continuation
  private let nextTrack: @Sendable (QueuedTrack) -> QueuedTrack?

  /// What the engine has to say; one consumer.
  public let events: AsyncStream<EngineEvent>

  /// The most channels a track may have: more is refused with the reason when it opens. 32
  /// covers every layout people keep (7.1.4 is 12, 22.2 is 24); a file that says more is
  /// almost always a damaged header, and each channel costs render memory up front.
  public static let maximumChannels = 32

  /// Decode thread: refuses a decoder whose channel count this engine cannot carry.
  private static func checkChannels(_ decoder: any AudioDecoder, _ path: String)
    throws(DecodeError)
  {
    let channels = decoder.format.channels
    guard channels >= 1, channels <= maximumChannels else {
      throw DecodeError(
        path: path,
        reason: "it has \(channels) channels; hark plays files of 1 to \(maximumChannels)")
    }
  }

  /// `nextTrack` is asked, on the decode thread, what follows a track (for gapless playback).
  public init(
    configuration: Configuration, nextTrack: @escaping @Sendable (QueuedTrack) -> QueuedTrack?
  ) {
    self.configuration = configuration
    self.nextTrack = nextTrack
    ring = SampleRing(capacity: configuration.ringSamples)
    shared = Mutex(Shared(deviceName: configuration.deviceName))
    // Room for a chunk of the most channels a track may have (more are refused when it opens:
    // the count comes from the file), allocated once for the render thread. It held 8, and a
    // 9-channel WAV overflowed it.
    scratch = .allocate(capacity: configuration.chunkFrames * Self.maximumChannels)
    scratch.initialize(repeating: 0)
    (events, eventContinuation) = AsyncStream.makeStream()
    renderThread = JoinableThread { [unowned self] in renderLoop() }
    decodeThread = JoinableThread { [unowned self] in decodeLoop() }
  }

  deinit {
    scratch.deallocate()
  }

  // MARK: Transport (any thread)

  /// Loads `track` at `seconds` and plays it (or leaves it paused there). When it will not
  /// open, says why (`trackFailed`) and loads the next one that does, from its start.
  /// `continuing`: the track heard goes on from there (the owner lines up another next track);
  /// it is not announced as starting.
  public func load(
    _ track: QueuedTrack, at seconds: Double = 0, playing: Bool, continuing: Bool = false
  ) {
    parkRender()
    let ok = perform(.load(track, seconds: seconds, continuing: continuing))
    if ok {
      setState(playing ? .playing : .paused)
      if playing { startRender() }
    }
  }

  /// Resumes from the last frame heard.
  public func play() {
    guard snapshot().track != nil else { return }
    if deviceLost.load(ordering: .acquiring) != 0 || output == nil { perform(.reopenDevice) }
    guard output != nil else { return }
    setState(.playing)
    startRender()
  }

  /// Stops at once: drops what the device holds; `play` resumes from the last frame heard.
  public func pause() {
    parkRender()
    if snapshot().state == .playing { setState(.paused) }
  }

  /// Moves within the track being heard (clamped to it); keeps playing or paused.
  public func seek(to seconds: Double) {
    let now = snapshot()
    guard let track = now.track, now.isSeekable else { return }
    parkRender()
    perform(.seek(track, seconds: max(0, seconds)))
    if now.state == .playing { startRender() }
  }

  /// Moves playback to another device without a pause to speak of (G6): what the old one held
  /// is dropped and the new one goes on from the last frame heard. On failure the old device
  /// stays and the error is returned.
  public func setDevice(_ name: String) -> Result<Void, OutputOpenError> {
    let wasPlaying = snapshot().state == .playing
    parkRender()
    let ok = perform(.switchDevice(name))
    let failure = shared.withLock { s -> OutputOpenError? in
      defer { s.switchFailure = nil }
      return s.switchFailure
    }
    if wasPlaying && output != nil { startRender() }
    if ok { return .success(()) }
    return .failure(failure ?? OutputOpenError(device: name, message: "cannot open it"))
  }

  /// Closes the output and opens it again at the same position, paused or playing as it was:
  /// after the output went away and came back, or was replaced, a fresh device (and, through a
  /// sound server, a fresh stream on the sink that is current now).
  public func reopenOutput() {
    let wasPlaying = snapshot().state == .playing
    parkRender()
    perform(.reopenDevice)
    if wasPlaying && output != nil { startRender() }
  }

  /// Stops and forgets the track.
  public func stop() {
    parkRender()
    perform(.unload)
    setState(.stopped)
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

  private func updateGain() {
    let gain = shared.withLock { s -> Float in
      s.muted ? 0 : s.ducked ? configuration.duckGain : 1
    }
    targetGainBits.store(gain.bitPattern, ordering: .releasing)
    wakePipe.wake()  // heard now, not when the device's buffer has played out
  }

  /// The transport now.
  public func snapshot() -> EngineSnapshot {
    let played = ring.releasedPosition
    // Between the render thread's measurements (once a write, a period or so apart), what is
    // heard moves on with the clock, up to what the device held.
    let playing = renderIsPlaying.load(ordering: .acquiring)
    let at = heardAt.load(ordering: .acquiring)
    let held = heardDelay.load(ordering: .relaxed)
    let now = monotonicNanoseconds()
    let advancing = playing && outputRunning.load(ordering: .acquiring)
    return shared.withLock { s in
      let segment = s.segments.last { $0.ringStart <= played } ?? s.segments.first
      var position = 0.0
      if let seg = segment {
        var frames = seg.trackStartFrame + max(0, played - seg.ringStart) / seg.format.channels
        if playing && at > 0 && now > at {
          frames += min(held, Int(Double(now - at) * Double(seg.format.sampleRate) / 1e9))
        }
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
        isAdvancing: advancing && s.state == .playing)
    }
  }

  /// The render thread, for tests that watch what it does.
  var renderThreadID: pthread_t? { renderThread?.id }

  /// Stops both threads and closes the device.
  public func shutdown() {
    parkRender()
    renderQuit.store(true, ordering: .releasing)
    wakePipe.wake()
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

  private func setState(_ state: EngineState) { shared.withLock { $0.state = state } }

  private func startRender() {
    renderWantsToPlay.store(true, ordering: .releasing)
    renderWake.signal()
  }

  /// Asks the render thread to stop and waits until it has: at once, even when it waits for room
  /// in the device (the wake pipe interrupts that).
  private func parkRender() {
    renderWantsToPlay.store(false, ordering: .releasing)
    wakePipe.wake()
    renderWake.signal()
    var spins = 0
    while renderIsPlaying.load(ordering: .acquiring) && spins < 20_000 {
      usleep(100)
      spins += 1
    }
  }

  /// Hands a command to the decode thread and waits until it is done; whether it succeeded.
  @discardableResult
  private func perform(_ command: Command) -> Bool {
    let ticket = shared.withLock { s -> Int in
      let t = (s.commands.last?.1 ?? s.completed) + 1
      s.commands.append((command, t))
      return t
    }
    decodeWake.signal()
    while true {
      let done = shared.withLock { s -> Bool? in s.completed < ticket ? nil : s.succeeded }
      if let done { return done }
      usleep(200)
    }
  }

  // MARK: Render thread

  private func renderLoop() {
    var gain = GainRamp(1)
    var appliedTarget: Float = 1
    var lastDelay = 0  // frames the device held after the last write: not yet heard
    var writtenEnd = 0  // ring position after the last sample the device took
    var deviceEmpty = true  // nothing written since starting, resuming or taking back
    let chunkFrames = configuration.chunkFrames

    /// What has been heard by now: what the device took less what it still holds.
    func releaseHeard(_ out: any AudioOutput, channels: Int) {
      lastDelay = out.delayFrames()
      ring.release(upTo: writtenEnd - lastDelay * channels)
      // Until the device has started, nothing it holds is being heard: the position waits
      // (it ran ahead by what the device held, then stepped back when it started).
      let running = out.isRunning()
      heardDelay.store(running ? lastDelay : 0, ordering: .relaxed)
      heardAt.store(monotonicNanoseconds(), ordering: .releasing)
      if running != outputRunning.load(ordering: .relaxed) {
        outputRunning.store(running, ordering: .releasing)
        if running {
          startedNews.store(true, ordering: .releasing)
          decodeWake.signal()
        }
      }
    }

    /// Silence now: drops what the device holds and goes back in the ring to the first frame
    /// not heard, so that a resume (or a new gain) writes it again and none is lost.
    func takeBack(_ out: any AudioOutput) {
      releaseHeard(out, channels: out.format.channels)
      out.discard()
      out.prepare()
      _ = ring.rewindToReleased()
      writtenEnd = ring.readPosition
      lastDelay = 0
      deviceEmpty = true
      outputRunning.store(false, ordering: .releasing)
      heardDelay.store(0, ordering: .relaxed)
    }

    while !renderQuit.load(ordering: .acquiring) {
      guard renderWantsToPlay.load(ordering: .acquiring), let out = output,
        deviceLost.load(ordering: .relaxed) == 0
      else {
        if renderIsPlaying.load(ordering: .relaxed) {
          if deviceLost.load(ordering: .relaxed) == 0, let out = output {
            takeBack(out)  // a pause
          } else {
            _ = ring.rewindToReleased()  // what the lost device held was released when it went
          }
          renderIsPlaying.store(false, ordering: .releasing)
          outputRunning.store(false, ordering: .releasing)
          decodeWake.signal()
        }
        renderWake.wait()
        continue
      }
      let channels = out.format.channels
      if !renderIsPlaying.load(ordering: .relaxed) {
        // Starting or resuming: fade in so the first frame never clicks.
        appliedTarget = Float(bitPattern: targetGainBits.load(ordering: .acquiring))
        gain = GainRamp(0)
        gain.ramp(to: appliedTarget, over: out.format.frames(in: seconds(configuration.fadeIn)))
        lastDelay = 0
        writtenEnd = ring.readPosition
        deviceEmpty = true
        renderIsPlaying.store(true, ordering: .releasing)
      }
      let target = Float(bitPattern: targetGainBits.load(ordering: .acquiring))
      if target != appliedTarget {
        // A new gain (a duck, its end, silent mode's mute) never restarts the stream: through
        // a sound server that was a restart with its start-up latency and a wrong idea of what
        // had been heard (the position stepped back, frames were heard twice). Where the device
        // can take back what it holds (a card's own device), it does, and that is written again
        // at the new gain: the duck is heard now. Where it cannot (a sound server's plugin has
        // sent it on), the new gain starts with the next frame written, heard once what the
        // device holds has played, which PlaybackDevice keeps short there (about 120 ms).
        let back = out.rewind(frames: max(0, writtenEnd - ring.releasedPosition) / channels)
        if back > 0 {
          writtenEnd -= back * channels
          _ = ring.rewind(to: writtenEnd)
          lastDelay = max(0, lastDelay - back)
        }
        appliedTarget = target
        gain.ramp(to: target, over: out.format.frames(in: seconds(configuration.duckRamp)))
      }

      var limit = chunkFrames * channels
      let boundary = formatBoundary.load(ordering: .acquiring)
      let readPosition = ring.readPosition
      if boundary >= 0 { limit = min(limit, boundary - readPosition) }
      if limit <= 0 {
        // Every frame of the old format is written: let the device play them, then hand over.
        out.drain()
        ring.release(upTo: readPosition)
        renderIsPlaying.store(false, ordering: .releasing)
        reachedBoundary.store(true, ordering: .releasing)
        decodeWake.signal()
        while !reachedBoundaryConsumed() { renderWake.wait() }
        continue
      }
      // At unity gain the samples go to the device straight from the ring (they stay there
      // until heard); a gain is applied to a copy, since the ring may be read again (a pause,
      // a duck) at another gain.
      var block = UnsafeBufferPointer<Float>(start: nil, count: 0)
      if gain.isSettled && gain.current == 1 {
        block = ring.take(upTo: limit, unit: channels)
      }
      if block.isEmpty {
        let copy = UnsafeMutableBufferPointer(rebasing: scratch[0..<limit])
        let n = ring.read(into: copy)
        gain.apply(to: UnsafeMutableBufferPointer(rebasing: copy[0..<n]), channels: channels)
        block = UnsafeBufferPointer(rebasing: copy[0..<n])
      }
      let n = block.count
      if n == 0 {
        let end = inputEnd.load(ordering: .acquiring)
        if end >= 0 && readPosition >= end {
          out.drain()
          ring.release(upTo: readPosition)
          renderWantsToPlay.store(false, ordering: .releasing)
          renderIsPlaying.store(false, ordering: .releasing)
          reachedEnd.store(true, ordering: .releasing)
          decodeWake.signal()
          continue
        }
        // Starved: the decoder is behind (or an unpaced device is ahead of it). What the device
        // plays meanwhile is released: one that holds more than the ring (a sound server 2 s
        // deep, or 96 kHz through a deep one) would otherwise leave the decoder no room for ever.
        releaseHeard(out, channels: channels)
        if ring.writableCount >= ring.capacity / 2 { decodeWake.signal() }
        renderNeedsAny.store(deviceEmpty, ordering: .sequentiallyConsistent)
        if ring.readableCount == 0 { renderWake.wait(microseconds: 5_000) }
        renderNeedsAny.store(false, ordering: .relaxed)
        continue
      }
      deviceEmpty = false
      var gone: Int32 = 0
      write: while block.count > 0 && gone == 0 {
        switch out.write(block, wakingOn: wakePipe.readFD) {
        case .written(0):
          // Woken while waiting for room: a pause, a quit or a new gain is handled at the top
          // (what was not written is read again from the ring); anything else goes on.
          wakePipe.drain()
          if !renderWantsToPlay.load(ordering: .acquiring) || renderQuit.load(ordering: .relaxed)
            || Float(bitPattern: targetGainBits.load(ordering: .acquiring)) != appliedTarget
          {
            break write
          }
        case .written(let frames):
          block = UnsafeBufferPointer(rebasing: block[(frames * channels)...])
        case .recovered:
          continue
        case .deviceGone(let code):
          gone = code == 0 ? -EIO : code
        }
      }
      writtenEnd = ring.readPosition - block.count
      // Interrupted (a pause, a new gain), what was not written is read again from there.
      if gone == 0 && block.count > 0 { _ = ring.rewind(to: writtenEnd) }
      if gone != 0 {
        // A vanished device cannot say what it held; take what it held after the last write,
        // so that resuming repeats a little rather than skips.
        ring.release(upTo: writtenEnd - lastDelay * channels)
        deviceLost.store(gone, ordering: .releasing)
        decodeWake.signal()
        continue
      }
      // Paused, the top of the loop takes the ring back to the frame being heard, so none is
      // lost.
      releaseHeard(out, channels: channels)
      // The decode thread is woken when there is half a ring to fill (it then fills it in one
      // go) or a new track starts being heard, not after every write: fewer wakeups.
      let announce = announceAt.load(ordering: .acquiring)
      if ring.writableCount >= ring.capacity / 2
        || (announce >= 0 && ring.releasedPosition >= announce)
      {
        decodeWake.signal()
      }
    }
  }

  /// Render thread: whether the decode thread has taken over at a format boundary.
  private func reachedBoundaryConsumed() -> Bool {
    !reachedBoundary.load(ordering: .acquiring) || renderQuit.load(ordering: .relaxed)
  }

  // MARK: Decode thread

  private struct DecodeState {
    var decoder: (any AudioDecoder)?
    var track: QueuedTrack?
    var pending: (QueuedTrack, any AudioDecoder)?
    var buffer: [Float] = []
    /// Of the current track, since it began at `startFrame`.
    var framesDecoded = 0
    var startFrame = 0
  }

  private func decodeLoop() {
    var d = DecodeState()
    while true {
      // Commands first: they come with the render thread parked.
      let next = shared.withLock { s -> (Command, Int)? in
        s.commands.isEmpty ? nil : s.commands.removeFirst()
      }
      if let (command, ticket) = next {
        let outcome = execute(command, &d)
        shared.withLock {
          $0.completed = ticket
          $0.succeeded = outcome != .failed
        }
        if outcome == .quit { return }
        continue
      }
      syncTracks(d)
      if startedNews.exchange(false, ordering: .acquiringAndReleasing) {
        eventContinuation.yield(.outputStarted)
      }
      let lost = deviceLost.load(ordering: .acquiring)
      if lost != 0, shared.withLock({ $0.state == .playing }) {
        setState(.paused)
        eventContinuation.yield(.deviceLost(device: currentDeviceName, code: lost))
      }
      if reachedEnd.exchange(false, ordering: .acquiringAndReleasing) {
        setState(.stopped)
        eventContinuation.yield(.endOfQueue)
      }
      if reachedBoundary.load(ordering: .acquiring) {
        switchFormat(&d)
        continue
      }
      if let decoder = d.decoder, formatBoundary.load(ordering: .relaxed) < 0 {
        let channels = decoder.format.channels
        // Four chunks at a time, but never more than half the ring holds: with many channels
        // four chunks did not fit in the ring at all, and the decoder waited for room for ever.
        let want = min(configuration.chunkFrames * 4, ring.capacity / 2 / channels) * channels
        if ring.writableCount >= want {
          var frames = 0
          var failure: DecodeError?
          // Straight into the ring where a good part of a chunk fits before the end of its
          // storage (almost always); through a buffer where it would wrap.
          let region = ring.writableRegion()
          let fit = min(want, region.count / channels * channels)
          let inPlace = fit >= min(want, configuration.chunkFrames * channels)
          do throws(DecodeError) {
            if inPlace {
              frames = try decoder.read(into: UnsafeMutableBufferPointer(rebasing: region[0..<fit]))
            } else {
              if d.buffer.count < want { d.buffer = [Float](repeating: 0, count: want) }
              frames = try d.buffer.withUnsafeMutableBufferPointer { buf throws(DecodeError) in
                try decoder.read(into: UnsafeMutableBufferPointer(rebasing: buf[0..<want]))
              }
            }
          } catch {
            failure = error
          }
          if frames > 0 {
            d.framesDecoded += frames
            if inPlace {
              ring.commitWrite(frames * channels)
            } else {
              d.buffer.withUnsafeBufferPointer { buf in
                _ = ring.write(UnsafeBufferPointer(rebasing: buf[0..<(frames * channels)]))
              }
            }
            // The render thread, starved, waits for a good part of the ring, not every chunk.
            // (The fence pairs with the render thread's store of `renderNeedsAny` before it
            // looks at the ring: one of the two sees the other, so it never sleeps on a chunk.)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if ring.readableCount >= ring.capacity / 4 || ring.writableCount < want
              || renderNeedsAny.load(ordering: .relaxed)
            {
              renderWake.signal()
            }
          }
          if let failure, let track = d.track {
            eventContinuation.yield(.trackFailed(track, failure))
          } else if frames == 0, d.framesDecoded == 0, d.startFrame == 0, let track = d.track {
            // Opened, but not one frame in it: an empty file, or one cut short before its
            // first audio (a FLAC cut in its header, an Ogg cut before its first audio page).
            // Said like any file that will not play; the next is announced in its place.
            eventContinuation.yield(
              .trackFailed(
                track,
                DecodeError(path: track.path, reason: "no sound in it (empty, or cut short)")))
          }
          if frames == 0 || failure != nil { advance(&d) }
          continue
        }
      }
      decodeWake.wait()
    }
  }

  private enum Outcome { case done, failed, quit }

  /// Decode thread: publishes the decoder's track, says when the track heard changes, and
  /// tells the render thread where the next one to announce starts.
  ///
  /// Every track whose first frame has been heard is announced, in order, also when a device
  /// that is not paced (ALSA's null) plays several between two looks. A segment with no frames
  /// (a file that decoded to nothing: reported as failed by the decode loop) is passed over,
  /// and one still waiting for its first frames is announced once they are there.
  private func syncTracks(_ d: DecodeState) {
    let played = ring.releasedPosition
    let written = ring.writePosition
    let heard: [QueuedTrack] = shared.withLock { s in
      if s.decoding != d.track { s.decoding = d.track }
      var news: [QueuedTrack] = []
      for (i, seg) in s.segments.enumerated() where seg.id > s.announced {
        guard seg.ringStart <= played else { break }
        let isLast = i + 1 == s.segments.count
        let end = isLast ? written : s.segments[i + 1].ringStart
        if end == seg.ringStart {
          if isLast { break }  // its frames are still to come
          s.announced = seg.id  // empty, passed over
          continue
        }
        s.announced = seg.id
        // A track starting is news (repeat one plays one track again); a seek within it is not.
        if !seg.isSeekWithin { news.append(seg.track) }
      }
      let next = s.segments.first { $0.id > s.announced }
      announceAt.store(next?.ringStart ?? -1, ordering: .releasing)
      return news
    }
    for track in heard { eventContinuation.yield(.nowHearing(track)) }
  }

  /// Decode thread. Carries out a command.
  private func execute(_ command: Command, _ d: inout DecodeState) -> Outcome {
    switch command {
    case .quit:
      d = DecodeState()
      return .quit
    case .unload:
      d = DecodeState()
      resetRing()
      shared.withLock {
        $0.segments = []
        $0.decoding = nil
      }
      return .done
    case .reopenDevice:
      let played = ring.releasedPosition
      let heard = shared.withLock { s in
        (s.segments.last { $0.ringStart <= played } ?? s.segments.first)?.format
      }
      guard let format = heard ?? d.decoder?.format else { return .failed }
      output = nil
      return openOutput(format, refusalFails: true) == .opened ? .done : .failed
    case .switchDevice(let name):
      let old = currentDeviceName
      let played = ring.releasedPosition
      let heard = shared.withLock { s in
        (s.segments.last { $0.ringStart <= played } ?? s.segments.first)?.format
      }
      guard let format = heard ?? d.decoder?.format, output != nil else {
        shared.withLock { $0.deviceName = name }
        return .done
      }
      // Close the old device first: two opens of one card's hw device would fail.
      output = nil
      do {
        output = try configuration.openOutput(name, format)
        deviceLost.store(0, ordering: .releasing)
        shared.withLock { $0.deviceName = name }
        return .done
      } catch {
        shared.withLock { $0.switchFailure = OutputOpenError(device: name, message: "\(error)") }
        output = try? configuration.openOutput(old, format)
        if output == nil { setState(.paused) }
        return .failed
      }
    case .load(let track, let seconds, let continuing):
      d = DecodeState()
      resetRing()
      shared.withLock { $0.segments = [] }
      return open(track, at: seconds, &d, seeking: continuing) ? .done : .failed
    case .seek(let track, let seconds):
      d.pending = nil
      resetRing()
      shared.withLock { $0.segments = [] }
      if let decoder = d.decoder, d.track == track {
        let frame = min(
          decoder.format.frames(in: seconds), max(0, (decoder.frameCount ?? .max) - 1))
        do throws(DecodeError) {
          try decoder.seek(toFrame: frame)
          begin(track, decoder, atFrame: frame, &d, seeking: true)
          return .done
        } catch {
          eventContinuation.yield(.trackFailed(track, error))
          d = DecodeState()
          return open(track, at: seconds, &d, seeking: true) ? .done : .failed
        }
      }
      // The decoder has moved on (to the next track, or to the end of the queue): open the
      // track being heard again.
      d = DecodeState()
      return open(track, at: seconds, &d, seeking: true) ? .done : .failed
    }
  }

  /// Decode thread, ring empty: opens `track` at `seconds`, or the first track after it that
  /// opens (from its start), and begins it. False when nothing from there on opens, or the
  /// device would not open; the owner has been told why.
  private func open(
    _ track: QueuedTrack, at seconds: Double, _ d: inout DecodeState, seeking: Bool = false
  ) -> Bool {
    var candidate: QueuedTrack? = track
    var start = seconds
    while let t = candidate {
      do throws(DecodeError) {
        let decoder = try configuration.openDecoder(t.path)
        try Self.checkChannels(decoder, t.path)
        let frame =
          decoder.isSeekable && start > 0
          ? min(decoder.format.frames(in: start), max(0, (decoder.frameCount ?? .max) - 1)) : 0
        if frame > 0 { try decoder.seek(toFrame: frame) }
        if output?.format != decoder.format || deviceLost.load(ordering: .relaxed) != 0 {
          output = nil
          switch openOutput(decoder.format) {
          case .opened: break
          case .refused(let refusal):
            throw DecodeError(path: t.path, reason: "the output \(refusal)")
          case .failed: return false
          }
        }
        begin(t, decoder, atFrame: frame, &d, seeking: seeking && t == track)
        return true
      } catch {
        eventContinuation.yield(.trackFailed(t, error))
        candidate = nextTrack(t)
        start = 0  // the position asked for belongs to the track asked for
      }
    }
    // Nothing from here to the end of the queue opens: there is nothing to play out.
    markEndOfInput()
    setState(.stopped)
    eventContinuation.yield(.endOfQueue)
    return false
  }

  /// Decode thread: the current track is done; go on with the next one that opens.
  private func advance(_ d: inout DecodeState) {
    guard let finished = d.track else { return }
    d.decoder = nil
    var candidate = nextTrack(finished)
    while let t = candidate {
      do throws(DecodeError) {
        let decoder = try configuration.openDecoder(t.path)
        try Self.checkChannels(decoder, t.path)
        if decoder.format == output?.format {
          begin(t, decoder, atFrame: 0, &d)  // gapless: straight on in the ring
        } else {
          d.track = t
          d.pending = (t, decoder)
          formatBoundary.store(ring.writePosition, ordering: .releasing)
          renderWake.signal()
        }
        return
      } catch {
        eventContinuation.yield(.trackFailed(t, error))
        candidate = nextTrack(t)
      }
    }
    d.track = nil
    markEndOfInput()
  }

  /// Decode thread, render parked at the boundary: reopen at the new format and go on.
  private func switchFormat(_ d: inout DecodeState) {
    formatBoundary.store(-1, ordering: .releasing)
    if let (track, decoder) = d.pending {
      d.pending = nil
      output = nil
      resetRing()
      shared.withLock { $0.segments = [] }
      switch openOutput(decoder.format) {
      case .opened:
        begin(track, decoder, atFrame: 0, &d)
      case .refused(let refusal):
        // The device will not take this track's format: skip it, as a file that will not
        // open is skipped, and go on with the next that plays (a device that refused a
        // rate stopped the queue for good).
        eventContinuation.yield(
          .trackFailed(track, DecodeError(path: track.path, reason: "the output \(refusal)")))
        d = DecodeState()
        if let next = nextTrack(track) {
          _ = open(next, at: 0, &d)
        } else {
          markEndOfInput()
          setState(.stopped)
          eventContinuation.yield(.endOfQueue)
        }
      case .failed:
        break
      }
    }
    reachedBoundary.store(false, ordering: .releasing)
    renderWake.signal()
  }

  private func begin(
    _ track: QueuedTrack, _ decoder: any AudioDecoder, atFrame frame: Int, _ d: inout DecodeState,
    seeking: Bool = false
  ) {
    d.decoder = decoder
    d.track = track
    d.framesDecoded = 0
    d.startFrame = frame
    let duration = decoder.frameCount.map { decoder.format.seconds($0) }
    var segment = Segment(
      id: 0, track: track, ringStart: ring.writePosition, trackStartFrame: frame,
      format: decoder.format,
      duration: duration, metadata: decoder.metadata, isSeekable: decoder.isSeekable,
      isSeekWithin: seeking)
    shared.withLock { s in
      // Keep only what the render thread may still be playing or is still to announce, and
      // the new one.
      let played = ring.releasedPosition
      if let lastHeard = s.segments.lastIndex(where: { $0.ringStart <= played }) {
        let announced = s.segments.prefix { $0.id <= s.announced }.count
        s.segments.removeFirst(min(lastHeard, announced))
      }
      s.lastSegmentID += 1
      segment.id = s.lastSegmentID
      s.segments.append(segment)
      // At once, with the segment: a snapshot taken as soon as a load returns must not see
      // the segment without the decoder's track (which would read as the end of the queue).
      s.decoding = track
    }
  }

  private enum OutputOpening: Equatable {
    case opened
    /// The device opened but will not take the format: the track's problem, not the device's.
    case refused(FormatRefused)
    /// The device is unavailable; the owner has been told (`deviceFailed`).
    case failed
  }

  private func openOutput(_ format: PCMFormat, refusalFails: Bool = false) -> OutputOpening {
    do {
      output = try configuration.openOutput(currentDeviceName, format)
      deviceLost.store(0, ordering: .releasing)
      return .opened
    } catch let refusal as FormatRefused where !refusalFails {
      output = nil
      return .refused(refusal)
    } catch {
      output = nil
      setState(.stopped)
      eventContinuation.yield(.deviceFailed("\(error)"))
      return .failed
    }
  }

  private var currentDeviceName: String { shared.withLock { $0.deviceName } }

  private func markEndOfInput() {
    inputEnd.store(ring.writePosition, ordering: .releasing)
    renderWake.signal()
  }

  /// Only with the render thread parked.
  private func resetRing() {
    ring.reset(to: ring.writePosition)
    inputEnd.store(-1, ordering: .releasing)
    formatBoundary.store(-1, ordering: .releasing)
    reachedEnd.store(false, ordering: .releasing)
  }
}

private func seconds(_ d: Duration) -> Double {
  Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}
