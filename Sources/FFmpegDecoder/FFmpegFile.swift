import AudioCore
import Glibc
import Platform

/// A sound file decoded by FFmpeg in a helper process (hark-ffmpeg): AAC and ALAC in MP4,
/// WavPack, Monkey's Audio, TTA, WMA, AC-3, Matroska audio and the rest of what libsndfile
/// cannot read. FFmpeg is never loaded into the player, and a crash or a hang in it on a
/// hostile file ends the track with a reason instead of the player.
///
/// The helper writes a header and then float frames to a pipe (its protocol is described in
/// Sources/hark-ffmpeg/main.swift); a seek starts a new helper at the frame asked for. Owns
/// the helper process: `deinit` kills it (SIGKILL) if it is still running, closes the pipes and
/// reaps it.
public final class FFmpegFile: AudioDecoder {
  public let path: String
  public let format: PCMFormat
  public let frameCount: Int?
  public let isSeekable: Bool
  public let metadata: TrackMetadata
  /// FFmpeg's name for the codec ("aac", "alac", "wavpack").
  public let codec: String
  /// Every tag the helper reported, by its header key (title, artist, album, album_artist,
  /// track, disc, date, genre).
  public let tags: [String: String]
  private let helperPath: String
  private let answerTimeout: Duration
  /// The helper of the current run; replaced by `seek` (decode thread).
  private var helper: HelperProcess
  /// Bytes read but not handed out: what followed the header, or the part of a frame a read
  /// left over. Allocated once.
  private let pending: UnsafeMutableRawBufferPointer
  private var pendingStart = 0
  private var pendingCount = 0
  /// How the current run ended, once it has: reads then return 0, or throw its error again.
  private var ending: Ending?

  private enum Ending {
    case finished
    case failed(DecodeError)
  }

  /// Starts the helper on `path` and reads its header. `helper` is the hark-ffmpeg to run;
  /// without it, $HARK_FFMPEG_HELPER, else the one next to the running executable, else one on
  /// PATH. Throws with plain words when the file is missing, not a regular file, or not audio
  /// FFmpeg can read, when no helper is installed, and when it crashes or stops answering for
  /// `answerTimeout`.
  public init(path: String, helper: String? = nil, answerTimeout: Duration = .seconds(10))
    throws(DecodeError)
  {
    try Self.refuseUnplayable(path)
    guard let helperPath = helper ?? Self.installedHelper() else {
      throw DecodeError(
        path: path, reason: "hark-ffmpeg is not installed next to hark (it decodes this format)")
    }
    self.path = path
    self.helperPath = helperPath
    self.answerTimeout = answerTimeout
    let buffer = UnsafeMutableRawBufferPointer.allocate(
      byteCount: Self.pendingCapacity, alignment: 16)
    let started: HelperProcess
    let header: HelperHeader
    var start = 0
    var count = 0
    do throws(DecodeError) {
      started = try Self.start(helperPath, path, startFrame: 0)
      header = try Self.readHeader(
        started, path, answerTimeout, into: buffer, start: &start, count: &count)
    } catch {
      buffer.deallocate()
      throw error
    }
    pending = buffer
    pendingStart = start
    pendingCount = count
    self.helper = started
    format = header.format
    frameCount = header.frames
    isSeekable = header.isSeekable
    codec = header.codec
    tags = header.tags
    metadata = TrackMetadata(
      title: header.tags["title"], artist: header.tags["artist"], album: header.tags["album"],
      trackNumber: header.tags["track"].flatMap { Int($0) }, genre: header.tags["genre"])
  }

  deinit {
    helper.kill()
    pending.deallocate()
  }

  /// The pid of the current helper (tests kill it, and check that it was reaped).
  var helperProcessID: pid_t { helper.pid }

  /// The header and a good start of the frames; the header is a few hundred bytes.
  private static let pendingCapacity = 65_536

  // MARK: AudioDecoder

  public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(DecodeError) -> Int {
    switch ending {
    case .finished: return 0
    case .failed(let error): throw error
    case nil: break
    }
    let frameBytes = format.channels * MemoryLayout<Float>.size
    let capacity = buffer.count / format.channels * frameBytes
    guard capacity > 0, let base = buffer.baseAddress, let store = pending.baseAddress else {
      return 0
    }
    let bytes = UnsafeMutableRawPointer(base)
    var filled = 0
    if pendingCount > 0 {
      filled = min(pendingCount, capacity)
      bytes.copyMemory(from: store + pendingStart, byteCount: filled)
      pendingStart += filled
      pendingCount -= filled
      if pendingCount == 0 { pendingStart = 0 }
    }
    // Until a whole frame has come: the helper may write a frame in pieces.
    while filled < frameBytes {
      switch helper.read(into: bytes + filled, count: capacity - filled, timeout: answerTimeout) {
      case .bytes(let n):
        filled += n
      case .end:
        // A piece of a frame at the very end is no frame: dropped.
        try endRun()
        return 0
      case .silence:
        throw stopAnswering()
      }
    }
    let whole = filled / frameBytes
    let rest = filled - whole * frameBytes
    if rest > 0 {
      // `pending` is empty here: a read that began with pending bytes either took them all or
      // filled the buffer with whole frames.
      store.copyMemory(from: bytes + whole * frameBytes, byteCount: rest)
      pendingStart = 0
      pendingCount = rest
    }
    return whole
  }

  /// Starts a new helper at `frame` (the current one is killed); its first frame is that frame
  /// of the file, exactly.
  public func seek(toFrame frame: Int) throws(DecodeError) {
    helper.kill()
    pendingStart = 0
    pendingCount = 0
    ending = nil
    do throws(DecodeError) {
      helper = try Self.start(helperPath, path, startFrame: max(0, frame))
      let header = try Self.readHeader(
        helper, path, answerTimeout, into: pending, start: &pendingStart, count: &pendingCount)
      guard header.format == format else {
        throw DecodeError(
          path: path, reason: "cannot seek in it",
          detail: "FFmpeg read it as \(header.format) after the seek, \(format) before")
      }
    } catch {
      helper.kill()
      ending = .failed(error)
      throw error
    }
  }

  // MARK: The helper's end

  /// Its stdout has closed: fine if it exited with 0, else why not.
  private func endRun() throws(DecodeError) {
    let termination = helper.finish(timeout: answerTimeout)
    guard let error = Self.failure(of: helper, termination, path) else {
      ending = .finished
      return
    }
    ending = .failed(error)
    throw error
  }

  /// Kills a helper that stopped answering; the error to throw.
  private func stopAnswering() -> DecodeError {
    helper.kill()
    let error = Self.silence(path, answerTimeout)
    ending = .failed(error)
    return error
  }

  private static func silence(_ path: String, _ timeout: Duration) -> DecodeError {
    DecodeError(path: path, reason: "FFmpeg stopped answering (no data for \(spoken(timeout)))")
  }

  /// Why a helper that ended did not end well; nil when it exited with 0.
  private static func failure(
    of helper: HelperProcess, _ termination: Termination, _ path: String
  ) -> DecodeError? {
    switch termination {
    case .exited(0):
      return nil
    case .exited(let status):
      if let line = helper.lastLine {
        return DecodeError(path: path, reason: line.reason, detail: line.detail)
      }
      return DecodeError(path: path, reason: "hark-ffmpeg failed (exit status \(status))")
    case .signaled(let signal):
      let name = strsignal(signal).map { String(cString: $0) }
      return DecodeError(
        path: path, reason: "FFmpeg crashed on it (signal \(signal))", detail: name)
    case .unknown:
      // Reaped by someone else: its line, if it wrote one, is the only word on how it went.
      return helper.lastLine.map { DecodeError(path: path, reason: $0.reason, detail: $0.detail) }
    }
  }

  // MARK: Starting

  /// Starts hark-ffmpeg on `path` from `startFrame`.
  private static func start(_ helperPath: String, _ path: String, startFrame: Int)
    throws(DecodeError) -> HelperProcess
  {
    var arguments = ["--lifeline"]
    if startFrame > 0 { arguments += ["--start-frame", String(startFrame)] }
    arguments += ["--", path]
    do throws(SpawnFailure) {
      return try HelperProcess.start(helperPath, arguments)
    } catch {
      let detail = "\(helperPath): \(String(cString: strerror(error.code)))"
      let reason =
        error.code == ENOENT
        ? "hark-ffmpeg is not installed next to hark (it decodes this format)"
        : "hark-ffmpeg could not be started"
      throw DecodeError(path: path, reason: reason, detail: detail)
    }
  }

  /// Reads the helper's header into `buffer`; what came after it is left there, from `start`,
  /// `count` bytes. Throws the helper's reason when it ended instead, and kills it when it
  /// stops answering or sends what is not a header.
  private static func readHeader(
    _ helper: HelperProcess, _ path: String, _ timeout: Duration,
    into buffer: UnsafeMutableRawBufferPointer, start: inout Int, count: inout Int
  ) throws(DecodeError) -> HelperHeader {
    guard let base = buffer.baseAddress else { preconditionFailure("no header buffer") }
    var filled = 0
    var searched = 0
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
        start = end
        count = filled - end
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
        guard let header = HelperHeader(text) else {
          helper.kill()
          throw DecodeError(
            path: path, reason: "hark-ffmpeg answered in a way hark does not understand",
            detail: String(text.prefix(80)))
        }
        return header
      }
      guard filled < buffer.count else {
        helper.kill()
        throw DecodeError(
          path: path, reason: "hark-ffmpeg answered in a way hark does not understand",
          detail: "no end to its header")
      }
      switch helper.read(into: base + filled, count: buffer.count - filled, timeout: timeout) {
      case .bytes(let n):
        filled += n
      case .end:
        let termination = helper.finish(timeout: timeout)
        throw failure(of: helper, termination, path)
          ?? DecodeError(path: path, reason: "hark-ffmpeg ended without a word")
      case .silence:
        helper.kill()
        throw silence(path, timeout)
      }
    }
  }

  /// The same judgement as SoundFile's, before a process is started: a FIFO would block the
  /// helper until a writer came, and a device or a socket is no sound file.
  private static func refuseUnplayable(_ path: String) throws(DecodeError) {
    var st = stat()
    guard stat(path, &st) == 0 else {
      let reason = errno == ENOENT ? "no such file" : String(cString: strerror(errno)).lowercased()
      throw DecodeError(path: path, reason: reason)
    }
    if let kind = kindName(st.st_mode) {
      throw DecodeError(path: path, reason: "it is \(kind), not a sound file")
    }
    if access(path, R_OK) != 0 { throw DecodeError(path: path, reason: "permission denied") }
    if st.st_size == 0 { throw DecodeError(path: path, reason: "the file is empty") }
  }

  // MARK: Finding the helper

  /// The hark-ffmpeg this process would run: $HARK_FFMPEG_HELPER, else the one in the folder
  /// of the running executable (installed next to hark; next to the test bundle under `swift
  /// test`), else the first on PATH. Nil when there is none.
  public static func installedHelper() -> String? {
    if let named = environment("HARK_FFMPEG_HELPER"), !named.isEmpty {
      return named
    }
    var folders: [String] = []
    if let executable = executablePath(), let slash = executable.lastIndex(of: "/") {
      folders.append(String(executable[..<slash]))
    }
    if let path = environment("PATH") {
      folders += path.split(separator: ":").map(String.init)
    }
    for folder in folders where !folder.isEmpty {
      let candidate = folder + "/hark-ffmpeg"
      var st = stat()
      if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
        return candidate
      }
    }
    return nil
  }
}

/// "10 s", "0.5 s".
private func spoken(_ duration: Duration) -> String {
  let (whole, attoseconds) = duration.components
  let tenths = attoseconds / 100_000_000_000_000_000
  return tenths == 0 ? "\(whole) s" : "\(whole).\(tenths) s"
}
