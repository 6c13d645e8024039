import SessionCore

/// What an interface needs of a player: its now-playing snapshot and changes to it, the
/// remote-command interface every other source (the session server, MPRIS, media keys) uses,
/// and the user's edits. `Player` (PlayerEngine) is one; `RemotePlayer` (PlayerLink) is the player of another
/// process, which the terminal interface is attached to, and the interface needs no change for it.
public protocol PlayerConnection: AnyObject, Sendable {
  /// The player now.
  var snapshot: PlayerSnapshot { get }
  /// Calls `handler` after every change, on the player's own context; it must return quickly.
  func observe(_ handler: @escaping @Sendable (PlayerSnapshot, [PlayerNotice]) -> Void)
  /// Calls `handler` once if the player goes away under its viewer (the process it runs in
  /// ended or crashed), with why, in words. A player in the viewer's own process never does.
  func observeEnd(_ handler: @escaping @Sendable (String) -> Void)
  /// Carries out a remote command; a disabled one is refused and nothing else is done (G19).
  func send(_ command: RemoteCommand) async -> CommandStatus
  /// Carries out an edit of the queue or the output.
  func perform(_ action: PlayerAction) async
}
