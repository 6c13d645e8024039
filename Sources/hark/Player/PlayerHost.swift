import ALSAOutput
import AudioCore
import Dispatch
import Glibc
import Loudness
import MediaFiles
import Platform
import PlayerCore
import PlayerEngine
import PlayerLink
import PulseOutput
import RemoteCommands
import SessionClient
import SessionCore
import Settings
import StateFile
import UserText

/// A player's process, whichever way it runs: `hark play --no-ui` (headless: a line per event
/// on stdout, and it ends with its queue) and the interface's own player (`background-player`:
/// it restores the saved queue and saves it as it ends). Both are full session clients, serve
/// the interfaces that attach to them, take the media keys through MPRIS, pause before the
/// machine sleeps and count listens; the options say what differs. What the process does at
/// its start, on a signal, on a hang-up and at its end is written here once.
enum PlayerHost {
  struct Options {
    /// Queued at the start; with `autoplay` the first plays at once.
    var files: [String] = []
    var autoplay = false
    var device: String
    var duckDecibels: Double
    var settings: Settings
    /// Where interfaces attach.
    var serving: Serving
    /// Headless: a line per event on stdout; the end of the queue, or an output that will not
    /// open, ends the process (0 when something played, else 1); a signal ends it with 128 +
    /// the signal. Otherwise a signal ends it with 0 (after saving), and it plays on when the
    /// terminal that started it closes (its session has none: SIGHUP is ignored).
    var headless = false
    /// The saved queue (the user's player's): restored at the start when `restore`, and saved
    /// at the end once it has had a queue. Nil: neither.
    var stateFile: StateFile?
    var restore = false
    /// Queued (walked in the background) when there is no saved queue to restore.
    var queueFolder: String?
    /// Lines every interface that attaches is greeted with (what the player could not do).
    var lines: [String] = []
  }

  /// Where a player serves the interfaces that attach to it.
  enum Serving {
    /// At an endpoint taken before anything else (the interface's player: of two racing, one
    /// serves and the other ends at once, before it registers anywhere).
    case at(PlayerServiceEndpointBox)
    /// At the user's player's socket if no other player serves there (the headless player).
    case ifFree
  }

  /// Runs the player until it ends; its exit status.
  static func run(_ o: Options, session: AudioSession?) async -> Int32 {
    StreamIdentity.announce(app: "player", role: .music)
    silenceALSALibraryErrors()
    let port = session.map(SessionPort.init)
    var configuration = Player.Configuration(
      engine: .alsa(
        device: o.device, duckDecibels: o.duckDecibels,
        replayGain: o.settings.replayGainSettings),
      // ALSA's `default` that is no card plays on the sound server (`openOutput`): its volume
      // is the server's, through ALSA's pulse control, as an installed server's would be.
      makeVolume: { Mixer(forDevice: $0) ?? ($0 == "default" ? Mixer(forDevice: "pulse") : nil) })
    configuration.resumeOnReconnect = o.settings.resumeOnReconnect
    configuration.spokenFolders = o.settings.spokenFolders
    configuration.longRecording = o.settings.longRecordingMinutes * 60
    configuration.readChapters = { Decoders.chapters(of: $0) }
    configuration.places = IndexPlaces()
    let sleep = SleepLink()
    configuration.holdSleep = { sleep.hold($0) }
    let player = Player(configuration: configuration, session: port ?? LocalSession())
    let ending = Ending()
    let stateFile = o.stateFile
    var lines = o.lines
    if let problem = stateFile?.prepare() { lines.append(problem.capitalisedFirst) }
    // Saved at the end only once it has had a queue (restored, or given): a player that ends
    // before it was given anything (or before the saved queue was restored) leaves the file as
    // it was.
    let hadQueue = Locked(!o.files.isEmpty)
    if stateFile != nil {
      player.observe { snapshot, _ in
        if !snapshot.queue.isEmpty { hadQueue.withLock { $0 = true } }
      }
    }
    let service = Locked<PlayerService?>(nil)
    // Every way to end: what is saved is the queue as it was when the player was told to end,
    // before stopping moved anything; no interface attaches to a player on its way out (a
    // `hark` started now waits for the lock and starts a player of its own).
    let end: @Sendable (String, Int32) -> Void = { why, status in
      let keep = stateFile != nil && hadQueue.withLock { $0 }
      let snap = keep ? SavedState.of(player.snapshot, now: monotonicNanoseconds()) : nil
      guard ending.set(why: why, status: status, saving: snap) else { return }
      service.withLock { $0 }?.stopAccepting()
      player.quit()
    }
    // Before the socket exists: whoever sees it may stop the player at once, and a signal that
    // came between SIG_IGN and the source was dropped, leaving a player no SIGTERM ended.
    let signals = [SIGINT, SIGTERM].map { s in
      signal(s, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
      source.setEventHandler {
        end("was stopped by signal \(s)", o.headless ? 128 + s : 0)
        // Stopping cleanly takes well under a second. Should anything on the way out hang (a
        // bus or a sound server that vanished mid-call), a signal still ends the process.
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(5)) {
          HarkLog.write("still stopping 5 s after signal \(s); exiting anyway")
          _exit(o.headless ? 128 + s : 1)
        }
      }
      source.resume()
      return source
    }
    if !o.headless {
      // Its session has no terminal: nothing sends SIGHUP on purpose.
      signal(SIGHUP, SIG_IGN)
    }
    if o.headless { HeadlessLines.start(for: player, ending: end) }
    let onQuit: @Sendable () -> Void = {
      if o.headless { print("hark: quit from the interface") }
      end(o.headless ? "was quit from an interface" : "was quit from another interface", 0)
    }
    service.withLock {
      $0 = Self.serve(player, o.serving, lines: lines, onQuit: onQuit)
    }
    let forwarders = port?.connect(to: player) ?? []
    let mpris = startMPRIS(for: player)
    startListening(for: player, settings: o.settings)
    sleep.start(for: player)
    let running = Task { await player.run(files: o.files, autoplay: o.autoplay) }
    let serving = service.withLock { $0 }
    // Interfaces attach at once and draw; what they ask is carried out once the saved queue
    // is restored (0.1 s to read 50,000 paths, as long to restore them).
    serving?.start(holdingRequests: o.restore)
    // The file as it was at start is damaged: the first save sets it aside.
    let stateDamaged = Locked(false)
    var found = Restored.missing
    if o.restore {
      found = await Self.restore(player, from: stateFile, settings: o.settings, serving)
      stateDamaged.withLock { $0 = found == .damaged }
    }
    // Saved while it plays too, so that a crash loses little (`SaveSchedule`): kept from before
    // the requests held during the restore are let go (a `hark PATH`'s files), so that what they
    // change is saved.
    let keeper = stateFile.map {
      StateKeeper(
        player, in: $0, restored: found.state, damaged: stateDamaged, hadQueue: hadQueue)
    }
    if o.restore {
      serving?.takeRequests()
      if found.state == nil, let folder = o.queueFolder {
        // Nothing saved (or the file is damaged): the music folder, walked in the background (a
        // library of 50,000 tracks takes a second or two).
        startThread(named: "hark-queue") {
          let found = QueueLoader.load([folder]).files.map(QueueLoader.absolute)
          Task { await player.perform(.add(found, play: false)) }
        }
      }
    }
    await running.value
    keeper?.stop()

    var problem: String?
    let (why, status, saved) = ending.outcome
    if let saved, let file = stateFile {
      stateDamaged.withLock { damaged in
        if damaged, let aside = file.setAside() {
          HarkLog.write("the damaged state file was moved to '\(aside)'")
        }
        damaged = false
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
    // The lock goes last: a player starting meanwhile waits for the save, then restores it.
    serving?.end(why: why ?? "stopped", problem: problem)
    for s in signals { s.cancel() }
    sleep.stop()
    mpris?.close()
    for f in forwarders { f.cancel() }
    port?.session.close()
    if problem != nil { return 1 }
    return status ?? (o.headless ? 1 : 0)
  }

  private enum Restored: Equatable {
    case restored(SavedState)
    case damaged, missing

    /// What the player was given back.
    var state: SavedState? {
      if case .restored(let s) = self { s } else { nil }
    }
  }

  /// The saved queue into `player`, paused where it was (G1); the config's shuffle and repeat
  /// where nothing was saved. A damaged file is said, and set aside at the next save.
  private static func restore(
    _ player: Player, from stateFile: StateFile?, settings: Settings, _ service: PlayerService?
  ) async -> Restored {
    switch stateFile?.load() ?? .missing {
    // An empty queue is one too: the user cleared it, and it comes back empty, with its
    // shuffle and repeat, not replaced by the music folder.
    case .restored(let s):
      await player.perform(
        .restore(
          paths: s.queue, current: s.current, position: s.position, shuffle: s.shuffle,
          repeatMode: s.repeatMode))
      return .restored(s)
    case .damaged(let why):
      let message = PlayerMessage.savedQueueDamaged(
        file: stateFile?.path ?? "state.json", reason: why)
      HarkLog.write(message.description)
      service?.announce(message)
      await applyDefaults(settings, to: player)
      return .damaged
    case .missing:
      await applyDefaults(settings, to: player)
      return .missing
    }
  }

  /// The config's shuffle and repeat, where no saved queue says otherwise.
  private static func applyDefaults(_ settings: Settings, to player: Player) async {
    if settings.shuffle { await player.perform(.setShuffle(true)) }
    if let mode = RepeatMode(rawValue: settings.repeatMode), mode != .off {
      await player.perform(.setRepeat(mode))
    }
  }

  /// Serves `player` to the interfaces that attach, as `serving` says; nil (said in hark's log)
  /// when it cannot.
  private static func serve(
    _ player: Player, _ serving: Serving, lines: [String],
    onQuit: @escaping @Sendable () -> Void
  ) -> PlayerService? {
    do {
      switch serving {
      case .at(let box):
        guard let endpoint = box.take() else { return nil }
        return try PlayerService(
          player: player, at: endpoint, lines: lines, log: { HarkLog.write($0) }, onQuit: onQuit)
      case .ifFree:
        // A second player (`--new`) is reached through the session server and MPRIS only.
        guard let paths = try? SessionPaths.fromEnvironment(),
          (try? paths.prepareDirectory()) != nil
        else { return nil }
        let endpoint = try PlayerService.bind(
          socketPath: paths.playerSocket, lockPath: paths.playerLock)
        return try PlayerService(
          player: player, at: endpoint, lines: lines, log: { HarkLog.write($0) }, onQuit: onQuit)
      }
    } catch {
      HarkLog.write("no interface can attach to this player: \(error)")
      return nil
    }
  }
}

/// A bound endpoint on its way to the host (the endpoint cannot be copied).
final class PlayerServiceEndpointBox: @unchecked Sendable {
  private var endpoint: PlayerService.Endpoint?
  init(_ endpoint: consuming PlayerService.Endpoint) { self.endpoint = .some(endpoint) }
  func take() -> PlayerService.Endpoint? {
    endpoint.take()
  }
}

/// How the player ended: the first reason given wins (a signal after the end of the queue does
/// not change it), with the exit status and the queue to save, taken when it was told.
private final class Ending: Sendable {
  private let state = Locked<(why: String?, status: Int32?, saving: SavedState?)>(
    (nil, nil, nil))

  /// Records the end; false when it had ended already.
  func set(why: String, status: Int32, saving: SavedState?) -> Bool {
    state.withLock { s in
      guard s.why == nil else { return false }
      s = (why, status, saving)
      return true
    }
  }

  var outcome: (why: String?, status: Int32?, saving: SavedState?) { state.withLock { $0 } }
}

/// The headless player's output: one line per thing that happens, on stdout, and its end at
/// the end of the queue (or when the output will not open: no one is there to press play).
enum HeadlessLines {
  static func start(for player: Player, ending end: @escaping @Sendable (String, Int32) -> Void) {
    let last = Locked(PlaybackState.stopped)
    player.observe { snap, notices in
      // The user's pause and play, and stops, get a line of their own; the other changes of
      // state are said by the notices (an interruption, an unplugged output, a new track).
      let before = last.withLock { s in
        defer { s = snap.state }
        return s
      }
      let newTrack = notices.contains {
        switch $0 {
        case .nowPlaying: true
        case .message(let m): m.isResume
        case .seeked, .queueEnded, .couldNotPlay, .outputFailed: false
        }
      }
      switch (before, snap.state) {
      case (.playing, .paused) where snap.pausedBy == .user:
        say("paused at \(formatTime(snap.position))")
      case (.paused, .playing) where !newTrack:
        say("playing from \(formatTime(snap.position))")
      case (.playing, .stopped), (.paused, .stopped):
        if !notices.contains(where: { if case .queueEnded = $0 { true } else { false } }) {
          say("stopped")
        }
      default: break
      }
      for notice in notices {
        switch notice {
        case .nowPlaying(let track):
          let n = (snap.playOrder.firstIndex { $0.id == track.id } ?? 0) + 1
          // Of the queue as it is now: files handed over from elsewhere count.
          let total = snap.playOrder.count
          let title = snap.title ?? QueueLoader.title(fromPath: track.path)
          // The ReplayGain it plays at, when one is applied.
          let gain = snap.current == track ? snap.metadata.replayGain : nil
          let rg = gain.map { ", ReplayGain " + String(format1: $0) + " dB" } ?? ""
          say("playing '\(title)' (\(n)/\(total)\(rg))")
        case .message(let message):
          say(message.description)
        case .couldNotPlay(_, let line):
          say(line)
        case .seeked(let position):
          say("at \(formatTime(position))")
        case .queueEnded(let nothingPlayed):
          // When the last of it has been heard, before the process winds down.
          if !nothingPlayed { say("end of the queue") }
          end("played its queue to the end", nothingPlayed ? 1 : 0)
        case .outputFailed(let line):
          // Nothing can be heard and no one is there to press play once the output is back:
          // say why and end, rather than wait for ever.
          say(line)
          end("stopped: \(line)", 1)
        }
      }
    }
  }

  /// One line of output; names and tags in it come from files, so their control characters
  /// are shown escaped.
  private static func say(_ line: String) { print("hark: \(line.escapingControlCharacters)") }
}

extension AudioEngine.Configuration {
  /// Files through libsndfile or FFmpeg's helper (`Decoders`), out through ALSA, or through
  /// libpulse where ALSA would only hand them on to the sound server (`SoundServerDevice`).
  /// `replayGain`: how tracks' gain tags are applied as they decode.
  static func alsa(
    device: String, duckDecibels: Double, replayGain: ReplayGainSettings = ReplayGainSettings()
  ) -> Self {
    var c = AudioEngine.Configuration(
      deviceName: device,
      openDecoder: { path throws(DecodeError) in try Decoders.open(path, replayGain: replayGain) },
      openOutput: { name, format in
        try openOutput(
          name, format, ringSamples: AudioEngine.Configuration.defaultRingSamples)
      })
    c.duckGain = linearGain(decibels: duckDecibels)
    return c
  }

  /// A device ALSA defines as PulseAudio's plugin (`pulse`, `default` on a PulseAudio
  /// desktop) is played through libpulse itself: no plugin thread, a long buffer whose
  /// contents a duck or a pause's fade-out rewrites (PulseStream; docs/PERFORMANCE.md), at a
  /// third of the plugin's CPU. Every other device through ALSA; those too with
  /// `$HARK_SOUND_SERVER_OUTPUT=alsa`, ALSA's plugin as before (a short buffer, never taken
  /// back: a pause through it is cut, not ramped).
  static func openOutput(_ name: String, _ format: PCMFormat, ringSamples: Int) throws
    -> any AudioOutput
  {
    if playsThroughLibpulse(environment("HARK_SOUND_SERVER_OUTPUT")),
      let server = SoundServerDevice.behind(name)
    {
      return try PulseStream(
        deviceName: name, sink: server.sink, format: format,
        latency: soundServerLatency(format, ringSamples: ringSamples))
    }
    do {
      return try PlaybackDevice(name: name, format: format)
    } catch let error as ALSAError
      where playsThroughSoundServerInstead(
        name, code: error.code, environment("HARK_SOUND_SERVER_OUTPUT"))
    {
      // ALSA's `default` is a sound card this machine does not have (alsa-lib's own default,
      // hw:0, on a machine with no card), while a sound server may run: a server unpacked or
      // started by hand rather than installed leaves ALSA's configuration as it was, where an
      // installed PulseAudio or pipewire-alsa sends `default` to itself. Played where that
      // configuration would send it, the server's default sink; the card's error stands when
      // no server answers either.
      guard
        let stream = try? PulseStream(
          deviceName: name, format: format,
          latency: soundServerLatency(format, ringSamples: ringSamples))
      else { throw error }
      return stream
    }
  }

  /// Whether an ALSA device that would not open (with `code`, a negative errno) is played on
  /// the sound server instead: only `default`, only when it is not there at all (ENOENT: no
  /// such card; a card that is busy or refuses stays an error), and only where the sound
  /// server is played through libpulse (`setting`, as for `playsThroughLibpulse`).
  static func playsThroughSoundServerInstead(_ name: String, code: Int32, _ setting: String?)
    -> Bool
  {
    name == "default" && code == -ENOENT && playsThroughLibpulse(setting)
  }

  /// Whether the sound server is played through libpulse, given `$HARK_SOUND_SERVER_OUTPUT`
  /// (`setting`): unless it says `alsa`.
  static func playsThroughLibpulse(_ setting: String?) -> Bool { setting != "alsa" }

  /// The sound server's buffer: PulseStream's half second, but never more than half the
  /// engine's ring, so that what the server holds (not yet heard, so kept in the ring to be
  /// written again at a new gain or after a pause) leaves the decoder room: 0.34 s at 96 kHz
  /// stereo, 0.23 s at 48 kHz 5.1. A device holding most of the ring starves the render thread,
  /// which then wakes every 5 ms for what little the decoder can add (measured at 48 kHz stereo
  /// with a 1 s buffer: 150 wakeups a second instead of 9).
  static func soundServerLatency(_ format: PCMFormat, ringSamples: Int) -> Duration {
    let half = Double(ringSamples / 2 / format.channels) / Double(format.sampleRate)
    return min(PulseStream.defaultLatency, .microseconds(Int64(half * 1e6)))
  }
}

/// 83.4 → "1:23".
func formatTime(_ seconds: Double) -> String {
  clockTime(seconds: seconds.isFinite ? Int(seconds) : 0)
}

/// MPRIS for `player`, or nil (said once in hark's log, not on screen) without a session bus.
func startMPRIS(for player: Player) -> MPRISBridge? {
  do { return try MPRISBridge(player: player) } catch {
    HarkLog.write("no MPRIS: \(error)")
    return nil
  }
}

extension String {
  /// "-6.5", "+2.0": signed, one decimal.
  init(format1 value: Double) {
    let tenths = Int((abs(value) * 10).rounded())
    self = (value < 0 && tenths > 0 ? "-" : "+") + "\(tenths / 10).\(tenths % 10)"
  }
}
