import AudioCore
import FoundationEssentials
import Glibc
import Platform
import PlayerCore

/// Counts the listens of a player and sends them: an observer of any `PlayerConnection` (the
/// player in this process, or one attached over its socket), whose snapshots and notices feed
/// `ListenRules`; this class only carries out what the rules decide. Two threads of its own:
/// one counts (the rules, their timer, the log and the queue on disk: a listen is written
/// before anything is sent), the other sends (now playing at once; the queue oldest first,
/// after each listen and, when a service fails, again with `Backoff`, so a service that comes
/// back gets what waited, in order). Nothing here blocks the player: its observer only hands
/// the snapshot over.
public final class Scrobbler: @unchecked Sendable {
  /// What the shell is given.
  public struct Configuration: Sendable {
    public var destinations: Destinations
    public var sendSpokenWord = false
    public var queue: ListenQueue
    public var log: ListenLog?
    public var transport: any Transport
    /// Counts a listen in the library (the index's play count); on the counting thread.
    public var countPlay: @Sendable (Listen) -> Void = { _ in }
    /// A line for the log: what was sent, what failed and why.
    public var report: @Sendable (String) -> Void = { _ in }
    /// How long a request may take, in seconds.
    public var timeout = 20.0
    /// Where the sender says how it goes (`hark scrobble status` reads it).
    public var statusPath: String?
    /// The clocks: monotonic seconds, and seconds since 1970.
    public var now: @Sendable () -> Moment = {
      var ts = timespec()
      clock_gettime(CLOCK_REALTIME, &ts)
      return Moment(
        monotonic: Double(monotonicNanoseconds()) / 1e9,
        wall: Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9)
    }

    public init(
      destinations: Destinations, queue: ListenQueue, log: ListenLog?,
      transport: any Transport
    ) {
      self.destinations = destinations
      self.queue = queue
      self.log = log
      self.transport = transport
    }
  }

  private let configuration: Configuration
  private let inbox = Locked<[ListenRules.Input]>([])
  private let counting = Platform.Semaphore()
  private let sending = Platform.Semaphore()
  /// The latest now playing to tell, taken by the sender.
  private let nowPlaying = Locked<ListenedTrack?>(nil)
  /// Listens counted and written so far (for tests and the status).
  public let counted = Locked<[Listen]>([])
  private let stopped = Locked(false)

  public init(_ configuration: Configuration) {
    self.configuration = configuration
  }

  /// Starts counting `player`'s listens, and sending what waits in the queue.
  public func start(observing player: any PlayerConnection) {
    let facts = Self.facts(player.snapshot)
    inbox.withLock { $0.append(.facts(facts)) }
    player.observe { [weak self] snapshot, notices in
      guard let self else { return }
      var inputs: [ListenRules.Input] = [.facts(Self.facts(snapshot))]
      for notice in notices {
        switch notice {
        case .nowPlaying(let track): inputs.append(.started(entry: track.id))
        case .seeked(let to): inputs.append(.seeked(to: to))
        case .message, .couldNotPlay, .queueEnded, .outputFailed: continue
        }
      }
      self.inbox.withLock { $0 += inputs }
      self.counting.signal()
    }
    startThread(named: "hark-listens") { [self] in countLoop() }
    startThread(named: "hark-scrobble") { [self] in sendLoop() }
    counting.signal()
    sending.signal()
  }

  /// Stops both threads at their next wake-up (a test's end).
  public func stop() {
    stopped.withLock { $0 = true }
    counting.signal()
    sending.signal()
  }

  /// A snapshot as the rules read it.
  public static func facts(_ s: PlayerSnapshot) -> PlayingFacts {
    guard let current = s.current else { return PlayingFacts() }
    var t = ListenedTrack(path: current.path)
    t.title = s.metadata.title ?? s.title
    t.artist = s.metadata.artist
    t.album = s.metadata.album
    t.trackNumber = s.metadata.trackNumber
    t.duration = s.duration
    t.isLive = s.isLive
    t.isSpoken = s.isSpoken
    let state: PlayingFacts.State
    switch s.state {
    case .playing: state = .playing
    case .paused: state = .paused
    case .stopped: state = .stopped
    }
    return PlayingFacts(
      entry: current.id, track: t, state: state, isAdvancing: s.isAdvancing,
      position: s.position)
  }

  // MARK: Counting

  private func countLoop() {
    var rules = ListenRules(sendSpokenWord: configuration.sendSpokenWord)
    while !stopped.withLock({ $0 }) {
      let inputs = inbox.withLock { i -> [ListenRules.Input] in
        defer { i = [] }
        return i
      }
      var effects: [ListenRules.Effect] = []
      for input in inputs { effects += rules.handle(input, at: configuration.now()) }
      if let deadline = rules.deadline, deadline <= configuration.now().monotonic {
        effects += rules.handle(.tick, at: configuration.now())
      }
      for effect in effects { carryOut(effect) }
      if let deadline = rules.deadline {
        let wait = max(0, deadline - configuration.now().monotonic)
        // A little after it, so that the heard time is past the threshold when it is read.
        counting.wait(microseconds: Int(min(wait, 3600) * 1_000_000) + 20_000)
      } else {
        counting.wait()
      }
    }
  }

  private func carryOut(_ effect: ListenRules.Effect) {
    switch effect {
    case .nowPlaying(let track):
      guard track.isSendable, !configuration.destinations.services.isEmpty,
        !track.isSpoken || configuration.sendSpokenWord
      else { return }
      nowPlaying.withLock { $0 = track }
      sending.signal()
    case .listened(let listen, let send):
      // On disk first, then counted, then sent: a crash after this line loses nothing.
      do { try configuration.log?.append(listen) } catch {
        configuration.report("cannot write the listen to the log: \(error)")
      }
      let services = send ? configuration.destinations.services : []
      do { try configuration.queue.add(listen, for: services) } catch {
        configuration.report("cannot queue the listen to send: \(error)")
      }
      configuration.countPlay(listen)
      counted.withLock { $0.append(listen) }
      configuration.report(
        "listened: '\(listen.track.title ?? listen.track.path)'"
          + (services.isEmpty
            ? "" : " (to send to \(services.map(\.name).joined(separator: ", ")))"))
      if !services.isEmpty { sending.signal() }
    }
  }

  // MARK: Sending

  /// Per service: when it may be tried again, and whether its credentials were refused.
  private struct ServiceState {
    var backoff = Backoff()
    var refused: String?
    var lastProblem: String?
    var sent = 0
  }

  private func sendLoop() {
    var sender = Sender(
      queue: configuration.queue, transport: configuration.transport,
      destinations: configuration.destinations)
    sender.timeout = configuration.timeout
    var states: [Service: ServiceState] = [:]
    while !stopped.withLock({ $0 }) {
      if let track = nowPlaying.withLock({ t -> ListenedTrack? in
        defer { t = nil }
        return t
      }) {
        for service in configuration.destinations.services where states[service]?.refused == nil {
          // Old news if it fails: not tried again; refused credentials are news, though.
          if case .refused(let why) = sender.sendNowPlaying(track, to: service) {
            states[service, default: ServiceState()].refused = why
            states[service, default: ServiceState()].lastProblem = why
            configuration.report("\(service.name): \(why); listens are kept until it is fixed")
          }
        }
      }
      let now = configuration.now().monotonic
      var nextTry: Double?
      for service in configuration.destinations.services {
        var state = states[service] ?? ServiceState()
        defer { states[service] = state }
        guard state.refused == nil else { continue }
        guard state.backoff.mayTry(at: now) else {
          nextTry = min(nextTry ?? .infinity, state.backoff.notBefore ?? now)
          continue
        }
        switch sender.sendPending(to: service) {
        case .done(let sent, let dropped, let why):
          if sent > 0 || dropped > 0 || state.backoff.failures > 0 {
            configuration.report(
              "\(service.name): \(sent) listen\(sent == 1 ? "" : "s") sent"
                + (dropped > 0 ? ", \(dropped) refused for good (\(why ?? ""))" : ""))
          }
          state.sent += sent
          state.backoff.succeeded()
          state.lastProblem = nil
        case .later(let sent, let verdict):
          state.sent += sent
          switch verdict {
          case .refused(let why):
            state.refused = why
            state.lastProblem = why
            configuration.report("\(service.name): \(why); listens are kept until it is fixed")
          case .retry(let after, let why):
            state.backoff.failed(at: now, serverSaid: after)
            state.lastProblem = why
            nextTry = min(nextTry ?? .infinity, state.backoff.notBefore ?? now)
            configuration.report(
              "\(service.name): \(why); trying again in "
                + "\(Int(((state.backoff.notBefore ?? now) - now).rounded())) s")
          case .accepted, .rejected:
            break
          }
        }
      }
      writeStatus(states)
      if let nextTry {
        let wait = max(0, nextTry - configuration.now().monotonic)
        sending.wait(microseconds: Int(min(wait, 3600) * 1_000_000) + 10_000)
      } else {
        sending.wait()
      }
    }
  }

  /// The sender's state, for `hark scrobble status`: per service, the last problem, whether
  /// it is refused, and when the next try is (seconds since 1970).
  public struct Status: Codable, Hashable, Sendable {
    public struct Entry: Codable, Hashable, Sendable {
      public var service: Service
      public var problem: String?
      public var refused: Bool
      public var nextTry: Double?
      public var sent: Int
    }
    public var pid: Int32
    public var services: [Entry]
  }

  private func writeStatus(_ states: [Service: ServiceState]) {
    guard let path = configuration.statusPath else { return }
    let now = configuration.now()
    let status = Status(
      pid: getpid(),
      services: configuration.destinations.services.map { s in
        let st = states[s] ?? ServiceState()
        return Status.Entry(
          service: s, problem: st.lastProblem, refused: st.refused != nil,
          nextTry: st.backoff.notBefore.map { now.wall + max(0, $0 - now.monotonic) },
          sent: st.sent)
      })
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let data = try? encoder.encode(status) else { return }
    try? replaceFile(path, with: [UInt8](data))
  }
}
