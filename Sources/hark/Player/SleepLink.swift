import PlayerEngine
import Synchronization
import SystemSleep

/// Joins a player to the machine's sleep (logind): it pauses before the machine sleeps and
/// holds the sleep back only while it plays. Made before the player (its configuration needs
/// `hold`), started once the player exists.
final class SleepLink: Sendable {
  private let watcher = Mutex<SleepWatcher?>(nil)

  /// For `Player.Configuration.holdSleep`.
  func hold(_ on: Bool) { watcher.withLock { $0 }?.hold(on) }

  /// Watches for sleep on behalf of `player`; without logind (a container, no system bus)
  /// nothing happens, and the log says so once.
  func start(for player: Player) {
    switch SleepWatcher.start(onSleep: { player.systemSleep($0) }) {
    case .success(let w): watcher.withLock { $0 = w }
    case .failure(let error): HarkLog.write("no sleep watch: \(error)")
    }
  }

  func stop() { watcher.withLock { $0 }?.stop() }
}
