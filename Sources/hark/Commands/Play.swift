import AudioCore
import ALSAOutput
import ArgumentParser
import FFmpegDecoder
import Glibc
import MediaFiles
import PlayerEngine
import SessionClient
import SessionCore
import UserText

struct Play: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "play",
    abstract: "Play files, folders and playlists.",
    discussion: """
      Opens the interface (as 'hark open') and starts playing the first of them. With --no-ui, \
      plays the queue without an interface, as a full session client: it pauses \
      for calls and resumes after them (G14), pauses when its output goes away (G5), ducks \
      under navigation prompts (G9) and obeys 'hark ctl' and media keys. It exits 0 when the \
      queue has played to its end, 1 when nothing in it could be played.
      """)

  @Flag(help: "Play without the interface: one line per event on stdout, for scripts and tests.")
  var noUI = false

  @Option(
    help: ArgumentHelp(
      "The ALSA device to play on ('aplay -L' lists them); default: the config's, else 'default'.",
      valueName: "device"))
  var device: String?

  // Unconditional: the value is negative ("--duck -12"), which would otherwise read as an option.
  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "How far to lower the music under a navigation prompt; default: the config's, else -20.",
      valueName: "dB"))
  var duck: Double?

  @Flag(
    help: "Start another player even when one runs (else they go to the running one, played now).")
  var new = false

  @Argument(help: "Files, folders, playlists (.m3u, .pls) and http(s) stream URLs.")
  var paths: [String]

  func validate() throws {
    if let problem = PlayRequest.problem(duck: duck) { throw ValidationError(problem) }
  }

  func run() async throws {
    await PlayRequest(noUI: noUI, device: device, duck: duck, new: new, paths: paths).run()
  }
}

/// What `hark play` was asked: `Play` as ArgumentParser reads it, or the same command line read
/// by `init(quickParsing:)`.
struct PlayRequest: Equatable {
  var noUI = false
  var device: String?
  var duck: Double?
  var new = false
  var paths: [String]

  init(
    noUI: Bool = false, device: String? = nil, duck: Double? = nil, new: Bool = false,
    paths: [String]
  ) {
    (self.noUI, self.device, self.duck, self.new, self.paths) = (noUI, device, duck, new, paths)
  }

  /// Why `duck` cannot be used, or nil. NaN is refused too (`--duck nan` passed the old check).
  static func problem(duck: Double?) -> String? {
    guard let duck, !(duck >= -60 && duck <= 0) else { return nil }
    return "--duck must be from -60 to 0 dB"
  }

  /// The options `init(quickParsing:)` reads, by their names on the command line: `Play`'s
  /// options, no more and no fewer (a test compares them with ArgumentParser's own list).
  static let quickOptions: Set<String> = ["--no-ui", "--device", "--duck", "--new"]

  /// The command line after `play`, read without ArgumentParser when it is made of `Play`'s
  /// options and paths only, each option at most once: `--no-ui`, `--new`, `--device D` or
  /// `--device=D` (D not starting with '-'), `--duck DB` or `--duck=DB` (DB a number in range,
  /// taken whatever it looks like, as `Play` takes it), and at least one path not starting
  /// with '-'. Anything else (help, `--`, a repeated or unknown option, a value missing or out
  /// of range) is nil, and ArgumentParser reads it and says what is wrong.
  ///
  /// Why: ArgumentParser's reflection over the commands on the path (its `Mirror`s, and the
  /// conformance scans each new cast makes) was a quarter of the instructions of a short
  /// `hark play`, before its first sound (docs/PERFORMANCE.md, "`hark play` read without
  /// ArgumentParser").
  init?(quickParsing arguments: some Sequence<String>) {
    self.init(paths: [])
    var seen = Set<String>()
    var paths: [String] = []
    var pendingValue: String?  // the option waiting for its value
    for argument in arguments {
      if let option = pendingValue {
        pendingValue = nil
        guard set(option, to: argument) else { return nil }
        continue
      }
      guard argument.hasPrefix("-") else {
        paths.append(argument)
        continue
      }
      let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = String(parts[0])
      guard Self.quickOptions.contains(name), seen.insert(name).inserted else { return nil }
      switch (name, parts.count) {
      case ("--no-ui", 1): noUI = true
      case ("--new", 1): new = true
      case ("--device", 1), ("--duck", 1): pendingValue = name
      case ("--device", 2), ("--duck", 2):
        guard set(name, to: String(parts[1])) else { return nil }
      default: return nil
      }
    }
    guard pendingValue == nil, !paths.isEmpty else { return nil }
    self.paths = paths
  }

  /// Sets the option `name` to `value` when it is a value `Play` would take without complaint.
  private mutating func set(_ name: String, to value: String) -> Bool {
    switch name {
    case "--device":
      guard !value.isEmpty, !value.hasPrefix("-") else { return false }
      device = value
    default:
      guard let d = Double(value), Self.problem(duck: d) == nil else { return false }
      duck = d
    }
    return true
  }

  func run() async {
    // Loaded once (a folder of 50,000 files is a walk): handed to a running player, played
    // here, or given to the interface.
    let loaded = QueueLoader.load(paths)
    // Nothing playable in them: said here, the same with or without a terminal (without one,
    // the interface's complaint about the terminal hid the reason).
    guard !loaded.files.isEmpty else {
      for p in loaded.problems { FileHandleStderr.write("hark: \(p.escapingControlCharacters)\n") }
      die(nothingToPlay(in: paths))
    }
    guard noUI else {
      // One player per user: a running one plays them now, keeping its queue after them, and
      // the interface attaches to it.
      StreamIdentity.announce(app: "player", role: .music)
      await InterfaceLauncher.run(
        paths: paths, loaded: loaded, device: device, duck: duck, autoplay: true, new: new)
    }
    // The player's own session, asked first whether a player already runs: its server's
    // welcome says so, so that the usual case (none) asks nothing more before the first sound.
    // A player started with --new is one of its own: what others hand over goes to the first.
    let session = await connectOrPlayAlone(acceptsFiles: false)
    if !new, let session {
      // One player per user: a running one plays them now, keeping its queue after them.
      if await HandOver.loaded(loaded, at: .now, through: session) == .handed {
        session.close()
        return
      }
      session.acceptFiles()
    }
    let settings = loadSettings()
    let (files, problems) = loaded
    for p in problems { FileHandleStderr.write("hark: \(p.escapingControlCharacters)\n") }
    guard !files.isEmpty else { die(nothingToPlay(in: paths)) }
    // FFmpeg loads in its helper's server while this process opens the output.
    if let first = files.first, QueueLoader.needsFFmpeg(first) { FFmpegFile.prepare() }
    var options = PlayerHost.Options(
      device: device ?? settings.device, duckDecibels: duck ?? settings.duckLevelDecibels,
      settings: settings, serving: .ifFree)
    options.files = files
    options.autoplay = true
    options.headless = true
    Glibc.exit(await PlayerHost.run(options, session: session))
  }
}

struct Ctl: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ctl",
    abstract: "Send a remote command to the now-playing app.",
    discussion: """
      COMMAND is play, pause, toggle, stop, next, previous, seek ±TIME, position TIME (TIME: \
      seconds, or minutes:seconds as in 1:30, +1:00, -0:15), \
      volume ±PERCENT, mute, rate SPEED (0.5 to 3, the pitch kept: 1.5, 1.5x, 150%, normal; \
      spoken word keeps it for its podcast or book), or chapter next|previous (the chapters of \
      the track playing: an audiobook's, a podcast's; next and previous stay the tracks'). Exits 0 when the app carried it out, 1 with the reason when \
      there is no now-playing app or the command is disabled right now (G19). With \
      --player NAME (an app's name as 'hark status' shows it, or its pid), to that app even \
      when another one is the now-playing app: 'hark ctl --player hark play' resumes hark.
      """)

  @Option(
    name: [.customShort("p"), .long],
    help: ArgumentHelp(
      "Send it to this app ('hark' for hark's player) rather than the now-playing one.",
      valueName: "name|pid"))
  var player: String?

  @Argument(parsing: .captureForPassthrough, help: "The command and its argument.")
  var words: [String] = []

  func validate() throws {
    // The words are taken as they come (a seek of -15 is no option), so help is asked here.
    if let first = words.first, ["-h", "--help", "help"].contains(first) {
      throw CleanExit.helpRequest(Self.self)
    }
  }

  func run() async throws {
    let remote = try Self.parse(words)
    let session: AudioSession
    do { session = try await AudioSession.connect(.init(name: "hark ctl")) } catch {
      die(error.description)
    }
    do {
      let status = try await session.send(remote, to: player)
      session.close()
      switch status {
      case .success: return
      case .commandDisabled: die("'\(words.joined(separator: " "))' is disabled right now")
      case .noSuchContent: die("there is nothing to '\(words[0])'")
      case .commandFailed: die("'\(words.joined(separator: " "))' failed")
      }
    } catch {
      die("\(error)")
    }
  }

  static func parse(_ words: [String]) throws -> RemoteCommand {
    guard let verb = words.first else {
      throw ValidationError("give a command: play, pause, toggle, ...")
    }
    /// Seconds, or a time as people type it: "90", "1:30", "+1:00", "-0:30", "1:02:03".
    func time() throws -> Double {
      guard words.count == 2, let t = TypedTime(words[1])?.seconds else {
        throw ValidationError(
          "'\(verb)' needs a time: seconds ('90', '-15') or minutes:seconds ('1:30', '+1:00')")
      }
      return t
    }
    func number() throws -> Double {
      guard words.count == 2, let n = Double(words[1]), n.isFinite else {
        throw ValidationError("'\(verb)' needs a number, e.g. 'hark ctl \(verb) 10'")
      }
      return n
    }
    if words.count > 2 { throw ValidationError("too many words after '\(verb)'") }
    switch verb {
    case "play": return .play
    case "pause": return .pause
    case "toggle", "play-pause": return .togglePlayPause
    case "stop": return .stop
    case "next": return .nextTrack
    case "previous", "prev": return .previousTrack
    case "seek":
      let n = try time()
      return n >= 0 ? .skipForward(seconds: n) : .skipBackward(seconds: -n)
    case "position":
      let n = try time()
      guard n >= 0 else { throw ValidationError("a position is not negative") }
      return .changePlaybackPosition(seconds: n)
    case "volume":
      let n = try number()
      return n >= 0 ? .volumeUp(percent: n) : .volumeDown(percent: -n)
    case "mute": return .mute
    case "rate", "speed":
      guard words.count == 2 else {
        throw ValidationError("'\(verb)' needs a speed, e.g. 'hark ctl rate 1.5' (0.5 to 3)")
      }
      if words[1] == "normal" { return .changePlaybackRate(1) }
      do { return .changePlaybackRate(try PlaybackRate(parsing: words[1]).value) } catch {
        throw ValidationError(error.description)
      }
    case "chapter":
      switch words.count == 2 ? words[1] : "" {
      case "next": return .nextChapter
      case "previous", "prev": return .previousChapter
      default:
        throw ValidationError("'chapter' needs 'next' or 'previous', e.g. 'hark ctl chapter next'")
      }
    default:
      throw ValidationError("unknown command '\(verb)'; see 'hark ctl --help'")
    }
  }
}

/// The player's session; when no server can be reached, nil, and the user is told what that
/// means (docs/HACKING.md, "Messages for people": say it, and play on).
/// `quietly`: the terminal interface says it on its status line, not on stderr.
/// `acceptsFiles`: whether `hark play` and `hark add` elsewhere hand their files to this player
/// (the user's player does; one started with `--new` does not).
func connectOrPlayAlone(quietly: Bool = false, acceptsFiles: Bool) async -> AudioSession? {
  var configuration = AudioSession.Configuration(name: "hark")
  configuration.acceptsFiles = acceptsFiles
  // The first sound does not wait for a session server's start-up (see startWithoutWaiting).
  configuration.startWithoutWaiting = true
  do { return try await AudioSession.connect(configuration) } catch {
    if quietly {
      HarkLog.write("no session server: \(error)")
    } else {
      FileHandleStderr.write(
        "hark: \(error); playing on without it: calls and other apps will not pause hark, "
          + "and 'hark ctl' cannot reach it\n")
    }
    return nil
  }
}
