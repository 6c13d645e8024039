import AudioCore
import CSndFile
import Glibc

/// A sound file opened with libsndfile: WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3 and the rest of
/// what the machine's libsndfile reads. Owns its SNDFILE handle and closes it in `deinit`.
public final class SoundFile: AudioDecoder {
  private let handle: OpaquePointer
  public let path: String
  public let format: PCMFormat
  public let frameCount: Int?
  public let isSeekable: Bool
  public let metadata: TrackMetadata
  /// Frames read so far (decode thread).
  private var framesRead = 0
  /// A WAV or AIFF whose header promises more data than the file holds (libsndfile trims the
  /// length to what is there and notes it in its log).
  private let headerPromisesMore: Bool

  /// Opens `path` (sf_open). Throws with plain words when it is missing, empty, unreadable or
  /// not audio libsndfile knows.
  public init(path: String) throws(DecodeError) {
    // Only regular files: opening a FIFO blocks until a writer comes (for ever, and the next
    // track never played), and a device or a socket is no sound file. Said before opening.
    var st = stat()
    if stat(path, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG {
      let kind: String
      switch st.st_mode & S_IFMT {
      case S_IFIFO: kind = "a named pipe (FIFO)"
      case S_IFCHR: kind = "a character device"
      case S_IFBLK: kind = "a block device"
      case S_IFSOCK: kind = "a socket"
      case S_IFDIR: kind = "a folder"
      default: kind = "not a regular file"
      }
      throw DecodeError(path: path, reason: "it is \(kind), not a sound file")
    }
    var info = SF_INFO()
    guard let h = sf_open(path, Int32(SFM_READ), &info) else {
      let detail = String(cString: sf_strerror(nil))
      throw DecodeError(path: path, reason: Self.whyNotOpened(path, detail), detail: detail)
    }
    guard info.channels > 0, info.samplerate > 0 else {
      sf_close(h)
      throw DecodeError(path: path, reason: "the file declares no channels or no sample rate")
    }
    handle = h
    self.path = path
    format = PCMFormat(sampleRate: Int(info.samplerate), channels: Int(info.channels))
    // libsndfile reports SF_COUNT_MAX for streams whose length it cannot know.
    frameCount = info.frames > 0 && info.frames < Int64.max / 2 ? Int(info.frames) : nil
    isSeekable = info.seekable != 0
    func tag(_ which: Int32) -> String? {
      guard let s = sf_get_string(h, which) else { return nil }
      let text = String(cString: s).trimmingCharacters(in: " \t\r\n\0")
      return text.isEmpty ? nil : text
    }
    metadata = TrackMetadata(
      title: tag(Int32(SF_STR_TITLE)), artist: tag(Int32(SF_STR_ARTIST)),
      album: tag(Int32(SF_STR_ALBUM)),
      trackNumber: tag(Int32(SF_STR_TRACKNUMBER)).flatMap { Int($0.prefix { $0.isNumber }) })
    var log = [CChar](repeating: 0, count: 4096)
    sf_command(h, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
    let text = String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // "RIFF : 904206 (should be 119992)", "data : 904170 (should be 119956)".
    headerPromisesMore = text.split(separator: "\n").contains {
      ($0.hasPrefix("RIFF") || $0.hasPrefix("data") || $0.hasPrefix("FORM") || $0.hasPrefix("SSND"))
        && $0.contains("should be")
    }
  }

  deinit { sf_close(handle) }

  public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(DecodeError) -> Int {
    let frames = buffer.count / format.channels
    guard frames > 0, let base = buffer.baseAddress else { return 0 }
    let n = sf_readf_float(handle, base, sf_count_t(frames))
    if n < frames {
      let code = sf_error(handle)
      if code != 0 {
        throw DecodeError(
          path: path, reason: "the file is damaged partway through",
          detail: String(cString: sf_error_number(code)))
      }
    }
    framesRead += Int(max(0, n))
    if n <= 0, let cut = cutShort() { throw cut }
    return Int(max(0, n))
  }

  /// At the end of what the file holds: whether it holds less than it says. FLAC and MP3 say
  /// their length up front (MP3's is an estimate, hence the 2% leeway); a WAV's header says
  /// how much data follows. Ogg streams do not say, and play to wherever they end.
  private func cutShort() -> DecodeError? {
    let heard = format.seconds(framesRead)
    if let total = frameCount, framesRead < total - max(total / 50, format.sampleRate / 10) {
      return DecodeError(
        path: path,
        reason: "the file is cut short after \(seconds(heard)) of \(seconds(format.seconds(total)))"
      )
    }
    if headerPromisesMore {
      return DecodeError(
        path: path,
        reason: "the file is cut short after \(seconds(heard)) (its header promises more)")
    }
    return nil
  }

  private func seconds(_ s: Double) -> String {
    let tenths = Int((s * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) s"
  }

  public func seek(toFrame frame: Int) throws(DecodeError) {
    framesRead = frame
    guard sf_seek(handle, sf_count_t(frame), SEEK_SET) >= 0 else {
      throw DecodeError(
        path: path, reason: "cannot seek in it", detail: String(cString: sf_strerror(handle)))
    }
  }

  /// The user's words for a file libsndfile refused.
  private static func whyNotOpened(_ path: String, _ detail: String) -> String {
    var st = stat()
    if stat(path, &st) != 0 {
      return errno == ENOENT ? "no such file" : String(cString: strerror(errno)).lowercased()
    }
    if (st.st_mode & S_IFMT) == S_IFDIR { return "it is a folder" }
    if access(path, R_OK) != 0 { return "permission denied" }
    if st.st_size == 0 { return "the file is empty" }
    // A readable, non-empty file libsndfile refused: whatever its own words (for a garbage .mp3
    // it says the file "does not exist"), to the user it is not audio it can read.
    return "not an audio file libsndfile can read"
  }
}

extension String {
  fileprivate func trimmingCharacters(in set: String) -> String {
    let drop = Set(set)
    var s = Substring(self)
    while let f = s.first, drop.contains(f) { s = s.dropFirst() }
    while let l = s.last, drop.contains(l) { s = s.dropLast() }
    return String(s)
  }
}
