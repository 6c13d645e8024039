import Glibc
import Logging
import MPRIS
import Platform
import SessionCore
import Synchronization

/// The desktop's other media players, as the sleep timer reaches them: what `SleepTimer`'s
/// `surveyDesktop`, `pauseDesktop` and `stopDesktopFade` ask for, carried out off the server's
/// loop (a player may take its time to answer a D-Bus call; the loop answers every app within
/// milliseconds). Answers come back as `ExternalEvent.desktopSurveyed` and `.desktopPaused`.
///
/// Threads: the methods may be called from any thread and return at once; the work is done in
/// order on a thread of the implementation's own.
public protocol DesktopPlayerControl: AnyObject, Sendable {
  /// Called once, before anything else: where the answers go.
  func start(answering post: @escaping @Sendable (ExternalEvent) -> Void)
  /// Finds the players and what they do; answered with `desktopSurveyed`.
  func survey()
  /// Fades each player's Volume to 0 over `fade` seconds (at once for one without a Volume),
  /// pauses it, and puts its Volume back as it was; answered with `desktopPaused`.
  func fadeAndPause(_ players: [SleepTimer.DesktopPlayer], fade: Double)
  /// Stops the fades asked for so far: their Volume is put back and nothing is paused. They
  /// still answer `desktopPaused`.
  func stopFades()
  /// Ends the thread; what is under way is given up (a fade's Volume put back first).
  func close()
}

/// `DesktopPlayerControl` over the session bus (MPRIS), with `MPRISClient`: connected when first
/// needed (libdbus is not loaded by a server whose timer is never set); with no session bus,
/// every survey finds nothing, which is logged once.
public final class MPRISDesktop: DesktopPlayerControl, @unchecked Sendable {
  private enum Job {
    case survey
    /// The fade's number: `stopFades` stops those numbered up to the last one asked for.
    case fade([SleepTimer.DesktopPlayer], seconds: Double, number: Int)
    case quit
  }

  private let logger: Logger
  private let address: String?
  private let jobs = Locked<[Job]>([])
  private let wake = Platform.Semaphore()
  /// Control: the number of the last fade asked for; the fades up to `stopUpTo` stop.
  private let fadesAsked = Atomic<Int>(0)
  private let stopUpTo = Atomic<Int>(0)
  private let post = Locked<(@Sendable (ExternalEvent) -> Void)?>(nil)
  private let thread = Locked<JoinableThread?>(nil)
  // The worker thread's only.
  private var client: MPRISClient?
  private var loggedNoBus = false

  /// How often a fade sets the Volume: 20 steps a second, smooth to the ear and few calls.
  static let fadeStep: Duration = .milliseconds(50)

  /// `address`: the bus (the session bus when nil, from the server's environment).
  public init(logger: Logger, address: String? = nil) {
    self.logger = logger
    self.address = address
  }

  public func start(answering post: @escaping @Sendable (ExternalEvent) -> Void) {
    self.post.withLock { $0 = post }
    do {
      let worker = try JoinableThread(named: "hark-desktop") { [self] in run() }
      thread.withLock { $0 = worker }
    } catch {
      logger.warning("cannot start the thread that reaches the desktop's players: \(error)")
    }
  }

  public func survey() { submit(.survey) }

  public func fadeAndPause(_ players: [SleepTimer.DesktopPlayer], fade: Double) {
    let number = fadesAsked.add(1, ordering: .relaxed).newValue
    submit(.fade(players, seconds: fade, number: number))
  }

  public func stopFades() {
    stopUpTo.store(fadesAsked.load(ordering: .relaxed), ordering: .releasing)
  }

  public func close() {
    stopFades()
    submit(.quit)
    if let t = thread.withLock({ $0 }) {
      t.join()
      thread.withLock { $0 = nil }
    }
  }

  private func submit(_ job: Job) {
    guard thread.withLock({ $0 != nil }) else {
      // No thread: answer at once, as a desktop with no players would.
      switch job {
      case .survey: answer(.desktopSurveyed([]))
      case .fade: answer(.desktopPaused)
      case .quit: break
      }
      return
    }
    jobs.withLock { $0.append(job) }
    wake.signal()
  }

  private func answer(_ event: ExternalEvent) {
    let post = post.withLock { $0 }
    post?(event)
  }

  // MARK: The worker thread

  private func run() {
    while true {
      wake.wait()
      let taken = jobs.withLock { j in
        defer { j = [] }
        return j
      }
      for job in taken {
        switch job {
        case .survey: answer(.desktopSurveyed(surveyNow()))
        case .fade(let players, let seconds, let number):
          fade(players, seconds: seconds, number: number)
          answer(.desktopPaused)
        case .quit:
          client = nil
          return
        }
      }
    }
  }

  /// The client, connected on first use (again after a failure: the bus may have come since).
  private func connected() -> MPRISClient? {
    if let client { return client }
    do {
      client = try MPRISClient(address: address)
      logger.info("the sleep timer reaches the desktop's players on the session bus")
    } catch {
      if !loggedNoBus {
        logger.notice(
          "the sleep timer cannot reach the desktop's other players (\(error)); it pauses hark's")
        loggedNoBus = true
      }
    }
    return client
  }

  private func surveyNow() -> [SleepTimer.DesktopPlayer] {
    guard let client = connected() else { return [] }
    return client.players().map { info in
      let state: PlaybackState =
        switch info.status {
        case .playing: .playing
        case .paused: .paused
        case .stopped, nil: .stopped
        }
      return SleepTimer.DesktopPlayer(
        busName: info.busName,
        name: info.identity ?? String(info.busName.dropFirst("org.mpris.MediaPlayer2.".count)),
        pid: info.pid, state: state, position: info.position.map(seconds),
        length: info.length.map(seconds), rate: info.rate ?? 1)
    }
  }

  /// Lowers each player's Volume to 0 over `seconds`, pauses it, and puts its Volume back once
  /// it no longer plays (or, stopped by `stopFades`, at once, pausing nothing). A player with
  /// no Volume is paused at once: there is nothing to fade.
  private func fade(_ players: [SleepTimer.DesktopPlayer], seconds fade: Double, number: Int) {
    guard let client = connected() else { return }
    var faded: [(busName: String, volume: Double)] = []
    for p in players {
      if let v = client.volume(p.busName), v > 0 {
        faded.append((p.busName, v))
      } else {
        logger.info("sleep timer: pausing '\(p.name)' (it has no volume to fade)")
        client.pause(p.busName)
      }
    }
    if !faded.isEmpty {
      logger.info(
        "sleep timer: fading out \(faded.map { "'\($0.busName)'" }.joined(separator: ", ")) over \(fade) s"
      )
    }
    let start = monotonicNanoseconds()
    let total = UInt64(max(0, fade) * 1e9)
    while !faded.isEmpty {
      if stopUpTo.load(ordering: .acquiring) >= number {
        for f in faded { client.setVolume(f.busName, to: f.volume) }
        logger.info("sleep timer: the fade was stopped; volumes put back, nothing paused")
        return
      }
      let elapsed = monotonicNanoseconds() - start
      if elapsed >= total { break }
      let left = 1 - Double(elapsed) / Double(total)
      for f in faded { client.setVolume(f.busName, to: f.volume * left) }
      sleepFor(Self.fadeStep)
    }
    for f in faded {
      client.setVolume(f.busName, to: 0)
      client.pause(f.busName)
    }
    // The Volume goes back once the player no longer plays: a player that pauses a moment
    // after answering (a browser) must not be heard at its volume again meanwhile. One that
    // would not pause is stopped.
    let names = faded.map(\.busName)
    if !waitUntilNotPlaying(names, client, within: .seconds(1)) {
      for name in names where client.status(name) == .playing { client.stop(name) }
      _ = waitUntilNotPlaying(names, client, within: .seconds(1))
    }
    // What the sound server still holds of it was written at volume 0; a little more time for
    // a player whose pause takes effect after its status says so.
    sleepFor(.milliseconds(250))
    for f in faded {
      client.setVolume(f.busName, to: f.volume)
      if client.status(f.busName) == .playing {
        logger.warning("sleep timer: '\(f.busName)' plays on; it would neither pause nor stop")
      }
    }
  }

  private func waitUntilNotPlaying(_ names: [String], _ client: MPRISClient, within: Duration)
    -> Bool
  {
    let deadline = monotonicNanoseconds() + UInt64(seconds(within) * 1e9)
    while true {
      if !names.contains(where: { client.status($0) == .playing }) { return true }
      if monotonicNanoseconds() >= deadline { return false }
      sleepFor(.milliseconds(50))
    }
  }
}

private func sleepFor(_ d: Duration) {
  var ts = timespec(
    tv_sec: Int(d.components.seconds),
    tv_nsec: Int(d.components.attoseconds / 1_000_000_000))
  var left = timespec()
  while nanosleep(&ts, &left) != 0 && errno == EINTR { ts = left }
}
