import ALSAOutput
import AudioCore
import Glibc
import LibraryIndex
import MediaFiles
import Platform
import PlayerCore
import PlayerEngine
import PlayerLink
import SessionClient
import SessionCore
import Settings
import StateFile
import TerminalUI

/// `hark [open] [PATH…]` and `hark play PATH…`: the terminal interface, attached to the user's
/// player. The player runs in a process of its own (`BackgroundPlayer`), which the interface
/// starts, or finds already running (detached earlier) and attaches to: `q` stops it, `Q`
/// leaves it playing, and so does the terminal closing while it plays (`detach_on_hangup`).
enum InterfaceLauncher {
  /// `loaded`: `paths` as the caller has loaded them already (`QueueLoader.load`), so that a
  /// folder is walked once.
  static func run(
    paths: [String], loaded: (files: [String], problems: [String])? = nil, device: String?,
    duck: Double?, autoplay: Bool, new: Bool = false
  ) async -> Never {
    guard isatty(0) == 1 && isatty(1) == 1 else {
      // A script's `hark PATH`: the running player takes them, as `hark add` would.
      if !new, let loaded = loaded ?? (paths.isEmpty ? nil : QueueLoader.load(paths)),
        await HandOver.loaded(loaded, at: autoplay ? .now : .end) == .handed
      {
        exit(0)
      }
      die(
        "the interface needs a terminal, and stdin or stdout is not one; "
          + "to play without it, use 'hark play --no-ui PATH…'")
    }
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
    if let configured = settings.musicDirectory, Folder.absolute(configured) != musicFolder {
      // Said, not silently replaced by another folder.
      startup.append(
        "The config's music_dir '\(configured)' is not a folder; showing '\(musicFolder)' "
          + "(config '\(configPath ?? "?")')")
    }
    var files: [String] = []
    var libraryFolder = musicFolder
    if !paths.isEmpty {
      let (found, problems) = loaded ?? QueueLoader.load(paths)
      guard !found.isEmpty else {
        for p in problems { FileHandleStderr.write("hark: \(p.escapingControlCharacters)\n") }
        die(nothingToPlay(in: paths))
      }
      startup += problems.map(\.capitalisedFirst)
      files = found.map(Folder.absolute)
      if paths.count == 1 {
        let one = Folder.absolute(paths[0])
        libraryFolder = isDirectory(one) ? one : Folder.parent(of: one)
      }
    }

    // The player: the one running (no --new), else one of its own. Paths named are handed to
    // the running one, and the interface shows them (one player per user).
    let place = PlayerPlace.find(private: new)
    var greeting: String?
    var showWhenQueued: (path: String, after: Int, switchView: Bool)?
    var attached: RemotePlayer?
    if !new, let socket = place.standardSocket {
      attached = try? RemotePlayer.attach(to: socket)
    }
    if attached == nil, !new, !place.lockIsHeld, await HandOver.playerIsRunning() {
      // Another player runs without an interface's socket (one started headless when a player
      // already served, or with --new): no interface attaches to it.
      guard !files.isEmpty,
        await HandOver.loaded((files, []), at: autoplay ? .now : .end) == .handed
      else {
        die(
          "a hark player without an interface is already running; 'hark ctl', 'hark add' and "
            + "the media keys reach it ('hark open --new' starts another)")
      }
      exit(0)
    }
    let player: RemotePlayer
    var isOurs = false
    if let attached {
      player = attached
    } else {
      // The user's player restores the saved queue itself (and says if it is damaged), so
      // that it never saves over a queue it was not given; with nothing saved and nothing
      // named, it queues the music folder. Both after it has answered: the interface draws
      // meanwhile. Paths named join that queue, as they join a running player's: `hark PATH`
      // never loses the queue the user had. A private player (--new) has only what is named.
      // A player on its way out (quit a moment ago, or killed while it saved) is waited for
      // and then replaced; one that is there after all is attached to.
      do {
        (player, isOurs) = try place.start(
          device: device, duck: duck, restore: !new || paths.isEmpty,
          queueFolder: paths.isEmpty ? musicFolder : nil)
      } catch {
        die("\(error)")
      }
    }
    let snap = player.snapshot
    if !files.isEmpty {
      // Played now (`hark play`, after the track playing) or added to the queue (`hark PATH`),
      // and the first of them shown in the queue. Sent, not waited for: carried out in this
      // order before any key's request (after the saved queue is restored), while the
      // interface draws. Said by the greeting, not again by the player (an add says nothing).
      let placement: QueuePlacement = autoplay ? .now : .end
      showWhenQueued = (files[0], snap.queue.map(\.id).max() ?? -1, !isOurs)
      player.post(placement == .now ? .insert(files, at: .now) : .addReady(files))
      // A player of its own says nothing: the queue shows them (and the status line is the
      // library scan's).
      let what = files.count == 1 ? "'\(fileName(files[0]))'" : "\(files.count) files"
      let first = files.count == 1 ? "" : "; the first is selected"
      if !isOurs {
        greeting =
          placement == .now
          ? "Playing \(what) in the hark player already running (pid \(player.pid))\(first)"
          : "\(what.capitalisedFirst) added to the queue of the hark player already running "
            + "(pid \(player.pid))\(first)"
      }
    } else if !isOurs {
      let playing = snap.state == .playing
      greeting =
        "Back with the hark player\(playing ? " playing on" : "") (pid \(player.pid)): "
        + "q stops it, \(bindings.keyNames(.detach).first ?? "Q") leaves it "
        + (playing ? "playing" : "as it is")
    }
    if !isOurs {
      // Options for a new player do not change the one running: said, not silently dropped.
      let unused = [device.map { "--device '\($0)'" }, duck.map { _ in "--duck" }].compactMap { $0 }
      if !unused.isEmpty {
        let picker = bindings.keyNames(.routePicker).first ?? "o"
        startup.append(
          "\(unused.joined(separator: " and ")) not used: the hark player (pid \(player.pid)) "
            + "already runs, on '\(snap.deviceName)' (\(picker) picks its output)")
      }
    }
    startup += player.lines

    var ui = TerminalInterface.Configuration(libraryFolder: libraryFolder)
    ui.bindings = bindings
    ui.startupMessages = startup
    ui.greeting = greeting
    ui.showWhenQueued = showWhenQueued
    if place.lock == nil {
      ui.detachRefusal =
        "This player cannot be come back to (it was started with --new, or there is no "
        + "$XDG_RUNTIME_DIR): q stops it"
    }
    // Back with a player that played on: its queue, the track playing in it, is what it is.
    ui.startView = settings.startView == "queue" || greeting != nil ? .queue : .library
    // The index's tags where it has them (no file opened, no helper started), else the file's.
    let index = indexAccess(root: libraryFolder, measureLoudness: settings.measureLoudness)
    let indexTags = indexTagReader(root: libraryFolder)
    ui.readTagsDone = { indexTags?.done() }
    ui.readTags = { path in
      if let indexed = indexTags?.read(path) { return indexed }
      guard let (metadata, seconds) = Decoders.tags(path) else { return nil }
      return TrackInfo(
        title: metadata.title, artist: metadata.artist, album: metadata.album, duration: seconds,
        track: metadata.trackNumber, year: metadata.year)
    }
    ui.listOutputs = {
      OutputDevice.list().map { OutputChoice(name: $0.name, summary: $0.description) }
    }
    // A playlist's missing entries are left out and named, as `hark add` does.
    ui.expandFolder = { path in
      let (files, problems) = HandOver.leavingOutMissing(QueueLoader.load([path]))
      return (files.map(Folder.absolute), problems)
    }
    let logPath = StatePaths.log()
    ui.simulateCall = { SimulatedCall.start(logPath: logPath) }
    // The sleep timer is the desktop's, kept by the session server: set as `hark timer` sets it,
    // by a control connection of its own (the player hears of it from the server).
    ui.setSleepTimer = { setting in
      do {
        let session = try await AudioSession.connect(.init(name: "hark timer"))
        defer { session.close() }
        try await session.setTimer(setting)
        return nil
      } catch {
        return "Cannot set the sleep timer: \(error)"
      }
    }
    // Artists, albums and genres from the tag index, and search across the whole library;
    // the index of the library's folder is brought up to date in the background.
    ui.index = index
    // Lyrics: an .lrc beside the track, else its tags through hark-tags, on the worker.
    ui.readLyrics = { path in
      let found = TrackLyrics.find(for: path)
      return LyricsFound(lyrics: found.lyrics, problem: found.problem)
    }
    ui.lyricsBeside = settings.lyricsBeside
    if settings.coverArt {
      ui.readCover = { path, columns, rows, colors, pixels in
        CoverHelper.cover(
          of: path, columns: columns, rows: rows, colors: colors,
          pixels: pixels.map { ($0.width, $0.height) }, sixel: pixels?.sixel ?? false)
      }
    }
    ui.logPath = logPath
    let ending = await TerminalInterface(player: player, configuration: ui).run()
    switch ending {
    case .detach:
      // Said as it is: Q on a paused player leaves it paused, not playing.
      let snap = player.snapshot
      let how =
        snap.state == .playing
        ? "playing on" : snap.state == .paused ? "paused" : "stopped"
      player.detach()
      print(
        "hark: the player is \(how) in the background (pid \(player.pid)); 'hark' comes back "
          + "to it, 'hark ctl' and the media keys reach it")
      exit(0)
    case .playerGone(let why):
      FileHandleStderr.write("hark: \(why)\n")
      exit(1)
    case .quit(let status):
      // The terminal closed under a playing interface (or one a call will resume): the music
      // goes on, as with Q, where a `hark` can come back to it.
      let snap = player.snapshot
      let playing =
        snap.state == .playing || (snap.pausedBy == .interruption && snap.willResume)
      if status == 128 + SIGHUP, settings.detachOnHangup, playing, place.lock != nil {
        HarkLog.write("the terminal closed; the player (pid \(player.pid)) plays on")
        player.detach()
        exit(status)
      }
      let (ended, problem) = player.quit()
      if let problem {
        FileHandleStderr.write("hark: \(problem)\n")
        exit(1)
      }
      if !ended {
        FileHandleStderr.write(
          "hark: the player (pid \(player.pid)) did not stop within 10 s; "
            + "'kill \(player.pid)' ends it\n")
        exit(1)
      }
      exit(status)
    }
  }

  /// Where the library opens: the config's music_dir, else ~/Music, else the bundled demo
  /// music, else the current folder.
  static func musicFolder(_ settings: Settings) -> String {
    let home = environment("HOME") ?? ""
    // Settings has made a leading ~ the home folder already.
    if let configured = settings.musicDirectory, isDirectory(configured) {
      return Folder.absolute(configured)
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
