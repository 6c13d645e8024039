import AudioCore
import Dispatch
import Glibc
import Platform
import PlayerCore
import SessionClient
import SessionCore
import SessionWire
import Synchronization

/// Why a player cannot serve interfaces at a socket.
public enum PlayerServiceError: Error, Sendable, CustomStringConvertible {
  /// Another player holds the lock and serves there (its pid, when the lock file says).
  case taken(pid: Int32?)
  case system(SystemError)

  public var description: String {
    switch self {
    case .taken(let pid): "another hark player serves there" + (pid.map { " (pid \($0))" } ?? "")
    case .system(let e): "\(e)"
    }
  }
}

/// A player served to the terminal interfaces attached to it, over a Unix socket of its own:
/// the player plays on in its own process while interfaces come and go (detach, attach), each a
/// `RemotePlayer` to its viewer.
///
/// Threads. One thread accepts; each interface has a thread that reads its requests (one at a
/// time, in order, each carried out before the next is read) and a serial queue that writes to
/// it, with a send timeout so that an interface that stopped reading cannot stall anything. What
/// goes out (hellos, snapshots, answers, the ending) is decided on one serial queue, so every
/// interface sees the player's changes in the order they happened, and the player's observer
/// only hands the snapshot over: encoding a 50,000-track queue is not done on its context.
public final class PlayerService: Sendable {
  private let player: any PlayerConnection
  private let socketPath: String
  private let listener: Int32
  private let lockFD: Int32
  /// What greets an interface that attaches; touched on `outgoing` only.
  private let lines: Locked<[String]>
  private let onQuit: @Sendable () -> Void
  private let wake: WakePipe
  private let outgoing = DispatchQueue(label: "hark-link-out")
  /// The attached interfaces and whether the service ended; touched on `outgoing` only.
  private let clients = Locked<[Int: LinkClient]>([:])
  private let ended = Atomic<Bool>(false)
  private let started = Atomic<Bool>(false)
  private let accepting = Atomic<Bool>(true)
  private let nextClient = Atomic<Int>(0)
  /// Entered while requests are held (`start(holdingRequests:)`), left by `takeRequests`.
  private let held = DispatchGroup()
  private let holding = Atomic<Bool>(false)
  private let log: @Sendable (String) -> Void
  static let mostClients = 32

  /// Where a player serves: its socket, listening, and the lock it holds. Taken before the
  /// player starts, so that of two racing players the second ends before it registers anywhere,
  /// and an interface can connect while the player gets ready.
  public struct Endpoint: ~Copyable, Sendable {
    fileprivate let socketPath: String
    fileprivate let listener: Int32
    fileprivate let lockFD: Int32
  }

  /// Takes `lockPath` (flock, holding this process's pid) when given, and listens at
  /// `socketPath` (0600).
  public static func bind(socketPath: String, lockPath: String?) throws(PlayerServiceError)
    -> Endpoint
  {
    var lockFD: Int32 = -1
    if let lockPath {
      do { lockFD = try takeLock(lockPath) } catch {
        switch error {
        case .held(let holder): throw .taken(pid: holder)
        case .system(let failure): throw .system(failure)
        }
      }
    }
    let listener: Int32
    do { listener = try UnixSocket.listen(at: socketPath, backlog: 8) } catch {
      if lockFD >= 0 { close(lockFD) }
      throw .system(error)
    }
    return Endpoint(socketPath: socketPath, listener: listener, lockFD: lockFD)
  }

  /// Serves `player` at `endpoint`. `lines` greet every interface that attaches; `log` takes
  /// lines for the player's log; `onQuit` is called when one asks the player to end (q).
  public init(
    player: any PlayerConnection, at endpoint: consuming Endpoint, lines: [String],
    log: @escaping @Sendable (String) -> Void, onQuit: @escaping @Sendable () -> Void
  ) throws(PlayerServiceError) {
    let wake: WakePipe
    do { wake = try WakePipe() } catch { throw .system(error) }
    self.player = player
    self.socketPath = endpoint.socketPath
    self.listener = endpoint.listener
    self.lockFD = endpoint.lockFD
    self.lines = Locked(lines)
    self.onQuit = onQuit
    self.log = log
    self.wake = wake
  }

  /// Starts serving: from now on every change of the player goes to every interface attached.
  /// `holdingRequests`: interfaces attach and see the player at once, but what they ask waits
  /// until `takeRequests()` (a saved queue of 50,000 tracks is restored meanwhile: a `q` then
  /// would save the queue half restored).
  public func start(holdingRequests: Bool = false) {
    if holdingRequests, !holding.exchange(true, ordering: .acquiringAndReleasing) {
      held.enter()
    }
    // Weakly: the player outlives a service that ended (in tests, neither lives as long as
    // the process).
    player.observe { [weak self] snapshot, notices in
      guard let self else { return }
      outgoing.async { self.broadcast(snapshot, notices) }
    }
    started.store(true, ordering: .releasing)
    startThread(named: "hark-link") { [self] in
      acceptLoop()
      close(listener)
    }
  }

  /// Tells the interfaces attached (with the player's snapshot, as a notice) and greets those
  /// that attach later with it (a line of their hello): what the player found after it began
  /// serving, a damaged saved queue.
  public func announce(_ message: PlayerMessage) {
    let player = self.player
    outgoing.async { [self] in
      lines.withLock { $0.append(message.helloLine) }
      broadcast(player.snapshot, [.message(message)])
    }
  }

  /// Carries out the requests held since `start(holdingRequests: true)`, and those after.
  public func takeRequests() {
    if holding.exchange(false, ordering: .acquiringAndReleasing) { held.leave() }
  }

  /// Says `.ending(why, problem)` to every interface attached, lets each read it (waiting at most the
  /// send timeout for one that does not), then closes the socket and releases the lock.
  public func end(why: String, problem: String? = nil) {
    guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
    takeRequests()
    // No interface attaches to a player on its way out (a `hark` started just after q starts
    // a player of its own); the accepting thread closes the listener as it ends.
    unlink(socketPath)
    if started.load(ordering: .acquiring) { wake.wake() } else { close(listener) }
    let attached = outgoing.sync {
      let all = clients.withLock { c in
        defer { c.removeAll() }
        return Array(c.values)
      }
      return all
    }
    let farewell = (try? LinkCodec.encode(LinkEvent.ending(why: why, problem: problem))) ?? []
    for client in attached { client.finish(farewell) }
    if lockFD >= 0 { close(lockFD) }
  }

  // MARK: Accepting

  /// Takes no new interface from now on (the player is on its way out: a `hark` started now
  /// starts a player of its own, once this one has gone, rather than attach to one that ends).
  public func stopAccepting() {
    guard accepting.exchange(false, ordering: .acquiringAndReleasing) else { return }
    unlink(socketPath)
    wake.wake()
  }

  private func acceptLoop() {
    var fds = [
      pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0),
    ]
    while !ended.load(ordering: .acquiring) && accepting.load(ordering: .acquiring) {
      fds[0].revents = 0
      fds[1].revents = 0
      if poll(&fds, 2, -1) < 0 {
        if errno == EINTR { continue }
        log("player link: poll failed: \(String(cString: strerror(errno)))")
        return
      }
      if fds[1].revents != 0 { return }
      let fd: Int32?
      do { fd = try UnixSocket.accept(listener) } catch {
        // Out of descriptors, say: not a loop that fills the log.
        log("player link: \(error)")
        usleep(100_000)
        continue
      }
      guard let fd else { continue }
      // A user has a few terminals, not hundreds: past that, something is wrong.
      guard clients.withLock({ $0.count }) < Self.mostClients else {
        log("player link: \(Self.mostClients) interfaces attached already; refusing another")
        close(fd)
        continue
      }
      // Only this user's own interfaces (the socket is 0600 in a 0700 folder already).
      guard let peer = try? UnixSocket.peer(fd), peer.uid == geteuid() else {
        close(fd)
        continue
      }
      let client = LinkClient(fd: fd, id: nextClient.add(1, ordering: .relaxed).newValue)
      outgoing.async { self.attach(client) }
      startThread(named: "hark-link-in") { [self] in read(client) }
    }
  }

  /// Greets a new interface with the player as it is now, queue and all; but not once the
  /// player has been asked to quit: one accepted just before the quit, and greeted after it,
  /// is cut before its hello, and starts a player of its own (it was told the player ended).
  private func attach(_ client: LinkClient) {
    guard !ended.load(ordering: .acquiring), accepting.load(ordering: .acquiring),
      let hello = try? LinkCodec.encode(
        LinkEvent.hello(pid: getpid(), lines: lines.withLock { $0 }))
    else {
      client.cut()
      return
    }
    client.greet(hello, player.snapshot)
    clients.withLock { $0[client.id] = client }
  }

  /// On `outgoing`: the snapshot to each interface (which sends the latest it has when it can).
  private func broadcast(_ snapshot: PlayerSnapshot, _ notices: [PlayerNotice]) {
    for client in clients.withLock({ Array($0.values) }) { client.update(snapshot, notices) }
  }

  // MARK: Requests

  /// One interface's requests, each carried out before the next is read, until it goes.
  private func read(_ client: LinkClient) {
    var framer = LineFramer(limit: LinkCodec.maximumRequestBytes)
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    reading: while true {
      let n = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { break }
      framer.append(buffer[0..<n])
      while true {
        let line: ArraySlice<UInt8>?
        do { line = try framer.nextLine() } catch {
          log("player link: an interface sent too long a line; closing it")
          break reading
        }
        guard let line else { break }
        guard let request = try? LinkCodec.decode(LinkRequest.self, from: line) else {
          log("player link: an interface sent a line that is no request; closing it")
          break reading
        }
        held.wait()
        carryOut(request, for: client)
      }
    }
    // Gone (detached, or its terminal closed): the player plays on.
    client.close()
    outgoing.async { [self] in _ = clients.withLock { $0.removeValue(forKey: client.id) } }
  }

  private func carryOut(_ request: LinkRequest, for client: LinkClient) {
    let player = self.player
    let answer: @Sendable (LinkEvent) -> Void = { [outgoing] event in
      guard let line = try? LinkCodec.encode(event) else { return }
      // After the snapshot the request brought about, which is on `outgoing` already.
      outgoing.async { client.answer(line) }
    }
    switch request {
    case .command(let id, let command):
      blockOn { answer(.answered(id: id, await player.send(command))) }
    case .action(let id, let action):
      blockOn {
        await player.perform(action)
        answer(.done(id: id))
      }
    case .quit:
      stopAccepting()
      onQuit()
    }
  }
}

/// Runs `body` on a task and waits for it (on a reader's own thread, which has nothing else to
/// do until the request is carried out).
private func blockOn(_ body: @escaping @Sendable () async -> Void) {
  let done = DispatchSemaphore(value: 0)
  Task {
    await body()
    done.signal()
  }
  done.wait()
}

/// One attached interface and what it is to be sent. Sending is coalesced: its writer sends
/// the greeting once, then the latest snapshot (with every notice since the one sent before,
/// and the queue only when it is not the one sent last), then the answers, and last the
/// farewell. An interface that stops reading for a while (Ctrl-Z) holds the player's latest
/// snapshot, not every one since, and is sent it, whole, when it reads again.
private final class LinkClient: @unchecked Sendable {
  let fd: Int32
  let id: Int
  private struct Out {
    var greeting: [UInt8]?
    var snapshot: PlayerSnapshot?
    var notices: [PlayerNotice] = []
    var answers: [[UInt8]] = []
    var farewell: [UInt8]?
    var writing = false
    /// Cut: nothing more is sent.
    var dead = false
    /// The descriptor is closed (its number may be another file's now).
    var closed = false
  }
  private let out = Locked(Out())
  private let writes = DispatchQueue(label: "hark-link-write")
  /// Signalled each time the writer has sent all there was and stops.
  private let idle = DispatchSemaphore(value: 0)
  /// What it was last sent of the queue; the writer's own (it runs on `writes` only).
  private var sentQueue: [QueuedTrack]?
  private var sentOrder: [QueuedTrack] = []

  init(fd: Int32, id: Int) {
    self.fd = fd
    self.id = id
    // Blocking writes with a deadline, so that the writer looks up every second: a cut
    // connection (or a farewell to an interface that no longer reads) never holds it for good.
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
    var timeout = timeval(tv_sec: 1, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  func greet(_ hello: [UInt8], _ snapshot: PlayerSnapshot) {
    change {
      $0.greeting = hello
      $0.snapshot = snapshot
    }
  }

  func update(_ snapshot: PlayerSnapshot, _ notices: [PlayerNotice]) {
    change {
      $0.snapshot = snapshot
      $0.notices += notices
    }
  }

  func answer(_ line: [UInt8]) { change { $0.answers.append(line) } }

  /// Sends the farewell after what is waiting, waiting at most 2 s for an interface that does
  /// not read, then cuts the connection (its reader sees the end, and closes it).
  func finish(_ farewell: [UInt8]) {
    change { $0.farewell = farewell }
    let deadline = DispatchTime.now() + .seconds(2)
    while out.withLock({ $0.writing && !$0.dead }) {
      if idle.wait(timeout: deadline) == .timedOut { break }
    }
    cut()
  }

  /// Nothing more is sent; the peer sees the end.
  func cut() {
    out.withLock { o in
      guard !o.dead else { return }
      o.dead = true
      if !o.closed { shutdown(fd, Int32(SHUT_RDWR)) }
    }
  }

  /// Closes the descriptor once the writer has stopped (by its reader, as it ends: nothing reads
  /// it after).
  func close() {
    cut()
    writes.async { [self] in
      out.withLock { o in
        o.closed = true
        _ = Glibc.close(fd)
      }
    }
  }

  private func change(_ body: (inout Out) -> Void) {
    let start = out.withLock { o -> Bool in
      guard !o.dead else { return false }
      body(&o)
      guard !o.writing else { return false }
      o.writing = true
      return true
    }
    if start { writes.async { [self] in drain() } }
  }

  /// The writer: sends what is waiting until nothing is, or the connection is cut.
  private func drain() {
    while true {
      let (greeting, snapshot, notices, answers, farewell) = out.withLock { o in
        defer {
          o.greeting = nil
          o.snapshot = nil
          o.notices = []
          o.answers = []
          o.farewell = nil
          if o.dead { o.writing = false }
        }
        return o.dead
          ? (nil, nil, [], [], nil) : (o.greeting, o.snapshot, o.notices, o.answers, o.farewell)
      }
      var lines: [[UInt8]] = []
      if let greeting { lines.append(greeting) }
      if let snapshot { lines += encode(snapshot, notices, attaching: greeting != nil) }
      lines += answers
      if let farewell { lines.append(farewell) }
      if lines.isEmpty {
        let stopped = out.withLock { o -> Bool in
          // Anything new since it looked goes out in another round.
          guard o.snapshot == nil && o.greeting == nil && o.answers.isEmpty && o.farewell == nil
          else { return false }
          o.writing = false
          return true
        }
        if stopped {
          idle.signal()
          return
        }
        continue
      }
      for line in lines where !send(line) {
        cut()
        out.withLock { $0.writing = false }
        idle.signal()
        return
      }
    }
  }

  /// The snapshot's line, and the queue's before it when it is not the one this interface was
  /// sent last (the same arrays most of the time, which compare at once); on attaching, the
  /// queue after it, so that the interface draws before it reads 50,000 paths.
  private func encode(_ snapshot: PlayerSnapshot, _ notices: [PlayerNotice], attaching: Bool)
    -> [[UInt8]]
  {
    var bare = snapshot
    bare.queue = []
    bare.playOrder = []
    guard let update = try? LinkCodec.encode(LinkEvent.update(bare, notices: notices)) else {
      return []
    }
    if let sentQueue, sentQueue == snapshot.queue, sentOrder == snapshot.playOrder {
      return [update]
    }
    sentQueue = snapshot.queue
    sentOrder = snapshot.playOrder
    let queue = LinkCodec.encodeQueue(
      QueueList(queue: snapshot.queue, playOrder: snapshot.playOrder))
    return attaching ? [update, queue] : [queue, update]
  }

  /// All of `line`, however long the interface takes to read it, unless the connection is cut
  /// or fails; whether it went.
  private func send(_ line: [UInt8]) -> Bool {
    var done = 0
    while done < line.count {
      if out.withLock({ $0.dead }) { return false }
      do {
        done += try line.withUnsafeBytes { raw throws(SystemError) in
          try UnixSocket.send(fd, UnsafeRawBufferPointer(rebasing: raw[done...]))
        }
      } catch {
        return false
      }
    }
    return true
  }
}

extension PlayerMessage {
  /// The message as a line of a hello (capitalised, as the status line shows it): how an
  /// announcement reaches an interface that attaches after it (`announce`), or with its first
  /// snapshot (`RemotePlayer.attach`).
  var helloLine: String { description.capitalisedFirst }
}
