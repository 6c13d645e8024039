import ALSAOutput
import ArgumentParser
import Dispatch
import Glibc
import Platform
import PlayerEngine
import PlayerLink
import Settings
import TerminalUI

/// The player the interface shows, in a process of its own: a full session client (calls,
/// unplugged outputs, media keys through MPRIS, sleep) that plays on when the interface
/// detaches (Q, or the terminal closing while it plays) and that any `hark` attaches to again.
/// The interface starts it (`InterfaceLauncher`) and is its client over `PlayerLink`; it ends
/// when an interface quits (q) or on SIGTERM/SIGINT, saving the queue as it goes.
struct BackgroundPlayerCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "background-player",
    abstract: "The interface's player, in a process of its own (started by 'hark').",
    shouldDisplay: false)

  @Option(help: "The socket it serves interfaces at.")
  var socket: String

  @Option(help: "The lock that makes it the user's one attachable player.")
  var lock: String?

  @Option(help: "The ALSA device to play on.")
  var device: String?

  @Option(help: "How far to lower the music under a navigation prompt, in dB.")
  var duck: Double?

  @Flag(help: "Restore the queue saved when the player last ended.")
  var restore = false

  @Option(help: "The folder to queue when there is no saved queue to restore.")
  var queueFolder: String?

  func run() async throws {
    await BackgroundPlayer.run(
      socket: socket, lock: lock, device: device, duck: duck, restore: restore,
      queueFolder: queueFolder)
  }
}

enum BackgroundPlayer {
  /// Exit status when another player holds the lock: the interface attaches to that one.
  static let taken: Int32 = 3

  static func run(
    socket: String, lock: String?, device: String?, duck: Double?, restore: Bool,
    queueFolder: String?
  ) async -> Never {
    StreamIdentity.announce(app: "player", role: .music)
    silenceALSALibraryErrors()
    // Before anything registers with the session server: of two racing players, one serves.
    let endpoint: PlayerService.Endpoint
    do { endpoint = try PlayerService.bind(socketPath: socket, lockPath: lock) } catch {
      HarkLog.write("the player does not start: \(error)")
      if case .taken = error { exit(taken) }
      exit(1)
    }
    // The config's problems are the interface's to say; the player takes what it can.
    let (settings, _) = Settings.load(from: Settings.defaultPath())
    var lines: [String] = []
    // Only the user's player (the one holding the lock) takes what `hark add` hands over; a
    // private one (`--new`) is reached from the interface that started it.
    let session = await connectOrPlayAlone(quietly: true, acceptsFiles: lock != nil)
    if session == nil {
      lines.append(
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

    // The saved queue is the player's to read, restore and save again: an interface that dies
    // before handing it over cannot make the player save an empty queue over it. It is the
    // user's player's (the one holding the lock): a private one (`--new`) neither restores nor
    // saves it, so that quitting it cannot replace the queue the user's player saved.
    let stateFile = lock != nil ? StateFile.standard : nil
    if let problem = stateFile?.prepare() {
      lines.append(problem.capitalisedFirst)
    }
    // Saved at the end only once it has had a queue (restored, or given): a player that ends
    // before it was given anything (or before the saved queue was restored) leaves the file as
    // it was.
    let hadQueue = Locked(false)
    player.observe { snapshot, _ in
      if !snapshot.queue.isEmpty { hadQueue.withLock { $0 = true } }
    }

    // What is saved is the queue as it was when the player was told to end, before stopping
    // moved anything; and why it ended, for the interfaces that did not ask.
    let kept = Locked<(state: SavedState?, why: String)?>(nil)
    let end: @Sendable (String) -> Void = { why in
      let had = hadQueue.withLock { $0 }
      kept.withLock {
        $0 = $0 ?? (had ? SavedState.of(player.snapshot, now: monotonicNanoseconds()) : nil, why)
      }
      player.quit()
    }
    // Before the socket exists: whoever sees it may stop the player at once (detach.sh's
    // check did, on a loaded machine), and a signal that came between SIG_IGN and the source
    // was dropped, leaving a player no SIGTERM ended.
    let signals = [SIGINT, SIGTERM].map { s in
      signal(s, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
      source.setEventHandler {
        end("was stopped by signal \(s)")
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(5)) {
          HarkLog.write("still stopping 5 s after signal \(s); exiting anyway")
          _exit(128 + s)
        }
      }
      source.resume()
      return source
    }
    let service: PlayerService
    do {
      service = try PlayerService(
        player: player, at: endpoint, lines: lines, log: { HarkLog.write($0) },
        onQuit: { end("was quit from another interface") })
    } catch {
      HarkLog.write("the player does not start: \(error)")
      exit(1)
    }
    // Its session has no terminal: nothing sends SIGHUP on purpose.
    signal(SIGHUP, SIG_IGN)
    let forwarders = port?.connect(to: player) ?? []
    let mpris = startMPRIS(for: player)
    sleep.start(for: player)
    let running = Task { await player.run() }
    // Interfaces attach at once and draw (the queue follows when it is restored: 0.1 s to read
    // 50,000 paths, as long to restore them); what they ask is carried out once it is.
    service.start(holdingRequests: true)
    HarkLog.write("the player serves interfaces at '\(socket)'")
    var saved: SavedState?
    var stateDamaged = false
    if restore {
      switch stateFile?.load() ?? .missing {
      // An empty queue is one too: the user cleared it, and it comes back empty, with its
      // shuffle and repeat, not replaced by the music folder.
      case .restored(let s): saved = s
      case .damaged(let why):
        stateDamaged = true
        let message = PlayerMessage.savedQueueDamaged(
          file: stateFile?.path ?? "state.json", reason: why)
        HarkLog.write(message.description)
        service.announce(message)
      case .missing: break
      }
    }
    if let s = saved {
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
    service.takeRequests()
    if restore, saved == nil, let folder = queueFolder {
      // Nothing saved (or the file is damaged): the music folder, walked in the background (a
      // library of 50,000 tracks takes a second or two).
      startThread(named: "hark-queue") {
        let found = QueueLoader.load([folder]).files.map(Folder.absolute)
        Task { await player.perform(.add(found, play: false)) }
      }
    }
    await running.value

    var problem: String?
    let ended = kept.withLock { $0 }
    if let saved = ended?.state, let file = stateFile {
      if stateDamaged, let aside = file.setAside() {
        HarkLog.write("the damaged state file was moved to '\(aside)'")
      }
      do { try file.save(saved) } catch {
        // The queue the user had is in the old state file, untouched.
        let line =
          "cannot save the queue: \(error); the queue was not saved (the state file from before "
          + "is unchanged): free some space or fix that folder's permissions"
        HarkLog.write(line)
        problem = line
      }
    }
    service.end(why: ended?.why ?? "stopped", problem: problem)
    for s in signals { s.cancel() }
    sleep.stop()
    mpris?.close()
    for f in forwarders { f.cancel() }
    port?.session.close()
    exit(problem == nil ? 0 : 1)
  }
}
