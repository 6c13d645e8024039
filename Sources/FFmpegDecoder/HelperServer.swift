import CHarkSys
import Glibc
import Platform
import Synchronization

/// The server of each hark-ffmpeg this process runs (`hark-ffmpeg --serve`, described in
/// Sources/hark-ffmpeg/Serve.swift): started when the first file needs FFmpeg, so a run that
/// plays only what libsndfile reads never loads it; then every track and every seek is done by
/// one of its workers, processes forked from it with FFmpeg loaded and kept for the next
/// request, instead of a new hark-ffmpeg loading its 135 libraries (about 30 ms). A crash on a
/// hostile file still ends only the worker that met it; the server itself decodes nothing.
///
/// When there is no server to be had (it cannot be started, or a fresh one ends before its
/// first answer), `spawn` says so and the caller starts the helper itself, as before. A server
/// that ends later (killed) is started again at the next request.
enum HelperServer {
  private static let servers = Locked<[String: Entry]>([:])

  private enum Entry {
    case running(Server)
    /// Tried and failed: the helper is spawned directly from now on.
    case unavailable
  }

  /// Starts `executable arguments…` as a child of `executable`'s server, on `descriptors`:
  /// where its wait status goes (a pipe's write end), then its stdin, stdout, stderr and, when
  /// given, its descriptor 3. The child's pid, or nil when no server can start it: the caller
  /// spawns it itself. The descriptors stay the caller's to close.
  static func spawn(_ executable: String, _ arguments: [String], descriptors: [Int32]) -> pid_t? {
    servers.withLock { servers in
      for _ in 0..<2 {
        if servers[executable] == nil {
          servers[executable] = Server.start(executable).map { .running($0) } ?? .unavailable
          registerShutDown()
        }
        guard case .running(let server) = servers[executable] else { return nil }
        switch server.request(arguments, descriptors) {
        case .started(let pid):
          return pid
        case .refused:
          return nil
        case .gone:
          server.end()
          // One that served before is started again (once a request); a fresh one that could
          // not answer is not tried again.
          servers[executable] = server.hasServed ? nil : .unavailable
        }
      }
      return nil
    }
  }

  /// Starts `executable`'s server now, if it has none, without asking it anything: FFmpeg
  /// loads in it (about 30 ms) while the caller does its own starting up, rather than when the
  /// first file is opened.
  static func prestart(_ executable: String) {
    servers.withLock { servers in
      guard servers[executable] == nil else { return }
      servers[executable] = Server.start(executable).map { .running($0) } ?? .unavailable
      registerShutDown()
    }
  }

  private static let shutDownRegistered = Atomic<Bool>(false)

  /// Once: `shutDown` when this process exits.
  private static func registerShutDown() {
    guard !shutDownRegistered.exchange(true, ordering: .relaxed) else { return }
    atexit { HelperServer.shutDown() }
  }

  /// As the process exits: ends each server and waits (at most a second) until it has been
  /// reaped, so that its children's CPU time, and its own, are counted in this process's as a
  /// spawned helper's are (`time hark play …`, the benchmark's rusage). Skipped when another
  /// thread holds the lock (a request under way): then the server ends on its own as the
  /// process does.
  static func shutDown() {
    let ended: [pid_t]? = servers.withLockIfAvailable { servers in
      var pids: [pid_t] = []
      for case .running(let server) in servers.values {
        server.closeSocket()
        pids.append(server.pid)
      }
      servers = [:]
      return pids
    }
    let deadline = Deadline(after: .seconds(1))
    for pid in ended ?? [] {
      // Platform's reaper thread reaps it; until then waitid finds it (as a zombie, without
      // reaping it: WNOWAIT).
      var info = siginfo_t()
      while waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0,
        !deadline.hasPassed
      {
        usleep(1_000)
      }
    }
  }
}

/// One running `hark-ffmpeg --serve`: its pid and our end of its socket. Used under
/// HelperServer's lock.
private final class Server {
  let pid: pid_t
  private var socket: Int32
  /// Signals reach it through this (-1 where the kernel has none): it may have exited and been
  /// reaped by now (it does so when idle), and its pid be another's.
  private let pidfd: Int32
  private(set) var hasServed = false

  /// How long an answer may take: the first waits for FFmpeg to load (30 ms here, seconds on a
  /// loaded machine or a cold disk).
  private static let answerTimeout: Int32 = 10_000

  private init(pid: pid_t, socket: Int32) {
    self.pid = pid
    self.socket = socket
    pidfd = chs_pidfd_open(pid)
  }

  deinit {
    end()
    if pidfd >= 0 { close(pidfd) }
  }

  /// `executable --serve` on one end of a new socket pair; nil when it cannot be started.
  static func start(_ executable: String) -> Server? {
    var pair: (Int32, Int32) = (-1, -1)
    let made = withUnsafeMutablePointer(to: &pair) {
      $0.withMemoryRebound(to: Int32.self, capacity: 2) { chs_socketpair_seqpacket($0) }
    }
    guard made == 0 else { return nil }
    defer { close(pair.1) }
    do throws(SystemError) {
      // Its own process group, as the helpers it starts have: the terminal's ^C is the
      // player's. A thread of Platform's reaps it when it ends.
      let pid = try spawnDetached(
        executable: executable, arguments: ["--serve"], outputPath: nil,
        detachment: .newProcessGroup, stdin: pair.1)
      return Server(pid: pid, socket: pair.0)
    } catch {
      close(pair.0)
      return nil
    }
  }

  enum Answer {
    case started(pid_t)
    /// It could not start this one (fork failed): spawn it directly.
    case refused
    /// It has ended, or stopped answering.
    case gone
  }

  func request(_ arguments: [String], _ descriptors: [Int32]) -> Answer {
    guard socket >= 0 else { return .gone }
    var message: [UInt8] = []
    for argument in arguments { message += FileName.bytes(argument) + [0] }
    let sent = chs_send_with_descriptors(
      socket, message, message.count, descriptors, Int32(descriptors.count))
    guard sent == message.count else { return sent < 0 && errno == EMSGSIZE ? .refused : .gone }
    var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    var polled: Int32
    repeat { polled = poll(&ready, 1, Self.answerTimeout) } while polled < 0 && errno == EINTR
    guard polled > 0 else { return .gone }
    var answer: Int32 = 0
    var got: Int
    repeat {
      got = recv(socket, &answer, MemoryLayout<Int32>.size, 0)
    } while got < 0
      && errno == EINTR
    guard got == MemoryLayout<Int32>.size else { return .gone }
    hasServed = true
    return answer > 0 ? .started(answer) : .refused
  }

  /// Closes its socket (it exits on seeing that) and kills it, in case it is stuck.
  func end() {
    guard socket >= 0 else { return }
    closeSocket()
    if pidfd >= 0 { _ = chs_pidfd_send_signal(pidfd, SIGKILL) }
  }

  /// Closes its socket: it kills and reaps its children and exits.
  func closeSocket() {
    guard socket >= 0 else { return }
    close(socket)
    socket = -1
  }
}
