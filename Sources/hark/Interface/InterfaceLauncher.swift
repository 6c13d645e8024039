import ALSAOutput
import AudioCore
import Glibc
import PlayerEngine
import SessionServer
import Settings
import TerminalUI

/// `hark [open] [PATH…]` and `hark play PATH…`: a Player wired to the session server (as the
/// headless player is), shown and driven by the terminal interface.
enum InterfaceLauncher {
  static func run(paths: [String], device: String?, duck: Double?, autoplay: Bool) async -> Never {
    StreamIdentity.announce(app: "player", role: .music)
    guard isatty(0) == 1 && isatty(1) == 1 else {
      die(
        "the interface needs a terminal, and stdin or stdout is not one; "
          + "to play without it, use 'hark play --no-ui PATH…'")
    }
    silenceALSALibraryErrors()
    var startup: [String] = []
    let configPath = Settings.defaultPath()
    let (settings, configProblems) = Settings.load(from: configPath)
    for p in configProblems {
      startup.append("Config '\(configPath ?? "?")': \(p); using the default")
    }
    let (bindings, keyProblems) = KeyBindings.configured(settings.keys)
    startup += keyProblems.map { "Config '\(configPath ?? "?")': \($0)" }

    let musicFolder = Self.musicFolder(settings)
    var files: [String] = []
    var restored: SavedState?
    var stateDamaged = false
    var libraryFolder = musicFolder
    let stateFile = StateFile.standard
    if let problem = stateFile?.prepare() {
      startup.append(problem.prefix(1).uppercased() + problem.dropFirst())
    }
    if !paths.isEmpty {
      let (found, problems) = QueueLoader.load(paths)
      guard !found.isEmpty else {
        for p in problems { FileHandleStderr.write("hark: \(p.escapingControlCharacters)\n") }
        die("nothing to play")
      }
      startup += problems.map { $0.prefix(1).uppercased() + $0.dropFirst() }
      files = found.map(Folder.absolute)
      if paths.count == 1 {
        let one = Folder.absolute(paths[0])
        libraryFolder = isDirectory(one) ? one : Folder.parent(of: one)
      }
    } else {
      switch stateFile?.load() ?? .missing {
      case .restored(let saved) where !saved.queue.isEmpty:
        restored = saved
      case .damaged(let why):
        stateDamaged = true
        startup.append(
          "The saved queue '\(stateFile?.path ?? "state.json")' is damaged (\(why)); "
            + "it is left as it is and the music folder is queued instead")
      case .restored, .missing:
        break
      }
      if restored == nil { files = QueueLoader.load([musicFolder]).files.map(Folder.absolute) }
    }

    // Without a session server the interface plays on alone, and says so on its status line.
    let session = await connectOrPlayAlone(quietly: true)
    if session == nil {
      startup.append(
        "No session server: calls and other apps will not pause hark, and 'hark ctl' cannot reach it"
      )
    }
    let port = session.map(SessionPort.init)
    var configuration = Player.Configuration(
      engine: .alsa(
        device: device ?? settings.device, duckDecibels: duck ?? settings.duckLevelDecibels),
      makeVolume: { Mixer(forDevice: $0) })
    configuration.resumeOnReconnect = settings.resumeOnReconnect
    configuration.spokenFolders = settings.spokenFolders
    let sleep = SleepLink()
    configuration.holdSleep = { sleep.hold($0) }
    let player = Player(configuration: configuration, session: port ?? LocalSession())
    sleep.start(for: player)
    let forwarders = port?.connect(to: player) ?? []
    let mpris = startMPRIS(for: player)
    let playing = Task { [files] in await player.run(files: files, autoplay: autoplay) }
    if let s = restored {
      await player.perform(
        .restore(
          paths: s.queue, current: s.current, position: s.position, shuffle: s.shuffle,
          repeatMode: s.repeatMode))
    } else {
      // The config's defaults, where no saved queue says otherwise.
      if settings.shuffle { await player.perform(.setShuffle(true)) }
      if let mode = RepeatMode(rawValue: settings.repeatMode), mode != .off {
        await player.perform(.setRepeat(mode))
      }
    }

    var ui = TerminalInterface.Configuration(libraryFolder: libraryFolder)
    ui.bindings = bindings
    ui.startupMessages = startup
    ui.startView = settings.startView == "queue" ? .queue : .library
    ui.readTags = { path in
      guard let (metadata, seconds) = Decoders.tags(path) else { return nil }
      return TrackInfo(
        title: metadata.title, artist: metadata.artist, album: metadata.album, duration: seconds)
    }
    ui.listOutputs = {
      OutputDevice.list().map { OutputChoice(name: $0.name, summary: $0.description) }
    }
    ui.expandFolder = { path in
      let (files, problems) = QueueLoader.load([path])
      return (files.map(Folder.absolute), problems)
    }
    let logPath = StatePaths.log()
    ui.simulateCall = { SimulatedCall.start(logPath: logPath) }
    ui.stateFile = stateFile
    ui.stateFileIsDamaged = stateDamaged
    ui.logPath = logPath
    let status = await TerminalInterface(player: player, configuration: ui).run()
    player.quit()
    await playing.value
    mpris?.close()
    for f in forwarders { f.cancel() }
    port?.session.close()
    exit(status)
  }

  /// Where the library opens: the config's music_dir, else ~/Music, else the bundled demo
  /// music, else the current folder.
  static func musicFolder(_ settings: Settings) -> String {
    let home = ProcessEnvironment.get("HOME") ?? ""
    if var configured = settings.musicDirectory {
      if configured == "~" || configured.hasPrefix("~/") {
        configured = home + configured.dropFirst()
      }
      if isDirectory(configured) { return Folder.absolute(configured) }
    }
    if !home.isEmpty, isDirectory(home + "/Music") { return home + "/Music" }
    if let assets = bundledAssets() { return assets + "/music" }
    return Folder.absolute(".")
  }

  /// The bundled assets folder (see `Assets`).
  static func bundledAssets() -> String? {
    Assets.music.flatMap { isDirectory($0) ? Assets.directory.map(Folder.absolute) : nil }
  }
}

/// The `C` key: `hark call` from inside the interface, so the manners show without a second
/// terminal.
enum SimulatedCall {
  /// Starts this executable as `hark call`, in a process group of its own (Ctrl-C in the
  /// interface does not reach it), stdin from /dev/null, stdout and stderr to the log; a
  /// thread reaps it. Returns a line for the status line.
  static func start(logPath: String?) -> String {
    guard let exe = executablePath() else {
      return "Cannot find the hark executable to call with"
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(
      &actions, 1, logPath ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    posix_spawnattr_setpgroup(&attributes, 0)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for s in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGTSTP] { sigaddset(&defaults, s) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(
      &attributes,
      Int16(POSIX_SPAWN_SETPGROUP) | Int16(POSIX_SPAWN_SETSIGDEF) | Int16(POSIX_SPAWN_SETSIGMASK))
    let words: [String] = [exe, "call"]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, exe, &actions, &attributes, argv, environ)
    guard rc == 0 else {
      return "Cannot start 'hark call': \(String(cString: strerror(rc)).lowercased())"
    }
    let child = pid
    Reaper.wait(for: child)
    return "Simulated call: 'hark call' (pid \(pid)) rings for 2 s, then talks for 3 s"
  }
}

/// Reaps a child on a thread of its own, so it never lingers as a zombie.
private enum Reaper {
  private final class Box {
    let pid: pid_t
    init(_ pid: pid_t) { self.pid = pid }
  }

  static func wait(for pid: pid_t) {
    let box = Unmanaged.passRetained(Box(pid)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(
      &thread, nil,
      { arg in
        guard let arg else { return nil }
        let pid = Unmanaged<Box>.fromOpaque(arg).takeRetainedValue().pid
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return nil
      }, box)
    if rc == 0 { pthread_detach(thread) }
  }
}
