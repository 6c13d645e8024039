import Glibc
import Platform
import SessionCore

/// Something that happened outside the socket, reported by a watcher running in the server's
/// process: a device came or went, a call began in another program.
public enum ExternalEvent: Sendable, Hashable {
  /// A real output appeared, went, or became the default one: a jack's (every session hears of
  /// it, as of `hark route`).
  case route(RouteAction)
  /// The sound server's sinks changed: a session whose stream is on a sink of its own hears
  /// only of that sink (`SessionPolicy`'s `sinkRoute`).
  case sinkRoute(RouteAction)
  /// A call in another program (a sound-server stream with the phone role) began or ended. The
  /// server stands in for it with a session of its own: a call (G11) that ends notifying the
  /// others (G13), exactly as `hark call` does.
  case phoneStream(began: Bool, key: UInt32, name: String, pid: Int32?)
  /// The process `pid`'s stream `stream` lost its output (its sink went away).
  case outputLost(pid: Int32, stream: UInt32, lost: Route)
  /// The process `pid`'s stream `stream` plays on `output` (the sound server's sink it is on).
  case streamOutput(pid: Int32, stream: UInt32, output: Route)
  /// The process `pid`'s stream `stream` is gone.
  case streamGone(pid: Int32, stream: UInt32)
  /// The sound server came (with its name) or went (nil): for the log.
  case soundServer(String?)
  /// The sound server's role policy holds the process `pid`'s stream back for the stream `by`
  /// (of process `byPid`, named `name`), until `holdEnded(by:)`.
  case streamHeld(
    pid: Int32, stream: UInt32, by: UInt32, byPid: Int32?, name: String, role: String? = nil)
  case holdEnded(by: UInt32)
  /// The sound server's role policy ducks the process `pid`'s stream, or no longer.
  case streamDucked(pid: Int32, stream: UInt32, ducked: Bool)
  /// A Bluetooth headset switches to its call profile, is back, or went meanwhile.
  case headsetSwitching(card: String, output: Route)
  case headsetBack(card: String, output: Route)
  case headsetGone(card: String, output: Route)
  /// The process `pid`'s stream was on the headset's sink that went for the switch.
  case outputHeld(pid: Int32, stream: UInt32, output: Route)
  /// The desktop's players and what they do, as the sleep timer asked (`DesktopPlayerControl`).
  case desktopSurveyed([SleepTimer.DesktopPlayer])
  /// The desktop's players the sleep timer asked to fade out have been paused (or could not be,
  /// or the fade was stopped).
  case desktopPaused
}

/// Where watchers on other threads post `ExternalEvent`s for the server's loop: a queue behind
/// a lock and a pipe that wakes the loop's `poll`.
public final class ExternalEvents: Sendable {
  private let queue = Locked<[ExternalEvent]>([])
  private let sessionPids = Locked<[Int32: Int]>([:])
  private let silencer = Locked<(@Sendable (UInt32) -> Void)?>(nil)
  /// Wakes the loop; nil when the process had no descriptors for it (events then wait for
  /// the loop's next wake-up of another kind).
  private let wake = try? WakePipe()

  public init() {}

  /// Readable when events wait.
  var fd: Int32 { wake?.readFD ?? -1 }

  /// Any thread. Queues `event` and wakes the server.
  public func post(_ event: ExternalEvent) {
    queue.withLock { $0.append(event) }
    wake?.wake()
  }

  /// Any thread. Queues `events`, in order, and wakes the server once: what one report of the
  /// sound server means (an output gone and the streams that lost it) reaches the loop in one
  /// wake. Woken at the first of them, the loop took the core from the watcher's thread on a
  /// loaded machine, and the stream that lost its output was ended 10 ms later than the output
  /// was said gone (a headset unplugged: 50 ms of music on the speakers, where the limit is 50).
  public func post(_ events: [ExternalEvent]) {
    guard !events.isEmpty else { return }
    queue.withLock { $0.append(contentsOf: events) }
    wake?.wake()
  }

  /// How to silence a sound-server stream that lost its output (G5): the server calls it for a
  /// stream of one of its sessions, after telling the session.
  public func setSilencer(_ silence: @escaping @Sendable (UInt32) -> Void) {
    silencer.withLock { $0 = silence }
  }

  /// The server's loop: silences a stream, if a silencer was set.
  func silence(stream: UInt32) {
    let silence = silencer.withLock { $0 }
    silence?(stream)
  }

  /// Any thread. Whether `pid` is a process with a session: watchers act on the sound server
  /// for hark's own apps only, never for other programs.
  public func hasSession(pid: Int32) -> Bool { sessionPids.withLock { ($0[pid] ?? 0) > 0 } }

  /// The server's loop: a session of `pid` came or went.
  func sessionCame(pid: Int32) { sessionPids.withLock { $0[pid, default: 0] += 1 } }
  func sessionWent(pid: Int32) {
    sessionPids.withLock { p in
      p[pid, default: 1] -= 1
      if p[pid] == 0 { p[pid] = nil }
    }
  }

  /// The server's loop: takes everything queued.
  func drain() -> [ExternalEvent] {
    wake?.drain()
    return queue.withLock { q in
      defer { q = [] }
      return q
    }
  }
}
