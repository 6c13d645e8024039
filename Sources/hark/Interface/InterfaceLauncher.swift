import ALSAOutput
import AudioCore
import Glibc
import Platform
import PlayerEngine
import SessionClient
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
    let (bindings, keyProblems) = KeyBindings.configured(
      settings.keys, preset: settings.keyPreset)
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
    }
    // Nothing named and nothing saved: the music folder is queued, once the interface is up (a
    // library of 50,000 tracks takes a second or two to walk, which used to pass before anything
    // was drawn).
    let queueLater = paths.isEmpty && restored == nil ? musicFolder : nil

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
        device: device ?? settings.device, duckDecibels: duck ?? settings.duckLevelDecibels,
        replayGain: settings.replayGainSettings),
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
    if let folder = queueLater {
      startThread(named: "hark-queue") {
        let found = QueueLoader.load([folder]).files.map(Folder.absolute)
        Task { await player.perform(.add(found, play: false)) }
      }
    }
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
    // The index's tags where it has them (no file opened, no helper started), else the file's.
    let index = indexAccess(root: libraryFolder)
    ui.readTags = { path in
      if let indexed = index?.tags(path) { return indexed }
      guard let (metadata, seconds) = Decoders.tags(path) else { return nil }
      return TrackInfo(
        title: metadata.title, artist: metadata.artist, album: metadata.album, duration: seconds,
        track: metadata.trackNumber, year: metadata.year)
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
    // Artists, albums and genres from the tag index, and search across the whole library;
    // the index of the library's folder is brought up to date in the background.
    ui.index = index
    if settings.coverArt {
      ui.readCover = { path, columns, rows, colors, pixels in
        CoverHelper.cover(of: path, columns: columns, rows: rows, colors: colors, pixels: pixels)
      }
    }
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
    let home = environment("HOME") ?? ""
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
    let pid: pid_t
    do {
      pid = try spawnDetached(
        executable: exe, arguments: ["call"], outputPath: logPath, detachment: .newProcessGroup)
    } catch {
      return "Cannot start 'hark call': \(error.reason.lowercased())"
    }
    return "Simulated call: 'hark call' (pid \(pid)) rings for 2 s, then talks for 3 s"
  }
}
