import AudioCore
import AudioTestSupport
import FFmpegDecoder
import Glibc
import Platform
import SndFileDecoder
import Testing

@testable import hark

/// Which decoder opens a file: libsndfile, then FFmpeg's helper for a file whose format
/// libsndfile does not know (the error's kind, `.unknownFormat`, not its words), with
/// libsndfile's reason kept when neither reads it.
@Suite(.timeLimit(.minutes(2))) struct DecodersTests {
  let folder = ScratchFolders.make("decoders")

  /// AAC in an ADTS stream under a .wav name: libsndfile's to open by its name, which it does
  /// not know, so FFmpeg's.
  @Test func aFormatLibsndfileDoesNotKnowGoesToFFmpeg() throws {
    let path = folder + "/aac.wav"
    let made = try spawn(
      "ffmpeg",
      [
        "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=1", "-c:a", "aac", "-f",
        "adts", path,
      ])
    try #require(waitForChild(made) == .exited(0), "no ffmpeg to make the file with")
    #expect(throws: DecodeError.self) { try SoundFile(path: path) }
    let decoder = try Decoders.open(path)
    #expect(decoder is FFmpegFile)
  }

  /// Text under a .wav name: neither reads it, and the reason is libsndfile's, the decoder the
  /// name chose.
  @Test func whenNeitherReadsItLibsndfilesReasonIsKept() throws {
    let path = folder + "/words.wav"
    try replaceFile(path, with: Array(repeating: "this is not audio\n", count: 500).joined().utf8)
    let error = #expect(throws: DecodeError.self) { try Decoders.open(path) }
    #expect(error?.kind == .unknownFormat)
    #expect(error?.reason == SoundFile.unknownFormat)
  }
}
