import ALSAOutput
import ArgumentParser
import Glibc
import JackRoutes
import Logging
import Platform
import SessionClient
import SessionCore
import SessionServer
import SoundServer

struct SessionServerCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "session-server",
    abstract: "Run the per-user session server (clients start it on demand).",
    discussion: """
      Serves one user over $XDG_RUNTIME_DIR/hark/session.sock. Clients start it when none \
      answers, detached, logging to $XDG_STATE_HOME/hark/session-server.log; it exits by itself \
      a while after its last client leaves. Set HARK_SESSION_IDLE_EXIT to change that delay.
      """)

  @Flag(help: "Stop the running session server and wait for it to exit.")
  var stop = false

  @Option(
    help: ArgumentHelp(
      "Exit this many seconds after the last client leaves (default 10, or $HARK_SESSION_IDLE_EXIT).",
      valueName: "seconds"))
  var idleExit: Seconds?

  @Flag(help: "Never exit for lack of clients.")
  var persist = false

  func run() async throws {
    let paths: SessionPaths
    do { paths = try SessionPaths.fromEnvironment() } catch { die(error.description) }
    if stop { await stopServer(paths) }

    var fromEnvironment: Seconds?
    if let text = environment("HARK_SESSION_IDLE_EXIT") {
      fromEnvironment = Seconds(argument: text)
      if fromEnvironment == nil {
        FileHandleStderr.write(
          "hark: ignoring HARK_SESSION_IDLE_EXIT='\(text)': not a number of seconds; using 10\n")
      }
    }
    let idle: Duration? = persist ? nil : (idleExit ?? fromEnvironment ?? Seconds(10)).duration
    // Before any watcher starts, so that their threads inherit it: the time the server takes to
    // hear an output went is what the speakers play meanwhile (G5), whatever else runs.
    let refusal = raiseProcessPriority()
    let logger = Logger(label: "hark.session-server")
    if let refusal {
      logger.debug("runs at the usual priority: \(refusal)")
    } else {
      logger.debug("runs at nice \(mediaServerNice)")
    }
    var configuration = SessionServer.Configuration(paths: paths, idleExit: idle)
    let external = ExternalEvents()
    configuration.external = external
    // Real outputs and calls from the sound server, when one runs (or once one starts).
    let watcher = watchSoundServer(posting: external)
    defer { watcher?.close() }
    // Headphones, line outs, HDMI and USB cards from every card's ALSA jacks.
    let jacks = watchJacks(posting: external)
    defer { jacks.close() }
    // The desktop's other players (mpv, a browser) over MPRIS, for the sleep timer: connected
    // when the timer first needs them.
    configuration.desktop = MPRISDesktop(logger: Logger(label: "hark.session-server"))
    // The server's loop blocks: give it a thread of its own, so that the watchers' tasks have the
    // cooperative pool to themselves even on a one-core machine.
    let outcome = await withCheckedContinuation { done in
      startThread { [configuration] in
        let server = SessionServer(
          configuration: configuration, logger: Logger(label: "hark.session-server"))
        done.resume(returning: Result { () throws(ServerStartError) in try server.run() })
      }
    }
    do { try outcome.get() } catch {
      if case .alreadyRunning = error {
        // Two clients racing to start a server: the loser's server steps aside quietly.
        FileHandleStderr.write("hark: \(error); not starting another\n")
        throw ExitCode.success
      }
      die(error.description)
    }
  }

  private func stopServer(_ paths: SessionPaths) async -> Never {
    let session: AudioSession
    do {
      session = try await AudioSession.connect(
        .init(name: "hark session-server --stop", paths: paths, autospawn: false))
    } catch {
      print("hark: no session server is running")
      Glibc.exit(0)
    }
    let pid = session.welcome.serverPid
    do { try await session.stopServer() } catch {
      die("could not stop the session server: \(error)")
    }
    session.close()
    // It has answered; wait until it has really gone, so a caller can rely on it.
    for _ in 0..<300 where SessionServer.isRunning(paths) || isAlive(pid) {
      try? await Task.sleep(for: .milliseconds(10))
    }
    if SessionServer.isRunning(paths) || isAlive(pid) {
      die("the session server (pid \(pid)) did not exit")
    }
    print("hark: stopped the session server (pid \(pid))")
    Glibc.exit(0)
  }
}

/// Whether the process runs: it exists and is not a zombie waiting for its parent to reap it.
private func isAlive(_ pid: Int32) -> Bool {
  guard kill(pid, 0) == 0 else { return false }
  guard let f = fopen("/proc/\(pid)/stat", "r") else { return false }
  defer { fclose(f) }
  var buffer = [CChar](repeating: 0, count: 512)
  guard fgets(&buffer, Int32(buffer.count), f) != nil else { return false }
  let line = String(
    decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  // "pid (comm) S ...": the state follows the last ')', since comm may contain spaces.
  guard let close = line.lastIndex(of: ")") else { return true }
  return line[line.index(after: close)...].trimmingPrefix(" ").first != "Z"
}

/// Feeds the sound server's sinks and streams to the session server as external events.
private func watchSoundServer(posting external: ExternalEvents) -> PulseWatcher? {
  let model = PulseModelBox()
  let asker = WatcherBox()
  let logger = Logger(label: "hark.session-server")
  let watcher = PulseWatcher(clientName: "hark session server") { observation in
    logger.trace("sound server: \(observation)")
    switch observation {
    case .connected(let server): external.post(.soundServer(server))
    case .disconnected: external.post(.soundServer(nil))
    // What the default and the sinks are, as the sound server says: rare, and what a profile
    // switch that never finishes is read from.
    case .defaultSink(let name): logger.debug("sound server: default sink '\(name)'")
    case .sink(let index, let name, _, _, _): logger.debug("sound server: sink #\(index) '\(name)'")
    case .sinkRemoved(let index): logger.debug("sound server: sink #\(index) removed")
    default: break
    }
    // Posted together, after the loop: one wake of the server for one report.
    var batch: [ExternalEvent] = []
    for event in model.apply(observation) {
      logger.debug("sound server event: \(event)")
      switch event {
      case .route(let action): batch.append(.sinkRoute(action))
      case .phoneStream(let began, let key, let name, let pid):
        batch.append(.phoneStream(began: began, key: key, name: name, pid: pid))
      case .outputLost(let pid, let stream, let lost):
        // The session server tells the app (it pauses), then ends the stream the sound server
        // moved to another output by itself, through the silencer below (G5). Only hark's own
        // apps' streams: other programs' are theirs to manage.
        batch.append(.outputLost(pid: pid, stream: stream, lost: lost))
      case .streamOutput(let pid, let stream, let output):
        batch.append(.streamOutput(pid: pid, stream: stream, output: output))
      case .streamGone(let pid, let stream):
        batch.append(.streamGone(pid: pid, stream: stream))
      case .streamHeld(let pid, let stream, let by, let byPid, let name, let role):
        batch.append(
          .streamHeld(pid: pid, stream: stream, by: by, byPid: byPid, name: name, role: role))
      case .holdEnded(let by): batch.append(.holdEnded(by: by))
      case .streamDucked(let pid, let stream, let ducked):
        batch.append(.streamDucked(pid: pid, stream: stream, ducked: ducked))
      case .headsetSwitching(let card, let output):
        batch.append(.headsetSwitching(card: card, output: output))
      case .headsetBack(let card, let output):
        batch.append(.headsetBack(card: card, output: output))
      case .headsetGone(let card, let output):
        batch.append(.headsetGone(card: card, output: output))
      case .outputHeld(let pid, let stream, let output):
        // Silenced by the session server as a lost stream is, without the loss (see there).
        batch.append(.outputHeld(pid: pid, stream: stream, output: output))
      }
    }
    external.post(batch)
    // A headset back from its call profile, waiting only for the default to be said: asked
    // twice a second until it is, or until the switch ends otherwise.
    asker.watcher?.askForTheDefault(every: model.awaitsDefault ? 500_000 : nil)
  }
  asker.watcher = watcher
  if let watcher {
    external.setSilencer { [weak watcher] stream in watcher?.kill(sinkInput: stream) }
  }
  return watcher
}

/// The model, used on libpulse's thread only; the lock keeps the compiler's checks honest.
private final class PulseModelBox: Sendable {
  private let model = Locked(PulseModel())
  func apply(_ o: PulseObservation) -> [SoundServerEvent] { model.withLock { $0.apply(o) } }
  var awaitsDefault: Bool { model.withLock { $0.awaitsDefault } }
}

/// The watcher, for its own report callback (made before the watcher is); weak, as the
/// callback belongs to the watcher.
private final class WatcherBox: Sendable {
  private struct Weak { weak var watcher: PulseWatcher? }
  private let held = Locked(Weak())
  var watcher: PulseWatcher? {
    get { held.withLock { $0.watcher } }
    set { held.withLock { $0.watcher = newValue } }
  }
}

/// Feeds the ALSA jacks (and USB cards coming and going) to the session server: what is plugged
/// in at the start is attached at once, quietly (no session exists yet to hear of it).
private func watchJacks(posting external: ExternalEvents) -> JackWatcher {
  let jacks = JackWatcher(extraControls: JackWatcher.extraControlsFromEnvironment())
  for route in jacks.outputs { external.post(.route(.attach(route))) }
  let logger = Logger(label: "hark.session-server")
  Task {
    for await event in jacks.events {
      switch event {
      case .plugged(let route): external.post(.route(.attach(route)))
      case .unplugged(let route): external.post(.route(.detach(route)))
      case .problem(let text): logger.notice("jacks: \(text)")
      }
    }
  }
  return jacks
}
