import AudioCore
import Glibc
import Platform
import Synchronization

/// An `AudioDecoder` that makes up a known signal, so a test can tell which frame it hears.
///
/// With `.counter`, every sample names its frame and channel (`counterValue(frame:channel:)`,
/// read back by `counterFrame(of:)`), so a recording shows exactly which frames arrived, in
/// which order, and whether any channel went astray. Opened on any thread, read on one (the
/// decode thread); `position` and `framesDelivered` may be read from any thread.
public final class ToneDecoder: AudioDecoder, @unchecked Sendable {
  /// What the samples are.
  public enum Signal: Sendable, Hashable {
    /// Each sample names its frame: frame `f` of the track is counter frame `first + f`, so
    /// tracks with different `first` can be told apart in one recording.
    case counter(first: Int)
    /// A sine of `hertz`, the same on every channel.
    case sine(hertz: Double, amplitude: Float)
  }

  /// Everything about one made-up file.
  public struct Configuration: Sendable, Hashable {
    /// The file it pretends to be, for errors.
    public var path: String
    /// The format it decodes to.
    public var format: PCMFormat
    /// Its length in frames.
    public var frames: Int
    /// What the samples are.
    public var signal: Signal
    /// Whether `seek(toFrame:)` works.
    public var isSeekable: Bool
    /// Whether `frameCount` tells the length (a stream may not).
    public var reportsLength: Bool
    /// The tags it reports.
    public var metadata: TrackMetadata
    /// Frames up to here are read; a read from here on throws `DecodeError`.
    public var failAfterFrames: Int?
    /// The most a read returns, to mimic decoders that return short reads.
    public var maxFramesPerRead: Int?
    /// A live stream (internet radio): no length, no seek, `live` set (with `metadata`), and
    /// reads that return 0 while `stall` holds it, as a network would.
    public var isLive = false

    /// A seekable counter track of `frames` frames that says its length.
    public init(
      path: String = "tone.wav", format: PCMFormat = PCMFormat(sampleRate: 44_100, channels: 2),
      frames: Int, signal: Signal = .counter(first: 0), isSeekable: Bool = true,
      reportsLength: Bool = true, metadata: TrackMetadata = TrackMetadata(),
      failAfterFrames: Int? = nil, maxFramesPerRead: Int? = nil
    ) {
      self.path = path
      self.format = format
      self.frames = frames
      self.signal = signal
      self.isSeekable = isSeekable
      self.reportsLength = reportsLength
      self.metadata = metadata
      self.failAfterFrames = failAfterFrames
      self.maxFramesPerRead = maxFramesPerRead
    }
  }

  /// What it was made from.
  public let configuration: Configuration
  private let next = Atomic<Int>(0)
  private let delivered = Atomic<Int>(0)
  private let seeks = Atomic<Int>(0)
  private let stalled = Atomic<Bool>(false)
  private let liveState: Locked<LiveState?>

  /// A decoder at frame 0 of the made-up file.
  public init(_ configuration: Configuration) {
    precondition(configuration.frames >= 0, "a track cannot be shorter than nothing")
    self.configuration = configuration
    liveState = Locked(configuration.isLive ? LiveState(metadata: configuration.metadata) : nil)
  }

  // MARK: AudioDecoder

  /// The configured format.
  public var format: PCMFormat { configuration.format }
  /// The length, unless configured not to say.
  public var frameCount: Int? {
    configuration.reportsLength && !configuration.isLive ? configuration.frames : nil
  }
  /// Whether it may seek.
  public var isSeekable: Bool { configuration.isSeekable && !configuration.isLive }
  /// The configured tags, or what a live stream says now.
  public var metadata: TrackMetadata { live?.metadata ?? configuration.metadata }
  /// A live stream's state (as `say` set it); nil for a file.
  public var live: LiveState? { liveState.withLock { $0 } }

  /// Fills whole frames from the current position; throws once past `failAfterFrames`.
  public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(DecodeError) -> Int {
    if stalled.load(ordering: .acquiring) { return 0 }
    let channels = format.channels
    let start = next.load(ordering: .relaxed)
    var end = configuration.frames
    if let failAt = configuration.failAfterFrames {
      if start >= failAt {
        throw DecodeError(
          .damaged, path: configuration.path, reason: "the file is damaged",
          detail: "ToneDecoder: failAfterFrames \(failAt)")
      }
      end = min(end, failAt)
    }
    var frames = min(buffer.count / channels, max(0, end - start))
    if let most = configuration.maxFramesPerRead { frames = min(frames, most) }
    var i = 0
    for frame in start..<(start + frames) {
      for channel in 0..<channels {
        buffer[i] = sample(frame: frame, channel: channel)
        i += 1
      }
    }
    next.store(start + frames, ordering: .releasing)
    delivered.add(frames, ordering: .releasing)
    return frames
  }

  /// Moves to `frame` (clamped to the track); throws when not seekable.
  public func seek(toFrame frame: Int) throws(DecodeError) {
    guard isSeekable else {
      throw DecodeError(.cannotSeek, path: configuration.path, reason: "the file cannot seek")
    }
    next.store(min(max(0, frame), configuration.frames), ordering: .releasing)
    seeks.add(1, ordering: .releasing)
  }

  // MARK: A live stream (any thread)

  /// What a live stream says from now on (a new title, a dropped connection).
  public func say(_ state: LiveState) { liveState.withLock { $0 = state } }

  /// Holds reads at nothing (a network that has gone quiet), or lets them go on.
  public func stall(_ on: Bool) { stalled.store(on, ordering: .releasing) }

  // MARK: Observations (any thread)

  /// The next frame a read returns.
  public var position: Int { next.load(ordering: .acquiring) }
  /// Frames returned by reads so far.
  public var framesDelivered: Int { delivered.load(ordering: .acquiring) }
  /// Calls to `seek(toFrame:)` that succeeded.
  public var seekCount: Int { seeks.load(ordering: .acquiring) }

  /// The sample this track has at `frame`, `channel`.
  public func sample(frame: Int, channel: Int) -> Float {
    switch configuration.signal {
    case .counter(let first):
      return Self.counterValue(frame: first + frame, channel: channel)
    case .sine(let hertz, let amplitude):
      let phase = 2 * Double.pi * hertz * Double(frame) / Double(format.sampleRate)
      return amplitude * Float(sin(phase))
    }
  }

  // MARK: The counter signal

  /// Counter frames below this are exact: 2^21, about 47 s at 44.1 kHz.
  public static let counterFrameLimit = 1 << 21

  /// The sample that names counter frame `frame`, channel `channel` (at most 8 channels).
  ///
  /// `(frame × 8 + channel) / 2^24`: in [0, 1), and exact in a `Float` for frames below
  /// `counterFrameLimit`, so a gain of exactly 1 leaves it bit for bit.
  public static func counterValue(frame: Int, channel: Int) -> Float {
    precondition(frame >= 0 && frame < counterFrameLimit, "counter frame out of range")
    precondition(channel >= 0 && channel < 8, "the counter names at most 8 channels")
    return Float(frame * 8 + channel) / 16_777_216
  }

  /// The counter frame and channel a sample names, or nil if it names none (it was scaled).
  public static func counterFrame(of sample: Float) -> (frame: Int, channel: Int)? {
    let scaled = Double(sample) * 16_777_216
    guard scaled >= 0, scaled < Double(counterFrameLimit * 8), scaled == scaled.rounded() else {
      return nil
    }
    let n = Int(scaled)
    return (n / 8, n % 8)
  }

  /// The counter frame of each frame in interleaved `samples`: nil where a sample names no
  /// counter frame, or the channels disagree, or a channel is in the wrong place.
  public static func counterFrames(in samples: [Float], channels: Int) -> [Int?] {
    stride(from: 0, to: samples.count - channels + 1, by: channels).map { start in
      guard let (frame, channel) = counterFrame(of: samples[start]), channel == 0 else {
        return nil
      }
      for c in 1..<channels {
        guard let (f, ch) = counterFrame(of: samples[start + c]), f == frame, ch == c else {
          return nil
        }
      }
      return frame
    }
  }
}
