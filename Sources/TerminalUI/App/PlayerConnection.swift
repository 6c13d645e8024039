import PlayerEngine
import SessionCore

/// What the interface needs of a player: its now-playing snapshot and changes to it, the
/// remote-command interface every other source (the session server, MPRIS, media keys) uses,
/// and the user's edits. `Player` is one; a player in another process, reached over the
/// session socket, can be another, and the interface needs no change for it.
public protocol PlayerConnection: AnyObject, Sendable {
  /// The player now.
  var snapshot: PlayerSnapshot { get }
  /// Calls `handler` after every change, on the player's own context; it must return quickly.
  func observe(_ handler: @escaping @Sendable (PlayerSnapshot, [PlayerNotice]) -> Void)
  /// Carries out a remote command; a disabled one is refused and nothing else is done (G19).
  func send(_ command: RemoteCommand) async -> CommandStatus
  /// Carries out an edit of the queue or the output.
  func perform(_ action: Player.Action) async
}

extension Player: PlayerConnection {}
