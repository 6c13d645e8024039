import ArgumentParser
import Dispatch
import Glibc
import SessionCore
import SessionClient

/// What a simulated app waits for.
enum AppInput {
  case event(SessionEvent)
  case command(IncomingCommand)
  /// SIGINT or SIGTERM: the app ends cleanly (a call hangs up).
  case signal(Int32)
  /// A deadline passed (internal to `SimulatedApp.next(until:)`).
  case wake
}

/// The shared frame of `hark call` and `hark simulate …`: a session, one line per thing that
/// happens on stdout (`<name>: <what>`), and one input queue for session events, remote commands
/// and signals.
final class SimulatedApp {
  let name: String
  let session: AudioSession
  /// The app's sound, unless `--no-sound`.
  let sound: AppSound?
  /// Silent mode (G2), as the server last said.
  private(set) var silentMode: Bool
  private var inputs: AsyncStream<AppInput>.Iterator
  private let continuation: AsyncStream<AppInput>.Continuation
  private var forwarders: [Task<Void, Never>] = []
  private var signalSources: [any DispatchSourceSignal] = []

  /// Connects to the session server (starting it if needed) or exits with the reason.
  static func start(_ name: String, sound: SoundOptions) async -> SimulatedApp {
    await start(name, sound: sound.noSound ? nil : AppSound(app: name, device: sound.device))
  }

  /// An app that makes no sound of its own (a recorder).
  static func start(_ name: String, sound: AppSound? = nil) async -> SimulatedApp {
    let role = role(of: name)
    StreamIdentity.announce(app: name, role: role)
    var configuration = AudioSession.Configuration(name: name)
    configuration.role = role.appRole
    let session: AudioSession
    do { session = try await AudioSession.connect(configuration) } catch {
      die(error.description)
    }
    return SimulatedApp(name: name, session: session, sound: sound)
  }

  /// What the sound server is told each simulated app's sound is.
  static func role(of name: String) -> StreamIdentity.Role {
    switch name {
    case "call": .call
    case "alarm": .alarm
    case "nav": .navigation
    case "game": .game
    case "assistant": .assistant
    default: .music
    }
  }

  private init(name: String, session: AudioSession, sound: AppSound?) {
    self.name = name
    self.session = session
    self.sound = sound
    silentMode = session.welcome.silent
    let (stream, continuation) = AsyncStream<AppInput>.makeStream()
    self.inputs = stream.makeAsyncIterator()
    self.continuation = continuation
    forwarders.append(
      Task { [session] in
        for await event in session.events { continuation.yield(.event(event)) }
      })
    forwarders.append(
      Task { [session] in
        for await command in session.commands { continuation.yield(.command(command)) }
      })
    for s in [SIGINT, SIGTERM] {
      signal(s, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
      source.setEventHandler { continuation.yield(.signal(s)) }
      source.resume()
      signalSources.append(source)
    }
  }

  /// Prints one line.
  func say(_ line: String) { print("\(name): \(line)") }

  /// The next input, or nil once `deadline` has passed. Events are printed as they arrive.
  func next(until deadline: ContinuousClock.Instant) async -> AppInput? {
    let timer = Task { [continuation] in
      do {
        try await Task.sleep(until: deadline, clock: .continuous)
        continuation.yield(.wake)
      } catch {}  // cancelled: the input came first
    }
    defer { timer.cancel() }
    while ContinuousClock.now < deadline {
      guard let input = await inputs.next() else { return nil }
      switch input {
      case .wake: continue  // an earlier timer's, or ours: the loop condition decides
      case .event(let event):
        say(Self.describe(event))
        switch event {
        case .ducking(let ducked): sound?.setDucked(ducked)
        case .silentMode(let on, let mutes):
          silentMode = on
          sound?.setMuted(mutes)
        case .mediaServicesWereReset: silentMode = session.welcome.silent
        case .interruption, .routeChange, .silenceSecondaryAudioHint, .nowPlaying, .sleepTimer,
          .sleepTimerEnded:
          break
        }
      case .command, .signal: break
      }
      return input
    }
    return nil
  }

  /// Sets the category or exits with the reason.
  func setCategory(
    _ category: Category, mode: SessionMode = .default, options: CategoryOptions = []
  ) async {
    do { try await session.setCategory(category, mode: mode, options: options) } catch {
      die("\(name): \(error)")
    }
  }

  /// Activates; on refusal prints why and returns false (G10).
  func activate() async -> Bool {
    do {
      try await session.setActive(true)
      return true
    } catch .refused(let reason) {
      say("cannot start: \(reason)")
      return false
    } catch {
      die("\(name): \(error)")
    }
  }

  func deactivate(notifyingOthers: Bool) async {
    do {
      try await session.setActive(
        false, options: notifyingOthers ? .notifyOthersOnDeactivation : [])
    } catch {
      say("could not deactivate: \(error)")
    }
  }

  /// Publishes the app's playback state (every app that plays does, G18).
  func publish(
    _ state: PlaybackState, title: String, pausedBy: PauseCause? = nil,
    commands: Set<RemoteCommandKind> = [], position: Double? = nil, duration: Double? = nil
  )
    async
  {
    let info = PlaybackInfo(
      state: state, title: title, artist: "hark simulate", duration: duration, position: position,
      rate: state == .playing ? 1 : 0, pausedBy: pausedBy)
    do { try await session.publish(info, commands: commands) } catch {
      say("could not publish: \(error)")
    }
  }

  /// Plays the freedesktop sound `soundName` (the theme's, else hark's own), once or looped.
  func play(sound soundName: String, loop: Bool, whenDone: (@Sendable () -> Void)? = nil) {
    guard let sound else { return }
    guard let path = AppSound.themed(soundName) else {
      say("no sound: no '\(soundName)' in the sound theme nor in hark's assets")
      return
    }
    sound.play(path, loop: loop, whenDone: whenDone)
  }

  /// Disconnects and exits.
  func finish(status: Int32 = 0) -> Never {
    sound?.close()
    session.close()
    exit(status)
  }

  /// One line for an event, worded for people and stable for tests.
  static func describe(_ event: SessionEvent) -> String {
    switch event {
    case .interruption(.began(let cause)):
      switch cause.kind {
      case .call: return "interruption began: call from '\(cause.by)'"
      case .otherAudio: return "interruption began: '\(cause.by)' took the audio"
      case .recording: return "interruption began: '\(cause.by)' is recording"
      case .alarm: return "interruption began: alarm '\(cause.by)'"
      case .assistant: return "interruption began: assistant '\(cause.by)'"
      case .navigation: return "interruption began: navigation prompt '\(cause.by)'"
      }
    case .interruption(.ended(let shouldResume, let reason)):
      let why =
        switch reason {
        case .interrupterDeactivated: ""
        case .interrupterExited: " (the interrupting app exited without ending it)"
        }
      return "interruption ended, \(shouldResume ? "should resume" : "should not resume")\(why)"
    case .routeChange(let change):
      return
        "route changed: \(change.previous.name) -> \(change.current.name) (\(change.reason.rawValue))"
    case .silenceSecondaryAudioHint(.begin):
      return "secondary audio hint: begin (another app's primary audio is playing)"
    case .silenceSecondaryAudioHint(.end):
      return "secondary audio hint: end"
    case .ducking(let ducked):
      return ducked ? "ducked (another app is speaking)" : "no longer ducked"
    case .silentMode(let on, let mutes):
      return on
        ? "silent mode on (\(mutes ? "mutes" : "does not mute") this app)" : "silent mode off"
    case .nowPlaying(let isNowPlaying):
      return isNowPlaying ? "now the now-playing app" : "no longer the now-playing app"
    case .mediaServicesWereReset:
      return "media services were reset; registered again"
    case .sleepTimer(let status):
      return status.map { "sleep timer: \($0.state.rawValue)" } ?? "sleep timer: off"
    case .sleepTimerEnded(let fade):
      return "the sleep timer ended (fade out over \(fade) s; a simulated app plays on)"
    }
  }
}

/// How a simulated app sounds: `--device` and `--no-sound`.
struct SoundOptions: ParsableArguments {
  @Option(
    help: ArgumentHelp(
      "The ALSA device its sound plays on; default: the config's, else 'default'.",
      valueName: "device"))
  var device: String?

  @Flag(help: "Play no sound; only the session and the printed lines.")
  var noSound = false
}

extension ContinuousClock.Instant {
  static func after(_ seconds: Seconds) -> ContinuousClock.Instant { .now + seconds.duration }
}
