import AudioCore
import CSndFile
import Glibc
import Platform
import Testing

@testable import SndFileDecoder

/// SoundFile's judgement of damaged files: a file cut short plays what it holds and then says so,
/// with how much it held and how much it promised; an intact one plays to its end with nothing
/// said; a seek lands where it was asked or says it cannot; an Ogg file with no sound in it is
/// refused at open. The files are written here with libsndfile and cut with truncate(2).
@Suite(.timeLimit(.minutes(2))) final class SoundFileTests {
  deinit { _ = system("rm -rf '\(folder)'") }

  /// Writes `seconds` of a 440 Hz tone at 44.1 kHz stereo in `format` (SF_FORMAT_*); its path.
  private func write(_ name: String, _ format: Int32, seconds: Double, rate: Int = 44_100) throws
    -> String
  {
    let path = folder + "/" + name
    var info = SF_INFO()
    info.samplerate = Int32(rate)
    info.channels = 2
    info.format = format
    let file = try #require(sf_open(path, Int32(SFM_WRITE), &info), "cannot write \(name)")
    let frames = Int(seconds * Double(rate))
    var samples = [Float](repeating: 0, count: frames * 2)
    for i in 0..<frames {
      let v = Float(0.5 * sin(2 * Double.pi * 440 * Double(i) / Double(rate)))
      samples[2 * i] = v
      samples[2 * i + 1] = v
    }
    _ = sf_writef_float(file, samples, sf_count_t(frames))
    sf_close(file)
    return path
  }

  private let folder: String = {
    var template = Array("/tmp/hark-soundfile.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      mkdtemp($0.baseAddress!).map { String(cString: $0) } ?? "/tmp"
    }
  }()

  private func size(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
  }

  /// Where the first Ogg page with a granule position (audio, not headers) starts.
  private func firstAudioPage(_ path: String) -> Int? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var bytes = [UInt8](repeating: 0, count: size(path))
    guard fread(&bytes, 1, bytes.count, f) == bytes.count else { return nil }
    var at = 0
    while at + 27 <= bytes.count, bytes[at..<(at + 4)].elementsEqual("OggS".utf8) {
      let granule = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + 6 + $1]) << (8 * $1) }
      if granule != 0 && granule != .max { return at }
      let segments = Int(bytes[at + 26])
      guard at + 27 + segments <= bytes.count else { return nil }
      let body = bytes[(at + 27)..<(at + 27 + segments)].reduce(0) { $0 + Int($1) }
      at += 27 + segments + body
    }
    return nil
  }

  /// Reads to the end; the frames read and the error that ended it, if any.
  private func readAll(_ file: SoundFile) -> (frames: Int, error: DecodeError?) {
    var buffer = [Float](repeating: 0, count: 4_096 * file.format.channels)
    var total = 0
    while true {
      do throws(DecodeError) {
        let n = try buffer.withUnsafeMutableBufferPointer { b throws(DecodeError) in
          try file.read(into: b)
        }
        if n == 0 { return (total, nil) }
        total += n
      } catch {
        return (total, error)
      }
    }
  }

  @Test func anIntactFilePlaysToItsEndWithNothingSaid() throws {
    for (name, format) in [
      ("whole.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)),
      ("whole.flac", Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)),
      ("whole.ogg", Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)),
    ] {
      let file = try SoundFile(path: try write(name, format, seconds: 1))
      let (frames, error) = readAll(file)
      #expect(error == nil, "\(name): \(String(describing: error))")
      #expect(frames == file.frameCount ?? frames, "\(name)")
      #expect(abs(frames - 44_100) <= 1_024, "\(name): \(frames) frames")
    }
  }

  /// A WAV whose data was cut in half: libsndfile trims its length to what is there; SoundFile
  /// plays that and then says the header promised more.
  @Test func aWAVCutShortPlaysWhatItHoldsThenSaysSo() throws {
    let path = try write("cut.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), seconds: 2)
    #expect(truncate(path, off_t(44 + 44_100 * 4)) == 0)  // the header and 1 s of data
    let file = try SoundFile(path: path)
    let (frames, error) = readAll(file)
    #expect(abs(frames - 44_100) <= 1)
    #expect(error?.reason == "the file is cut short after 1.0 s (its header promises more)")
    #expect(error?.path == path)
  }

  /// A FLAC cut at 60 %: it says how much it played of how much it claimed (or that it lost
  /// its way in a frame cut in two), never that all was well.
  @Test func aFLACCutShortSaysHowMuchItHeld() throws {
    let path = try write("cut.flac", Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), seconds: 2)
    #expect(truncate(path, off_t(size(path) * 6 / 10)) == 0)
    let file = try SoundFile(path: path)
    #expect(file.frameCount == 88_200)
    let (frames, error) = readAll(file)
    #expect(frames < 88_200 * 7 / 10)
    let reason = try #require(error?.reason, "a FLAC cut at 60 % played \(frames) frames, no error")
    #expect(
      reason.hasPrefix("the file is cut short after ") && reason.hasSuffix(" of 2.0 s")
        || reason == "the file is damaged partway through", "\(reason)")
  }

  /// An Ogg Vorbis cut before its first audio page opens in libsndfile but holds no sound:
  /// refused at open, before anything can seek in it (a seek in a Vorbis stream whose decoder
  /// was never set up crashes inside libvorbis).
  @Test func anOggWithNoSoundInItIsRefusedAtOpen() throws {
    let path = try write("cut.ogg", Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), seconds: 2)
    let audio = try #require(firstAudioPage(path), "no audio page in \(path)")
    #expect(truncate(path, off_t(audio)) == 0)
    #expect(
      throws: DecodeError(.damaged, path: path, reason: "no sound in it (empty, or cut short)")
    ) {
      _ = try SoundFile(path: path)
    }
  }

  /// A file libsndfile refuses is named in plain words, with its kind (another decoder is tried
  /// for an unknown format only), and libsndfile's own follow only
  /// where they add something: not "System error : No such file or directory." after "no such
  /// file", nor "does not exist" for a text file named .mp3 (a user's report).
  @Test func aRefusedFileGetsPlainWordsWithoutLibsndfilesWrongOnes() throws {
    let missing = folder + "/gone.flac"
    #expect(throws: DecodeError(.notFound, path: missing, reason: "no such file")) {
      _ = try SoundFile(path: missing)
    }
    let text = folder + "/fake.mp3"
    let f = try #require(fopen(text, "w"))
    fputs("hello, this is no MP3\n", f)
    fclose(f)
    #expect(throws: DecodeError(.unknownFormat, path: text, reason: SoundFile.unknownFormat)) {
      _ = try SoundFile(path: text)
    }
    let empty = folder + "/empty.wav"
    fclose(try #require(fopen(empty, "w")))
    #expect(throws: DecodeError(.damaged, path: empty, reason: "the file is empty")) {
      _ = try SoundFile(path: empty)
    }
  }

  /// A seek lands on the frame asked for, and reading goes on from there; in Opus too, whose
  /// seeks decode forward from the start.
  @Test func aSeekLandsWhereItWasAsked() throws {
    for (name, format, rate) in [
      ("seek.flac", Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), 44_100),
      ("seek.ogg", Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), 44_100),
      ("seek.opus", Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS), 48_000),
    ] {
      let path = try write(name, format, seconds: 2, rate: rate)
      let file = try SoundFile(path: path)
      let rate = file.format.sampleRate
      try file.seek(toFrame: rate)  // 1 s in
      let (frames, error) = readAll(file)
      #expect(error == nil, "\(name): \(String(describing: error))")
      #expect(abs(frames - rate) <= rate / 50, "\(name): \(frames) frames after a seek to 1 s")
      try file.seek(toFrame: 0)
      #expect(abs(readAll(file).frames - 2 * rate) <= rate / 50, "\(name): after a seek to 0")
    }
  }

  /// An Ogg stream is opened once, its first frames decoded at the open (to know it decodes
  /// at all) and handed out first: what is read, in reads of any size across them, is frame
  /// for frame what libsndfile decodes from a fresh open; a seek back to the start gives the
  /// same again.
  @Test func anOggStreamReadsFrameForFrameAsLibsndfileDecodesIt() throws {
    for (name, format, rate) in [
      ("same.ogg", Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), 44_100),
      ("same.opus", Int32(SF_FORMAT_OGG | SF_FORMAT_OPUS), 48_000),
    ] {
      let path = try write(name, format, seconds: 0.5, rate: rate)
      var info = SF_INFO()
      let plain = try #require(sf_open(path, Int32(SFM_READ), &info))
      var expected = [Float](repeating: 0, count: 4_096 * 2)
      let expectedFrames = Int(sf_readf_float(plain, &expected, 4_096))
      sf_close(plain)
      let file = try SoundFile(path: path)
      func read(_ sizes: [Int]) throws -> [Float] {
        var got: [Float] = []
        for frames in sizes {
          var buffer = [Float](repeating: .nan, count: frames * 2)
          let n = try buffer.withUnsafeMutableBufferPointer { try file.read(into: $0) }
          #expect(n == frames, "\(name): \(n) frames for \(frames) asked")
          got += buffer.prefix(n * 2)
        }
        return got
      }
      // 10 within the kept frames, 100 across their end, then on.
      let sizes = [10, 100, 3_986]
      #expect(expectedFrames == sizes.reduce(0, +))
      #expect(try read(sizes) == expected, "\(name): the frames read differ from libsndfile's")
      try file.seek(toFrame: 0)
      #expect(try read([4_096]) == expected, "\(name): after a seek to the start")
    }
  }

  /// libsndfile reads the file through `BufferedFile` (64 KB a read, not 8 KB): what is decoded,
  /// in every format, across many of its buffers and after seeks to frames anywhere, is sample
  /// for sample what libsndfile decodes opening the file itself.
  @Test func readThroughItsBufferAFileDecodesAsLibsndfileAloneDecodesIt() throws {
    for (name, format, rate) in [
      ("same.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), 44_100),
      ("same24.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_24), 44_100),
      ("samef.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT), 44_100),
      ("same.aiff", Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_16), 44_100),
      ("same.flac", Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), 44_100),
      ("same3.ogg", Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), 44_100),
    ] {
      let path = try write(name, format, seconds: 3, rate: rate)
      func plain(from frame: Int) throws -> [Float] {
        var info = SF_INFO()
        let h = try #require(sf_open(path, Int32(SFM_READ), &info))
        defer { sf_close(h) }
        if frame > 0 { #expect(sf_seek(h, sf_count_t(frame), SEEK_SET) == sf_count_t(frame)) }
        var all: [Float] = []
        var chunk = [Float](repeating: 0, count: 4_096 * 2)
        while case let n = sf_readf_float(h, &chunk, 4_096), n > 0 {
          all += chunk.prefix(Int(n) * 2)
        }
        return all
      }
      func buffered(_ file: SoundFile) throws -> [Float] {
        var all: [Float] = []
        var chunk = [Float](repeating: 0, count: 3_000 * 2)
        while case let n = try chunk.withUnsafeMutableBufferPointer({ try file.read(into: $0) }),
          n > 0
        {
          all += chunk.prefix(n * 2)
        }
        return all
      }
      let file = try SoundFile(path: path)
      #expect(file.readsThroughBuffer, "\(name)")
      #expect(try buffered(file) == plain(from: 0), "\(name): read whole")
      for frame in [rate * 2 + 77, 12_345, 0] {
        try file.seek(toFrame: frame)
        #expect(try buffered(file) == plain(from: frame), "\(name): after a seek to \(frame)")
      }
    }
  }

  /// A WAV cut short while it is open (a tag editor rewriting it as it plays): what is left is
  /// read, then it says it was cut short; nothing is read from beyond the file's new end.
  @Test func aWAVCutWhileOpenPlaysWhatIsLeftThenSaysSo() throws {
    let path = try write("cutopen.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), seconds: 3)
    let file = try SoundFile(path: path)
    #expect(file.frameCount == 3 * 44_100)
    #expect(truncate(path, off_t(44 + 44_100 * 4)) == 0)  // the header and 1 s of data
    let (frames, error) = readAll(file)
    #expect(abs(frames - 44_100) <= 1, "\(frames) frames")
    #expect(error?.reason == "the file is cut short after 1.0 s of 3.0 s")
  }

  /// Files opened on several threads at once (the next track opened ahead while another plays,
  /// loudness measured a file a processor) each read whole and right: the callbacks' table is
  /// shared, and nothing about an open may stop another.
  @Test func filesOpenedOnManyThreadsAtOnceEachReadWhole() throws {
    let path = try write("many.wav", Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), seconds: 0.5)
    let failures = Locked<[String]>([])
    let threads = try (0..<6).map { _ in
      try JoinableThread {
        for _ in 0..<30 {
          do {
            let file = try SoundFile(path: path)
            var buffer = [Float](repeating: 0, count: 4_096 * 2)
            var frames = 0
            while case let n = try buffer.withUnsafeMutableBufferPointer({ try file.read(into: $0) }
            ),
              n > 0
            {
              frames += n
            }
            if frames != 22_050 || !file.readsThroughBuffer {
              failures.withLock { $0.append("\(frames) frames") }
            }
          } catch {
            failures.withLock { $0.append("\(error)") }
          }
        }
      }
    }
    for thread in threads { thread.join() }
    #expect(failures.withLock { $0 }.isEmpty)
  }
}
