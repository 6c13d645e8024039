import AudioCore
import CSndFile
import Glibc
import Platform

/// A sound file opened with libsndfile: WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3 and the rest of
/// what the machine's libsndfile reads. Owns its SNDFILE handle and closes it in `deinit`.
public final class SoundFile: AudioDecoder {
  /// Replaced only by `reopen` (an Opus seek), on the decode thread.
  private var handle: OpaquePointer
  public let path: String
  public let format: PCMFormat
  public let frameCount: Int?
  public let isSeekable: Bool
  public let metadata: TrackMetadata
  /// Frames read so far (decode thread).
  private var framesRead = 0
  /// An Ogg stream's first frames, decoded at the open to know that it decodes at all: the
  /// first reads hand them out before reading on. Emptied by a seek (decode thread).
  private var probed: [Float] = []
  /// A WAV or AIFF whose header promises more data than the file holds (libsndfile trims the
  /// length to what is there and notes it in its log).
  private let headerPromisesMore: Bool
  /// Opus in Ogg: seeks go back to the start and decode forward rather than through sf_seek,
  /// whose Opus code loops for ever on some damaged streams (libsndfile 1.2.0 and its master:
  /// ogg_opus_null_read's step can be 0 or less while samples are still buffered; found by the
  /// decoder fuzzer, regressions in Tests/FuzzTests/Corpus/decoders/regressions). Decoding from
  /// the start costs time on a long file (a minute of Opus decodes in well under a second).
  private let seeksByDecoding: Bool
  /// What libsndfile reads the file through (nil where it opened the file itself).
  private var file: BufferedFile?
  /// Whether libsndfile reads the file through a `BufferedFile` (for the tests).
  var readsThroughBuffer: Bool { file != nil }

  /// Opens `path` (sf_open). Throws with plain words when it is missing, empty, unreadable or
  /// not audio libsndfile knows.
  public init(path: String) throws(DecodeError) {
    // Only regular files: opening a FIFO blocks until a writer comes (for ever, and the next
    // track never played), and a device or a socket is no sound file. Said before opening.
    if let kind = nonRegularKind(path) {
      throw DecodeError(.notAFile, path: path, reason: "it is \(kind), not a sound file")
    }
    var info = SF_INFO()
    guard let (first, file) = Self.open(path, &info) else { throw Self.refusal(path) }
    self.file = file
    guard info.channels > 0, info.samplerate > 0 else {
      sf_close(first)
      throw DecodeError(
        .damaged, path: path, reason: "the file declares no channels or no sample rate")
    }
    // Ogg Vorbis whose setup header is broken still opens, decodes nothing, and the first
    // seek that skips packets crashes inside libvorbis (vorbis_synthesis_trackonly on a decoder
    // never set up, which libsndfile does not check; libsndfile 1.2.0 and its master). A first
    // read says whether it decodes at all; what it decoded is kept and read first (`probed`),
    // so that nothing seeks in the file before it is known to decode, and it is opened once:
    // opened afresh, an Ogg stream's headers, codebooks and the scan for its end were read
    // again at every start.
    let container = info.format & Int32(SF_FORMAT_TYPEMASK)
    let codec = info.format & Int32(SF_FORMAT_SUBMASK)
    let h = first
    if container == Int32(SF_FORMAT_OGG) {
      var probe = [Float](repeating: 0, count: 64 * Int(info.channels))
      let got = sf_readf_float(h, &probe, 64)
      guard got > 0 else {
        sf_close(h)
        throw DecodeError(.damaged, path: path, reason: "no sound in it (empty, or cut short)")
      }
      probed = Array(probe.prefix(Int(got) * Int(info.channels)))
    }
    seeksByDecoding = container == Int32(SF_FORMAT_OGG) && codec == Int32(SF_FORMAT_OPUS)
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
      trackNumber: tag(Int32(SF_STR_TRACKNUMBER)).flatMap { Int($0.prefix { $0.isNumber }) },
      genre: tag(Int32(SF_STR_GENRE)),
      year: TrackMetadata.year(fromDate: tag(Int32(SF_STR_DATE))))
    var log = [CChar](repeating: 0, count: 4096)
    sf_command(h, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
    let text = String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // "RIFF : 904206 (should be 119992)", "data : 904170 (should be 119956)".
    headerPromisesMore = text.split(separator: "\n").contains {
      ($0.hasPrefix("RIFF") || $0.hasPrefix("data") || $0.hasPrefix("FORM") || $0.hasPrefix("SSND"))
        && $0.contains("should be")
    }
  }

  // The handle first: libsndfile reads nothing more through `file` once it is closed.
  deinit { sf_close(handle) }

  /// Opens `path` for libsndfile, through a `BufferedFile`; where libsndfile will not read it
  /// that way (or the file cannot be opened), through its own sf_open, as before: that one's
  /// error is then the one `refusal` reads.
  private static func open(_ path: String, _ info: inout SF_INFO) -> (OpaquePointer, BufferedFile?)?
  {
    if let file = BufferedFile(path: path),
      let handle = sf_open_virtual(
        BufferedFile.io, Int32(SFM_READ), &info, Unmanaged.passUnretained(file).toOpaque())
    {
      return (handle, file)
    }
    info = SF_INFO()
    return sf_open(FileName.c(path), Int32(SFM_READ), &info).map { ($0, nil) }
  }

  public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(DecodeError) -> Int {
    let channels = format.channels
    let frames = buffer.count / channels
    guard frames > 0, let base = buffer.baseAddress else { return 0 }
    var kept = 0
    if !probed.isEmpty {
      kept = min(probed.count / channels, frames)
      let samples = kept * channels
      probed.withUnsafeBufferPointer { from in
        if let from = from.baseAddress { base.update(from: from, count: samples) }
      }
      probed.removeFirst(samples)
      if kept == frames {
        framesRead += kept
        return kept
      }
    }
    let more = sf_readf_float(handle, base + kept * channels, sf_count_t(frames - kept))
    let n = sf_count_t(kept) + max(0, more)
    if n < frames {
      if let failed = file?.failure {
        throw DecodeError(
          .unreadable, path: path, reason: "the file could not be read partway through",
          detail: String(cString: strerror(failed)))
      }
      let code = sf_error(handle)
      if code != 0 {
        throw DecodeError(
          .damaged, path: path, reason: "the file is damaged partway through",
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
        .damaged, path: path,
        reason: "the file is cut short after \(seconds(heard)) of \(seconds(format.seconds(total)))"
      )
    }
    if headerPromisesMore {
      return DecodeError(
        .damaged, path: path,
        reason: "the file is cut short after \(seconds(heard)) (its header promises more)")
    }
    return nil
  }

  private func seconds(_ s: Double) -> String {
    let tenths = Int((s * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) s"
  }

  public func seek(toFrame frame: Int) throws(DecodeError) {
    probed = []
    let reached =
      seeksByDecoding ? try decode(toFrame: frame) : sf_seek(handle, sf_count_t(frame), SEEK_SET)
    guard reached >= 0 else {
      throw DecodeError(
        .cannotSeek, path: path, reason: "cannot seek in it",
        detail: String(cString: sf_strerror(handle)))
    }
    framesRead = Int(reached)
    // sf_seek says where it went, which in a damaged Ogg stream can be short of the frame asked
    // for without an error (the end of what decodes, where the header claimed more; the start
    // of a stream that decodes to nothing). Played on from there, the position shown would not
    // be the one heard, and reads would run past the length the file claims.
    guard reached == frame else {
      throw DecodeError(
        .cannotSeek, path: path, reason: "cannot seek in it",
        detail: "asked for frame \(frame), libsndfile went to \(reached)")
    }
  }

  /// Opus: opens the file afresh and decodes up to `frame` (see `seeksByDecoding`); where it
  /// got to (short of `frame` at the end of what decodes).
  private func decode(toFrame frame: Int) throws(DecodeError) -> sf_count_t {
    var info = SF_INFO()
    guard let (fresh, freshFile) = Self.open(path, &info) else {
      throw DecodeError(
        .cannotSeek, path: path, reason: "cannot seek in it",
        detail: String(cString: sf_strerror(nil)))
    }
    sf_close(handle)
    handle = fresh
    file = freshFile
    let channels = format.channels
    var scratch = [Float](repeating: 0, count: 4_096 * channels)
    var at = 0
    while at < frame {
      let n = sf_readf_float(handle, &scratch, sf_count_t(min(4_096, frame - at)))
      if n <= 0 { break }
      at += Int(n)
    }
    return sf_count_t(at)
  }

  /// The user's words for a file libsndfile refused (just now: its error is read here). Its
  /// own words follow only where they add something: not after "no such file", which they
  /// only repeat ("System error : No such file or directory."), nor where they are wrong (for
  /// a text file named .mp3 it says the file "does not exist or is not a regular file").
  private static func refusal(_ path: String) -> DecodeError {
    let detail = String(cString: sf_strerror(nil))
    var st = stat()
    if stat(FileName.c(path), &st) != 0 {
      guard errno != ENOENT else {
        return DecodeError(.notFound, path: path, reason: "no such file")
      }
      return DecodeError(
        .unreadable, path: path, reason: String(cString: strerror(errno)).lowercased())
    }
    if (st.st_mode & S_IFMT) == S_IFDIR {
      return DecodeError(.notAFile, path: path, reason: "it is a folder")
    }
    if access(FileName.c(path), R_OK) != 0 {
      return DecodeError(.unreadable, path: path, reason: "permission denied")
    }
    if st.st_size == 0 { return DecodeError(.damaged, path: path, reason: "the file is empty") }
    // A readable, non-empty file libsndfile refused: to the user it is not audio it can read.
    let misleading = detail.contains("does not exist") || detail.contains("System error")
    return DecodeError(
      .unknownFormat, path: path, reason: unknownFormat, detail: misleading ? nil : detail)
  }

  /// The words for a readable file libsndfile does not know (`.unknownFormat`: another decoder
  /// may).
  public static let unknownFormat = "not an audio file libsndfile can read"
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

/// A file as libsndfile reads it through its virtual I/O: from a buffer of `size` bytes that
/// `pread` fills, where libsndfile reading the file itself made a read(2) of 8 KB each time
/// (445 for 20 s of 44.1 kHz stereo WAV): 64 KB at a time, eight times fewer calls into the
/// kernel on the decode thread. Only the decode thread (or the one opening a track ahead)
/// reads it, one at a time, as libsndfile's handle is used.
final class BufferedFile {
  private let fd: Int32
  private let buffer: UnsafeMutableRawPointer
  /// Where libsndfile is in the file.
  private var position: Int64 = 0
  /// What `buffer` holds: the bytes from `bufferStart`, `bufferLength` of them.
  private var bufferStart: Int64 = 0
  private var bufferLength = 0
  /// The errno of a read that failed (not the file's end), once one did.
  private(set) var failure: Int32?

  static let size = 64 << 10

  init?(path: String) {
    fd = Glibc.open(FileName.c(path), O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    buffer = .allocate(byteCount: Self.size, alignment: 64)
  }

  deinit {
    close(fd)
    buffer.deallocate()
  }

  /// The file's length now (libsndfile asks at the open and where it checks a length).
  private var length: Int64 {
    var st = stat()
    return fstat(fd, &st) == 0 ? Int64(st.st_size) : -1
  }

  private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
    let to: Int64
    switch whence {
    case SEEK_SET: to = offset
    case SEEK_CUR: to = position + offset
    case SEEK_END: to = length + offset
    default: return -1
    }
    guard to >= 0 else { return -1 }
    position = to
    return to
  }

  /// Up to `count` bytes at `position` into `out`: from the buffer, refilled as it runs out; a
  /// read of the buffer's size or more straight into `out`. Short only at the file's end or
  /// where a read failed (`failure`).
  private func read(_ out: UnsafeMutableRawPointer, _ count: Int) -> Int {
    var done = 0
    while done < count {
      if position >= bufferStart, position < bufferStart + Int64(bufferLength) {
        let from = Int(position - bufferStart)
        let n = min(bufferLength - from, count - done)
        (out + done).copyMemory(from: buffer + from, byteCount: n)
        done += n
        position += Int64(n)
        continue
      }
      let direct = count - done >= Self.size
      let got =
        direct
        ? pread(fd, out + done, count - done, off_t(position))
        : pread(fd, buffer, Self.size, off_t(position))
      if got < 0 {
        if errno == EINTR { continue }
        failure = errno
        break
      }
      if got == 0 { break }
      if direct {
        done += got
        position += Int64(got)
      } else {
        bufferStart = position
        bufferLength = got
      }
    }
    return done
  }

  private static func of(_ user: UnsafeMutableRawPointer?) -> BufferedFile? {
    user.map { Unmanaged<BufferedFile>.fromOpaque($0).takeUnretainedValue() }
  }

  /// The callbacks, for sf_open_virtual (each given the `BufferedFile` as its user data): one
  /// table for every file, which libsndfile copies at the open and never writes. Handed over
  /// as a pointer, not `&` of a static var: that is an inout access for the whole open, and
  /// two threads opening files at once (the next track opened ahead, loudness measured a file
  /// a processor) would make two such accesses of one variable overlap, a data race in Swift's
  /// terms even though nothing writes it.
  nonisolated(unsafe) static let io: UnsafeMutablePointer<SF_VIRTUAL_IO> = {
    let table = UnsafeMutablePointer<SF_VIRTUAL_IO>.allocate(capacity: 1)
    table.initialize(
      to: SF_VIRTUAL_IO(
        get_filelen: { user in of(user)?.length ?? -1 },
        seek: { offset, whence, user in of(user)?.seek(offset, whence) ?? -1 },
        read: { out, count, user in
          guard let file = of(user), let out, count > 0 else { return 0 }
          return sf_count_t(file.read(out, Int(count)))
        },
        write: { _, _, _ in 0 },
        tell: { user in of(user)?.position ?? -1 }))
    return table
  }()
}
