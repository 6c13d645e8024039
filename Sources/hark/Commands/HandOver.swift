import ArgumentParser
import Glibc
import MediaFiles
import Platform
import SessionClient
import SessionCore

/// One player per user: `hark play`, `hark add` and `hark PATH…` hand what they name to the hark
/// player already running (through the session server, as `cmus-remote` and `mocp -a` do)
/// instead of starting a second one that would take over from it; `--new` starts another.
enum HandOver {
  enum Outcome {
    /// The running player has them.
    case handed
    /// No hark player runs (or no session server): start one.
    case noPlayer
  }

  /// Hands what `paths` name to the running player, and says so (with what could not be
  /// used); `.noPlayer`, having said nothing, when none runs. With nothing usable in `paths`,
  /// also `.noPlayer`: the caller's own loading says why.
  static func paths(_ paths: [String], at placement: QueuePlacement) async -> Outcome {
    await loaded(QueueLoader.load(paths), at: placement)
  }

  /// `paths` as the caller loaded them (`QueueLoader.load`), handed over as `paths(_:at:)`
  /// does: a caller that plays them itself when no player runs walks their folders once.
  static func loaded(
    _ loaded: (files: [String], problems: [String]), at placement: QueuePlacement
  ) async -> Outcome {
    let (files, problems) = leavingOutMissing(loaded)
    guard !files.isEmpty, await Self.files(files, at: placement) == .handed else {
      return .noPlayer
    }
    for p in problems { FileHandleStderr.write("hark: \(p.escapingControlCharacters)\n") }
    say(files, placement)
    return .handed
  }

  /// A playlist's entries are listed as it names them, and the player leaves out those that
  /// are not there: said here, where the playlist was named, and not counted among those
  /// added ("3 files added" for 2 did).
  static func leavingOutMissing(
    _ loaded: (files: [String], problems: [String])
  ) -> (files: [String], problems: [String]) {
    var (files, problems) = loaded
    let missing = files.filter {
      !QueueLoader.isStreamURL($0) && access(FileName.c($0), F_OK) != 0
    }
    guard !missing.isEmpty else { return loaded }
    let gone = Set(missing)
    files.removeAll { gone.contains($0) }
    problems += missing.map { "cannot play '\($0)': no such file or directory" }
    return (files, problems)
  }

  /// `loaded` handed over as `loaded(_:at:)` does, through `session`, the caller's own (a
  /// player-to-be's), when its server's welcome named a player that takes files; else
  /// `.noPlayer` at once, with no question asked: the first sound does not wait for one.
  static func loaded(
    _ loaded: (files: [String], problems: [String]), at placement: QueuePlacement,
    through session: AudioSession
  ) async -> Outcome {
    guard session.welcome.player != nil else { return .noPlayer }
    let (files, problems) = leavingOutMissing(loaded)
    guard !files.isEmpty, await Self.files(files, at: placement, through: session) == .handed
    else { return .noPlayer }
    for p in problems { FileHandleStderr.write("hark: \(p.escapingControlCharacters)\n") }
    say(files, placement)
    return .handed
  }

  /// Hands `files` (made absolute: the player runs in another folder) to the running player.
  /// Exits 1 with the reason when one runs but would not take them.
  static func files(_ files: [String], at placement: QueuePlacement) async -> Outcome {
    guard let session = await connectWithoutStarting() else { return .noPlayer }
    defer { session.close() }
    return await Self.files(files, at: placement, through: session)
  }

  /// `files(_:at:)` over a session already connected.
  private static func files(
    _ files: [String], at placement: QueuePlacement, through session: AudioSession
  ) async -> Outcome {
    do {
      switch try await session.handOver(files.map(QueueLoader.absolute), placement: placement) {
      case .success: return .handed
      case .noSuchContent: die("the running hark player found nothing to play in them")
      case .commandDisabled, .commandFailed: die("the running hark player would not take them")
      }
    } catch .server(let error) where error.code == "noPlayer" {
      return .noPlayer
    } catch .server(let error) where error.code == "commandFailed" {
      // The player went away before answering (it crashed, or was killed as it saved its
      // queue): there is none to hand them to, and the caller plays them itself.
      HarkLog.write("the running player went away before taking the files: \(error.message)")
      return .noPlayer
    } catch {
      die("cannot reach the running hark player: \(error)")
    }
  }

  /// Whether a hark player runs (asked by handing it nothing).
  static func playerIsRunning() async -> Bool {
    guard let session = await connectWithoutStarting() else { return false }
    defer { session.close() }
    do {
      _ = try await session.handOver([], placement: .end)
      return true
    } catch {
      return false
    }
  }

  /// A connection to the session server if one runs; none is started (with no server there is
  /// no player either).
  private static func connectWithoutStarting() async -> AudioSession? {
    var configuration = AudioSession.Configuration(name: "hark play", autospawn: false)
    configuration.connectTimeout = .seconds(2)
    return try? await AudioSession.connect(configuration)
  }

  /// What the user is told once the running player has them.
  static func say(_ files: [String], _ placement: QueuePlacement) {
    let name = files.first?.split(separator: "/").last.map(String.init) ?? ""
    let what = files.count == 1 ? "'\(name)'" : "\(files.count) files"
    let line =
      switch placement {
      case .now: "playing \(what) in the hark player already running"
      case .next: "\(what) to play next in the hark player already running"
      case .end: "\(what) added to the queue of the hark player already running"
      }
    print(line.escapingControlCharacters)
  }
}

struct Add: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "add",
    abstract: "Add files, folders and playlists to the running hark player's queue.",
    discussion: """
      Hands them to the hark player already running (in another terminal, or headless): at the \
      end of its queue, or with --next after the track playing (several 'add --next' play in \
      the order they were added). Exits 1 when no hark player runs ('hark play' starts one).
      """)

  @Flag(help: "Play them next, after the track playing and what was added to play next.")
  var next = false

  @Argument(help: "Files, folders, playlists (.m3u, .pls) and http(s) stream URLs.")
  var paths: [String]

  func run() async throws {
    let (files, problems) = HandOver.leavingOutMissing(QueueLoader.load(paths))
    for p in problems { FileHandleStderr.write("hark: \(p.escapingControlCharacters)\n") }
    guard !files.isEmpty else { die("nothing to add") }
    let placement: QueuePlacement = next ? .next : .end
    switch await HandOver.files(files, at: placement) {
    case .handed: HandOver.say(files, placement)
    case .noPlayer: die("no hark player is running; 'hark play PATH…' starts one")
    }
  }
}
