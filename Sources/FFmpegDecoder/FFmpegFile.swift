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
  /// Whether helpers are started through the fork server: the installed hark-ffmpeg's are; one
  /// named by the caller (a test's stand-in) is spawned as it is.
  private let served: Bool
  private let answerTimeout: Duration
  /// The helper of the current run; replaced by `seek` (decode thread).
  private var run: HelperRun
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
  public convenience init(
    path: String, helper: String? = nil, answerTimeout: Duration = .seconds(10)
  ) throws(DecodeError) {
    try self.init(path: path, helper: helper, served: helper == nil, answerTimeout: answerTimeout)
  }

  /// `served`: whether its helpers come from the helper's fork server (tests give a copy of
  /// hark-ffmpeg a server of its own, to kill it).
  init(path: String, helper: String?, served: Bool, answerTimeout: Duration) throws(DecodeError) {
    try Self.refuseUnplayable(path)
    guard let helperPath = helper ?? Self.installedHelper() else {
      throw DecodeError(
        .decoderFailed, path: path,
        reason: "hark-ffmpeg is not installed next to hark (it decodes this format)")
    }
    self.path = path
    self.helperPath = helperPath
    self.served = served
    self.answerTimeout = answerTimeout
    let started = try Self.start(helperPath, path, startFrame: 0, served: served)
    let header = try Self.readHeader(started, answerTimeout)
    self.run = started
    format = header.format
    frameCount = header.frames
    isSeekable = header.isSeekable
    codec = header.codec
    tags = header.tags
    metadata = TrackMetadata(
      title: header.tags["title"], artist: header.tags["artist"], album: header.tags["album"],
      trackNumber: header.tags["track"].flatMap { Int($0) }, genre: header.tags["genre"],
      year: TrackMetadata.year(fromDate: header.tags["date"]))
  }

  /// The pid of the current helper (tests kill it, and check that it was reaped).
  var helperProcessID: pid_t { run.process.pid }

  // MARK: AudioDecoder

  public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(DecodeError) -> Int {
    switch ending {
    case .finished: return 0
    case .failed(let error): throw error
    case nil: break
    }
    switch run.readFrames(into: buffer, channels: format.channels, timeout: answerTimeout) {
    case .frames(let n):
      return n
    case .end:
      try endRun()
      return 0
    case .silence:
      throw stopAnswering()
    }
  }

  /// Starts a new helper at `frame` (the current one is killed); its first frame is that frame
  /// of the file, exactly.
  public func seek(toFrame frame: Int) throws(DecodeError) {
    run.process.kill()
    ending = nil
    do throws(DecodeError) {
      run = try Self.start(helperPath, path, startFrame: max(0, frame), served: served)
      let header = try Self.readHeader(run, answerTimeout)
      guard header.format == format else {
        throw DecodeError(
          .cannotSeek, path: path, reason: "cannot seek in it",
          detail: "FFmpeg read it as \(header.format) after the seek, \(format) before")
      }
    } catch {
      run.process.kill()
      ending = .failed(error)
      throw error
    }
  }

  // MARK: The helper's end

  /// Its stdout has closed: fine if it exited with 0, else why not.
  private func endRun() throws(DecodeError) {
    let termination = run.process.finish(timeout: answerTimeout)
    guard let error = run.failure(termination) else {
      ending = .finished
      return
    }
    ending = .failed(error)
    throw error
  }

  /// Kills a helper that stopped answering; the error to throw.
  private func stopAnswering() -> DecodeError {
    run.process.kill()
    let error = Self.silence(path, answerTimeout)
    ending = .failed(error)
    return error
  }

  private static func silence(_ path: String, _ timeout: Duration) -> DecodeError {
    DecodeError(
      .decoderFailed, path: path,
      reason: "FFmpeg stopped answering (no data for \(spoken(timeout)))")
  }

  // MARK: Starting

  /// Starts hark-ffmpeg on `path` from `startFrame`.
  private static func start(_ helperPath: String, _ path: String, startFrame: Int, served: Bool)
    throws(DecodeError) -> HelperRun
  {
    var arguments = ["--lifeline"]
    if startFrame > 0 { arguments += ["--start-frame", String(startFrame)] }
    arguments += ["--", path]
    return try HelperRun.start(helperPath, arguments, path: path, served: served)
  }

  /// Reads the helper's header, waiting at most `timeout` for it: killed when it stops
  /// answering.
  private static func readHeader(_ run: HelperRun, _ timeout: Duration) throws(DecodeError)
    -> HelperHeader
  {
    switch try run.readHeader(timeout: timeout, finishTimeout: timeout) {
    case .header(let header): return header
    case .waiting:
      run.process.kill()
      throw silence(run.path, timeout)
    }
  }

  /// The same judgement as SoundFile's, before a process is started: a FIFO would block the
  /// helper until a writer came, and a device or a socket is no sound file.
  private static func refuseUnplayable(_ path: String) throws(DecodeError) {
    var st = stat()
    guard stat(FileName.c(path), &st) == 0 else {
      guard errno != ENOENT else {
        throw DecodeError(.notFound, path: path, reason: "no such file")
      }
      throw DecodeError(
        .unreadable, path: path, reason: String(cString: strerror(errno)).lowercased())
    }
    if let kind = kindName(st.st_mode) {
      throw DecodeError(.notAFile, path: path, reason: "it is \(kind), not a sound file")
    }
    if access(FileName.c(path), R_OK) != 0 {
      throw DecodeError(.unreadable, path: path, reason: "permission denied")
    }
    if st.st_size == 0 { throw DecodeError(.damaged, path: path, reason: "the file is empty") }
  }

  /// Has the installed helper's server load FFmpeg now, in its own process, when a player
  /// knows that its first file will need it: its start then overlaps the player's own.
  public static func prepare() {
    if let helper = installedHelper() { HelperServer.prestart(helper) }
  }

  // MARK: Finding the helper

  /// The hark-ffmpeg this process would run: $HARK_FFMPEG_HELPER, else the one in the folder
  /// of the running executable (installed next to hark; next to the test bundle under `swift
  /// test`), else the first on PATH. Nil when there is none.
  public static func installedHelper() -> String? {
    Platform.installedHelper("hark-ffmpeg", variable: "HARK_FFMPEG_HELPER")
  }
}
