import AudioCore
import Glibc
import Testing

@testable import FFmpegDecoder

/// The chapters of each container that carries them, read through the real hark-ffmpeg from
/// files the ffmpeg command makes here: an M4B's (and MP4's) chapter track, ID3v2's CHAP frames
/// in an MP3, Vorbis comments' CHAPTERxx in FLAC, Ogg Vorbis and Opus, Matroska's chapters.
@Suite(.timeLimit(.minutes(2))) final class FFmpegChaptersTests {
  let files = TestFiles()

  /// Three chapters of 4 s in a 12 s file, as ffmpeg's metadata file says them.
  func chapterFile() throws -> String {
    let path = files.folder + "/chapters.txt"
    let text = """
      ;FFMETADATA1
      title=The Book
      [CHAPTER]
      TIMEBASE=1/1000
      START=0
      END=4000
      title=Opening
      [CHAPTER]
      TIMEBASE=1/1000
      START=4000
      END=8000
      title=The middle, with ünïcödé
      [CHAPTER]
      TIMEBASE=1/1000
      START=8000
      END=12000
      title=The end

      """
    let f = try #require(fopen(path, "w"))
    fputs(text, f)
    fclose(f)
    return path
  }

  static let expected = [
    Chapter(start: 0, end: 4, title: "Opening"),
    Chapter(start: 4, end: 8, title: "The middle, with ünïcödé"),
    Chapter(start: 8, end: 12, title: "The end"),
  ]

  /// The containers whose chapters ffmpeg writes from its metadata file.
  @Test(arguments: [
    ("book.m4b", ["-c:a", "aac"]), ("talk.mp4", ["-c:a", "aac"]),
    ("podcast.mp3", ["-c:a", "libmp3lame", "-id3v2_version", "3"]),
    ("book.mka", ["-c:a", "flac"]), ("talk.opus", ["-c:a", "libopus"]),
  ])
  func chaptersAreReadFromEachContainer(_ name: String, _ codec: [String]) throws {
    let meta = try chapterFile()
    let path = files.folder + "/" + name
    try #require(
      files.ffmpeg(
        [
          "-f", "lavfi", "-i", "sine=f=440:d=12", "-i", meta, "-map", "0:a", "-map_metadata", "1",
          "-map_chapters", "1",
        ] + codec + [path]),
      "ffmpeg could not make \(name)")
    let chapters = try FFmpegChapters.read(path: path)
    #expect(chapters.map(\.start) == Self.expected.map(\.start))
    #expect(chapters.map(\.title) == Self.expected.map(\.title))
    // Opus's are Vorbis comments, which give starts only: the next start ends each.
    if name.hasSuffix(".opus") {
      #expect(chapters.allSatisfy { $0.end == nil })
    } else {
      #expect(chapters.map(\.end) == Self.expected.map(\.end))
    }
  }

  /// FLAC and Ogg Vorbis as taggers write their chapters: Vorbis comments CHAPTERxx (a time)
  /// and CHAPTERxxNAME (ffmpeg 5.1 does not write them from its metadata file).
  @Test(arguments: [("book.flac", ["-c:a", "flac"]), ("book.ogg", ["-c:a", "libvorbis"])])
  func vorbisCommentsChaptersAreRead(_ name: String, _ codec: [String]) throws {
    let path = try files.tone(
      name, codec, seconds: 12,
      metadata: [
        "CHAPTER001": "00:00:00.000", "CHAPTER001NAME": "Opening",
        "CHAPTER002": "00:00:04.000", "CHAPTER002NAME": "The middle",
        "CHAPTER003": "00:00:08.500", "CHAPTER003NAME": "The end",
      ])
    let chapters = try FFmpegChapters.read(path: path)
    #expect(chapters.map(\.start) == [0, 4, 8.5])
    #expect(chapters.map(\.title) == ["Opening", "The middle", "The end"])
    #expect(Chapter.end(of: 2, in: chapters, duration: 12) == 12)
  }

  @Test func aFileWithoutChaptersHasNone() throws {
    let path = try files.tone("plain.m4a", ["-c:a", "aac"])
    #expect(try FFmpegChapters.read(path: path).isEmpty)
  }

  @Test func aFileThatIsNotAudioSaysSo() throws {
    let path = files.folder + "/notes.m4b"
    let f = try #require(fopen(path, "w"))
    fputs("not a book\n", f)
    fclose(f)
    #expect(throws: DecodeError.self) { try FFmpegChapters.read(path: path) }
    do {
      _ = try FFmpegChapters.read(path: files.folder + "/missing.m4b")
      Issue.record("a missing file has chapters")
    } catch {
      #expect(error.kind == .notFound)
    }
  }

  @Test func theHelpersAnswerIsParsedAndOrdered() {
    let text = "hark-ffmpeg 1\nchapter 8 - Last\nchapter 0 4 First one\nnews 1\nchapter 4 8 \n\n"
    let chapters = FFmpegChapters.parse(text)
    #expect(chapters?.map(\.start) == [0, 4, 8])
    #expect(chapters?.map(\.title) == ["First one", nil, "Last"])
    #expect(chapters?.map(\.end) == [4, 8, nil])
    #expect(FFmpegChapters.parse("hark-ffmpeg 2\n\n") == nil)
  }
}
