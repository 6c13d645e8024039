import Glibc
import MediaFiles
import Platform
import PlayerEngine
import SessionClient
import SessionCore

/// The player's view of its `AudioSession`.
final class SessionPort: PlayerSession {
  let session: AudioSession

  init(_ session: AudioSession) { self.session = session }

  func setCategory(_ category: Category, mode: SessionMode, options: CategoryOptions)
    async throws
  {
    try await session.setCategory(category, mode: mode, options: options)
  }

  func setActive(_ active: Bool) async throws {
    do { try await session.setActive(active) } catch .refused(let refusal) { throw refusal }
  }

  func publish(_ info: PlaybackInfo?, commands: Set<RemoteCommandKind>) async {
    // Remembered by the session even when the server is away; sent again when it is back. Not
    // waited for: nothing the player does depends on the answer.
    session.post(info, commands: commands)
  }

  func outputLost(_ route: Route) async -> Bool {
    do {
      try await session.outputLost(route)
      return true
    } catch {
      return false
    }
  }

  /// Forwards what the server says and asks to `player` until the session ends.
  func connect(to player: Player) -> [Task<Void, Never>] {
    let session = self.session
    player.connected(route: session.welcome.route, silentMode: session.welcome.silent)
    return [
      Task {
        for await event in session.events {
          if event == .mediaServicesWereReset {
            player.connected(route: session.welcome.route, silentMode: session.welcome.silent)
          }
          player.deliver(event)
        }
      },
      Task {
        for await incoming in session.commands {
          CommandTrace.note(incoming.command)
          incoming.respond(await player.send(incoming.command))
        }
      },
      Task {
        // Files from `hark play` and `hark add` in another terminal: the folders and playlists
        // named are read here, off the player's loop; what cannot be read was said there.
        for await incoming in session.files {
          let files = QueueLoader.load(incoming.paths).files
          guard !files.isEmpty else {
            incoming.respond(.noSuchContent)
            continue
          }
          await player.perform(.insert(files, at: incoming.placement))
          incoming.respond(.success)
        }
      },
    ]
  }
}

/// The player's session when no session server can be reached: every activation is granted and
/// nothing is published. hark then plays on, alone: other apps cannot interrupt it and
/// `hark ctl` cannot reach it, which the user is told once.
final class LocalSession: PlayerSession {
  func setCategory(_ category: Category, mode: SessionMode, options: CategoryOptions)
    async throws
  {}
  func setActive(_ active: Bool) async throws {}
  func publish(_ info: PlaybackInfo?, commands: Set<RemoteCommandKind>) async {}
  func outputLost(_ route: Route) async -> Bool { false }
}

/// When `$HARK_COMMAND_TRACE` names a file, the player appends a line to it as each remote
/// command from the session server reaches it: the monotonic clock in nanoseconds and the
/// command. The benchmark times pause → silence from there, without `hark ctl`'s own start
/// (docs/HACKING.md, "Measuring"). Unset, nothing is written.
enum CommandTrace {
  private static let fd: Int32 = {
    guard let path = environment("HARK_COMMAND_TRACE"), !path.isEmpty else { return -1 }
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
  }()

  static func note(_ command: RemoteCommand) {
    guard fd >= 0 else { return }
    let line = Array("\(monotonicNanoseconds()) \(command)\n".utf8)
    _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
  }
}
