import AudioCore
import Glibc
import Platform
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

/// The music player: a queue, an `AudioEngine`, and the manners (G1–G20 of docs/MANNERS.md)
/// that decide when it plays.
///
/// Everything that moves it — remote commands from any source, the user's edits, session
/// events, the engine's events — goes through one input queue, handled one at a time on one
/// task (`run()`), so its state needs no locks. Views read `snapshot` or `observe` changes.
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
  }

  /// What the user can do besides remote commands.
  public enum Action: Sendable, Equatable, Codable {
    /// Adds files at the end of the queue; `play` starts the first of them at once.
    case add([String], play: Bool)
    /// Files handed over from another terminal (`hark play`, `hark add`), placed as asked;
    /// `.now` plays the first of them at once (activating, as a user's play does).
    case insert([String], at: QueuePlacement)
    case remove(entry: Int)
    case move(entry: Int, to: Int)
    case clear
    /// The queue becomes `paths` and the one at `start` plays (a tap on a song in an album);
    /// said, with how many were there before, and undone by `undo`.
    case replace([String], start: Int)
    /// Shuffles the queue's own order once (shuffle mode aside).
    case shuffleOnce
    /// Brings the queue back as it was before the last edit (add, remove, move, clear,
    /// replace, shuffle once, files handed over).
    case undo
    /// The track playing is spoken word (a prompt pauses it) or music (a prompt ducks it),
    /// whatever its tags say, for as long as the player runs.
    case toggleSpoken
    /// Plays this entry from its start.
    case playEntry(Int)
    case setShuffle(Bool)
    case setRepeat(RepeatMode)
    /// Sets the system volume (MPRIS's Volume property).
    case setVolume(percent: Double)
    /// Moves playback to another output without a pause (G6).
    case selectDevice(String)
    /// Replaces the queue with `paths` (a saved session) and loads entry `current` paused at
    /// `position`, as if the user had paused there.
    case restore(
      paths: [String], current: Int?, position: Double, shuffle: Bool, repeatMode: RepeatMode)
  }

  private enum Input {
    case command(RemoteCommand, CheckedContinuation<CommandStatus, Never>?)
    case action(Action, CheckedContinuation<Void, Never>?)
    case session(SessionEvent)
    case welcome(route: Route, silentMode: Bool)
    case engine(EngineEvent)
    /// The system volume of `device`, found off the player's task (opening a mixer can take as
    /// long as connecting to a sound server: not on the way to the first sample).
    case volume(VolumeBox, device: String)
    case tick
    /// The machine is going to sleep (true) or woke up (false).
    case sleep(Bool)
    case quit
  }

  private let configuration: Configuration
  private let session: any PlayerSession
  private let engine: AudioEngine
  private let queue: Locked<PlayQueue>
  private var policy = PlaybackPolicy()
  private var volume: (any SystemVolume)?
  private let state = Locked(PlayerSnapshot())
  private let observers = Locked<[@Sendable (PlayerSnapshot, [PlayerNotice]) -> Void]>([])
  private let inputs: AsyncStream<Input>
  private let continuation: AsyncStream<Input>.Continuation
  private var ticker: Task<Void, Never>?
  private var engineEvents: Task<Void, Never>?

  // The loop's own state.
  private var notices: [PlayerNotice] = []
  /// The queue before each of the user's last edits, and where its current entry was heard,
  /// newest last: `undo` takes them back one by one.
  private var history: [(queue: PlayQueue, position: Double)] = []
  private static let historyDepth = 50
  private var failed: [Int: String] = [:]
  private var playedSomething = false
  private var startTarget: QueuedTrack?
  /// The first entry of `run(files:autoplay:)`, loaded paused before the session server is
  /// asked for the audio, so that its file and the output open during those round trips
  /// rather than after them; the first activation then plays what the engine holds (it, or
  /// the first after it that opened). Until that activation is asked for.
  private var preloaded: QueuedTrack?
  /// The engine's word that it holds the preloaded entry is still to come.
  private var preloadToBeHeard = false
  /// What the engine said it holds when that first activation was refused (a call): said when
  /// it plays, not while it waits.
  private var preloadHeard: QueuedTrack?
  private var published: (PlaybackInfo, Set<RemoteCommandKind>)?
  private var publishedAt: UInt64 = 0
  /// A seek or a load since the last publish: the position may go back; otherwise it never
  /// does in what is published (see `publish`).
  private var positionJumped = false
  /// Where a load asked the engine to begin a track (a restored queue, a replan), shown as its
  /// position while the file opens.
  private var requestedStart: (id: Int, seconds: Double)?
  /// Wakes the loop once the position heard has caught up with one published ahead of it.
  private var catchUp: Task<Void, Never>?
  private var route: Route?
  private var ducked = false
  private var silentMode = false
  private var problem: PlayerProblem?
  /// Files skipped since a track was last heard: the problem line counts them, and it stays
  /// up through the track heard after them (a skip happens in a blink; the line must not).
  private var skippedInARow = 0
  private var problemOutlivesNextTrack = false
  private var lostRoute: Route?
  private var interruption: InterruptionCause?
  /// What the session server last said: whether this player is the now-playing app.
  private var nowPlaying = false
  /// The track heard is spoken word, and the session says so (spokenAudio): a navigation
  /// prompt pauses it instead of ducking it, and it steps back a little when it resumes.
  private var spoken = false
  /// The queue played to its end: play starts it again from its first entry (the engine still
  /// holds the last track, stopped at its end).
  private var queueEnded = false
  /// Paused because the machine went to sleep (until it plays again).
  private var sleptWhilePlaying = false
  /// What `holdSleep` was last told.
  private var holdingSleep = false
  /// What the live stream heard last said: its title and why it is reconnecting, if it is.
  private var stream: (track: QueuedTrack, title: String?, reconnecting: String?)?
  /// Tracks the user said are spoken word (true) or music (false), by path.
  private var spokenOverrides: [String: Bool] = [:]

  /// A player on `session`, with an empty queue; `run()` starts it.
  public init(configuration: Configuration, session: any PlayerSession) {
    self.configuration = configuration
    self.session = session
    let queue = Locked(PlayQueue(seed: configuration.shuffleSeed))
    self.queue = queue
    policy.resumeOnReconnect = configuration.resumeOnReconnect
    // Asked on the decode thread what follows a track, for gapless playback.
    engine = AudioEngine(configuration: configuration.engine) { track in
      queue.withLock { $0.track(after: track.id, automatic: true) }
    }
    (inputs, continuation) = AsyncStream.makeStream()
    findVolume(of: configuration.engine.deviceName)
  }

  /// Opens `device`'s mixer on a thread of its own; the player takes it when it comes.
  private func findVolume(of device: String) {
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
    await withCheckedContinuation { continuation.yield(.command(command, $0)) }
  }

  /// Does what the user asked and returns when it is done.
  public func perform(_ action: Action) async {
    await withCheckedContinuation { continuation.yield(.action(action, $0)) }
  }

  /// Hands over something the session server said.
  public func deliver(_ event: SessionEvent) { continuation.yield(.session(event)) }

  /// Tells the player what the session server said when it (re)connected: the current output
  /// and whether silent mode is on.
  public func connected(route: Route, silentMode: Bool) {
    continuation.yield(.welcome(route: route, silentMode: silentMode))
  }

  /// The machine is going to sleep (true) or woke up (false): see `handleSleep`.
  public func systemSleep(_ going: Bool) { continuation.yield(.sleep(going)) }

  /// Ends `run()`: stops playing, deactivates, publishes that it stopped.
  public func quit() { continuation.yield(.quit) }

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
        c.yield(.engine(e))
      }
    }
    if !files.isEmpty {
      queue.withLock { q in
        q.add(files)
        q.setCurrent(q.first?.id)
      }
    }
    // Paused: nothing is heard before the activation is granted (G10), but the file and the
    // output are open by then (see `preloaded`). Not a station: one that waited for a refused
    // activation would start from what it sent back then.
    if autoplay, let first = queue.withLock({ $0.current ?? $0.first }),
      !QueueLoader.isStreamURL(first.path)
    {
      engine.load(first, playing: false, wait: false)
      preloaded = first
      preloadToBeHeard = true
      positionJumped = true
    }
    do { try await session.setCategory(.playback, mode: .default, options: []) } catch {
      say(.cannotRegister("\(error)"))
    }
    refresh()
    if autoplay && !files.isEmpty { await carryOut(policy.userPlay()) }
    await finishStep()
    for await input in inputs {
      switch input {
      case .command(let command, let reply):
        let status = await handle(command)
        await finishStep()  // so that whoever asked sees the outcome in `snapshot`
        reply?.resume(returning: status)
        continue
      case .action(let action, let reply):
        await handle(action)
        await finishStep()
        reply?.resume()
        continue
      case .session(let event): await handle(event)
      case .welcome(let r, let silent):
        route = r
        silentMode = silent
      case .engine(let event): await handle(event)
      case .volume(let box, let device):
        if device == engine.snapshot().deviceName { volume = box.volume }
      case .tick: break
      case .sleep(let going): await handleSleep(going)
      case .quit:
        await shutDown()
        return
      }
      await finishStep()
    }
  }

  private func shutDown() async {
    ticker?.cancel()
    engine.stop()
    policy.stopped()
    try? await session.setActive(false)
    refresh()
    await session.publish(PlaybackInfo(state: .stopped), commands: [])
    engine.shutdown()
    engineEvents?.cancel()
    continuation.finish()
  }

  /// After each input: take a new snapshot, tell the observers, publish, keep the clock right.
  private func finishStep() async {
    refresh()
    let snap = snapshot
    let told = notices
    notices = []
    for o in observers.withLock({ $0 }) { o(snap, told) }
    await publish(snap)
    // A clock only while playing: the position moves and `previous` changes meaning at 3 s.
    // Paused or stopped, nothing moves and nothing polls.
    // Sleep is held back only while playing, and let go the moment playing stops.
    if let hold = configuration.holdSleep, (snap.state == .playing) != holdingSleep {
      holdingSleep = snap.state == .playing
      hold(holdingSleep)
    }
    if snap.state == .playing { sleptWhilePlaying = false }
    if snap.state == .playing, ticker == nil {
      let c = continuation
      ticker = Task {
        while !Task.isCancelled {
          try? await Task.sleep(for: .seconds(1))
          c.yield(.tick)
        }
      }
    } else if snap.state != .playing, let t = ticker {
      t.cancel()
      ticker = nil
    }
  }

  // MARK: Remote commands

  /// A play just asked for was refused by the session server (a call is in progress, G10):
  /// the command was not carried out, and its sender is told so (`hark ctl` exits 1).
  private var refusedToPlay: Bool {
    guard case .activationRefused = problem else { return false }
    return !policy.isPlaying
  }

  private func handle(_ command: RemoteCommand) async -> CommandStatus {
    let snap = snapshot
    guard snap.enabledCommands.contains(command.kind) else {
      return queue.withLock(\.isEmpty) ? .noSuchContent : .commandDisabled
    }
    let engineNow = engine.snapshot()
    switch command {
    case .play:
      await carryOut(policy.userPlay())
      if refusedToPlay { return .commandDisabled }
    case .pause:
      await carryOut(policy.userPause())
    case .togglePlayPause:
      await carryOut(policy.isPlaying ? policy.userPause() : policy.userPlay())
      if refusedToPlay { return .commandDisabled }
    case .stop:
      await stop()
    case .nextTrack:
      guard let current = queue.withLock(\.currentID),
        let next = queue.withLock({ $0.track(after: current, automatic: false) })
      else { return .commandDisabled }
      await go(to: next)
    case .previousTrack:
      let current = queue.withLock(\.currentID)
      if engineNow.track != nil && engineNow.isSeekable && engineNow.position > 3 {
        seek(to: 0)
      } else if let current, let before = queue.withLock({ $0.track(before: current) }) {
        await go(to: before)
      } else {
        seek(to: 0)
      }
    case .seekForward:
      seek(to: engineNow.position + configuration.seekStep)
    case .seekBackward:
      seek(to: max(0, engineNow.position - configuration.seekStep))
    case .skipForward(let s):
      seek(to: engineNow.position + s)
    case .skipBackward(let s):
      seek(to: max(0, engineNow.position - s))
    case .changePlaybackPosition(let s):
      seek(to: s)
    case .volumeUp(let p), .volumeDown(let p):
      guard let volume else { return .commandDisabled }
      let sign: Double = command.kind == .volumeUp ? 1 : -1
      do { try volume.setVolume(percent: volume.volumePercent + sign * p) } catch {
        say(.volumeChangeFailed("\(error)"))
        return .commandFailed
      }
    case .mute:
      guard let volume, volume.canMute else { return .commandDisabled }
      do { try volume.setMuted(!volume.isMuted) } catch {
        say(.muteFailed("\(error)"))
        return .commandFailed
      }
    }
    return .success
  }

  /// Makes `track` current: plays it if playing, else loads it paused at its start.
  private func go(to track: QueuedTrack) async {
    queue.withLock { _ = $0.setCurrent(track.id) }
    switch policy.phase {
    case .playing:
      engine.load(track, playing: true, wait: false)
      positionJumped = true
    case .paused, .interrupted:
      engine.load(track, playing: false, wait: false)
      positionJumped = true
    case .stopped:
      break  // the next play starts it
    }
  }

  private func seek(to seconds: Double) {
    let now = engine.snapshot()
    guard now.track != nil, now.isSeekable else { return }
    let target = now.duration.map { min(seconds, max(0, $0 - 0.05)) } ?? seconds
    engine.seek(to: target)
    positionJumped = true
    let after = engine.snapshot()
    if after.track == nil, let track = now.track, after.loading == track {
      // Opening afresh (the decoder had moved on to the next track) and slow to: where it
      // will be, as for a load.
      requestedStart = (track.id, target)
      notices.append(.seeked(target))
    } else {
      notices.append(.seeked(after.position))
    }
  }

  private func stop() async {
    engine.stop()
    policy.stopped()
    interruption = nil
    try? await session.setActive(false)
  }

  // MARK: The user's actions

  private func handle(_ action: Action) async {
    switch action {
    case .add, .insert, .remove, .move, .clear, .replace, .shuffleOnce:
      remember()
    case .playEntry, .setShuffle, .setRepeat, .setVolume, .selectDevice, .restore, .undo,
      .toggleSpoken:
      break
    }
    switch action {
    case .add(let paths, let play):
      let added = queue.withLock { q -> [QueuedTrack] in
        let added = q.add(paths)
        if q.currentID == nil { q.setCurrent(added.first?.id) }
        return added
      }
      if play, let first = added.first { await start(first) }
      replanIfNeeded()
    case .insert(let paths, let placement):
      let added = queue.withLock { q -> [QueuedTrack] in
        let added = q.insert(paths, at: placement)
        if q.currentID == nil { q.setCurrent(added.first?.id) }
        return added
      }
      if placement == .now, let first = added.first {
        await start(first)
      } else if let first = added.first {
        say(.handedOver(count: added.count, first: first.path, placement: placement))
      }
      replanIfNeeded()
    case .remove(let id):
      let (wasCurrent, next) = queue.withLock { q in
        (q.currentID == id, q.track(after: id, automatic: false))
      }
      queue.withLock { _ = $0.remove(id) }
      if wasCurrent {
        if let next {
          queue.withLock { _ = $0.setCurrent(next.id) }
          if engineHasATrack { await go(to: next) }
        } else {
          await stop()
          queue.withLock { q in _ = q.setCurrent(q.first?.id) }
        }
      }
      replanIfNeeded()
    case .move(let id, let index):
      queue.withLock { $0.move(id, to: index) }
      replanIfNeeded()
    case .clear:
      let count = queue.withLock(\.count)
      await stop()
      queue.withLock { $0.clear() }
      if count > 0 { say(.queueCleared(count: count)) }
    case .replace(let paths, let first):
      let before = queue.withLock(\.count)
      let added = queue.withLock { q -> [QueuedTrack] in
        q.clear()
        return q.add(paths)
      }
      guard added.indices.contains(first) else { return }
      await start(added[first])
      if before > 0 { say(.queueReplaced(count: added.count, was: before)) }
    case .shuffleOnce:
      queue.withLock { $0.shuffleOnce() }
      replanIfNeeded()
    case .undo:
      await undo()
    case .toggleSpoken:
      guard let track = engine.snapshot().track ?? queue.withLock(\.current) else { return }
      spokenOverrides[track.path] = !spoken
      await tellWhetherSpoken(track)
      say(.spokenWord(spoken, title: snapshot.title ?? fileName(track.path)))
    case .playEntry(let id):
      guard let t = queue.withLock({ $0.entry(id) }) else { return }
      await start(t)
    case .setShuffle(let on):
      queue.withLock { $0.setShuffle(on) }
      replanIfNeeded()
    case .setRepeat(let mode):
      queue.withLock { $0.repeatMode = mode }
      replanIfNeeded()
    case .setVolume(let percent):
      do { try volume?.setVolume(percent: percent) } catch {
        say(.volumeChangeFailed("\(error)"))
      }
    case .selectDevice(let name):
      switch engine.setDevice(name) {
      case .success:
        volume = nil
        findVolume(of: name)
        say(.playingOn(name))
      case .failure(let error):
        say(
          .outputRefused(
            name, reason: error.message, stayingOn: engine.snapshot().deviceName))
      }
    case .restore(let paths, let current, let position, let shuffle, let repeatMode):
      if engineHasATrack || policy.phase != .stopped { await stop() }
      let target = queue.withLock { q -> QueuedTrack? in
        q.clear()
        let added = q.add(paths)
        q.repeatMode = repeatMode
        let t = current.flatMap { added.indices.contains($0) ? added[$0] : nil } ?? added.first
        q.setCurrent(t?.id)
        q.setShuffle(shuffle)
        return t
      }
      guard let target else { return }
      engine.load(target, at: position, playing: false, wait: false)
      requestedStart = (target.id, position)
      positionJumped = true
      // The policy reaches "paused by the user" through playing. Nothing was started, so that
      // pause's effects (stop the output, deactivate) are already true and are not carried out.
      policy.started()
      _ = policy.userPause()
    }
  }

  /// Keeps the queue as it is now for `undo`, before an edit.
  private func remember() {
    let position = engine.snapshot().position
    history.append((queue.withLock { $0.kept }, position))
    // 50 edits back, and no more than 200 000 entries kept in all (a long queue edited often
    // would otherwise hold many copies of itself).
    while history.count > Self.historyDepth
      || history.reduce(0, { $0 + $1.queue.count }) > 200_000 && history.count > 1
    {
      history.removeFirst()
    }
  }

  /// The queue as it was before the last edit. What is playing goes on if it is in it;
  /// otherwise the current entry it had comes back where it was heard, playing or paused as
  /// the player is now.
  private func undo() async {
    guard let (earlier, position) = history.popLast() else {
      say(.nothingToUndo)
      return
    }
    let heard = engine.snapshot().track
    let target = queue.withLock { q -> QueuedTrack? in
      q.restore(earlier)
      if let heard, q.entry(heard.id) == heard {
        q.setCurrent(heard.id)
        return nil
      }
      return q.current
    }
    say(.undone(count: earlier.count))
    guard let target else {
      replanIfNeeded()
      return
    }
    switch policy.phase {
    case .playing:
      engine.load(target, at: position, playing: true, wait: false)
    case .paused, .interrupted:
      engine.load(target, at: position, playing: false, wait: false)
    case .stopped:
      return
    }
    requestedStart = (target.id, position)
    positionJumped = true
  }

  /// Plays `track` from its start, activating the session first (G10 may refuse).
  private func start(_ track: QueuedTrack) async {
    queue.withLock { _ = $0.setCurrent(track.id) }
    if policy.isPlaying {
      engine.load(track, playing: true, wait: false)
      positionJumped = true
      return
    }
    startTarget = track
    await carryOut(policy.userPlay())
    startTarget = nil
  }

  /// After an edit of the queue: if the engine has already lined up something else than what
  /// now follows the track being heard, line up the right one (from where it is heard).
  private func replanIfNeeded() {
    let now = engine.snapshot()
    guard let heard = now.track else { return }
    let wanted = queue.withLock { $0.track(after: heard.id, automatic: true) }
    switch now.lookahead {
    case .undecided: return
    case .next(let t) where t == wanted: return
    case .end where wanted == nil: return
    case .next, .end:
      engine.load(
        heard, at: now.position, playing: now.state == .playing, continuing: true, wait: false)
      requestedStart = (heard.id, now.position)
      positionJumped = true
    }
  }

  // MARK: Session events

  private func handle(_ event: SessionEvent) async {
    switch event {
    case .interruption(.began(let cause)):
      interruption = cause
      var effects = policy.interruptionBegan(cause)
      if spoken && cause.kind == .otherAudio {
        // Spoken word paused for a prompt (which mixes with music, but not with words).
        effects = effects.map {
          if case .say(.interrupted) = $0 { .say(.pausedForPrompt(cause.by)) } else { $0 }
        }
      }
      await carryOut(effects)
    case .interruption(.ended(let shouldResume, let reason)):
      let by = interruption?.by
      let effects = policy.interruptionEnded(shouldResume: shouldResume, reason: reason)
      if spoken, effects.contains(.activateAndPlay), let heard = engine.snapshot().track,
        heard == queue.withLock(\.current)
      {
        // As podcast apps do: back a couple of seconds, so the sentence cut is heard whole.
        let now = engine.snapshot()
        if now.isSeekable { engine.seek(to: max(0, now.position - configuration.spokenStepBack)) }
      }
      await carryOut(effects)
      if effects.contains(.activateAndPlay) && policy.isPlaying {
        say(.resumed(after: by))
      }
      interruption = nil
    case .routeChange(let change):
      route = change.current
      let wasPlaying = policy.isPlaying
      await carryOut(policy.routeChanged(change))
      if change.reason == .oldDeviceUnavailable && (wasPlaying || policy.pausedBy == .route) {
        // The device failing may have been seen first (the sound server ended the stream it
        // had moved): the output that really went is this one.
        if !wasPlaying, let known = lostRoute, known.kind == .unknown, known != change.previous {
          say(.outputWentAway(change.previous.name))
        }
        lostRoute = change.previous
      }
    case .ducking(let isDucked):
      ducked = isDucked
      engine.setDucked(isDucked)
    case .silentMode(let on, _):
      silentMode = on  // playback is never muted by silent mode (G2); the views say it is on
    case .mediaServicesWereReset:
      published = nil  // the new server must hear everything again
      nowPlaying = false  // and will say who is the now-playing app
    case .nowPlaying(let isNowPlaying):
      // Who gets remote commands is the server's matter; the player needs its word only where
      // its own view of G18 falls short (see `PlayerSnapshot.isInAudioContext`).
      nowPlaying = isNowPlaying
    case .silenceSecondaryAudioHint:
      break  // hark's music is primary audio
    }
  }

  // MARK: Engine events

  private func handle(_ event: EngineEvent) async {
    switch event {
    case .trackFailed(let track, let error):
      failed[track.id] = error.reason
      notices.append(.couldNotPlay(track, line: error.description))
      skippedInARow += 1
      problem = .skipped(
        file: fileName(track.path), reason: error.reason, moreBefore: skippedInARow - 1)
      problemOutlivesNextTrack = true
    case .deviceLost(let device, let code):
      // Already paused because its output went: the session server ends a stream the sound
      // server moved off a sink that went away (G5), after telling this player why. The device
      // is opened afresh on play; the news adds nothing.
      if policy.pausedBy == .route { return }
      // The engine has already stopped writing; the route change itself comes through the
      // session server, like every real output event.
      let lost = Route(name: device, kind: .unknown)
      say(.deviceWentAway(device, reason: String(cString: strerror(-code))))
      lostRoute = lost
      if await !session.outputLost(lost) {
        await carryOut(
          policy.routeChanged(
            RouteChange(reason: .oldDeviceUnavailable, previous: lost, current: lost)))
      }
    case .deviceFailed(let message):
      notices.append(
        .outputFailed(line: "cannot play on '\(engine.snapshot().deviceName)': \(message)"))
      problem = .outputFailed(device: engine.snapshot().deviceName, message: message)
      policy.stopped()
      try? await session.setActive(false)
    case .nowHearing(let track) where preloadToBeHeard && !policy.isPlaying:
      // Loaded paused for a first play that was refused (see `preloaded`): not news yet.
      preloadToBeHeard = false
      queue.withLock { _ = $0.setCurrent(track.id) }
      preloadHeard = track
    case .nowHearing(let track):
      preloadToBeHeard = false
      queue.withLock { _ = $0.setCurrent(track.id) }
      await tellWhetherSpoken(track)
      playedSomething = true
      if failed[track.id] == nil {
        skippedInARow = 0
        if problemOutlivesNextTrack { problemOutlivesNextTrack = false } else { problem = nil }
      }
      notices.append(.nowPlaying(track))
      let now = engine.snapshot()
      if now.track == track, now.isLive {
        stream = (track, now.metadata.flatMap(Self.onAir), now.reconnecting)
      }
    case .fault(let what):
      say(.engineFault(what))
    case .outputStarted:
      break  // the snapshot taken after each event says that the position now moves
    case .streamChanged(let track):
      let now = engine.snapshot()
      // Said once it is heard (`nowHearing` notes what it said first), then as it changes.
      guard now.track == track, let before = stream, before.track == track else { return }
      let title = now.metadata.flatMap(Self.onAir)
      stream = (track, title, now.reconnecting)
      if let why = now.reconnecting, before.reconnecting == nil {
        say(.reconnecting(why))
      } else if now.reconnecting == nil, before.reconnecting != nil {
        say(.reconnected)
      }
      // A title cleared to the station's name is no news.
      if let title, title != before.title, title != now.liveStation { say(.onAir(title)) }
    case .loaded(let track):
      // The track asked for, or the first after it that opened (the queue's current follows,
      // unless a later load has been asked for meanwhile). The snapshot after it shows its
      // length and position, also paused.
      if engine.snapshot().track == track { queue.withLock { _ = $0.setCurrent(track.id) } }
    case .endOfQueue:
      queueEnded = true
      policy.stopped()
      try? await session.setActive(false)
      queue.withLock { q in _ = q.setCurrent(q.first?.id) }
      notices.append(.queueEnded(nothingPlayed: !playedSomething))
    }
  }

  // MARK: Effects

  private func carryOut(_ effects: [PlaybackPolicy.Effect]) async {
    for effect in effects {
      switch effect {
      case .activateAndPlay:
        let afterRouteLoss = policy.pausedBy == .route
        let preload = preloaded
        preloaded = nil
        do {
          try await session.setActive(true)
        } catch let refusal as ActivationRefusal {
          await carryOut(policy.activationRefused(refusal.description))
          problem = .activationRefused(refusal.description)
          continue
        } catch {
          say(.cannotPlay("\(error)"))
          continue
        }
        interruption = nil
        lostRoute = nil
        if case .activationRefused = problem { problem = nil }
        let target = startTarget ?? queue.withLock { $0.current ?? $0.first }
        guard let target else { continue }
        // Load unless the engine holds the queue's current entry (paused, or stopped by a
        // lost device: it resumes there): nothing, or another one (the queue played to its
        // end and went back to its first entry: it starts again from the top).
        let engineNow = engine.snapshot()
        // A first play that was refused held the engine's word on what it holds: said now if
        // that plays, dropped if another is loaded.
        let heldNews = preloadHeard
        preloadHeard = nil
        var loads = false
        if preload == target && startTarget == nil {
          // It holds the first entry, or the first after it that opened (those that would not
          // were said as they failed), or nothing when none did (the end of the queue is on its
          // way): a load again would try them all twice.
          engine.play()
        } else if startTarget != nil || queueEnded
          || (engineNow.track ?? engineNow.loading) != target
        {
          queueEnded = false
          engine.load(target, playing: true, wait: false)
          positionJumped = true
          loads = true
        } else if engineNow.isLive {
          // A live stream resumes live (G14), as a radio does: connected afresh, not from what
          // was buffered when it paused (the station has moved on; its server has likely
          // dropped the connection that stopped reading).
          engine.load(target, playing: true, wait: false)
          positionJumped = true
          loads = true
        } else {
          // The output that went away may have been replaced under the same device name (a
          // sound server moves streams to another sink): start on a fresh one.
          if afterRouteLoss { engine.reopenOutput() }
          engine.play()
        }
        if engine.snapshot().state == .playing {
          policy.started()
          if !loads, let heldNews, engine.snapshot().track == heldNews {
            await handle(.nowHearing(heldNews))
          }
        } else {
          policy.stopped()
          try? await session.setActive(false)
        }
      case .stopOutput:
        engine.pause()
      case .deactivate:
        try? await session.setActive(false)
      case .say(let line):
        say(line)
      }
    }
  }

  private func say(_ message: PlayerMessage) { notices.append(.message(message)) }

  // MARK: The snapshot

  /// Before the machine sleeps a playing player pauses, as for an output gone (the inhibitor it
  /// holds while playing is let go as soon as it has: `finishStep`); after waking it stays
  /// paused and says so; the media keys reach it as before.
  private func handleSleep(_ going: Bool) async {
    if going {
      let effects = policy.machineWillSleep()
      if !effects.isEmpty { sleptWhilePlaying = true }
      await carryOut(effects)
    } else if sleptWhilePlaying, policy.pausedBy == .route {
      say(.machineWoke)
    }
  }

  /// Tells the session whether the track now heard is spoken word (spokenAudio) or music,
  /// when that changed.
  private func tellWhetherSpoken(_ track: QueuedTrack) async {
    let now = engine.snapshot()
    let metadata = now.track == track ? now.metadata : nil
    let isSpoken =
      spokenOverrides[track.path]
      ?? Self.isSpoken(
        path: track.path, genre: metadata?.genre, folders: configuration.spokenFolders)
    guard isSpoken != spoken else { return }
    spoken = isSpoken
    try? await session.setCategory(
      .playback, mode: isSpoken ? .spokenAudio : .default, options: [])
  }

  /// "Artist - Title" as a station says it, or its title alone; nil when it says nothing.
  static func onAir(_ m: TrackMetadata) -> String? {
    guard let title = m.title else { return nil }
    return m.artist.map { "\($0) - \(title)" } ?? title
  }

  /// Genres that are words, not music (lower case; a genre containing one counts).
  static let spokenGenres = [
    "podcast", "audiobook", "audio book", "hörbuch", "speech", "spoken", "lecture", "talk",
    "radio play", "audio drama",
  ]

  /// Whether a track is spoken word: by its genre tag, its file type (.m4b, an audiobook), or a
  /// folder the config names.
  public static func isSpoken(path: String, genre: String?, folders: [String]) -> Bool {
    if QueueLoader.fileExtension(path) == "m4b" { return true }
    if let g = genre?.lowercased(), spokenGenres.contains(where: { g.contains($0) }) {
      return true
    }
    return folders.contains { folder in
      let f = folder.hasSuffix("/") ? folder : folder + "/"
      return path.hasPrefix(f)
    }
  }

  /// Whether the engine holds a track, or is opening one (a load returns before the file opens).
  private var engineHasATrack: Bool {
    let now = engine.snapshot()
    return now.track != nil || now.loading != nil
  }

  /// Takes a new snapshot from the queue, the engine and the policy.
  private func refresh() {
    let now = engine.snapshot()
    let q = queue.withLock { $0 }
    var s = PlayerSnapshot()
    switch policy.phase {
    case .stopped: s.state = .stopped
    case .playing: s.state = .playing
    case .paused, .interrupted: s.state = .paused
    }
    s.pausedBy = policy.pausedBy
    if case .interrupted(let resume, let by) = policy.phase {
      s.interruption = interruption ?? by
      s.willResume = resume
    }
    s.lostRoute = s.pausedBy == .route ? lostRoute : nil
    s.current = q.current
    let loaded = now.track != nil && now.track == q.current
    if let c = q.current {
      s.title = (loaded ? now.metadata?.title : nil) ?? QueueLoader.title(fromPath: c.path)
    }
    if !loaded, let r = requestedStart, r.id == q.currentID, now.loading?.id == r.id {
      s.position = r.seconds  // opening: where it will begin
    }
    if loaded {
      s.metadata = now.metadata ?? TrackMetadata()
      s.position = now.position
      s.duration = now.duration
      s.isSeekable = now.isSeekable
      s.format = now.format
      s.isLive = now.isLive
      s.reconnecting = now.reconnecting
    }
    s.positionTime = monotonicNanoseconds()
    s.isAdvancing = loaded && now.isAdvancing
    s.queue = q.entries
    s.playOrder = q.playOrder
    s.shuffle = q.shuffle
    s.repeatMode = q.repeatMode
    s.failed = failed
    s.deviceName = now.deviceName
    if let volume {
      s.volume = .level(percent: volume.volumePercent, muted: volume.isMuted)
    } else {
      s.volume = .unavailable(device: now.deviceName)
    }
    s.route = route
    s.ducked = ducked
    s.silentMode = silentMode
    s.problem = problem
    s.isNowPlaying = nowPlaying
    s.isSpoken = spoken
    s.pausedForSleep = sleptWhilePlaying && s.pausedBy == .route
    s.enabledCommands = enabledCommands(q, now, loaded: loaded)
    state.withLock { $0 = s }
  }

  /// What may be asked now (G19): what cannot be honoured is disabled, never mapped to another.
  private func enabledCommands(_ q: PlayQueue, _ now: EngineSnapshot, loaded: Bool)
    -> Set<RemoteCommandKind>
  {
    guard let current = q.currentID else { return [] }
    var c: Set<RemoteCommandKind> = [.play, .pause, .togglePlayPause, .stop]
    if q.track(after: current, automatic: false) != nil { c.insert(.nextTrack) }
    if q.track(before: current) != nil || (loaded && now.isSeekable && now.position > 3) {
      c.insert(.previousTrack)
    }
    if loaded && now.isSeekable {
      c.formUnion([
        .seekForward, .seekBackward, .skipForward, .skipBackward, .changePlaybackPosition,
      ])
    }
    if volume != nil { c.formUnion([.volumeUp, .volumeDown]) }
    if volume?.canMute == true { c.insert(.mute) }
    return c
  }

  /// Tells the session server what plays, when that changed (not as the position moves: the
  /// server moves it on with the clock, from the rate).
  ///
  /// The position heard can fall behind the clock (a sound server that buffers deeper as it
  /// goes): the server's estimate is then ahead of it. Rather than publish a position that
  /// goes back, the player holds the one published (rate 0) until what is heard has caught up,
  /// and goes on from there. Only a seek or a new track moves it back.
  private func publish(_ snap: PlayerSnapshot) async {
    var info = snap.playbackInfo
    let now = monotonicNanoseconds()
    if let (last, commands) = published, commands == snap.enabledCommands {
      var expected = last
      if last.state == .playing, let p = last.position, let rate = last.rate {
        expected.position = p + rate * Double(now - publishedAt) / 1e9
      }
      var same = info
      same.position = nil
      var was = last
      was.position = nil
      let drift = (info.position ?? 0) - (expected.position ?? 0)
      if same == was && abs(drift) < 0.25 { return }
      was.rate = same.rate
      if !positionJumped, same == was, info.state == .playing, drift < 0, drift > -2,
        let ahead = expected.position
      {
        if last.rate == 0 { return }  // already holding
        info.position = ahead
        info.rate = 0
        let c = continuation
        catchUp?.cancel()
        catchUp = Task {
          try? await Task.sleep(for: .milliseconds(Int(-drift * 1000) + 10))
          if !Task.isCancelled { c.yield(.tick) }
        }
      }
    }
    positionJumped = false
    published = (info, snap.enabledCommands)
    publishedAt = now
    await session.publish(info, commands: snap.enabledCommands)
  }
}

/// A file's name without its folder.
func fileName(_ path: String) -> String {
  path.split(separator: "/").last.map(String.init) ?? path
}

/// A mixer on its way to the player's task (its C handle is used there only).
final class VolumeBox: @unchecked Sendable {
  let volume: (any SystemVolume)?
  init(_ volume: (any SystemVolume)?) { self.volume = volume }
}
