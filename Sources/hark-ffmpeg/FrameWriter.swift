import CFFmpeg
import Glibc
import Platform

/// Writes the header and then decoded frames to stdout as interleaved native-endian Float32, at
/// one rate and channel count: frames in another sample format go through libswresample
/// (planar to interleaved, integers to float), and a stream that changes its rate or channels
/// midway is converted back to the header's. Owns the SwrContext and a batch buffer.
final class FrameWriter {
  let rate: Int
  let channels: Int
  private var resampler: OpaquePointer?
  /// What `resampler` was set up for.
  private var source = AVChannelLayout()
  private var sourceFormat: Int32 = -1
  private var sourceRate: Int32 = 0
  /// Converted frames waiting to be written, `pending` of them.
  private var batch: UnsafeMutableBufferPointer<Float>
  private var pending = 0

  /// About 256 KiB a write (a quarter of the 1 MiB pipe the player makes): few system calls
  /// and few wake-ups on either side (at 64 KiB, the pipe's traffic cost a decode of AAC about
  /// a quarter of its CPU: a write, a poll, a read and a futex wake each 64 KiB). A stream's
  /// frames are flushed as they come regardless.
  private static let batchBytes = 262_144
  /// When a batch is written: 16 KiB for the first, doubling to `batchBytes`, so that the
  /// player has the start of the track at once (a track is opened as the one before ends;
  /// the first batch whole was a pause of half a millisecond and more at each boundary).
  private var threshold = 16_384

  init(rate: Int, channels: Int) {
    self.rate = rate
    self.channels = channels
    batch = .allocate(capacity: Self.batchBytes / 4)
  }

  deinit {
    swr_free(&resampler)
    av_channel_layout_uninit(&source)
    batch.deallocate()
  }

  /// The header's lines, then the empty line that ends it; written at once.
  func writeHeader(_ lines: [String]) throws(Failure) {
    try writeOut((lines.joined(separator: "\n") + "\n\n").utf8)
  }

  /// Converts samples `from..<to` of `frame` and adds them to what is written next; a frame at
  /// another rate than the header's is resampled whole (`from` and `to` are not its frames).
  func write(_ frame: UnsafeMutablePointer<AVFrame>, from: Int, to: Int) throws(Failure) {
    let count = to - from
    guard count > 0, let data = frame.pointee.extended_data else { return }
    let frameChannels = Int(frame.pointee.ch_layout.nb_channels)
    let sampleFormat = AVSampleFormat(rawValue: frame.pointee.format)
    // Already interleaved float of the right shape (WavPack's float files, some PCM): copied.
    if sampleFormat == AV_SAMPLE_FMT_FLT && frameChannels == channels
      && Int(frame.pointee.sample_rate) == rate, let plane = data[0]
    {
      let samples = UnsafeRawPointer(plane).assumingMemoryBound(to: Float.self) + from * channels
      try append(UnsafeBufferPointer(start: samples, count: count * channels))
      return
    }
    try prepareResampler(for: frame)
    // The whole frame is converted and what is not wanted dropped from the result: simpler than
    // offset plane pointers, and a resampler must see every input frame anyway.
    let whole = Int(frame.pointee.nb_samples)
    let room = Int(swr_get_out_samples(resampler, Int32(whole)))
    try makeRoom(for: room)
    guard let base = batch.baseAddress else { return }
    let start = base + pending * channels
    var output: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(start)
      .assumingMemoryBound(to: UInt8.self)
    let converted = data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 1) {
      swr_convert(resampler, &output, Int32(room), $0, Int32(whole))
    }
    guard converted >= 0 else {
      throw Failure(.decoderFailed, reason: "FFmpeg could not convert its samples", code: converted)
    }
    let resampled = Int(frame.pointee.sample_rate) != rate
    let skipped = resampled ? 0 : from
    let kept = resampled ? Int(converted) : min(Int(converted), to) - from
    guard kept > 0 else { return }
    // update(from:count:) copies overlapping memory correctly (front to back here).
    if skipped > 0 { start.update(from: start + skipped * channels, count: kept * channels) }
    pending += kept
    if pending * channels * 4 >= threshold { try flush() }
  }

  /// Writes what the resampler still holds (only a rate change leaves any) and the batch.
  func finish() throws(Failure) {
    if resampler != nil && Int(sourceRate) != rate {
      while true {
        try makeRoom(for: 4_096)
        var output: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(
          batch.baseAddress.map { $0 + pending * channels }
        )?.assumingMemoryBound(to: UInt8.self)
        let n = swr_convert(resampler, &output, 4_096, nil, 0)
        if n <= 0 { break }
        pending += Int(n)
      }
    }
    try flush()
  }

  /// Sets the resampler up for `frame`'s layout, sample format and rate, unless it already is.
  private func prepareResampler(for frame: UnsafeMutablePointer<AVFrame>) throws(Failure) {
    if resampler != nil && frame.pointee.format == sourceFormat
      && frame.pointee.sample_rate == sourceRate
      && av_channel_layout_compare(&source, &frame.pointee.ch_layout) == 0
    {
      return
    }
    swr_free(&resampler)
    av_channel_layout_uninit(&source)
    av_channel_layout_copy(&source, &frame.pointee.ch_layout)
    sourceFormat = frame.pointee.format
    sourceRate = frame.pointee.sample_rate
    // The same channel count keeps the stream's own layout (nothing is remixed, whatever order
    // it declares); another count is mixed to the default layout of the header's.
    var target = AVChannelLayout()
    defer { av_channel_layout_uninit(&target) }
    if Int(source.nb_channels) == channels {
      av_channel_layout_copy(&target, &source)
    } else {
      av_channel_layout_default(&target, Int32(channels))
    }
    var rc = swr_alloc_set_opts2(
      &resampler, &target, AV_SAMPLE_FMT_FLT, Int32(rate), &source,
      AVSampleFormat(rawValue: sourceFormat), sourceRate, 0, nil)
    if rc >= 0 { rc = swr_init(resampler) }
    guard rc >= 0 else {
      swr_free(&resampler)
      throw Failure(.decoderFailed, reason: "FFmpeg could not convert its samples", code: rc)
    }
  }

  private func append(_ samples: UnsafeBufferPointer<Float>) throws(Failure) {
    try makeRoom(for: samples.count / channels)
    guard let source = samples.baseAddress, let base = batch.baseAddress else { return }
    (base + pending * channels).update(from: source, count: samples.count)
    pending += samples.count / channels
    if pending * channels * 4 >= threshold { try flush() }
  }

  /// Makes room in the batch for `frames` more: writes it out, and grows it if that is not enough.
  private func makeRoom(for frames: Int) throws(Failure) {
    if (pending + frames) * channels <= batch.count { return }
    try flush()
    if frames * channels > batch.count {
      batch.deallocate()
      batch = .allocate(capacity: frames * channels)
    }
  }

  /// Writes the batch now (a live stream's frames go out as they come).
  func flush() throws(Failure) {
    guard pending > 0, let base = batch.baseAddress else { return }
    try writeOut(UnsafeRawBufferPointer(start: base, count: pending * channels * 4))
    pending = 0
    threshold = min(Self.batchBytes, threshold * 2)
  }

  /// All of `bytes` to stdout. A reader that has gone ends the helper quietly.
  private func writeOut(_ bytes: some Sequence<UInt8>) throws(Failure) {
    do { try writeAll(1, bytes) } catch {
      if error.code == EPIPE { exit(1) }
      throw Failure(.decoderFailed, reason: "cannot write to its output", detail: error.reason)
    }
  }
}
