import AudioCore
import Platform

/// The chapters of a file, as FFmpeg reads them (`hark-ffmpeg --chapters`, in its helper
/// process like every FFmpeg call of hark's): an M4B's or MP4's chapter track, ID3v2's CHAP
/// frames in an MP3, Vorbis comments' CHAPTERxx in FLAC and Ogg, Matroska's chapters. Blocks
/// for as long as the helper takes (a few milliseconds; at most `answerTimeout`): call it off
/// the player's loop.
public enum FFmpegChapters {
  /// The chapters of the file at `path` (in order, `Chapter.ordered`); empty when it has none.
  /// Throws why they cannot be read: the helper missing, the file not one FFmpeg reads.
  /// `helper`: the hark-ffmpeg to run (a test's); by default the installed one, through its
  /// fork server.
  public static func read(
    path: String, helper: String? = nil, answerTimeout: Duration = .seconds(10)
  ) throws(DecodeError) -> [Chapter] {
    guard let helperPath = helper ?? FFmpegFile.installedHelper() else {
      throw DecodeError(
        .decoderFailed, path: path,
        reason: "hark-ffmpeg is not installed next to hark (it reads chapters)")
    }
    let run = try HelperRun.start(
      helperPath, ["--lifeline", "--chapters", "--", path], path: path, served: helper == nil)
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16_384)
    let deadline = Deadline(after: answerTimeout)
    reading: while true {
      // Lines of a chapter each, a few hundred bytes at most: 10,000 chapters is 5 MB.
      guard bytes.count < 8 << 20, !deadline.hasPassed else {
        run.process.kill()
        throw DecodeError(
          .decoderFailed, path: path, reason: "FFmpeg did not finish listing its chapters")
      }
      let wait = Duration.milliseconds(Int64(deadline.remainingMilliseconds()))
      let arrival = chunk.withUnsafeMutableBytes { buffer -> Arrival in
        guard let base = buffer.baseAddress else { return .end }
        return run.process.read(into: base, count: buffer.count, timeout: wait)
      }
      switch arrival {
      case .bytes(let n): bytes += chunk[..<n]
      case .end: break reading
      case .silence: continue
      }
    }
    if let failure = run.failure(run.process.finish(timeout: answerTimeout)) { throw failure }
    guard let chapters = parse(String(decoding: bytes, as: UTF8.self)) else {
      throw DecodeError(
        .decoderFailed, path: path,
        reason: "hark-ffmpeg answered in a way hark does not understand",
        detail: String(decoding: bytes.prefix(80), as: UTF8.self))
    }
    return chapters
  }

  /// The chapters in the helper's answer, ordered; nil when it is not one. Lines it does not
  /// know are skipped, so that a newer helper can say more.
  static func parse(_ text: String) -> [Chapter]? {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
    guard lines.popFirst() == Substring(HelperHeader.version) else { return nil }
    var chapters: [Chapter] = []
    for line in lines {
      if line.isEmpty { break }
      let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
      guard parts.count >= 3, parts[0] == "chapter", let start = Double(parts[1]) else {
        continue
      }
      let title = parts.count == 4 ? String(parts[3]) : ""
      chapters.append(
        Chapter(start: start, end: Double(parts[2]), title: title.isEmpty ? nil : title))
    }
    return Chapter.ordered(chapters)
  }
}
