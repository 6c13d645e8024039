/// A stretch of another decoder's frames, from `start` to `end` (or its end), played as a track
/// of its own: a track of a cue sheet cut from one long file. Frame 0 of the slice is frame
/// `start` of the file; reads stop at `end`; seeks stay within.
public final class TrackSlice: AudioDecoder {
  private let inner: any AudioDecoder
  private let start: Int
  /// Frames of the slice read so far (decode thread).
  private var position = 0
  public let metadata: TrackMetadata
  public let frameCount: Int?

  public var format: PCMFormat { inner.format }
  public var isSeekable: Bool { inner.isSeekable }

  /// Moves `inner` to `start` (seeking, or decoding up to it where it cannot seek). Throws
  /// when the file is shorter than `start`, naming `path` (the track's own).
  public init(
    _ inner: any AudioDecoder, from start: Int, to end: Int?, metadata: TrackMetadata,
    path: String
  ) throws(DecodeError) {
    let first = max(0, start)
    if let length = inner.frameCount, first >= length {
      throw DecodeError(
        .damaged, path: path, reason: "the track starts after the end of its audio file")
    }
    let last = [end.map { max($0, first) }, inner.frameCount].compactMap { $0 }.min()
    if first > 0 {
      if inner.isSeekable {
        try inner.seek(toFrame: first)
      } else {
        try Self.skip(first, of: inner, path: path)
      }
    }
    self.inner = inner
    self.start = first
    self.metadata = metadata
    frameCount = last.map { $0 - first }
  }

  /// Reads and drops `frames` frames of a decoder that cannot seek.
  private static func skip(_ frames: Int, of decoder: any AudioDecoder, path: String)
    throws(DecodeError)
  {
    let channels = decoder.format.channels
    var scratch = [Float](repeating: 0, count: 4096 * channels)
    var left = frames
    while left > 0 {
      let want = min(left, 4096) * channels
      let got = try scratch.withUnsafeMutableBufferPointer { b throws(DecodeError) in
        try decoder.read(into: UnsafeMutableBufferPointer(rebasing: b[0..<want]))
      }
      if got == 0 {
        throw DecodeError(
          .damaged, path: path, reason: "the track starts after the end of its audio file")
      }
      left -= got
    }
  }

  public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(DecodeError) -> Int {
    var room = buffer.count / format.channels
    if let length = frameCount { room = min(room, length - position) }
    guard room > 0 else { return 0 }
    let got = try inner.read(
      into: UnsafeMutableBufferPointer(rebasing: buffer[0..<(room * format.channels)]))
    position += got
    return got
  }

  public func seek(toFrame frame: Int) throws(DecodeError) {
    let target = max(0, min(frame, frameCount ?? frame))
    try inner.seek(toFrame: start + target)
    position = target
  }
}
