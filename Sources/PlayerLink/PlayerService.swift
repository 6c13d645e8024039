import Dispatch
import Glibc
import Platform
import PlayerEngine
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
  private let lines: [String]
  private let onQuit: @Sendable () -> Void
  private let wake: WakePipe
  private let outgoing = DispatchQueue(label: "hark-link-out")
  /// The attached interfaces and whether the service ended; touched on `outgoing` only.
  private let clients = Mutex<[Int: LinkClient]>([:])
  private let ended = Atomic<Bool>(false)
  private let started = Atomic<Bool>(false)
  private let nextClient = Atomic<Int>(0)
  private let log: @Sendable (String) -> Void

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
      lockFD = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
      guard lockFD >= 0 else { throw .system(.last("opening '\(lockPath)'")) }
      if flock(lockFD, LOCK_EX | LOCK_NB) != 0 {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = pread(lockFD, &buffer, buffer.count, 0)
        close(lockFD)
        let text = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
        throw .taken(pid: Int32(text.filter(\.isNumber)))
      }
      ftruncate(lockFD, 0)
      let pidText = Array("\(getpid())\n".utf8)
      _ = pidText.withUnsafeBytes { pwrite(lockFD, $0.baseAddress, $0.count, 0) }
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
    self.lines = lines
    self.onQuit = onQuit
    self.log = log
    self.wake = wake
  }

  /// Starts serving: from now on every change of the player goes to every interface attached.
  public func start() {
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

  /// Says `.ending(why, problem)` to every interface attached, lets each read it (waiting at most the
  /// send timeout for one that does not), then closes the socket and releases the lock.
  public func end(why: String, problem: String? = nil) {
    guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
    // No interface attaches to a player on its way out (a `hark` started just after q starts
    // a player of its own); the accepting thread closes the listener as it ends.
    unlink(socketPath)
    if started.load(ordering: .acquiring) { wake.wake() } else { close(listener) }
    let attached = outgoing.sync {
      let all = clients.withLock { c in
        defer { c.removeAll() }
        return Array(c.values)
      }
      if let line = try? LinkCodec.encode(LinkEvent.ending(why: why, problem: problem)) {
        for client in all { client.enqueue(line) }
      }
      return all
    }
    for client in attached { client.finish() }
    if lockFD >= 0 { close(lockFD) }
  }

  // MARK: Accepting

  private func acceptLoop() {
    var fds = [
      pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0),
    ]
    while !ended.load(ordering: .acquiring) {
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
        log("player link: \(error)")
        continue
      }
      guard let fd else { continue }
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

  /// Greets a new interface with the player as it is now, queue and all.
  private func attach(_ client: LinkClient) {
    guard !ended.load(ordering: .acquiring) else {
      client.cut()
      return
    }
    let snapshot = player.snapshot
    guard let hello = try? LinkCodec.encode(LinkEvent.hello(pid: getpid(), lines: lines)),
      let full = try? LinkCodec.encode(
        LinkEvent.update(snapshot, queueOmitted: false, notices: []))
    else { return }
    client.enqueue(hello)
    client.enqueue(full)
    client.sent = (snapshot.queue, snapshot.playOrder)
    clients.withLock { $0[client.id] = client }
  }

  /// On `outgoing`: the snapshot to each interface, without the queue for those that have it.
  private func broadcast(_ snapshot: PlayerSnapshot, _ notices: [PlayerNotice]) {
    let all = clients.withLock { Array($0.values) }
    guard !all.isEmpty else { return }
    var full: [UInt8]?
    var short: [UInt8]?
    for client in all {
      // The same arrays most of the time, which compare at once.
      if client.sent.queue == snapshot.queue && client.sent.order == snapshot.playOrder {
        if short == nil {
          var bare = snapshot
          bare.queue = []
          bare.playOrder = []
          short = try? LinkCodec.encode(
            LinkEvent.update(bare, queueOmitted: true, notices: notices))
        }
        if let short { client.enqueue(short) }
      } else {
        if full == nil {
          full = try? LinkCodec.encode(
            LinkEvent.update(snapshot, queueOmitted: false, notices: notices))
        }
        if let full { client.enqueue(full) }
        client.sent = (snapshot.queue, snapshot.playOrder)
      }
    }
  }

  // MARK: Requests

  /// One interface's requests, each carried out before the next is read, until it goes.
  private func read(_ client: LinkClient) {
    var framer = LineFramer(limit: LinkCodec.maximumLineBytes)
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
      outgoing.async { client.enqueue(line) }
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

/// One attached interface: its socket, and what was last sent of the queue.
private final class LinkClient: @unchecked Sendable {
  let fd: Int32
  let id: Int
  private let writes = DispatchQueue(label: "hark-link-write")
  /// What it was last sent of the queue; read and written on the service's `outgoing` only.
  var sent: (queue: [QueuedTrack], order: [QueuedTrack]) = ([], [])
  /// Bytes queued and not yet written: an interface that stopped reading is cut off past
  /// `limit` rather than let grow.
  private let pending = Atomic<Int>(0)
  private let dead = Atomic<Bool>(false)
  private static let limit = 512 * 1024 * 1024

  init(fd: Int32, id: Int) {
    self.fd = fd
    self.id = id
    // Blocking, with deadlines: a write that cannot go out within 2 s ends the connection.
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  func enqueue(_ line: [UInt8]) {
    guard !dead.load(ordering: .acquiring) else { return }
    if pending.add(line.count, ordering: .relaxed).newValue > Self.limit {
      cut()
      return
    }
    writes.async { [self] in
      defer { pending.subtract(line.count, ordering: .relaxed) }
      guard !dead.load(ordering: .acquiring) else { return }
      do {
        _ = try line.withUnsafeBytes { raw throws(SystemError) in try UnixSocket.send(fd, raw) }
      } catch {
        cut()
      }
    }
  }

  /// Sends what is queued, then shuts the connection (its reader sees the end, and closes it).
  func finish() {
    writes.sync {}
    cut()
  }

  /// Closes the descriptor once the writes queued before are done (by its reader, as it ends:
  /// nothing reads or writes it after).
  func close() {
    cut()
    writes.async { [fd] in _ = Glibc.close(fd) }
  }

  func cut() {
    guard !dead.exchange(true, ordering: .acquiringAndReleasing) else { return }
    shutdown(fd, Int32(SHUT_RDWR))
  }
}
