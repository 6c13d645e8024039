import Dispatch
import Glibc
import Platform
import PlayerCore
import SessionClient
import SessionCore
import SessionWire

/// Why an interface could not attach to a player.
public enum AttachError: Error, Sendable, CustomStringConvertible {
  /// Nothing serves at the socket (no player, or one that has gone).
  case noPlayer
  /// Something answered, but not as a player does, or not in time.
  case unexpected(String)

  public var description: String {
    switch self {
    case .noPlayer: "no hark player serves there"
    case .unexpected(let why): why
    }
  }
}

/// A player in another process, as the interface attached to it sees it: the snapshot it last
/// sent, its notices, and requests carried out there. One thread reads what it sends.
public final class RemotePlayer: PlayerConnection, Sendable {
  /// The player's process.
  public let pid: Int32
  /// What the player had to say to an interface that attaches (no session server, say).
  public let lines: [String]
  /// The connection; -1 once closed. Written to (and closed) under the lock, so that nothing is
  /// ever written to a number the process has since given to another file.
  private let connection: Locked<Int32>
  /// Read by the reading thread only, which alone closes it.
  private let fd: Int32
  private let state: Locked<State>
  private let gone = DispatchSemaphore(value: 0)
  /// Held while observers are told. Until someone observes, the notices that came meanwhile
  /// (between attaching and the interface starting: a damaged saved queue announced once the
  /// player had read it), the latest `mostUnheard` of them, for the first observer, which is
  /// told them before anything that came after; nil once someone observes.
  private let unheard = Locked<[PlayerNotice]?>([])
  static let mostUnheard = 64

  private struct State: ~Copyable {
    var snapshot: PlayerSnapshot
    var observers: [@Sendable (PlayerSnapshot, [PlayerNotice]) -> Void] = []
    var endObservers: [@Sendable (String) -> Void] = []
    var commands: [Int: CheckedContinuation<CommandStatus, Never>] = [:]
    var actions: [Int: CheckedContinuation<Void, Never>] = [:]
    var nextID = 1
    /// The player said it is ending: why, and why the queue was not saved if it was not.
    var ending: (why: String, problem: String?)?
    /// This side closed the connection (detached, or quit and was answered).
    var leaving = false
    var closed = false
    /// Why the player went away under the interface, once it did.
    var gone: String?
  }

  /// Connects to the player serving at `socketPath` and reads its greeting and snapshot, for
  /// at most `timeout`. The queue is read after, by the reading thread: until it comes, the
  /// snapshot's is empty.
  public static func attach(to socketPath: String, timeout: Duration = .seconds(5))
    throws(AttachError) -> RemotePlayer
  {
    let fd: Int32
    do { fd = try UnixSocket.connect(to: socketPath) } catch {
      if [ECONNREFUSED, ENOENT, ENOTSOCK].contains(error.code) { throw .noPlayer }
      throw .unexpected("\(error)")
    }
    let seconds = timeout.components.seconds
    var deadline = timeval(tv_sec: Int(max(1, seconds)), tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &deadline, socklen_t(MemoryLayout<timeval>.size))
    var framer = LineFramer(limit: LinkCodec.maximumLineBytes)
    var hello: (pid: Int32, lines: [String])?
    var first: PlayerSnapshot?
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while first == nil {
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else {
        close(fd)
        throw n == 0 ? .noPlayer : .unexpected("the hark player did not answer in time")
      }
      framer.append(buffer[0..<n])
      while first == nil, let line = try? framer.nextLine() {  // (too long a line: no answer)
        switch try? LinkCodec.decode(LinkEvent.self, from: line) {
        case .hello(let pid, let lines)?: hello = (pid, lines)
        case .update(let snapshot, let notices)? where hello != nil:
          first = snapshot
          // What the player announced as this interface attached (a damaged saved queue) comes
          // as a notice of this first update, not in the hello: said as the hello's lines are.
          for case .message(let message) in notices { hello?.lines.append(message.helloLine) }
        case .ending?:
          close(fd)
          throw .noPlayer
        default:
          close(fd)
          throw .unexpected("'\(socketPath)' does not speak as a hark player does")
        }
      }
    }
    var none = timeval(tv_sec: 0, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
    // A player that stopped reading (hung, stopped) cannot hold a key's request, or q, for good.
    var sendDeadline = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendDeadline, socklen_t(MemoryLayout<timeval>.size))
    guard let hello, let first else {
      close(fd)
      throw .unexpected("'\(socketPath)' does not speak as a hark player does")
    }
    let player = RemotePlayer(fd: fd, hello: hello, snapshot: first)
    let leftover = framer
    startThread(named: "hark-link-in") { player.read(leftover) }
    return player
  }

  private init(fd: Int32, hello: (pid: Int32, lines: [String]), snapshot: PlayerSnapshot) {
    self.fd = fd
    connection = Locked(fd)
    pid = hello.pid
    lines = hello.lines
    state = Locked(State(snapshot: snapshot))
  }

  // MARK: PlayerConnection

  public var snapshot: PlayerSnapshot { state.withLock { $0.snapshot } }

  /// `handler` is told each update from now on, on the reading thread (the first to observe is
  /// told at once what came before it); it must not observe, which would wait for itself.
  public func observe(_ handler: @escaping @Sendable (PlayerSnapshot, [PlayerNotice]) -> Void) {
    unheard.withLock { kept in
      let snapshot = state.withLock { s in
        s.observers.append(handler)
        return s.snapshot
      }
      if let notices = kept, !notices.isEmpty { handler(snapshot, notices) }
      kept = nil
    }
  }

  public func observeEnd(_ handler: @escaping @Sendable (String) -> Void) {
    // Gone already (between attaching and the interface starting): said at once.
    let gone = state.withLock { s -> String? in
      if s.gone == nil { s.endObservers.append(handler) }
      return s.gone
    }
    if let gone { handler(gone) }
  }

  public func send(_ command: RemoteCommand) async -> CommandStatus {
    await withCheckedContinuation { (reply: CheckedContinuation<CommandStatus, Never>) in
      let id: Int? = state.withLock { s in
        guard !s.closed else { return nil }
        defer { s.nextID += 1 }
        s.commands[s.nextID] = reply
        return s.nextID
      }
      guard let id else { return reply.resume(returning: .commandFailed) }
      if !write(.command(id: id, command)) {
        state.withLock { $0.commands.removeValue(forKey: id) }?.resume(returning: .commandFailed)
      }
    }
  }

  public func perform(_ action: PlayerAction) async {
    await withCheckedContinuation { (reply: CheckedContinuation<Void, Never>) in
      let id: Int? = state.withLock { s in
        guard !s.closed else { return nil }
        defer { s.nextID += 1 }
        s.actions[s.nextID] = reply
        return s.nextID
      }
      guard let id else { return reply.resume() }
      if !write(.action(id: id, action)) {
        state.withLock { $0.actions.removeValue(forKey: id) }?.resume()
      }
    }
  }

  /// Sends an edit without waiting for it: the player carries out one connection's requests in
  /// the order they came, so it is done before anything sent after it (the interface draws
  /// while a saved queue of 50,000 tracks is restored).
  public func post(_ action: PlayerAction) {
    let id: Int? = state.withLock { s in
      guard !s.closed else { return nil }
      defer { s.nextID += 1 }
      return s.nextID
    }
    if let id { _ = write(.action(id: id, action)) }
  }

  // MARK: Leaving

  /// Leaves the player playing (detach): the connection closes, the player goes on.
  public func detach() {
    state.withLock { $0.leaving = true }
    cut()
    gone.wait()
  }

  /// Asks the player to stop and end (q), and waits at most `timeout` for it to have done so.
  /// Returns whether it ended, and why it could not save the queue if it could not.
  public func quit(timeout: Duration = .seconds(10)) -> (ended: Bool, problem: String?) {
    state.withLock { $0.leaving = true }
    guard write(.quit) else { return (true, nil) }
    let ms = Int(timeout.components.seconds) * 1000
    let ended = gone.wait(timeout: .now() + .milliseconds(ms)) == .success
    if !ended { cut() }
    return (ended, state.withLock { $0.ending?.problem })
  }

  // MARK: The connection

  /// Sends a request whole, or cuts the connection (a part of a line cannot be taken back).
  private func write(_ request: LinkRequest) -> Bool {
    guard let line = try? LinkCodec.encode(request) else { return false }
    return connection.withLock { fd in
      guard fd >= 0 else { return false }
      let sent = try? line.withUnsafeBytes { raw throws(SystemError) in
        try UnixSocket.send(fd, raw)
      }
      if sent == line.count { return true }
      shutdown(fd, Int32(SHUT_RDWR))
      return false
    }
  }

  /// Ends the connection; the reading thread sees the end, and closes it.
  private func cut() {
    connection.withLock { fd in
      if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
    }
  }

  /// The reading thread: applies what the player sends until the connection ends.
  private func read(_ start: LineFramer) {
    var framer = start
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    var why = "the connection to the hark player (pid \(pid)) was lost"
    reading: while true {
      while true {
        let line: ArraySlice<UInt8>?
        do { line = try framer.nextLine() } catch {
          why = "the hark player (pid \(pid)) sent too long a line"
          break reading
        }
        guard let line else { break }
        guard let event = try? LinkCodec.decode(LinkEvent.self, from: line) else {
          why = "the hark player (pid \(pid)) sent what it should not"
          break reading
        }
        apply(event)
      }
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { break }
      framer.append(buffer[0..<n])
    }
    if let ending = state.withLock({ $0.ending }) {
      why = "the hark player (pid \(pid)) \(ending.why)"
    }
    let (commands, actions, ends, leaving) = state.withLock { s in
      s.closed = true
      s.gone = why
      defer {
        s.commands = [:]
        s.actions = [:]
      }
      return (Array(s.commands.values), Array(s.actions.values), s.endObservers, s.leaving)
    }
    for c in commands { c.resume(returning: .commandFailed) }
    for a in actions { a.resume() }
    connection.withLock { fd in
      close(fd)
      fd = -1
    }
    gone.signal()
    guard !leaving else { return }
    for handler in ends { handler(why) }
  }

  private func apply(_ event: LinkEvent) {
    switch event {
    case .update(var snapshot, let notices):
      unheard.withLock { kept in
        let observers = state.withLock { s in
          snapshot.queue = s.snapshot.queue
          snapshot.playOrder = s.snapshot.playOrder
          s.snapshot = snapshot
          return s.observers
        }
        if let earlier = kept { kept = Array((earlier + notices).suffix(Self.mostUnheard)) }
        for o in observers { o(snapshot, notices) }
      }
    case .queue(let list):
      unheard.withLock { _ in
        let (snapshot, observers) = state.withLock { s in
          s.snapshot.queue = list.queue
          s.snapshot.playOrder = list.playOrder
          return (s.snapshot, s.observers)
        }
        for o in observers { o(snapshot, []) }
      }
    case .answered(let id, let status):
      state.withLock { $0.commands.removeValue(forKey: id) }?.resume(returning: status)
    case .done(let id):
      state.withLock { $0.actions.removeValue(forKey: id) }?.resume()
    case .ending(let why, let problem):
      state.withLock { $0.ending = (why, problem) }
    case .hello:
      break
    }
  }
}
