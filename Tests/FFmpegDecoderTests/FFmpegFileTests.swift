import AudioCore
import Glibc
import Testing

@testable import FFmpegDecoder

/// FFmpegFile through the real hark-ffmpeg (built next to the test bundle, found as the player
/// finds it next to hark): the formats libsndfile cannot read decode at their own rate and
/// channels to the right length, lossless ones to the very samples of the WAV they were made
/// from; seeks land on the frame asked for; tags are read. The files are made here with the
/// ffmpeg command.
@Suite(.timeLimit(.minutes(3))) final class FFmpegFileTests {
  let files = TestFiles()

  /// One format: ffmpeg's options, the frames a decode must give (2 s of 44.1 kHz, with what
  /// the format adds: AAC in Matroska and ADTS keeps the encoder's delay and padding, which
  /// only MP4's edit list describes) and how far off it may be.
  struct Case: CustomTestStringConvertible, Sendable {
    var name: String
    var codec: [String]
    var frames: Int
    var leeway: Int
    var testDescription: String { name }
  }

  static let formats: [Case] = [
    Case(name: "aac.m4a", codec: ["-c:a", "aac"], frames: 88_200, leeway: 0),
    Case(name: "alac.m4a", codec: ["-c:a", "alac"], frames: 88_200, leeway: 0),
    Case(name: "tone.wv", codec: ["-c:a", "wavpack"], frames: 88_200, leeway: 0),
    Case(name: "tone.tta", codec: ["-c:a", "tta"], frames: 88_200, leeway: 0),
    Case(name: "tone.wma", codec: ["-c:a", "wmav2"], frames: 88_200, leeway: 2_048),
    Case(name: "tone.ac3", codec: ["-c:a", "ac3"], frames: 88_200 + 888, leeway: 1_536),
    Case(name: "aac.mka", codec: ["-c:a", "aac"], frames: 88_200 + 1_912, leeway: 1_024),
    Case(name: "tone.aac", codec: ["-c:a", "aac"], frames: 88_200 + 1_912, leeway: 1_024),
  ]

  @Test(arguments: formats)
  func aFormatLibsndfileCannotReadDecodesAtItsOwnRateAndLength(_ format: Case) throws {
    let path = try files.tone(format.name, format.codec)
    let file = try FFmpegFile(path: path)
    #expect(file.format == PCMFormat(sampleRate: 44_100, channels: 2))
    #expect(file.isSeekable)
    let (samples, error) = readAll(file)
    #expect(error == nil, "\(String(describing: error))")
    let frames = samples.count / 2
    #expect(abs(frames - format.frames) <= format.leeway, "\(frames) frames")
    let length = try #require(file.frameCount, "no length")
    #expect(
      abs(length - frames) <= max(format.leeway, 44_100 / 20), "says \(length), has \(frames)")
    // ffmpeg's sine is at 1/8 of full scale, and -ac 2 spreads it at 1/√2: not silence, not
    // noise, not the wrong sample format.
    let peak = samples[4_096..<(samples.count - 4_096)].reduce(0) { max($0, abs($1)) }
    #expect(peak > 0.08 && peak < 0.1, "peak \(peak)")
  }

  /// ALAC, WavPack and TTA made from a 16-bit WAV written by libsndfile decode to exactly what
  /// libsndfile reads from that WAV, in each channel.
  @Test(arguments: ["alac.m4a", "lossless.wv", "lossless.tta"])
  func aLosslessFileDecodesToTheSamplesItWasMadeFrom(_ name: String) throws {
    let wav = try files.wav("source.wav")
    let codec = ["alac.m4a": "alac", "lossless.wv": "wavpack", "lossless.tta": "tta"][name] ?? ""
    let path = files.folder + "/" + name
    try #require(files.ffmpeg(["-i", wav, "-c:a", codec, path]))
    let expected = try files.samplesBySndFile(wav)
    let file = try FFmpegFile(path: path)
    let (samples, error) = readAll(file)
    #expect(error == nil)
    #expect(samples.count == expected.count)
    #expect(largestDifference(samples[...], expected[...]) == 0)
    #expect(file.frameCount == 88_200)
  }

  /// An AAC .m4a plays the frames it was made from and no others: the encoder's delay
  /// (skipped by libavcodec from the edit list) and its padding at the end (cut by the helper)
  /// are not heard. ffmpeg writes the edit list in milliseconds, 100 000 frames as 2 267 ms,
  /// 25 short; the track's own header has the exact count (gapless.sh heard the 15 frames lost
  /// at each boundary of an album cut at no whole millisecond). iTunes' gapless tag, where there
  /// is one, says the count too. (88 200 frames, 2 s, are a whole millisecond count.)
  @Test func anAACFileInMP4IsGapless() throws {
    let wav = try files.wav("source.wav", frames: 100_000)
    let plain = files.folder + "/plain.m4a"
    try #require(files.ffmpeg(["-i", wav, "-c:a", "aac", plain]))
    let file = try FFmpegFile(path: plain)
    let frames = readAll(file).samples.count / 2
    #expect(frames == 100_000)
    #expect(file.frameCount == frames)

    let tagged = files.folder + "/tagged.m4a"
    let smpb = " 00000000 00000400 00000160 00000000000186A0 00000000 00000000"
    try #require(
      files.ffmpeg([
        "-i", wav, "-c:a", "aac", "-movflags", "use_metadata_tags", "-metadata", "iTunSMPB=" + smpb,
        tagged,
      ]))
    let exact = try FFmpegFile(path: tagged)
    #expect(exact.frameCount == 100_000)
    #expect(readAll(exact).samples.count == 200_000)
  }

  @Test func tagsAreReadFromAnMP4() throws {
    let path = try files.tone(
      "tags.m4a", ["-c:a", "aac"], seconds: 1,
      metadata: [
        "title": "Two\nLines", "artist": "The Artist", "album": "An Album", "track": "3/12",
        "album_artist": "Various", "date": "2004",
      ])
    let file = try FFmpegFile(path: path)
    #expect(
      file.metadata
        == TrackMetadata(
          title: "Two Lines", artist: "The Artist", album: "An Album", trackNumber: 3,
          year: 2004))
    #expect(file.tags["album_artist"] == "Various")
    #expect(file.tags["date"] == "2004")
    #expect(file.codec == "aac")
  }

  @Test func sixChannelsDecode() throws {
    for (name, codec) in [("six.m4a", "aac"), ("six.mka", "flac")] {
      let path = try files.tone(name, ["-c:a", codec], seconds: 1, channels: 6)
      let file = try FFmpegFile(path: path)
      #expect(file.format == PCMFormat(sampleRate: 44_100, channels: 6), "\(name)")
      let (samples, error) = readAll(file)
      #expect(error == nil, "\(name)")
      #expect(samples.count == 44_100 * 6, "\(name): \(samples.count / 6) frames")
    }
  }

  /// More channels than the engine mixes (32) are refused at open with the count.
  @Test func fortyChannelsAreRefused() throws {
    let path = files.folder + "/forty.mka"
    let tone = Array(repeating: "0.1*sin(440*2*PI*t)", count: 40).joined(separator: "|")
    try #require(
      files.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=\(tone):d=0.2", "-c:a", "pcm_s16le", path])
    )
    #expect(
      throws: DecodeError(
        .unsupported, path: path, reason: "it has 40 channels; hark plays 1 to 32")
    ) {
      _ = try FFmpegFile(path: path)
    }
  }

  /// DSD in a .dsf (written here byte by byte: ffmpeg has no DSD encoder) decodes at an eighth
  /// of the DSD rate, 352.8 kHz for DSD64, to the length its header says.
  @Test func dsdDecodesAtAnEighthOfItsRate() throws {
    let blockSize = 4_096
    let blocks = 16
    var data: [UInt8] = []
    for _ in 0..<(blocks * 2) { data += Array(repeating: 0x69, count: blockSize) }  // DSD silence
    func le(_ value: Int, _ bytes: Int) -> [UInt8] {
      (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
    let bits = blocks * blockSize * 8
    let fmt =
      Array("fmt ".utf8) + le(52, 8) + le(1, 4) + le(0, 4) + le(2, 4) + le(2, 4)
      + le(2_822_400, 4) + le(1, 4) + le(bits, 8) + le(blockSize, 4) + le(0, 4)
    let chunk = Array("data".utf8) + le(12 + data.count, 8) + data
    let file = Array("DSD ".utf8) + le(28, 8) + le(28 + fmt.count + chunk.count, 8) + le(0, 8)
    let path = files.folder + "/silence.dsf"
    let f = try #require(fopen(path, "wb"))
    fwrite(file + fmt + chunk, 1, file.count + fmt.count + chunk.count, f)
    fclose(f)

    let decoder = try FFmpegFile(path: path)
    #expect(decoder.format == PCMFormat(sampleRate: 352_800, channels: 2))
    #expect(decoder.frameCount == bits / 8)
    let (samples, error) = readAll(decoder)
    #expect(error == nil)
    #expect(samples.count == bits / 8 * 2)
  }

  // MARK: Seeking

  /// A seek to frame N gives the very samples a decode from the start gives after N frames:
  /// bit for bit in lossless files and in AAC without noise substitution; within the noise in
  /// AAC with it (PNS: its noise generator runs from the start), which a frame off would exceed
  /// tenfold.
  @Test(arguments: [
    ("alac.m4a", ["-c:a", "alac"], Float(0)), ("seek.wv", ["-c:a", "wavpack"], 0),
    ("seek.tta", ["-c:a", "tta"], 0), ("nopns.m4a", ["-c:a", "aac", "-aac_pns", "0"], 0),
    ("pns.m4a", ["-c:a", "aac"], 0.002), ("seek.mka", ["-c:a", "aac", "-aac_pns", "0"], 0),
    ("seek.wma", ["-c:a", "wmav2"], 0), ("seek.ac3", ["-c:a", "ac3"], 0),
  ])
  func aSeekLandsOnTheFrameAskedFor(_ name: String, _ codec: [String], _ tolerance: Float) throws {
    let path = try files.tone(name, codec)
    let whole = readAll(try FFmpegFile(path: path)).samples
    let file = try FFmpegFile(path: path)
    for frame in [1, 1_000, 12_345, 44_100, 70_001, 88_199] {
      try file.seek(toFrame: frame)
      let (samples, error) = readAll(file)
      #expect(error == nil)
      let expected = whole[min(whole.count, frame * 2)...]
      #expect(samples.count == expected.count, "\(name) from \(frame)")
      #expect(
        largestDifference(samples[...], expected) <= tolerance,
        "\(name) from \(frame): off by up to \(largestDifference(samples[...], expected))")
    }
    try file.seek(toFrame: 0)
    #expect(readAll(file).samples == whole)
    try file.seek(toFrame: 1_000_000)
    #expect(readAll(file).samples.isEmpty)
  }

  /// A seek in the middle of a read: what was read of the old run is forgotten, and the old
  /// helper is gone.
  @Test func aSeekMidwayReplacesTheHelper() throws {
    let path = try files.tone("mid.m4a", ["-c:a", "alac"])
    let whole = readAll(try FFmpegFile(path: path)).samples
    let file = try FFmpegFile(path: path)
    _ = readAll(file, reads: 3)
    let old = file.helperProcessID
    try file.seek(toFrame: 50_000)
    #expect(isReaped(old))
    #expect(readAll(file).samples[...] == whole[100_000...])
  }

  // MARK: Finding the helper

  /// Under `swift test` the helper is found as the player finds it: in the folder of the running
  /// executable (the test bundle, next to which `swift build` puts hark-ffmpeg).
  @Test func theHelperIsFoundNextToTheRunningExecutable() throws {
    try #require(getenv("HARK_FFMPEG_HELPER") == nil, "HARK_FFMPEG_HELPER is set")
    let helper = try #require(FFmpegFile.installedHelper(), "no hark-ffmpeg (run swift build)")
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let executable = String(
      decoding: buffer[0..<max(0, n)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let folder = executable[..<(executable.lastIndex(of: "/") ?? executable.endIndex)]
    #expect(helper == folder + "/hark-ffmpeg")
  }

  /// FFmpeg is loaded into the helper only, never into the process that decodes through it.
  @Test func ffmpegIsNotLoadedIntoThisProcess() throws {
    let file = try FFmpegFile(path: try files.tone("maps.m4a", ["-c:a", "aac"], seconds: 1))
    _ = readAll(file, reads: 1)
    let maps = fopen("/proc/self/maps", "r")
    defer { if let maps { fclose(maps) } }
    var line = [CChar](repeating: 0, count: 4096)
    var loaded: [String] = []
    while let maps, fgets(&line, Int32(line.count), maps) != nil {
      let text = String(
        decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if text.contains("libavformat") || text.contains("libavcodec") { loaded.append(text) }
    }
    #expect(loaded.isEmpty, "\(loaded)")
  }
}
