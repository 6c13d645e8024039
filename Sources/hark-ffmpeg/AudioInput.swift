import AudioCore
import CFFmpeg
import Platform
import Glibc

/// The best audio stream of a file opened with libavformat, and its decoder from libavcodec.
/// Owns the format context (avformat_open_input), the codec context, a packet and a frame, and
/// frees them in `deinit`.
final class AudioInput {
  private var formatContext: UnsafeMutablePointer<AVFormatContext>?
  private var codecContext: UnsafeMutablePointer<AVCodecContext>?
  private let packet: UnsafeMutablePointer<AVPacket>
  /// The frame the last `nextFrame()` that returned true decoded.
  let frame: UnsafeMutablePointer<AVFrame>
  private let stream: UnsafeMutablePointer<AVStream>
  private let streamIndex: Int32
  /// The file, for what FFmpeg does not say (an MP4's exact length: `exactEnd`).
  private let path: String
  /// FFmpeg's name for the codec ("aac", "alac").
  let codecName: String
  /// Frames per second and samples per frame of what is written (the stream's own).
  private(set) var rate = 0
  private(set) var channels = 0
  /// `frame` holds a frame decoded to learn the format, not yet handed out.
  private var holdsFrame = false
  /// av_read_frame reached the end; the decoder is giving up what it still holds.
  private var draining = false
  /// An http(s) stream: a read that fails is the connection, not a damaged file.
  private let isStream: Bool

  /// Opens `path` and the decoder of its best audio stream. Throws with plain words when it is
  /// not a regular file, not something FFmpeg reads, has no audio, or a codec FFmpeg lacks.
  ///
  /// `stream`: `path` is an http(s) URL (internet radio, a stream): opened over the network,
  /// asking for ICY metadata, with a read timeout, and no local file or other protocol allowed.
  init(path: String, stream: Bool = false) throws(Failure) {
    self.path = path
    isStream = stream
    if !stream { try refuseOddFiles(path) }
    guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else {
      throw Failure(.decoderFailed, reason: "out of memory")
    }
    self.packet = packet
    self.frame = frame
    var opened = false
    defer { if !opened { Self.free(packet: packet, frame: frame) } }

    // Only the file protocol: a playlist format (HLS, a concat list) named .m4a must not make
    // FFmpeg fetch URLs. "file:" before the path keeps a name such as "live:01.m4a" from being
    // read as a protocol.
    var options: OpaquePointer?
    if stream {
      // A stream names the network only: a playlist it serves (HLS) must not reach local files.
      av_dict_set(&options, "protocol_whitelist", "http,https,tcp,tls,crypto,httpproxy", 0)
      av_dict_set(&options, "icy", "1", 0)  // Shoutcast/Icecast titles, between the audio
      av_dict_set(&options, "user_agent", "hark", 0)
      // A server that stops sending ends the run after 10 s (the player reconnects), rather
      // than leaving it waiting for ever.
      av_dict_set(&options, "rw_timeout", "10000000", 0)
    } else {
      av_dict_set(&options, "protocol_whitelist", "file", 0)
    }
    defer { av_dict_free(&options) }
    var context: UnsafeMutablePointer<AVFormatContext>?
    forgetLoggedError()
    let rc = avformat_open_input(
      &context, FileName.c(stream ? path : "file:" + path), nil, &options)
    guard rc >= 0, let context else {
      if stream {
        throw Failure(.connection, reason: "cannot open the stream", code: rc, logged: true)
      }
      let (kind, reason) = whyNotOpened(path)
      throw Failure(kind, reason: reason, code: rc, logged: true)
    }
    defer {
      if !opened {
        var c: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&c)
      }
    }
    // Some files decode though FFmpeg could not learn everything about every stream (it says
    // so in its log); what matters is checked below.
    _ = avformat_find_stream_info(context, nil)

    let index = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
    guard index >= 0, let stream = context.pointee.streams[Int(index)] else {
      // av_find_best_stream passes over audio streams whose channels or rate FFmpeg could not
      // learn (its WavPack reader with more than a few channels, a damaged header).
      let streams = UnsafeBufferPointer(
        start: context.pointee.streams, count: Int(context.pointee.nb_streams))
      if streams.contains(where: { $0?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO })
      {
        throw Failure(
          .damaged, reason: "FFmpeg cannot make out its audio (how many channels, what rate)")
      }
      throw Failure(.unsupported, reason: "it has no audio stream")
    }
    let parameters = stream.pointee.codecpar.pointee
    let name = String(cString: avcodec_get_name(parameters.codec_id))
    guard parameters.codec_id != AV_CODEC_ID_NONE else {
      throw Failure(.unsupported, reason: "FFmpeg does not know the codec of its audio")
    }
    guard let decoder = avcodec_find_decoder(parameters.codec_id) else {
      throw Failure(.unsupported, reason: "FFmpeg has no decoder for its codec (\(name))")
    }
    // Video (a cover picture) and other streams are skipped by the demuxer, never decoded.
    for i in 0..<Int(context.pointee.nb_streams) where i != Int(index) {
      context.pointee.streams[i]?.pointee.discard = AVDISCARD_ALL
    }
    guard let codec = avcodec_alloc_context3(decoder) else {
      throw Failure(.decoderFailed, reason: "out of memory")
    }
    defer {
      if !opened {
        var c: UnsafeMutablePointer<AVCodecContext>? = codec
        avcodec_free_context(&c)
      }
    }
    avcodec_parameters_to_context(codec, stream.pointee.codecpar)
    // Frames' timestamps in the stream's time base (skipped samples move them). Threads as
    // FFmpeg chooses them (one a core), as the ffmpeg command does: most audio decoders use
    // one, but ALAC's decodes frames side by side, twice as fast on two cores where a file is
    // decoded ahead of play (1.3 x ffmpeg's time with one thread, the same output either way).
    codec.pointee.pkt_timebase = stream.pointee.time_base
    codec.pointee.thread_count = 0
    let opening = avcodec_open2(codec, decoder, nil)
    guard opening >= 0 else {
      throw Failure(
        .unsupported, reason: "FFmpeg cannot decode its codec (\(name))", code: opening)
    }

    formatContext = context
    codecContext = codec
    self.stream = stream
    streamIndex = index
    codecName = name
    opened = true
    try learnFormat()
  }

  deinit {
    avcodec_free_context(&codecContext)
    avformat_close_input(&formatContext)
    Self.free(packet: packet, frame: frame)
  }

  private static func free(
    packet: UnsafeMutablePointer<AVPacket>, frame: UnsafeMutablePointer<AVFrame>
  ) {
    var p: UnsafeMutablePointer<AVPacket>? = packet
    av_packet_free(&p)
    var f: UnsafeMutablePointer<AVFrame>? = frame
    av_frame_free(&f)
  }

  /// The rate and channel count the stream declares (avformat_find_stream_info decodes a little
  /// to fill them in); when it does not, those of its first frame. Refuses what hark cannot play.
  private func learnFormat() throws(Failure) {
    let parameters = stream.pointee.codecpar.pointee
    rate = Int(parameters.sample_rate)
    channels = Int(parameters.ch_layout.nb_channels)
    if rate <= 0 || channels <= 0 {
      guard try nextFrame() else {
        throw Failure(.damaged, reason: "no sound in it (empty, or cut short)")
      }
      holdsFrame = true
      rate = Int(frame.pointee.sample_rate)
      channels = Int(frame.pointee.ch_layout.nb_channels)
    }
    // AudioEngine.maximumChannels is 32.
    guard (1...32).contains(channels) else {
      throw Failure(.unsupported, reason: "it has \(channels) channels; hark plays 1 to 32")
    }
    guard (1...768_000).contains(rate) else {
      throw Failure(
        .unsupported,
        reason: "its sample rate (\(rate) Hz) is outside what hark plays (up to 768 kHz)")
    }
  }

  // MARK: Decoding

  /// Decodes the next frame into `frame`; false at the end of the stream. Packets that do not
  /// decode are skipped, as FFmpeg's own tools do, unless nothing decodes for a long run.
  func nextFrame() throws(Failure) -> Bool {
    if holdsFrame {
      holdsFrame = false
      return true
    }
    guard let format = formatContext, let codec = codecContext else { return false }
    var failures = 0
    while true {
      let received = avcodec_receive_frame(codec, frame)
      if received >= 0 {
        if frame.pointee.nb_samples > 0 { return true }
        continue
      }
      if received == cff_error_eof() { return false }
      if received != cff_error_again() {
        try tolerate(received, &failures)
        continue
      }
      if draining { return false }
      let read = av_read_frame(format, packet)
      if read == cff_error_eof() {
        draining = true
        avcodec_send_packet(codec, nil)
        continue
      }
      if read < 0 {
        // A stream's read fails when its connection does (reset, timed out): said as such at
        // once, so that the player reconnects, rather than taken for damage a hundred times.
        if isStream && read != cff_error_invalid_data() {
          throw Failure(.connection, reason: "the connection dropped", code: read)
        }
        try tolerate(read, &failures)
        continue
      }
      defer { av_packet_unref(packet) }
      guard packet.pointee.stream_index == streamIndex else { continue }
      let sent = avcodec_send_packet(codec, packet)
      if sent < 0 && sent != cff_error_again() { try tolerate(sent, &failures) }
    }
  }

  /// Counts one failure in a row; throws when there have been too many to be a damaged packet
  /// or two (a file that is garbage from here on, or a read that fails for ever).
  private func tolerate(_ code: Int32, _ failures: inout Int) throws(Failure) {
    failures += 1
    if failures > 100 {
      throw Failure(.damaged, reason: "the file is damaged partway through", code: code)
    }
  }

  // MARK: Seeking

  /// Where a seek left the decoder.
  enum Landing {
    /// Nothing moved: decode from the start and count.
    case atStart
    /// `frame` holds the first frame from here; it starts at this frame of the stream.
    case at(Int)
    /// There is nothing after the place asked for.
    case end
    /// FFmpeg moved but cannot say exactly where to: open the file afresh and count.
    case lost
  }

  /// Whether a seek can be tried (a regular file is always read through a seekable AVIOContext;
  /// a format that cannot seek, or cannot say where it landed, decodes from the start).
  var isSeekable: Bool {
    guard let pb = formatContext?.pointee.pb else { return false }
    return pb.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0
  }

  /// Moves to a point at or before `target` (a frame of the stream, from its start) from which
  /// decoding gives the very samples a decode from the start gives, and decodes the first frame.
  ///
  /// Lossy codecs need the frames before the one wanted (an MDCT frame overlaps the one before,
  /// MP3 borrows bits from earlier frames), so the seek goes a preroll further back and the
  /// caller discards what comes before `target`.
  func seek(toFrame target: Int) throws(Failure) -> Landing {
    guard let format = formatContext, let codec = codecContext else { return .lost }
    let parameters = stream.pointee.codecpar.pointee
    // Lossless codecs code each frame alone. FFmpeg's AV_CODEC_PROP_INTRA_ONLY is no guide: it
    // marks AAC, whose frames overlap.
    let properties = avcodec_descriptor_get(parameters.codec_id)?.pointee.props ?? 0
    let lossless =
      properties & AV_CODEC_PROP_LOSSLESS != 0 && properties & AV_CODEC_PROP_LOSSY == 0
    let preroll = lossless ? 0 : max(Int(parameters.seek_preroll), 8_192)
    let back = target - preroll
    guard back > 0 else { return .atStart }
    let timeBase = stream.pointee.time_base
    let perFrame = AVRational(num: 1, den: Int32(rate))
    let origin = stream.pointee.start_time == cff_no_timestamp() ? 0 : stream.pointee.start_time
    let ts = origin + av_rescale_q(Int64(back), perFrame, timeBase)
    guard avformat_seek_file(format, streamIndex, Int64.min, ts, ts, 0) >= 0 else { return .lost }
    avcodec_flush_buffers(codec)
    draining = false
    holdsFrame = false
    guard try nextFrame() else { return .end }
    var pts = frame.pointee.best_effort_timestamp
    if pts == cff_no_timestamp() { pts = frame.pointee.pts }
    guard pts != cff_no_timestamp() else { return .lost }
    var landed = Int(av_rescale_q(pts - origin, timeBase, perFrame))
    // A time base that cannot name every sample (Matroska's and ASF's milliseconds, MPEG's
    // 90 kHz at 44.1 kHz) places a frame only to within a few samples, and in a raw stream
    // whose timestamps FFmpeg adds up frame by frame (AC-3) the error grows along the file.
    // Matroska and ASF store each block's time: there, codecs whose frames all have one size
    // (AAC's 1024, WMA's 2048) lie on a grid from the start, shifted by the encoder delay the
    // demuxer skips; snap to it. Anywhere else, decode from the start.
    let ticks = Int64(timeBase.num) * Int64(rate)
    if ticks <= 0 || Int64(timeBase.den) % ticks != 0 {
      let container = String(cString: format.pointee.iformat.pointee.name)
      let size = Int(parameters.frame_size)
      guard container.hasPrefix("matroska") || container == "asf", size > 0,
        Int(frame.pointee.nb_samples) == size
      else { return .lost }
      let delay = Int(parameters.initial_padding) % size
      let k = (Double(landed + delay) / Double(size)).rounded()
      landed = Int(k) * size - delay
    }
    guard landed <= target else { return .lost }
    return .at(landed)
  }

  // MARK: What a stream says as it goes

  /// The ICY metadata block last received ("StreamTitle='Artist - Title';"), raw; nil when the
  /// server sends none.
  func icyPacket() -> [UInt8]? { option("icy_metadata_packet") }

  /// The ICY headers the server answered with, by lower-case name ("icy-name": "Radio X").
  func icyHeaders() -> [String: String] {
    guard let raw = option("icy_metadata_headers") else { return [:] }
    var headers: [String: String] = [:]
    for line in String(decoding: raw, as: UTF8.self).split(whereSeparator: \.isNewline) {
      guard let colon = line.firstIndex(of: ":") else { continue }
      let name = line[..<colon].lowercased()
      let value = line[line.index(after: colon)...].drop { $0 == " " }
      if !value.isEmpty { headers[name] = String(value).trimmingTrailingSpaces() }
    }
    return headers
  }

  /// The tags, when the stream has sent new ones since the last call (a chained Ogg stream's
  /// next song); nil otherwise.
  func updatedTags() -> [(key: String, value: String)]? {
    guard let format = formatContext else { return nil }
    let flag = AVFMT_EVENT_FLAG_METADATA_UPDATED
    let streamFlag = AVSTREAM_EVENT_FLAG_METADATA_UPDATED
    guard format.pointee.event_flags & flag != 0 || stream.pointee.event_flags & streamFlag != 0
    else { return nil }
    format.pointee.event_flags &= ~flag
    stream.pointee.event_flags &= ~streamFlag
    return tags()
  }

  /// A string option of the protocol under the format's I/O (FFmpeg's http keeps ICY there).
  private func option(_ name: String) -> [UInt8]? {
    guard let pb = formatContext?.pointee.pb else { return nil }
    var value: UnsafeMutablePointer<UInt8>?
    guard av_opt_get(pb, name, AV_OPT_SEARCH_CHILDREN, &value) >= 0, let value else { return nil }
    defer { av_free(value) }
    let length = strlen(UnsafeRawPointer(value).assumingMemoryBound(to: CChar.self))
    let bytes = Array(UnsafeBufferPointer(start: value, count: length))
    return bytes.isEmpty ? nil : bytes
  }

  // MARK: What the file says

  /// The length in frames, when the file says; `estimated` when FFmpeg guessed it from the bit
  /// rate (a raw AAC or MP3 stream with no index).
  func length() -> (frames: Int, estimated: Bool)? {
    guard let format = formatContext else { return nil }
    if let end = exactEnd() { return (end, false) }
    let perFrame = AVRational(num: 1, den: Int32(rate))
    let frames: Int64
    if stream.pointee.duration != cff_no_timestamp() && stream.pointee.duration > 0 {
      frames = av_rescale_q(stream.pointee.duration, stream.pointee.time_base, perFrame)
    } else if format.pointee.duration != cff_no_timestamp() && format.pointee.duration > 0 {
      frames = av_rescale_q(
        format.pointee.duration, AVRational(num: 1, den: AV_TIME_BASE), perFrame)
    } else {
      return nil
    }
    guard frames > 0 else { return nil }
    return (Int(frames), format.pointee.duration_estimation_method == AVFMT_DURATION_FROM_BITRATE)
  }

  /// Where the sound ends, when the container says to the frame and FFmpeg does not trim it
  /// itself: an MP4's edit list gives the length without the encoder's padding at the end
  /// (libavcodec skips the delay at the start, but FFmpeg 5.1 plays the padding). The edit list
  /// counts in the movie's time scale, which ffmpeg's own muxer sets to milliseconds, so up to
  /// a millisecond short; iTunes' gapless tag (iTunSMPB), when there is one and it agrees,
  /// gives the count to the frame.
  func exactEnd() -> Int? {
    guard let name = formatContext?.pointee.iformat?.pointee.name,
      String(cString: name).hasPrefix("mov,"), stream.pointee.duration > 0
    else { return nil }
    let timeBase = stream.pointee.time_base
    guard Int64(timeBase.num) * Int64(rate) <= Int64(timeBase.den) else { return nil }
    let edited = Int(
      av_rescale_q(stream.pointee.duration, timeBase, AVRational(num: 1, den: Int32(rate))))
    // " 00000000 00000840 000001CA 00000000000C5A76 …": zero, delay, padding, frame count.
    if let smpb = tag("iTunSMPB") {
      let fields = smpb.split(separator: " ")
      if fields.count >= 4, let count = Int(fields[3], radix: 16), count >= edited,
        count - edited <= rate / 100
      {
        return count
      }
    }
    // The track's own samples (its header's duration less the edit's start), when they are
    // what the millisecond-rounded edit list meant: within one movie tick of it.
    if let mp4 = MP4Lengths.read(path), mp4.trackTimeScale == rate {
      let tick = rate / max(1, mp4.movieTimeScale) + 1
      let (gap, overflow) = mp4.samples.subtractingReportingOverflow(edited)
      if !overflow, gap.magnitude <= tick { return mp4.samples }
    }
    return edited
  }

  /// The tags the header carries, in its order: the file's own, else its audio stream's.
  func tags() -> [(key: String, value: String)] {
    let wanted: [(key: String, names: [String])] = [
      ("title", ["title"]), ("artist", ["artist", "author"]), ("album", ["album"]),
      ("album_artist", ["album_artist", "album artist", "albumartist"]),
      ("track", ["track", "tracknumber"]), ("disc", ["disc", "discnumber"]),
      ("date", ["date", "year"]), ("genre", ["genre"]),
      // ReplayGain, as Vorbis comments, APEv2 (WavPack, Monkey's Audio) and iTunes' freeform
      // atoms name it (FFmpeg's dictionary ignores case).
      ("replaygain_track_gain", ["replaygain_track_gain"]),
      ("replaygain_track_peak", ["replaygain_track_peak"]),
      ("replaygain_album_gain", ["replaygain_album_gain"]),
      ("replaygain_album_peak", ["replaygain_album_peak"]),
    ]
    var found: [(key: String, value: String)] = []
    for (key, names) in wanted {
      guard var value = names.lazy.compactMap({ self.tag($0) }).first else { continue }
      if key == "track" || key == "disc" {
        value = String(value.prefix { $0.isASCII && $0.isNumber })  // "3/12" is track 3
      }
      if !value.isEmpty { found.append((key, value)) }
    }
    return found
  }

  private func tag(_ name: String) -> String? {
    for dictionary in [formatContext?.pointee.metadata, stream.pointee.metadata] {
      guard let dictionary, let entry = av_dict_get(dictionary, name, nil, 0),
        let raw = entry.pointee.value
      else { continue }
      // One header line each, of a sensible length: line breaks become spaces.
      let text = String(cString: raw).prefix(1_000).map { $0.isNewline ? " " : $0 }
      let trimmed = String(String(text).drop { $0 == " " || $0 == "\t" }).trimmingTrailingSpaces()
      if !trimmed.isEmpty { return trimmed }
    }
    return nil
  }
}

extension String {
  fileprivate func trimmingTrailingSpaces() -> String {
    var s = Substring(self)
    while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
    return String(s)
  }
}

/// Refuses what is not a regular file before FFmpeg opens it: opening a FIFO blocks until a
/// writer comes, and a device or a socket is no sound file. Same words as SoundFile's.
func refuseOddFiles(_ path: String) throws(Failure) {
  guard let kind = nonRegularKind(path) else { return }
  throw Failure(.notAFile, reason: "it is \(kind), not a sound file")
}

/// What kind of trouble a file FFmpeg refused is, and the user's words for it.
func whyNotOpened(_ path: String) -> (DecodeError.Kind, String) {
  var st = stat()
  if stat(FileName.c(path), &st) != 0 {
    if errno == ENOENT { return (.notFound, "no such file") }
    return (.unreadable, String(cString: strerror(errno)).lowercased())
  }
  if access(FileName.c(path), R_OK) != 0 { return (.unreadable, "permission denied") }
  if st.st_size == 0 { return (.damaged, "the file is empty") }
  // Readable and not empty: whatever FFmpeg's words, to the user it is not audio it can read.
  return (.unknownFormat, "not an audio file FFmpeg can read")
}
