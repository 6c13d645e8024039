import ALSAOutput
import AudioCore
import Dispatch
import Glibc
import Loudness
import Platform
import PlayerEngine
import PlayerLink
import RemoteCommands
import SessionClient
import SessionCore

/// `hark play --no-ui`: the queue played as a full session client, one line per thing that
/// happens on stdout. Exits 0 when the queue has played to its end, 1 when nothing in it could
/// be played, 128 + the signal on SIGINT or SIGTERM (after stopping cleanly).
final class HeadlessPlayer {
  private let player: Player
  private let port: SessionPort?
  private let files: [String]
  private let exitStatus = FirstStatus()
  private let sleep: SleepLink
  private var signalSources: [any DispatchSourceSignal] = []

  init(
    files: [String], device: String, duckDecibels: Double, resumeOnReconnect: Bool,
    spokenFolders: [String] = [], replayGain: ReplayGainSettings = ReplayGainSettings(),
    session: AudioSession?
  ) {
    self.files = files
    port = session.map(SessionPort.init)
    var configuration = Player.Configuration(
      engine: .alsa(device: device, duckDecibels: duckDecibels, replayGain: replayGain),
      makeVolume: { Mixer(forDevice: $0) })
    configuration.resumeOnReconnect = resumeOnReconnect
    configuration.spokenFolders = spokenFolders
    let sleep = SleepLink()
    configuration.holdSleep = { sleep.hold($0) }
    self.sleep = sleep
    player = Player(configuration: configuration, session: port ?? LocalSession())
  }

  func run() async -> Int32 {
    let player = self.player
    let status = exitStatus
    let ending = Ending()
    let last = LastState()
    player.observe { snap, notices in
      // The user's pause and play, and stops, get a line of their own; the other changes of
      // state are said by the notices (an interruption, an unplugged output, a new track).
      let before = last.swap(snap.state)
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
          status.set(nothingPlayed ? 1 : 0)
          ending.set("played its queue to the end")
          player.quit()
        case .outputFailed(let line):
          // Nothing can be heard and no one is there to press play once the output is back:
          // say why and end, rather than wait for ever.
          say(line)
          status.set(1)
          ending.set("stopped: \(line)")
          player.quit()
        }
      }
    }
    for s in [SIGINT, SIGTERM] {
      signal(s, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
      source.setEventHandler {
        status.set(128 + s)
        ending.set("was stopped by signal \(s)")
        player.quit()
        // Stopping cleanly takes well under a second. Should anything on the way out hang (a
        // bus or a sound server that vanished mid-call), a signal still ends the process.
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(5)) {
          HarkLog.write("still stopping 5 s after signal \(s); exiting anyway")
          _exit(128 + s)
        }
      }
      source.resume()
      signalSources.append(source)
    }
    let forwarders = port?.connect(to: player) ?? []
    let mpris = startMPRIS(for: player)
    sleep.start(for: player)
    // The interface attaches to it as to its own player (they are one program): `hark` in a
    // terminal shows it, and q there ends it.
    let service = Self.serve(player) {
      say("quit from the interface")
      status.set(0)
      ending.set("was quit from an interface")
      player.quit()
    }
    await player.run(files: files, autoplay: true)
    service?.end(why: ending.why ?? "stopped")
    sleep.stop()
    mpris?.close()
    for f in forwarders { f.cancel() }
    port?.session.close()
    return exitStatus.value ?? 1
  }
}

extension HeadlessPlayer {
  /// Serves `player` where the user's player serves interfaces, when no other player does
  /// (a second one, `--new`, is reached through the session server and MPRIS only).
  static func serve(_ player: Player, onQuit: @escaping @Sendable () -> Void) -> PlayerService? {
    guard let paths = try? SessionPaths.fromEnvironment(), (try? paths.prepareDirectory()) != nil
    else { return nil }
    do {
      let endpoint = try PlayerService.bind(
        socketPath: paths.playerSocket, lockPath: paths.playerLock)
      let service = try PlayerService(
        player: player, at: endpoint, lines: [], log: { HarkLog.write($0) }, onQuit: onQuit)
      service.start()
      return service
    } catch {
      HarkLog.write("no interface can attach to this player: \(error)")
      return nil
    }
  }
}

/// Why the headless player ended, for an interface attached to it.
private final class Ending: Sendable {
  private let words = Locked<String?>(nil)
  func set(_ why: String) { words.withLock { $0 = $0 ?? why } }
  var why: String? { words.withLock { $0 } }
}

/// The state the last snapshot showed, for lines about changes.
private final class LastState: Sendable {
  private let state = Locked(PlaybackState.stopped)
  func swap(_ new: PlaybackState) -> PlaybackState {
    state.withLock { s in
      defer { s = new }
      return s
    }
  }
}

/// The first exit status set wins: a signal after the end of the queue does not change it.
private final class FirstStatus: Sendable {
  private let status = Locked<Int32?>(nil)
  func set(_ s: Int32) { status.withLock { $0 = $0 ?? s } }
  var value: Int32? { status.withLock { $0 } }
}

extension AudioEngine.Configuration {
  /// Files through libsndfile or FFmpeg's helper (`Decoders`), out through ALSA.
  /// `replayGain`: how tracks' gain tags are applied as they decode.
  static func alsa(
    device: String, duckDecibels: Double, replayGain: ReplayGainSettings = ReplayGainSettings()
  ) -> Self {
    var c = AudioEngine.Configuration(
      deviceName: device,
      openDecoder: { path throws(DecodeError) in try Decoders.open(path, replayGain: replayGain) },
      openOutput: { name, format in try PlaybackDevice(name: name, format: format) })
    c.duckGain = linearGain(decibels: duckDecibels)
    return c
  }
}

/// 83.4 → "1:23".
func formatTime(_ seconds: Double) -> String {
  clockTime(seconds: seconds.isFinite ? Int(seconds) : 0)
}

/// One line of output; names and tags in it come from files, so their control characters are
/// shown escaped (issue 16).
private func say(_ line: String) { print("hark: \(line.escapingControlCharacters)") }

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
