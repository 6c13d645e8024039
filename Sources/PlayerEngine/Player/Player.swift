import AudioCore
import Glibc
import Platform
import PlayerCore
import SessionCore

/// How the player talks to its audio session: `AudioSession` in hark, a fake in tests.
public protocol PlayerSession: AnyObject, Sendable {
  /// Says what the player's audio means (G7).
  func setCategory(_ category: Category, mode: SessionMode, options: CategoryOptions)
    async throws
  /// Activates or deactivates. A refused activation throws `ActivationRefusal` (G10).
  func setActive(_ active: Bool) async throws
  /// Publishes the now-playing info and the enabled commands (G17–G19).
  func publish(_ info: PlaybackInfo?, commands: Set<RemoteCommandKind>) async
  /// Reports that the player's own output went away. True when the server took it and will
  /// answer with a route change (oldDeviceUnavailable) as for every real output event; false
  /// when the player must act on its own (no server).
  func outputLost(_ route: Route) async -> Bool
}

/// The music player: an `AudioEngine` driven by `PlayerCore`, the pure state machine that makes
/// every decision (G1–G20 of docs/MANNERS.md).
///
/// This class is the loop around the core and nothing more: everything that moves the player
/// (remote commands from any source, the user's edits, session events, the engine's events,
/// the clock) goes through one input queue, handled one at a time on one task (`run()`). Each
/// input is handed to the core with what the player sees now (the engine's snapshot, the
/// system volume, the clock), and the effects it returns are carried out in order; an effect
/// with an answer (an activation, a volume change) hands the answer back to the core at once.
/// Views read `snapshot` or `observe` changes.
public final class Player: @unchecked Sendable {
  /// What the player is built with.
  public struct Configuration: Sendable {
    /// How the engine reaches files and devices.
    public var engine: AudioEngine.Configuration
    /// G5's opt-in: resume when the lost output comes back.
    public var resumeOnReconnect = false
    /// The system volume of a device, or nil when it has none (G3).
    public var makeVolume: @Sendable (String) -> (any SystemVolume)?
    /// Seconds a plain seek forward or back moves.
    public var seekStep = 10.0
    /// Shuffle's seed; tests fix it.
    public var shuffleSeed: UInt64 = 0
    /// Folders whose files are spoken word (the config's `spoken_dirs`), beside the genre tag
    /// and the .m4b extension.
    public var spokenFolders: [String] = []
    /// How far spoken word steps back when it resumes after a prompt, so that the sentence is
    /// heard whole.
    public var spokenStepBack = 2.0
    /// Holds the machine's sleep back while playing (true) so that the player can pause first,
    /// and lets it go (false): logind's delay inhibitor. Called on the player's task when
    /// playing starts or stops.
    public var holdSleep: (@Sendable (Bool) -> Void)?
    /// The chapters of a file (`Chapter.ordered`; none when it has none or they cannot be
    /// read). Called on a thread of its own, never on the player's loop: FFmpeg's helper reads
    /// them. Nil: no track has chapters.
    public var readChapters: (@Sendable (String) -> [Chapter])?
    /// Where long recordings were left (the library index). Nil: no place is kept.
    public var places: (any PlaceStore)?
    /// How long a track must be to keep its place when it is not spoken word (seconds).
    public var longRecording = 1_200.0

    public init(
      engine: AudioEngine.Configuration,
      makeVolume: @escaping @Sendable (String) -> (any SystemVolume)? = { _ in nil }
    ) {
      self.engine = engine
      self.makeVolume = makeVolume
      var seed = timespec()
      clock_gettime(CLOCK_REALTIME, &seed)
      shuffleSeed = UInt64(truncatingIfNeeded: seed.tv_nsec) &+ UInt64(seed.tv_sec)
    }

    /// The core's part of it.
    var core: PlayerCore.Settings {
      var s = PlayerCore.Settings()
      s.resumeOnReconnect = resumeOnReconnect
      s.seekStep = seekStep
      s.spokenFolders = spokenFolders
      s.spokenStepBack = spokenStepBack
      s.shuffleSeed = shuffleSeed
      s.longRecording = longRecording
      return s
    }
  }

  private enum Input {
    case core(PlayerInput, reply: CheckedContinuation<CommandStatus, Never>?)
    /// The system volume of `device`, found off the player's task (opening a mixer can take as
    /// long as connecting to a sound server: not on the way to the first sample).
    case volume(VolumeBox, device: String)
  }

  private let configuration: Configuration
  private let session: any PlayerSession
  private let engine: AudioEngine
  /// The queue as the core last published it, for the decode thread to ask what follows.
  private let lookahead: Locked<PlayQueue>
  /// The speeds as the core last published them, for the decode thread to ask what speed a
  /// track it begins plays at.
  private let rates: Locked<RatePlan>
  private let state = Locked(PlayerSnapshot())
  private let observers = Locked<[@Sendable (PlayerSnapshot, [PlayerNotice]) -> Void]>([])
  private let inputs: AsyncStream<Input>
  private let continuation: AsyncStream<Input>.Continuation

  // The loop's own (its task only).
  private var core: PlayerCore
  private var volume: (any SystemVolume)?
  /// The device whose volume control is being looked for (`findVolume`), until it is found or
  /// known to have none.
  private var volumeSought: String?
  private var ticker: Task<Void, Never>?
  private var catchUp: Task<Void, Never>?
  private var engineEvents: Task<Void, Never>?
  private var answer: CommandStatus?
  private var finished = false
  /// Chapters are read here (only the newest asked for: the player has moved on from the
  /// others), places looked up and kept there, in order.
  private let chapterReader = SerialWorker(named: "hark-chapters", latestOnly: true)
  private let placeKeeper = SerialWorker(named: "hark-places")

  /// A player on `session`, with an empty queue; `run()` starts it.
  public init(configuration: Configuration, session: any PlayerSession) {
    self.configuration = configuration
    self.session = session
    core = PlayerCore(settings: configuration.core)
    let lookahead = Locked(core.queue)
    self.lookahead = lookahead
    let rates = Locked(RatePlan())
    self.rates = rates
    // Asked on the decode thread what follows a track, for gapless playback, and what speed a
    // track it begins plays at.
    engine = AudioEngine(
      configuration: configuration.engine,
      nextTrack: { track in lookahead.withLock { $0.track(after: track.id, automatic: true) } },
      rateOf: { track, metadata in
        rates.withLock { $0.rate(for: track.path, genre: metadata?.genre) }
      })
    (inputs, continuation) = AsyncStream.makeStream()
    findVolume(of: configuration.engine.deviceName)
  }

  /// Opens `device`'s mixer on a thread of its own; the player takes it when it comes.
  private func findVolume(of device: String) {
    volumeSought = device
    let make = configuration.makeVolume
    let c = continuation
    startThread {
      c.yield(.volume(VolumeBox(make(device)), device: device))
    }
  }

  // MARK: Talking to it (any thread)

  /// The player now.
  public var snapshot: PlayerSnapshot { state.withLock { $0 } }

  /// Calls `handler` after every change, on the player's task, with the new snapshot and what
  /// happened; it must return quickly (wake a view, post a signal).
  public func observe(_ handler: @escaping @Sendable (PlayerSnapshot, [PlayerNotice]) -> Void) {
    observers.withLock { $0.append(handler) }
  }

  /// Carries out a remote command (G17) and says how it went; a disabled one is refused and
  /// nothing else is done instead (G19).
  public func send(_ command: RemoteCommand) async -> CommandStatus {
    await withCheckedContinuation { continuation.yield(.core(.command(command), reply: $0)) }
  }

  /// Does what the user asked and returns when it is done.
  public func perform(_ action: PlayerAction) async {
    _ = await withCheckedContinuation { continuation.yield(.core(.action(action), reply: $0)) }
  }

  /// Hands over something the session server said.
  public func deliver(_ event: SessionEvent) {
    continuation.yield(.core(.session(event), reply: nil))
  }

  /// Tells the player what the session server said when it (re)connected: the current output
  /// and whether silent mode is on.
  public func connected(route: Route, silentMode: Bool) {
    continuation.yield(.core(.welcome(route: route, silentMode: silentMode), reply: nil))
  }

  /// The machine is going to sleep (true) or woke up (false).
  public func systemSleep(_ going: Bool) { continuation.yield(.core(.sleep(going), reply: nil)) }

  /// Ends `run()`: stops playing, deactivates, publishes that it stopped.
  public func quit() { continuation.yield(.core(.quit, reply: nil)) }

  // MARK: The loop

  /// Registers as a playback session and handles inputs until `quit()`. `files` are queued;
  /// with `autoplay` the first plays at once.
  public func run(files: [String] = [], autoplay: Bool = false) async {
    let events = engine.events
    let c = continuation
    engineEvents = Task {
      for await e in events {
        // A sound server's stream ends under the player right after the session server told it
        // why (the sink it played on went away, G5): let that news, which names the output
        // that went, arrive first; the engine has stopped writing already.
        if case .deviceLost = e { try? await Task.sleep(for: .milliseconds(100)) }
        c.yield(.core(.engine(e), reply: nil))
      }
    }
    await step(.start(files: files, autoplay: autoplay))
    for await input in inputs {
      switch input {
      case .core(let input, let reply):
        // A volume command while the output's control is still being looked for (just
        // started): looked for here, now, so that it is not answered "no volume control".
        if case .command(let command) = input, command.kind.isVolume, volume == nil,
          let device = volumeSought, device == engine.snapshot().deviceName
        {
          volume = configuration.makeVolume(device)
          volumeSought = nil
        }
        let status = await step(input)
        reply?.resume(returning: status ?? .success)
      case .volume(let box, let device):
        // (Not when a command found it first.)
        if device == engine.snapshot().deviceName, volumeSought == device {
          volume = box.volume
          volumeSought = nil
        }
        await step(.tick)
      }
      if finished { break }
    }
    ticker?.cancel()
    catchUp?.cancel()
    engineEvents?.cancel()
    continuation.finish()
    // The places kept as it quit are on disk before the process may exit.
    _ = placeKeeper.drain(limit: .seconds(5))
  }

  /// One outside input: the core's effects, carried out with their answers, then the step's
  /// end (the snapshot, the observers, what is published). Returns the command's answer.
  @discardableResult
  private func step(_ input: PlayerInput) async -> CommandStatus? {
    answer = nil
    await feed(input)
    if !finished {
      for effect in core.endStep(seeing: look()) { await carryOut(effect) }
    }
    return answer
  }

  /// What the core sees now.
  private func look() -> Observation {
    let level = volume.map {
      VolumeState(percent: $0.volumePercent, muted: $0.isMuted, canMute: $0.canMute)
    }
    return Observation(
      engine: engine.snapshot(), volume: level, volumeSought: volume == nil && volumeSought != nil,
      now: monotonicNanoseconds())
  }

  private func feed(_ input: PlayerInput) async {
    for effect in core.handle(input, seeing: look()) { await carryOut(effect) }
  }

  private func carryOut(_ effect: PlayerEffect) async {
    switch effect {
    case .engine(let command):
      switch command {
      case .load(let track, let seconds, let playing, let continuing):
        engine.load(track, at: seconds, playing: playing, continuing: continuing, wait: false)
      case .play: engine.play()
      case .pause: engine.pause()
      case .pauseAtOnce: engine.pauseAtOnce()
      case .stop: engine.stop()
      case .seek(let seconds): engine.seek(to: seconds)
      case .setRate(let rate): engine.setRate(rate)
      case .reopenOutput: engine.reopenOutput()
      case .setDucked(let ducked): engine.setDucked(ducked)
      case .fadeOut(let seconds): engine.fadeOut(over: seconds)
      case .endFade: engine.endFade()
      case .shutdown: engine.shutdown()
      }
    case .publishQueue(let queue):
      lookahead.withLock { $0 = queue }
    case .publishRates(let plan):
      rates.withLock { $0 = plan }
    case .keepRate(let folder, let rate):
      guard let store = configuration.places else { break }
      placeKeeper.run(coalescing: "rate:" + folder) { store.keepRate(rate, ofFolder: folder) }
    case .setCategory(let mode):
      do { try await session.setCategory(.playback, mode: mode, options: []) } catch {
        await feed(.registrationFailed("\(error)"))
      }
    case .activate:
      do {
        try await session.setActive(true)
        await feed(.activation(.granted))
      } catch let refusal as ActivationRefusal {
        await feed(.activation(.refused(refusal.description)))
      } catch {
        await feed(.activation(.failed("\(error)")))
      }
    case .deactivate:
      try? await session.setActive(false)
    case .reportOutputLost(let route):
      let taken = await session.outputLost(route)
      await feed(.outputLossAnswered(route, taken: taken))
    case .publish(let info, let commands):
      await session.publish(info, commands: commands)
    case .setVolume(let percent):
      var failure: String? = "the output has no volume control"
      if let volume {
        do {
          try volume.setVolume(percent: percent)
          failure = nil
        } catch { failure = "\(error)" }
      }
      await feed(.volumeAnswered(failure: failure, muting: false))
    case .setMuted(let muted):
      var failure: String? = "the output has no mute switch"
      if let volume {
        do {
          try volume.setMuted(muted)
          failure = nil
        } catch { failure = "\(error)" }
      }
      await feed(.volumeAnswered(failure: failure, muting: true))
    case .findVolume(let device):
      volume = nil
      findVolume(of: device)
    case .switchDevice(let name):
      switch engine.setDevice(name) {
      case .success: await feed(.deviceSwitched(name, failure: nil))
      case .failure(let error): await feed(.deviceSwitched(name, failure: error.message))
      }
    case .recheckLookahead:
      await feed(.lookaheadCheck)
    case .findChapters(let track):
      guard let read = configuration.readChapters else { break }
      let c = continuation
      chapterReader.run { c.yield(.core(.chaptersFound(track, read(track.path)), reply: nil)) }
    case .lookUpPlace(let track):
      guard let store = configuration.places else {
        await feed(.placeFound(track, nil))
        break
      }
      let c = continuation
      placeKeeper.run {
        let place = store.place(of: track.path)
        let rate = store.rate(ofFolder: RatePlan.collection(of: track.path))
        c.yield(.core(.placeFound(track, place, rate: rate), reply: nil))
      }
    case .keepPlace(let path, let place, let duration):
      guard let store = configuration.places else { break }
      placeKeeper.run(coalescing: path) { store.keep(place, of: path, duration: duration) }
    case .holdSleep(let hold):
      configuration.holdSleep?(hold)
    case .clock(let running):
      ticker?.cancel()
      ticker = nil
      if running {
        let c = continuation
        ticker = Task {
          while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            if !Task.isCancelled { c.yield(.core(.tick, reply: nil)) }
          }
        }
      }
    case .wake(let nanoseconds):
      let c = continuation
      catchUp?.cancel()
      catchUp = Task {
        try? await Task.sleep(for: .nanoseconds(nanoseconds))
        if !Task.isCancelled { c.yield(.core(.tick, reply: nil)) }
      }
    case .changed(let snap, let notices):
      state.withLock { $0 = snap }
      for o in observers.withLock({ $0 }) { o(snap, notices) }
    case .reply(let status):
      answer = status
    case .finish:
      finished = true
    }
  }
}

extension Player: PlayerConnection {
  /// The player lives as long as its process: it never goes away under a viewer in it.
  public func observeEnd(_ handler: @escaping @Sendable (String) -> Void) {}
}

/// A mixer on its way to the player's task (its C handle is used there only).
final class VolumeBox: @unchecked Sendable {
  let volume: (any SystemVolume)?
  init(_ volume: (any SystemVolume)?) { self.volume = volume }
}
