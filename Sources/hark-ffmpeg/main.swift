/*
 hark-ffmpeg — decodes one audio file with FFmpeg and writes its frames to stdout, for a player
 that keeps FFmpeg out of its own process (FFmpegDecoder spawns it).

   hark-ffmpeg [--start-frame N] [--lifeline] [--] FILE
   hark-ffmpeg --stream [--lifeline] [--] URL
   hark-ffmpeg --chapters [--lifeline] [--] FILE

 stdout, on success: a header of UTF-8 text lines, ended by an empty line,

   hark-ffmpeg 1          the protocol's version, always first
   rate 44100             frames per second
   channels 2             samples per frame (1 to 32)
   frames 123456          the length, when the file says (omitted when it does not; a guess
                          from the bit rate for raw AAC or MP3)
   seekable 1             whether --start-frame can be used (1 or 0)
   codec aac              FFmpeg's name for the codec
   title …                tags, only those present, newlines replaced by spaces: title,
                          artist, album, album_artist, track and disc (numbers only), date, genre,
                          replaygain_track_gain, _track_peak, _album_gain, _album_peak

 then interleaved native-endian Float32 frames at that rate and channel count, from frame N
 (0 without --start-frame) to the end, and exit status 0. The first frame is frame N exactly:
 where a decode from frame 0 is after N frames, with its samples (bit for bit in lossless codecs
 and most lossy ones; AAC's noise substitution and MP2's rounding carry state from the start
 of the file, so there they differ at the level of that noise). The encoder's delay and
 padding are not written where the file describes them (an MP4's edit list, an MP3's LAME tag).
 A file that ends well short of the length its header declares is a failure (cut short).

 On failure: exit status 1 (2 for bad usage) and one line on stderr: the reason in plain words, a
 tab, FFmpeg's own words when there are any, a tab, and the kind of trouble (AudioCore's
 DecodeError.Kind: notFound, unreadable, unknownFormat, unsupported, damaged, connection, ...):
 "not an audio file FFmpeg can read\tInvalid data found when processing input\tunknownFormat". Before the header nothing is on stdout; midway, the frames
 already written are good and the line says why there are no more. FFmpeg's log is off unless
 HARK_FFMPEG_LOG names a level (error, warning, info, debug); it goes to stderr before that line.

 --stream: URL is an http(s) stream (internet radio). The header says "seekable 0", "live 1"
 when the stream has no length, and "station NAME" when the server names it (icy-name); frames
 are written as they are decoded. The helper ends (status 0) when the stream ends or the
 connection drops, and fails (status 1) when it cannot connect or nothing comes for 10 s; the
 player reconnects. When descriptor 3 is open, what the stream says as it goes is written
 there, a line each: "icy " and the raw ICY metadata block (StreamTitle='…';, any bytes but
 line breaks), or "tags" and tab-separated key=value pairs (a chained Ogg stream's next song).

 --chapters: the file's chapters instead of its frames (an audiobook's, a podcast's, Vorbis
 comments' CHAPTERxx, Matroska's), read from its header alone: "hark-ffmpeg 1", a line
 "chapter START END TITLE" each (seconds; END "-" when the file gives none), an empty line
 (Chapters.swift). The player asks for them on a thread of its own once a track is heard.

 --serve: stdin is a SOCK_SEQPACKET Unix socket to the player; the helper loads FFmpeg once and
 hands each request that comes on it to a worker, a copy of itself (fork, no exec) kept for the
 next request, so that a track costs neither an exec loading FFmpeg's 135 libraries (30 ms) nor
 a fork. See Serve.swift for the requests and answers. It exits when the player closes its end.

 --lifeline: stdin is a pipe whose other end the parent holds; the helper exits when it closes,
 so that it never outlives the player, whichever of its threads started it. (prctl's
 PR_SET_PDEATHSIG is not used: it fires when the spawning *thread* exits, which would kill the
 helper of a file opened on a thread that ended before it was played.)
*/
import Platform
import CFFmpeg
import Glibc

/// What the command line asked for.
struct Request {
  var path: String
  var startFrame = 0
  var lifeline = false
  /// `path` is an http(s) URL to play as a stream.
  var stream = false
  /// List the file's chapters rather than decode it.
  var chapters = false

  /// Nil for bad usage.
  init?(_ arguments: [String]) {
    var path: String?
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      switch argument {
      case "--start-frame":
        guard let value = rest.popFirst(), let n = Int(value), n >= 0 else { return nil }
        startFrame = n
      case "--lifeline":
        lifeline = true
      case "--stream":
        stream = true
      case "--chapters":
        chapters = true
      case "--":
        guard let last = rest.popFirst(), path == nil, rest.isEmpty else { return nil }
        path = last
      default:
        guard path == nil, !argument.hasPrefix("--") else { return nil }
        path = argument
      }
    }
    guard let path, !path.isEmpty, !(stream && chapters) else { return nil }
    self.path = path
  }
}

/// Writes the failure's line to stderr.
func say(_ failure: Failure) {
  let line = failure.reason + "\t" + (failure.detail ?? "") + "\t" + failure.kind.rawValue + "\n"
  try? writeAll(2, line.utf8)
}

/// Writes the failure's line to stderr and exits with `status`.
func fail(_ failure: Failure, status: Int32 = 1) -> Never {
  say(failure)
  exit(status)
}

/// A thread that exits the process as soon as stdin (the parent's end of the lifeline pipe)
/// closes or says anything; `stop` ends the watch instead (a served worker's request is done,
/// and its stdin goes back to /dev/null).
final class LifelineWatch {
  private var thread = pthread_t()
  private var started = false
  /// Written by `stop`; the thread polls its read end beside stdin.
  private var stopPipe: (read: Int32, write: Int32) = (-1, -1)

  init() {
    guard let pipe = try? makePipe() else { return }
    stopPipe = pipe
    let box = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    box.initialize(to: stopPipe.read)
    started =
      pthread_create(
        &thread, nil,
        { argument in
          guard let stop = argument?.assumingMemoryBound(to: Int32.self) else { return nil }
          var fds = [
            pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stop.pointee, events: Int16(POLLIN), revents: 0),
          ]
          stop.deallocate()
          while poll(&fds, 2, -1) < 0 && errno == EINTR {}
          // The player is gone (or broke the protocol, or dropped this run): no one is
          // listening.
          if fds[1].revents == 0 { _exit(1) }
          return nil
        }, box) == 0
    if !started { box.deallocate() }
  }

  /// Ends the watch and waits for its thread.
  func stop() {
    guard started else { return }
    var byte: UInt8 = 1
    _ = write(stopPipe.write, &byte, 1)
    pthread_join(thread, nil)
    started = false
    close(stopPipe.read)
    close(stopPipe.write)
  }
}

let usage = Failure(
  .decoderFailed,
  reason:
    "usage: hark-ffmpeg [--start-frame N] [--lifeline] [--stream | --chapters] [--] FILE|URL"
    + " | --serve")

/// Does what `request` asks on stdin, stdout and stderr (and descriptor 3): its exit status,
/// 0 when done, 1 with the reason's line written on failure.
func perform(_ request: Request) -> Int32 {
  configureLog()
  do throws(Failure) {
    if request.chapters {
      try listChapters(request)
    } else if request.stream {
      try decodeStream(request)
    } else {
      try decode(request)
    }
    return 0
  } catch {
    say(error)
    return 1
  }
}

/// Does what `arguments` ask, in this process, and exits: 0 when done, 1 with the reason's
/// line on failure, 2 for bad usage.
func run(_ arguments: [String]) -> Never {
  guard let request = Request(arguments) else { fail(usage, status: 2) }
  if request.lifeline { _ = LifelineWatch() }
  exit(perform(request))
}

// A player that ignores SIGPIPE passes that on through exec; a closed stdout must end the helper
// quietly (the reader has gone), not leave it decoding into EPIPE.
signal(SIGPIPE, SIG_DFL)

// The arguments as bytes: a file name that is not UTF-8 arrives whole (`FileName`), where
// CommandLine.arguments would have replaced its bytes.
let arguments = (1..<Int(CommandLine.argc)).compactMap { i in
  CommandLine.unsafeArgv[i].map { FileName.string(cString: $0) }
}
if arguments == ["--serve"] { serve() }
run(arguments)
