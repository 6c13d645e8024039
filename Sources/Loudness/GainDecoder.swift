import AudioCore

/// A decoder whose samples come out at a constant gain: a track's ReplayGain, applied as it is
/// decoded (on the decode thread, into the ring), so that everything after it (ducking, fades,
/// the system volume) works on the corrected level. It is the track's own correction, like the
/// phone's Sound Check, not a private volume: the volume keys still move the system mixer (G3).
public final class GainDecoder: AudioDecoder {
  public let inner: any AudioDecoder
  /// The gain applied, in dB (shown to the user in the track's metadata).
  public let decibels: Double
  private let factor: Float

  public init(_ inner: any AudioDecoder, decibels: Double) {
    self.inner = inner
    self.decibels = decibels
    factor = linearGain(decibels: decibels)
  }

  public var format: PCMFormat { inner.format }
  public var frameCount: Int? { inner.frameCount }
  public var isSeekable: Bool { inner.isSeekable }
  public var live: LiveState? { inner.live }
  public var metadata: TrackMetadata {
    var m = inner.metadata
    m.replayGain = decibels
    return m
  }

  public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(DecodeError) -> Int {
    let frames = try inner.read(into: buffer)
    let samples = frames * format.channels
    for i in 0..<samples { buffer[i] *= factor }
    return frames
  }

  public func seek(toFrame frame: Int) throws(DecodeError) { try inner.seek(toFrame: frame) }
}
