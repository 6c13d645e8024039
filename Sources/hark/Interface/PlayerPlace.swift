import Glibc
import Platform
import PlayerLink
import SessionClient
import StateFile
import TerminalUI

/// Where the interface's player serves, and starting one there.
///
/// The user's player serves at `$XDG_RUNTIME_DIR/hark/player.sock` and holds `player.lock`: a
/// plain `hark` attaches to it. A second player (`--new`), or one without a runtime folder,
/// serves at a socket of its own that only the interface starting it knows.
struct PlayerPlace {
  let socket: String
  /// The lock of the user's player; nil for a private one.
  let lock: String?
  /// The user's player's socket, where there is a runtime folder.
  let standardSocket: String?

  static func find(private: Bool) -> PlayerPlace {
    if let paths = try? SessionPaths.fromEnvironment(), (try? paths.prepareDirectory()) != nil {
      if `private` {
        return PlayerPlace(
          socket: paths.directory + "/player-\(getpid()).sock", lock: nil,
          standardSocket: paths.playerSocket)
      }
      return PlayerPlace(
        socket: paths.playerSocket, lock: paths.playerLock, standardSocket: paths.playerSocket)
    }
    // No runtime folder: a private folder in /tmp (the session server cannot run either).
    let tmp = environment("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template = Array("\(tmp)/hark-player-XXXXXX".utf8CString)
    let folder = template.withUnsafeMutableBufferPointer { p -> String? in
      guard let base = p.baseAddress, let made = mkdtemp(base) else { return nil }
      return String(cString: made)
    }
    return PlayerPlace(
      socket: (folder ?? tmp) + "/player.sock", lock: nil, standardSocket: nil)
  }

  /// Whether a player holds the user's player lock (none for a private place).
  var lockIsHeld: Bool { lock.map(Platform.lockIsHeld) ?? false }

  struct StartError: Error, CustomStringConvertible {
    let description: String
  }

  /// Starts the player's process (its output to hark.log) and attaches to it; should another
  /// player have taken the lock first, attaches to that one once it answers, or waits for it to
  /// go (a player on its way out, saving its queue, or killed as it did) and starts another.
  /// `isOurs`: the player attached to is the one started here.
  func start(device: String?, duck: Double?, restore: Bool, queueFolder: String? = nil)
    throws(StartError) -> (player: RemotePlayer, isOurs: Bool)
  {
    guard let exe = executablePath() else {
      throw StartError(description: "cannot find the hark executable to start the player with")
    }
    // "--option=value": a value may start with "-" (a duck of -12 dB).
    var arguments = ["background-player", "--socket=\(socket)"]
    if let lock { arguments.append("--lock=\(lock)") }
    if let device { arguments.append("--device=\(device)") }
    if let duck { arguments.append("--duck=\(duck)") }
    if restore { arguments.append("--restore") }
    if let queueFolder { arguments.append("--queue-folder=\(queueFolder)") }
    // Its output goes to hark.log, or nowhere when the state folder cannot be written (the
    // interface says so).
    let log = StatePaths.log().flatMap { path -> String? in
      let folder = Folder.parent(of: path)
      makeDirectories(folder)
      return access(folder, W_OK) == 0 ? path : nil
    }
    func spawn() throws(StartError) -> pid_t {
      do {
        return try spawnDetached(
          executable: exe, arguments: arguments, outputPath: log, detachment: .newSession)
      } catch {
        throw StartError(description: "cannot start the player: \(error.reason.lowercased())")
      }
    }
    var pid = try spawn()
    var ours: Set<pid_t> = [pid]
    var spawns = 1
    // It listens within milliseconds; the greeting follows once it has registered with the
    // session server (which it may have had to start).
    let deadline = monotonicNanoseconds() + 15_000_000_000
    var ended = false
    while monotonicNanoseconds() < deadline {
      let left = Int64(deadline - min(deadline, monotonicNanoseconds())) / 1_000_000_000
      do {
        let player = try RemotePlayer.attach(to: socket, timeout: .seconds(max(1, left)))
        return (player, ours.contains(player.pid))
      } catch {
        if case .unexpected(let why) = error {
          if !ended { kill(pid, SIGTERM) }
          throw StartError(description: why)
        }
      }
      if !ended, kill(pid, 0) != 0 && errno == ESRCH {
        // Ended: beaten to the lock by another player, which may still be getting ready or on
        // its way out (attach to it, or to the next), or failed (hark.log says why). Only the
        // lock's holder can tell which: it is looked for until the deadline.
        ended = true
        guard let lock, Platform.lockIsHeld(lock) else {
          throw StartError(
            description: "the player ended as it started; '\(StatePaths.log() ?? "hark.log")' "
              + "says why")
        }
      } else if ended, let lock, !Platform.lockIsHeld(lock), spawns < 3 {
        // The player that held the lock has gone without taking us in (it was quitting): this
        // one's own, again.
        pid = try spawn()
        ours.insert(pid)
        spawns += 1
        ended = false
      }
      usleep(10_000)
    }
    if !ended { kill(pid, SIGTERM) }
    throw StartError(description: "the player did not answer within 15 s")
  }
}
