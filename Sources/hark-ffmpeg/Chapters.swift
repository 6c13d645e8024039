import CFFmpeg
import Glibc
import Platform

/// Writes the chapters of `request.path` to stdout: "hark-ffmpeg 1", then a line a chapter in
/// the order the file gives them, "chapter START END TITLE" (seconds from the start of the
/// track; END "-" when the file gives none, as Vorbis comments' CHAPTERxx do; TITLE the rest
/// of the line, empty when it has none), then an empty line. No chapters: the first line and
/// the empty one.
///
/// Only the container's header is read (avformat_open_input): FFmpeg's demuxers take the
/// chapters from there (an MP4's chapter track and Nero chpl, ID3v2's CHAP frames, Vorbis
/// comments in FLAC and Ogg, Matroska's Chapters), and no codec is opened, so that even a
/// long audiobook's are listed in a few milliseconds.
func listChapters(_ request: Request) throws(Failure) {
  let path = request.path
  try refuseOddFiles(path)
  var options: OpaquePointer?
  // Only the file protocol, as for decoding (AudioInput).
  av_dict_set(&options, "protocol_whitelist", "file", 0)
  defer { av_dict_free(&options) }
  var opened: UnsafeMutablePointer<AVFormatContext>?
  forgetLoggedError()
  let rc = avformat_open_input(&opened, FileName.c("file:" + path), nil, &options)
  guard rc >= 0, let context = opened else {
    let (kind, reason) = whyNotOpened(path)
    throw Failure(kind, reason: reason, code: rc, logged: true)
  }
  defer { avformat_close_input(&opened) }
  var lines = ["hark-ffmpeg 1"]
  let count = min(Int(context.pointee.nb_chapters), chapterLimit)
  for i in 0..<count {
    guard let chapter = context.pointee.chapters[i]?.pointee else { continue }
    let base = chapter.time_base
    guard base.num > 0, base.den > 0, chapter.start != cff_no_timestamp() else { continue }
    let scale = Double(base.num) / Double(base.den)
    let start = Double(chapter.start) * scale
    let end =
      chapter.end == cff_no_timestamp() || chapter.end <= chapter.start
      ? "-" : "\(Double(chapter.end) * scale)"
    var title = ""
    if let entry = av_dict_get(chapter.metadata, "title", nil, 0), let value = entry.pointee.value {
      // One line each, of a sensible length.
      title = String(
        String(cString: value).prefix(500).map { $0.isNewline || $0 == "\t" ? " " : $0 })
    }
    lines.append("chapter \(start) \(end) \(title)")
  }
  do { try writeAll(1, (lines.joined(separator: "\n") + "\n\n").utf8) } catch {
    if error.code == EPIPE { exit(1) }
    throw Failure(.decoderFailed, reason: "cannot write to its output", detail: error.reason)
  }
}

/// Chapters listed at most: an audiobook has tens to hundreds; a file that claims more is
/// hostile or damaged, and its first ones are as good as any.
let chapterLimit = 10_000
