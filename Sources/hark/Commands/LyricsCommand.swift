import ArgumentParser
import Glibc
import LibraryIndex
import Lyrics
import MediaFiles
import Platform
import PlayerLink
import SessionClient
import TerminalUI

/// `hark lyrics`: the lyrics of the track playing (asked of the running player over its
/// socket, as an interface attaching would) or of a file, as text, as LRC, or only the line
/// sung now (for a status bar).
struct LyricsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "lyrics",
    abstract: "Print the lyrics of the track playing, or of a file.",
    discussion: """
      From an .lrc file beside the track (synced lyrics, in the LRC format), else from its tags \
      (ID3's USLT and SYLT, Vorbis LYRICS and UNSYNCEDLYRICS, MP4's ©lyr), read by TagLib in \
      the hark-tags helper. Exits 1 when the track has none.
      """)
  @Argument(help: "A file (default: the track the hark player is playing).")
  var file: String?
  @Flag(help: "Print LRC: each line with its time stamp ([mm:ss.xx]).")
  var lrc = false
  @Flag(help: "Print only the line sung now (an empty line between lines).")
  var now = false

  func validate() throws {
    if now && file != nil {
      throw ValidationError("--now is the line sung now by the player: name no file with it")
    }
    if now && lrc { throw ValidationError("--now and --lrc do not go together") }
  }

  func run() async throws {
    let path: String
    var position: Double?
    var title: String?
    if let file {
      path = Folder.absolute(file)
      guard access(FileName.c(path), R_OK) == 0 || CueSheet.Reference(path) != nil else {
        die("cannot read '\(file.escapingControlCharacters)': \(String(cString: strerror(errno)))")
      }
    } else {
      guard let socket = try? SessionPaths.fromEnvironment().playerSocket,
        let player = try? RemotePlayer.attach(to: socket, timeout: .seconds(3))
      else {
        die("no hark player is running; name a file: 'hark lyrics FILE'")
      }
      let snapshot = player.snapshot
      player.detach()
      guard let current = snapshot.current else { die("the hark player is playing nothing") }
      guard !QueueLoader.isStreamURL(current.path) else {
        die("the hark player is playing a stream, which has no lyrics")
      }
      path = current.path
      title = snapshot.title
      position = snapshot.position(at: monotonicNanoseconds())
    }
    let found = TrackLyrics.find(for: path)
    guard let lyrics = found.lyrics else {
      let name = (title ?? QueueLoader.title(fromPath: path)).escapingControlCharacters
      if let problem = found.problem {
        die("no lyrics for '\(name)': its tags cannot be read (\(problem))")
      }
      die(
        "no lyrics for '\(name)': no .lrc file beside '\(path.escapingControlCharacters)' and no "
          + "lyrics in its tags")
    }
    if now {
      guard let position, lyrics.isSynced else {
        die("the lyrics of '\((title ?? path).escapingControlCharacters)' are not synced")
      }
      print(
        lyrics.lineIndex(at: position).map { lyrics.lines[$0].text.escapingControlCharacters } ?? ""
      )
      return
    }
    print(lrc ? lyrics.lrcText.escapingLyrics : lyrics.plainText.escapingLyrics)
  }
}

extension String {
  /// Every line's control characters escaped, the line breaks kept.
  fileprivate var escapingLyrics: String {
    split(separator: "\n", omittingEmptySubsequences: false)
      .map { String($0).escapingControlCharacters }.joined(separator: "\n")
  }
}
