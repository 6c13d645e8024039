import AudioCore
import MediaFiles
import SessionCore

/// The player's decisions, as one value: `state + input → state + effects`.
///
/// Every input goes through `handle(_:seeing:)`: the user's commands from every source (keys,
/// `hark ctl`, MPRIS, an attached interface), the user's edits of the queue, the session
/// server's events (interruptions, routes, ducking, silent mode, the now-playing slot), the
/// engine's events (a track heard, failed, the end of the queue, a device gone), the machine's
/// sleep, the clock, and the answers to the effects that have one (an activation granted or
/// refused, a volume changed or not). It returns what the engine, the session and the
/// publishers must do, in order; the player (`Player`, in PlayerEngine) carries them out and
/// hands the answers back at once, before any other input. `endStep(seeing:)`, after each
/// outside input, takes the snapshot the views draw and says what must be published.
///
/// It reads the world through an `Observation` passed in (the engine's snapshot, the system
/// volume, the monotonic clock) and never asks for it: no clock, no I/O, no threads, so every
/// rule is tested by feeding it inputs, and the whole state space by random sequences.
public struct PlayerCore: Sendable {
  /// What the core is built with.
  public struct Settings: Sendable, Equatable {
    /// G5's opt-in: resume when the lost output comes back.
    public var resumeOnReconnect = false
    /// Seconds a plain seek forward or back moves.
    public var seekStep = 10.0
    /// Folders whose files are spoken word (the config's `spoken_dirs`), beside the genre tag
    /// and the .m4b extension.
    public var spokenFolders: [String] = []
    /// How far spoken word steps back when it resumes after a prompt, so that the sentence is
    /// heard whole.
    public var spokenStepBack = 2.0
    /// How long a track must be to keep its own place when it is not spoken word (the config's
    /// `long_recording_minutes`, 20 by default): a lecture, a concert recording, a DJ mix.
    public var longRecording = 1_200.0
    /// How far a kept place steps back when the recording is played again. More than after a
    /// prompt (`spokenStepBack`): a prompt cuts a sentence, and 2 s brings it back; a recording
    /// left for hours or days needs the last sentence or two to be followed again, about 10 s
    /// of speech (25 to 30 words). Also more than `placeInterval`, so that after a crash (the
    /// place kept up to that long before) it starts before where the listener was, never after.
    public var placeStepBack = 10.0
    /// How much of playing moves a kept place on (seconds): written this often while playing,
    /// and at once on a pause, a stop, a change of track, a seek and at the end.
    public var placeInterval = 5.0
    /// A long recording left this close to its end counts as heard to its end (played): its
    /// closing credits, a podcast's outro; a short one (spoken word can be), within its last 5 %.
    public var finishedWithin = 30.0
    /// Shuffle's seed; tests fix it.
    public var shuffleSeed: UInt64 = 0x5EED
    /// How long after a pause the news that the output went away still makes it a pause by
    /// the route (nanoseconds): a sound server's policy pauses the players whose sink went, and
    /// its word can come before the session server's (`PlaybackPolicy.pauseWasTheRoute`). Its
    /// Pause is told apart by who sends it (`PlayerAction.pauseForLostOutput`); this is for a
    /// policy that cannot be. Measured with WirePlumber 0.5.15: 0–49 ms before.
    public var pauseBeforeLossWindow: UInt64 = 150_000_000

    public init() {}
  }

  // MARK: State

  let settings: Settings
  /// The queue, and the order it plays in.
  public internal(set) var queue: PlayQueue
  /// The transport: playing, paused (and why), interrupted, stopped.
  public internal(set) var policy = PlaybackPolicy()
  /// The queue before each of the user's last edits, and where its current entry was heard,
  /// newest last: `undo` takes them back one by one.
  var history: [(queue: PlayQueue, position: Double)] = []
  static let historyDepth = 50
  /// Entries that could not be played, with the reason.
  var failed: [Int: String] = [:]
  var playedSomething = false
  /// The first entry of a start with autoplay, loaded paused before the session server was
  /// asked for the audio (see `FirstPlay`).
  var firstPlay: FirstPlay = .none
  /// What the activation asked for will play once granted: the entry the user picked, or
  /// (nil) what is current.
  var pendingStart: PendingStart?
  /// The queue played to its end: play starts it again from its first entry (the engine still
  /// holds the last track, stopped at its end).
  var queueEnded = false
  /// Where a load asked the engine to begin a track (a restored queue, a seek that reopens,
  /// an undo), shown as its position while the file opens.
  var requestedStart: (id: Int, seconds: Double)?
  /// A seek or a load since the last snapshot: the position may go back; otherwise it never
  /// does (see `snapshot(seeing:)`).
  var positionJumped = true
  var route: Route?
  var ducked = false
  var silentMode = false
  var problem: PlayerProblem?
  /// Files skipped since a track was last heard: the problem line counts them, and it stays
  /// up through the track heard after them (a skip happens in a blink; the line must not).
  var skippedInARow = 0
  var problemOutlivesNextTrack = false
  /// The output that went away, while that is why it is paused.
  var lostRoute: Route?
  var interruption: InterruptionCause?
  /// What interrupted it last, kept past the interruption's end while it stays paused by it:
  /// the reason shown names it (a call, an alarm) until it plays again.
  var lastInterruption: InterruptionCause?
  /// What the session server last said: whether this player is the now-playing app.
  var nowPlaying = false
  /// The track heard is spoken word, and the session says so (spokenAudio).
  var spoken = false
  /// Tracks the user said are spoken word (true) or music (false), by path.
  var spokenOverrides: [String: Bool] = [:]
  /// What the live stream heard last said: its title and why it is reconnecting, if it is.
  var stream: (track: QueuedTrack, title: String?, reconnecting: String?)?
  /// A user's pause, and when: the news that the output went away soon after makes it a pause
  /// by the route (`Settings.pauseBeforeLossWindow`).
  var lastUserPause: UInt64?
  /// The command being answered: its reply is an effect, given once (`reply`).
  var replyOwed = false
  /// What happened in this step, for the observers.
  var notices: [PlayerNotice] = []
  /// The last snapshot taken, and the last one published (`endStep`).
  public internal(set) var shown = PlayerSnapshot()
  /// The engine's stretch of sound the last snapshot showed, and since when what is shown has
  /// waited for the news of a new one (`snapshot(seeing:)`).
  var shownSegment = 0
  var waitingSince: UInt64?
  var published: (info: PlaybackInfo, commands: Set<RemoteCommandKind>, at: UInt64)?
  var clockRunning = false
  var holdingSleep = false
  /// The desktop's sleep timer as the session server last told it, and when that was.
  var sleepTimer: SleepTimerStatus?
  var sleepTimerAt: UInt64 = 0
  /// The sleep timer ended: the engine fades out until then (monotonic nanoseconds), and the
  /// player pauses (`settleTimerFade`).
  var timerFadeUntil: UInt64?
  /// The queue as the engine's decode thread last had it.
  var queueVersion = 0
  var publishedQueueVersion = -1
  /// The track the engine held at the last look (`lookAtTrackHeld`): a change is a track
  /// arriving, and the one before it left.
  var held: QueuedTrack?
  /// The chapters of a file, once found, and the file last asked about (once each time a file
  /// arrives; the same file again is not asked again).
  var chapters: (path: String, list: [Chapter])?
  var chaptersAsked: String?
  /// The long recording held, whose place is kept (`PlayerCore+Places`).
  var listening: Listening?
  /// Where the long recordings heard in this run were left, as last kept or found, by path.
  var placesThisRun: [String: ListeningPlace] = [:]
  /// Quit: nothing more is looked up.
  var quitting = false
  /// What speed each track plays at (`PlayerCore+Speed`), and its version as the engine's
  /// decode thread last had it.
  var rates = RatePlan()
  var ratesVersion = 0
  var publishedRatesVersion = -1

  /// The first play of a start with autoplay: the first entry opens while the session server
  /// is asked for the audio, so that the file and the output are ready when it answers.
  enum FirstPlay: Equatable {
    case none
    /// Loaded paused; the first activation plays what the engine holds (this entry, or the first
    /// after it that opened: a load again would try the failed ones twice). `heard`: what the
    /// engine said it holds meanwhile, not news until it plays (nothing is heard before the
    /// grant, G10). `asked`: the first activation was asked for (and refused: a later play
    /// finds what to play as any play does).
    case preloaded(QueuedTrack, heard: QueuedTrack?, asked: Bool)
  }

  /// What a play waiting for its activation starts.
  enum PendingStart: Equatable {
    /// The current entry, where the engine holds it (a resume), or from its start.
    case current
    /// This entry, from its start (picked by the user, handed over to play now).
    case entry(QueuedTrack)
    /// The current entry where it was, after an interruption by `by` ended (G14): said so.
    case resumeAfterInterruption(by: String?)
  }

  /// An empty player.
  public init(settings: Settings = Settings()) {
    self.settings = settings
    queue = PlayQueue(seed: settings.shuffleSeed)
    policy.resumeOnReconnect = settings.resumeOnReconnect
    rates.spokenFolders = settings.spokenFolders
  }

  // MARK: The step

  /// Handles one input, returning what must be done, in order. Effects with an answer
  /// (`PlayerEffect.activate` and others) expect it as the next input, before any other.
  public mutating func handle(_ input: PlayerInput, seeing world: Observation) -> [PlayerEffect] {
    var effects: [PlayerEffect] = []
    switch input {
    case .start(let files, let autoplay):
      start(files: files, autoplay: autoplay, world, &effects)
    case .command(let command):
      replyOwed = true
      handle(command, world, &effects)
    case .action(let action):
      handle(action, world, &effects)
    case .session(let event):
      handle(event, world, &effects)
    case .welcome(let r, let silent):
      route = r
      silentMode = silent
    case .engine(let event):
      handle(event, world, &effects)
    case .sleep(let going):
      machineSleeps(going, world, &effects)
    case .tick:
      break  // a fresh look: the snapshot after it moves on
    case .quit:
      quit(world, &effects)
    case .activation(let answer):
      activated(answer, world, &effects)
    case .outputLossAnswered(let lost, let taken):
      if !taken {
        // No session server to hear of it: the player acts on its own, as on its answer.
        routeChanged(
          RouteChange(reason: .oldDeviceUnavailable, previous: lost, current: lost), world,
          &effects)
      }
    case .registrationFailed(let why):
      say(.cannotRegister(why))
    case .volumeAnswered(let failure, let muting):
      if let failure {
        say(muting ? .muteFailed(failure) : .volumeChangeFailed(failure))
        reply(.commandFailed, &effects)
      } else {
        reply(.success, &effects)
      }
    case .deviceSwitched(let name, let failure):
      if let failure {
        say(.outputRefused(name, reason: failure, stayingOn: world.engine.deviceName))
      } else {
        effects.append(.findVolume(device: name))
        say(.playingOn(name))
      }
    case .lookaheadCheck:
      replanIfNeeded(world, &effects)
    case .chaptersFound(let track, let list):
      if chaptersAsked == track.path { chapters = (track.path, list) }
    case .placeFound(let track, let place, let rate):
      rateFound(rate, for: track)
      placeFound(track, place, world, &effects)
    }
    settleTimerFade(world, &effects)
    if !quitting { keepRateRight(world, &effects) }
    publishQueueIfChanged(&effects)
    publishRatesIfChanged(&effects)
    return effects
  }

  /// After each outside input and the answers it led to: the new snapshot and what happened
  /// (for the observers), what the session server must be told, and the clocks.
  public mutating func endStep(seeing world: Observation) -> [PlayerEffect] {
    var effects: [PlayerEffect] = []
    if replyOwed { reply(.success, &effects) }
    if !quitting { lookAtTrackHeld(world, &effects) }
    let (snap, waiting) = snapshot(seeing: world)
    shown = snap
    if waiting {
      waitingSince = waitingSince ?? world.now
    } else {
      waitingSince = nil
      shownSegment = world.engine.segment
    }
    effects.append(.changed(snap, notices))
    notices = []
    publish(snap, world, &effects)
    let playing = snap.state == .playing
    // Sleep is held back only while playing, and let go the moment playing stops.
    if playing != holdingSleep {
      holdingSleep = playing
      effects.append(.holdSleep(playing))
    }
    // A clock only while playing: the position moves and `previous` changes meaning at 3 s.
    // Paused or stopped, nothing moves and nothing polls.
    if playing != clockRunning {
      clockRunning = playing
      effects.append(.clock(running: playing))
    }
    return effects
  }

  // MARK: Helpers for every part

  mutating func say(_ message: PlayerMessage) { notices.append(.message(message)) }

  /// Answers the command being handled, once.
  mutating func reply(_ status: CommandStatus, _ effects: inout [PlayerEffect]) {
    guard replyOwed else { return }
    replyOwed = false
    effects.append(.reply(status))
  }

  /// Edits the queue; the engine's decode thread gets the new one before anything else is done.
  @discardableResult
  mutating func editQueue<T>(_ body: (inout PlayQueue) -> T) -> T {
    queueVersion += 1
    return body(&queue)
  }

  mutating func publishQueueIfChanged(_ effects: inout [PlayerEffect]) {
    guard queueVersion != publishedQueueVersion else { return }
    publishedQueueVersion = queueVersion
    // First, so that the decode thread asks the new queue what follows before any load.
    effects.insert(.publishQueue(queue), at: 0)
  }

  /// Whether the engine holds a track, or is opening one.
  func engineHasATrack(_ world: Observation) -> Bool {
    world.engine.track != nil || world.engine.loading != nil
  }

  private mutating func start(
    files: [String], autoplay: Bool, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    if !files.isEmpty {
      editQueue { q in
        q.add(files)
        _ = q.setCurrent(q.first?.id)
      }
    }
    // Paused: nothing is heard before the activation is granted (G10), but the file and the
    // output are open by then. Not a station: one that waited for a refused activation would
    // start from what it sent back then.
    if autoplay, let first = queue.current ?? queue.first, !QueueLoader.isStreamURL(first.path) {
      publishQueueIfChanged(&effects)
      effects.append(.engine(.load(first, at: 0, playing: false, continuing: false)))
      firstPlay = .preloaded(first, heard: nil, asked: false)
      positionJumped = true
    }
    effects.append(.setCategory(.default))
    if autoplay && !files.isEmpty {
      carryOut(policy.userPlay(), world, &effects)
    }
  }

  private mutating func quit(_ world: Observation, _ effects: inout [PlayerEffect]) {
    quitting = true
    // Where the long recording heard was left, before the engine lets it go.
    leaveListening(world, &effects)
    effects.append(.engine(.stop))
    if !policy.isStopped { policy.stopped(.user) }
    effects.append(.deactivate)
    effects.append(.publish(PlaybackInfo(state: .stopped), []))
    effects.append(.engine(.shutdown))
    effects.append(.finish)
  }

  /// The policy's effects, as the engine's and the session's.
  mutating func carryOut(
    _ policyEffects: [PlaybackPolicy.Effect], _ world: Observation,
    _ effects: inout [PlayerEffect]
  ) {
    for effect in policyEffects {
      switch effect {
      case .activateAndPlay:
        if pendingStart == nil { pendingStart = .current }
        effects.append(.activate)
      case .stopOutput:
        effects.append(.engine(.pause))
      case .stopOutputAtOnce:
        effects.append(.engine(.pauseAtOnce))
      case .deactivate:
        effects.append(.deactivate)
      case .say(let message):
        say(message)
      }
    }
  }
}

// MARK: - Inputs, effects, observations

/// What the player sees when it hands the core an input: the engine now, the system volume
/// now, the monotonic clock.
public struct Observation: Sendable, Equatable {
  public var engine: EngineSnapshot
  /// The output's system volume (G3), or nil when it has none.
  public var volume: VolumeState?
  /// No volume yet because the output's control is still being looked for (the player has
  /// just started, or its output changed): volume commands are taken meanwhile, and the player
  /// looks for it at once when one comes, rather than answer that the output has none.
  public var volumeSought: Bool
  /// Monotonic nanoseconds.
  public var now: UInt64

  public init(
    engine: EngineSnapshot, volume: VolumeState? = nil, volumeSought: Bool = false, now: UInt64
  ) {
    self.engine = engine
    self.volume = volume
    self.volumeSought = volumeSought
    self.now = now
  }
}

/// The system volume of the output, as last read.
public struct VolumeState: Sendable, Equatable {
  public var percent: Double
  public var muted: Bool
  public var canMute: Bool
  public init(percent: Double, muted: Bool, canMute: Bool) {
    self.percent = percent
    self.muted = muted
    self.canMute = canMute
  }
}

/// Everything that moves the player.
public enum PlayerInput: Sendable, Equatable {
  /// The player starts: `files` are queued, and with `autoplay` the first plays at once.
  case start(files: [String], autoplay: Bool)
  /// A remote command, from any source (G17); answered with one `PlayerEffect.reply`.
  case command(RemoteCommand)
  /// An edit of the queue or the output.
  case action(PlayerAction)
  /// Something the session server said.
  case session(SessionEvent)
  /// What the session server said when it (re)connected: the output, and silent mode.
  case welcome(route: Route, silentMode: Bool)
  case engine(EngineEvent)
  /// The machine is going to sleep (true) or woke up (false).
  case sleep(Bool)
  /// The clock, or anything else after which only a fresh look is needed.
  case tick
  /// Stop, deactivate, publish that it stopped, and end.
  case quit

  // Answers to effects, handed back at once.

  /// The answer to `PlayerEffect.activate`.
  case activation(ActivationAnswer)
  /// The answer to `PlayerEffect.reportOutputLost`: whether the session server took it (and
  /// will answer with a route change, as for every real output event).
  case outputLossAnswered(Route, taken: Bool)
  /// `PlayerEffect.setCategory` failed.
  case registrationFailed(String)
  /// The answer to `PlayerEffect.setVolume` or `setMuted`.
  case volumeAnswered(failure: String?, muting: Bool)
  /// The answer to `PlayerEffect.switchDevice`.
  case deviceSwitched(String, failure: String?)
  /// The answer to `PlayerEffect.recheckLookahead`: a fresh look after the queue changed.
  case lookaheadCheck

  // Answers that come later, as inputs of their own (found off the player's loop).

  /// The answer to `PlayerEffect.findChapters`: the file's chapters (`Chapter.ordered`), none
  /// when it has none or they could not be read.
  case chaptersFound(QueuedTrack, [Chapter])
  /// The answer to `PlayerEffect.lookUpPlace`: where the recording was left, nil when it has
  /// no place kept (or the index could not be read); and the speed kept for its podcast or
  /// book (its folder), nil when none is.
  case placeFound(QueuedTrack, ListeningPlace?, rate: Double? = nil)
}

/// Where a long recording was left, as the library index keeps it.
public enum ListeningPlace: Sendable, Hashable, Codable {
  /// Left this many seconds in: it starts there next time, a little back.
  case at(Double)
  /// Heard to its end (or left in its last seconds): played, and starts from its start.
  case finished
}

/// How an activation went.
public enum ActivationAnswer: Sendable, Equatable {
  case granted
  /// The session server refused (G10), with its reason in words.
  case refused(String)
  /// It could not be asked (the server went away mid-request).
  case failed(String)
}

/// What the engine must do.
public enum EngineCommand: Sendable, Equatable {
  case load(QueuedTrack, at: Double, playing: Bool, continuing: Bool)
  case play
  case pause
  /// A pause without the ramp: the output went away (G5), and the ramp would be heard on the
  /// output the sound server moved the stream to.
  case pauseAtOnce
  case stop
  case seek(to: Double)
  /// Plays the track heard at this speed from where it is heard, the pitch kept (what was
  /// decoded ahead at the old speed is decoded again); the tracks after it play at the speed
  /// `RatePlan` gives them.
  case setRate(Double)
  /// A fresh output at the same position (the old one went away and may be back, or replaced).
  case reopenOutput
  case setDucked(Bool)
  /// Lowers the sound to silence over this many seconds (the sleep timer ended): the output
  /// plays on, silent once the fade is over, until paused.
  case fadeOut(seconds: Double)
  /// Ends a fade: the sound back at its gain (after the pause that ended it, or at once when
  /// the fade was called off).
  case endFade
  case shutdown
}

/// What the player must do for the core.
public enum PlayerEffect: Sendable, Equatable {
  case engine(EngineCommand)
  /// The queue, for the engine's decode thread to ask what follows a track (gapless).
  case publishQueue(PlayQueue)
  /// The speeds, for the engine's decode thread to ask what speed a track it begins plays at.
  case publishRates(RatePlan)
  /// Keep this speed for the podcast or book in `folder`, off the player's loop (the library
  /// index), in order with the places.
  case keepRate(folder: String, Double)
  /// Tell the session server what the player's audio is (G7); `registrationFailed` on failure.
  case setCategory(SessionMode)
  /// Ask the session server for the audio; answered with `activation`.
  case activate
  /// Give the audio back.
  case deactivate
  /// Tell the session server that the player's own output went away; answered with
  /// `outputLossAnswered`.
  case reportOutputLost(Route)
  /// Tell the session server what plays (the now-playing info) and what may be asked (G19).
  case publish(PlaybackInfo, Set<RemoteCommandKind>)
  /// Set the system volume; answered with `volumeAnswered`.
  case setVolume(percent: Double)
  /// Mute or unmute the system volume; answered with `volumeAnswered`.
  case setMuted(Bool)
  /// Find the system volume of this device (off the player's loop: opening a mixer can take
  /// as long as connecting to a sound server); a `tick` follows when it is there.
  case findVolume(device: String)
  /// Move playback to another output (G6); answered with `deviceSwitched`.
  case switchDevice(String)
  /// Look again after the queue changed: answered with `lookaheadCheck`.
  case recheckLookahead
  /// Find the chapters of this track's file, off the player's loop (FFmpeg's helper reads
  /// them); answered later with `chaptersFound`.
  case findChapters(QueuedTrack)
  /// Look up where this long recording was left, off the player's loop (the library index);
  /// answered later with `placeFound`. Asked before any `keepPlace` of it, and carried out in
  /// the order given with them.
  case lookUpPlace(QueuedTrack)
  /// Keep where this long recording is (seconds, or heard to its end), off the player's loop,
  /// written so that a crash loses nothing (synced), in the order given.
  case keepPlace(path: String, ListeningPlace, duration: Double?)
  /// Hold the machine's sleep back (while playing), or let it go.
  case holdSleep(Bool)
  /// A tick every second while playing, or none.
  case clock(running: Bool)
  /// A tick after this long (nanoseconds): a held position has caught up by then.
  case wake(afterNanoseconds: UInt64)
  /// The snapshot the views draw, and what happened since the last.
  case changed(PlayerSnapshot, [PlayerNotice])
  /// The answer to the command being handled.
  case reply(CommandStatus)
  /// The player has stopped; its loop ends.
  case finish
}
