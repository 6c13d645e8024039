import AudioCore
import AudioTestSupport
import Platform
import PlayerEngine
import Synchronization
import Testing

/// 44.1 kHz stereo, the format most tracks in these tests have.
let cd = PCMFormat(sampleRate: 44_100, channels: 2)

/// What an engine said, collected by one listener.
final class EventLog: Sendable {
  private let events = Locked<[EngineEvent]>([])
  private let ended = Atomic<Bool>(false)

  func append(_ event: EngineEvent) { events.withLock { $0.append(event) } }
  func finish() { ended.store(true, ordering: .releasing) }

  var all: [EngineEvent] { events.withLock { $0 } }
  /// Whether the engine's event stream has finished.
  var isFinished: Bool { ended.load(ordering: .acquiring) }
}

/// An `AudioEngine` wired to fakes: `ToneDecoder`s by path, `FakeOutput`s, and a log of its
/// events. Tracks play with no fade-in unless a test asks, so every frame arrives bit for bit.
final class EngineRig: Sendable {
  let library: ToneLibrary
  let devices: FakeDevices
  let engine: AudioEngine
  let queue: [QueuedTrack]
  let log = EventLog()
  private let shutDown = Atomic<Bool>(false)

  /// `queue` is played in order; each path is a tone in `tracks`, an `unreadable` one, or
  /// missing. Outputs behave as `output` says, except those in `perOpening` and `failingOpens`.
  init(
    queue paths: [String], tracks: [String: ToneDecoder.Configuration],
    unreadable: [String: String] = [:], output: FakeOutput.Options = FakeOutput.Options(),
    perOpening: [Int: FakeOutput.Options] = [:], failingOpens: Set<Int> = [],
    refusing: Set<PCMFormat> = [], slowOpens: [String: Duration] = [:], wrapping: Bool = false,
    rates: [String: Double] = [:], configure: (inout AudioEngine.Configuration) -> Void = { _ in }
  ) {
    let library = ToneLibrary(tracks, unreadable: unreadable, slowOpens: slowOpens)
    let devices = FakeDevices(
      output, perOpening: perOpening, failing: failingOpens, refusing: refusing)
    var configuration = AudioEngine.Configuration(
      deviceName: "fake",
      openDecoder: { path throws(DecodeError) in try library.open(path) },
      openOutput: { name, format in try devices.open(name, format) })
    configuration.fadeIn = .zero
    configure(&configuration)
    let queue = paths.enumerated().map { QueuedTrack(id: $0.offset, path: $0.element) }
    self.library = library
    self.devices = devices
    self.queue = queue
    // `wrapping`: the queue repeats, as with repeat all.
    // `rates`: the speed each path begins at (the player's spoken-word rates), 1 for others.
    engine = AudioEngine(
      configuration: configuration,
      nextTrack: { track in
        track.id + 1 < queue.count ? queue[track.id + 1] : wrapping ? queue.first : nil
      },
      rateOf: { track, _ in rates[track.path] ?? 1 })
    Task { [engine, log] in
      for await event in engine.events { log.append(event) }
      log.finish()
    }
  }

  /// The queue entry for `path`.
  func track(_ path: String) -> QueuedTrack {
    guard let track = queue.first(where: { $0.path == path }) else {
      preconditionFailure("'\(path)' is not in the queue")
    }
    return track
  }

  /// What the engine said, but for `nowHearing` (see `heard`), `outputStarted` and `loaded`.
  var events: [EngineEvent] {
    log.all.filter {
      switch $0 {
      case .nowHearing, .outputStarted, .loaded: false
      default: true
      }
    }
  }

  /// The tracks the engine said were being heard, in order.
  var heard: [QueuedTrack] {
    log.all.compactMap { if case .nowHearing(let t) = $0 { t } else { nil } }
  }

  /// Loads `path` paused, then plays, as hark's player starts. (`load(_:playing: true)` can
  /// lose a race with the decode thread when a track is shorter than the ring; that has a test
  /// of its own, and the other tests should not trip over it.)
  func start(_ path: String) {
    engine.load(track(path), playing: false)
    engine.play()
  }

  /// The n-th output the engine opened.
  func output(_ n: Int = 0) -> FakeOutput? {
    let opened = devices.opened
    return n < opened.count ? opened[n] : nil
  }

  /// Frames the first output has taken so far (0 before it exists).
  var framesWritten: Int { output()?.framesWritten ?? 0 }

  /// Shuts the engine down once; a second call does nothing.
  func shutdown() {
    guard !shutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
    engine.shutdown()
  }

  /// Polls `condition` until it holds or `timeout` passes; whether it held.
  func eventually(
    _ timeout: Duration = .seconds(5), _ condition: () -> Bool
  ) async -> Bool {
    await PlayerEngineTests.eventually(timeout, condition)
  }

  /// Waits for the end of the queue.
  func endOfQueue() async -> Bool {
    await eventually { events.contains(.endOfQueue) }
  }

  /// What the engine and its fakes are doing, for a failure message.
  var state: String {
    let outputs = devices.opened.map { "\($0.format): \($0.framesWritten) written, \($0.calls)" }
    let decoders = queue.flatMap { track in
      library.decoders(for: track.path).map { "\(track.path) at \($0.position)" }
    }
    return "\(engine.snapshot()); events \(events); outputs \(outputs); decoders \(decoders)"
  }
}

/// Polls `condition` every few milliseconds until it holds or `timeout` passes.
func eventually(_ timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
  let clock = ContinuousClock()
  let deadline = clock.now + timeout
  while clock.now < deadline {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(2))
  }
  return condition()
}

/// The counter frame of every frame `output` recorded (nil where none is named).
func counterFrames(_ output: FakeOutput?, fromFrame start: Int = 0) -> [Int?] {
  guard let output else { return [] }
  return ToneDecoder.counterFrames(
    in: output.recordedSamples(fromFrame: start), channels: output.format.channels)
}

/// The frames a park's fade-out takes (AudioEngine.Configuration.fadeOut, 5 ms) at 44.1 kHz.
let fadeOutFrames = cd.frames(in: 0.005)

/// Where the fade-out that ends at frame `end` of `output`'s recording (a counter track whose
/// frame f is counter frame `first + f`) strays from a fade: its gains must fall from full to
/// silence, never rising, and land on 0, so that the sound stops without a click. Nil when it
/// is one.
func fadeOutFault(_ output: FakeOutput?, endingAt end: Int, first: Int = 0) -> String? {
  guard let output, end >= fadeOutFrames else { return "no fade-out recorded before \(end)" }
  let samples = output.recordedSamples()
  let channels = output.format.channels
  guard samples.count >= end * channels else { return "only \(samples.count / channels) frames" }
  var last: Float = 1.000_1
  for f in (end - fadeOutFrames)..<end {
    let gains = (0..<channels).map { c in
      samples[f * channels + c] / ToneDecoder.counterValue(frame: first + f, channel: c)
    }
    guard let g = gains.first, gains.allSatisfy({ abs($0 - g) < 1e-4 }) else {
      return "frame \(f): its channels are at gains \(gains)"
    }
    guard g <= last + 1e-4 else { return "frame \(f): the gain rose from \(last) to \(g)" }
    last = g
  }
  return last < 0.01 ? nil : "the fade-out ends at gain \(last), not silence"
}

/// Where `got` first differs from `expected`, in words; nil when they are the same.
func difference(_ got: [Int?], _ expected: [Int]) -> String? {
  for (i, want) in expected.enumerated() {
    guard i < got.count else {
      return "only \(got.count) frames arrived of \(expected.count); the next wanted was \(want)"
    }
    if got[i] != want {
      let seen = got[i...].prefix(4).map { $0.map(String.init) ?? "?" }.joined(separator: ", ")
      return "frame \(i) was \(got[i].map(String.init) ?? "not a counter frame") (then \(seen)), "
        + "not \(want)"
    }
  }
  if got.count > expected.count {
    return
      "\(got.count - expected.count) frames too many, from \(String(describing: got[expected.count]))"
  }
  return nil
}

/// The frame count at which `output` was last (or first) told to discard.
func discardFrame(_ output: FakeOutput?, first: Bool = false) -> Int? {
  let frames = (output?.calls ?? []).compactMap { call -> Int? in
    if case .discard(let frame, _) = call { frame } else { nil }
  }
  return first ? frames.first : frames.last
}

extension ToneDecoder.Configuration {
  /// A counter track of `frames` frames whose frame f is counter frame `first + f`.
  static func counter(
    _ frames: Int, first: Int = 0, format: PCMFormat = cd, failAfterFrames: Int? = nil,
    maxFramesPerRead: Int? = nil
  ) -> Self {
    Self(
      format: format, frames: frames, signal: .counter(first: first),
      failAfterFrames: failAfterFrames, maxFramesPerRead: maxFramesPerRead)
  }
}
