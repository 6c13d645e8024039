import AudioCore
import Glibc
import Platform

/// One run of hark-ffmpeg as a reader sees it: the process, its header once it has come, and
/// the bytes read past what was handed out (the rest of the first read after the header, or
/// the part of a frame a read left over). FFmpegFile and FFmpegStream read through it.
///
/// Reads wait at most the time they are given, so that a caller can wait in short steps and
/// do something else between them (a stream's decoder hands the decode thread back every few
/// tens of milliseconds). Used from one thread at a time.
final class HelperRun {
  let process: HelperProcess
  /// The file or URL, for errors.
  let path: String
  private(set) var header: HelperHeader?
  /// Allocated once: the header and a good start of the frames (the header is a few hundred
  /// bytes).
  private let store: UnsafeMutableRawBufferPointer
  private var pendingStart = 0
  private var pendingCount = 0
  /// While the header is still coming: how much of `store` holds it, and how far the search
  /// for its end has gone.
  private var filled = 0
  private var searched = 0

  private static let capacity = 65_536

  init(_ process: HelperProcess, path: String) {
    self.process = process
    self.path = path
    store = .allocate(byteCount: Self.capacity, alignment: 16)
  }

  deinit {
    process.kill()
    store.deallocate()
  }

  /// What a wait for the header brought.
  enum HeaderArrival {
    case header(HelperHeader)
    /// Not whole yet: nothing more came within the wait.
    case waiting
  }

  /// Reads toward the header for at most `timeout`. Throws the helper's reason when it ended
  /// instead (reaping it, waiting at most `finishTimeout` for it), and kills it when it sends
  /// what is not a header.
  func readHeader(timeout: Duration, finishTimeout: Duration) throws(DecodeError) -> HeaderArrival {
    if let header { return .header(header) }
    guard let base = store.baseAddress else { preconditionFailure("no header buffer") }
    let deadline = Deadline(after: timeout)
    while true {
      // The empty line that ends the header.
      let bytes = UnsafeBufferPointer(
        start: base.assumingMemoryBound(to: UInt8.self), count: filled)
      var end: Int?
      var i = max(1, searched)
      while i < filled {
        if bytes[i] == 0x0A && bytes[i - 1] == 0x0A {
          end = i + 1
          break
        }
        i += 1
      }
      searched = filled
      if let end {
        pendingStart = end
        pendingCount = filled - end
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
        guard let header = HelperHeader(text) else {
          process.kill()
          throw DecodeError(
            .decoderFailed, path: path,
            reason: "hark-ffmpeg answered in a way hark does not understand",
            detail: String(text.prefix(80)))
        }
        self.header = header
        return .header(header)
      }
      guard filled < store.count else {
        process.kill()
        throw DecodeError(
          .decoderFailed, path: path,
          reason: "hark-ffmpeg answered in a way hark does not understand",
          detail: "no end to its header")
      }
      let wait = Duration.milliseconds(Int64(deadline.remainingMilliseconds()))
      switch process.read(into: base + filled, count: store.count - filled, timeout: wait) {
      case .bytes(let n):
        filled += n
      case .end:
        let termination = process.finish(timeout: finishTimeout)
        throw failure(termination)
          ?? DecodeError(.decoderFailed, path: path, reason: "hark-ffmpeg ended without a word")
      case .silence:
        return .waiting
      }
    }
  }

  /// What a read of frames brought.
  enum FramesArrival: Equatable {
    /// This many whole frames (at least one) are at the start of the buffer.
    case frames(Int)
    /// Its stdout closed (a piece of a frame at the very end is no frame: dropped).
    case end
    /// Nothing came within the wait.
    case silence
  }

  /// After the header: puts whole frames of `channels` samples into `buffer`, waiting at most
  /// `timeout` for the helper to write.
  func readFrames(
    into buffer: UnsafeMutableBufferPointer<Float>, channels: Int, timeout: Duration
  ) -> FramesArrival {
    let frameBytes = channels * MemoryLayout<Float>.size
    let capacity = buffer.count / channels * frameBytes
    guard capacity > 0, let base = buffer.baseAddress, let pending = store.baseAddress else {
      return .frames(0)
    }
    let bytes = UnsafeMutableRawPointer(base)
    var got = 0
    if pendingCount > 0 {
      got = min(pendingCount, capacity)
      bytes.copyMemory(from: pending + pendingStart, byteCount: got)
      pendingStart += got
      pendingCount -= got
      if pendingCount == 0 { pendingStart = 0 }
    }
    // Until a whole frame has come: the helper may write a frame in pieces.
    while got < frameBytes {
      switch process.read(into: bytes + got, count: capacity - got, timeout: timeout) {
      case .bytes(let n):
        got += n
      case .end:
        return .end
      case .silence:
        // What came of a frame waits in `pending` (empty here: a read that began with pending
        // bytes either took them all or filled the buffer with whole frames).
        if got > 0 {
          pending.copyMemory(from: bytes, byteCount: got)
          pendingStart = 0
          pendingCount = got
        }
        return .silence
      }
    }
    let whole = got / frameBytes
    let rest = got - whole * frameBytes
    if rest > 0 {
      pending.copyMemory(from: bytes + whole * frameBytes, byteCount: rest)
      pendingStart = 0
      pendingCount = rest
    }
    return .frames(whole)
  }

  /// Why a helper that ended did not end well; nil when it exited with 0.
  func failure(_ termination: Termination) -> DecodeError? {
    switch termination {
    case .exited(0):
      return nil
    case .exited(let status):
      return process.lastLineError(path: path)
        ?? DecodeError(
          .decoderFailed, path: path, reason: "hark-ffmpeg failed (exit status \(status))")
    case .signaled(let signal):
      let name = strsignal(signal).map { String(cString: $0) }
      return DecodeError(
        .decoderFailed, path: path, reason: "FFmpeg crashed on it (signal \(signal))",
        detail: name)
    case .unknown:
      // Reaped by someone else: its line, if it wrote one, is the only word on how it went.
      return process.lastLineError(path: path)
    }
  }

  /// Starts `helperPath arguments…` (through its fork server when `served`); the reasons a
  /// start fails, in the user's words.
  static func start(
    _ helperPath: String, _ arguments: [String], path: String, events: Bool = false,
    served: Bool
  ) throws(DecodeError) -> HelperRun {
    do throws(SpawnFailure) {
      let process = try HelperProcess.start(
        helperPath, arguments, events: events, served: served)
      return HelperRun(process, path: path)
    } catch {
      let detail = "\(helperPath): \(String(cString: strerror(error.code)))"
      let reason =
        error.code == ENOENT
        ? "hark-ffmpeg is not installed next to hark (it decodes this format)"
        : "hark-ffmpeg could not be started"
      throw DecodeError(.decoderFailed, path: path, reason: reason, detail: detail)
    }
  }
}

/// "10 s", "0.5 s".
func spoken(_ duration: Duration) -> String {
  let (whole, attoseconds) = duration.components
  let tenths = attoseconds / 100_000_000_000_000_000
  return tenths == 0 ? "\(whole) s" : "\(whole).\(tenths) s"
}
