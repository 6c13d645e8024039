import Platform
import PlayerEngine
import SystemSleep

/// Joins a player to the machine's sleep (logind): it pauses before the machine sleeps and
/// holds the sleep back only while it plays. Made before the player (its configuration needs
/// `hold`), started once the player exists.
final class SleepLink: Sendable {
  private let state = Locked<(watcher: SleepWatcher?, hold: Bool, stopped: Bool)>(
    (nil, false, false))

  /// For `Player.Configuration.holdSleep`; remembered until the watcher is there.
  func hold(_ on: Bool) {
    state.withLock { s -> SleepWatcher? in
      s.hold = on
      return s.watcher
    }?.hold(on)
  }

  /// Watches for sleep on behalf of `player`, connecting on a thread of its own (a system bus
  /// that does not answer must not hold the first sound back); without logind (a container,
  /// no system bus) nothing happens, and the log says so once.
  func start(for player: Player) {
    startThread(named: "hark-sleep-join") { [self] in
      switch SleepWatcher.start(onSleep: { player.systemSleep($0) }) {
      case .success(let w):
        let (hold, stopped) = state.withLock { s -> (Bool, Bool) in
          s.watcher = w
          return (s.hold, s.stopped)
        }
        if stopped { w.stop() } else if hold { w.hold(true) }
      case .failure(let error):
        HarkLog.write("no sleep watch: \(error)")
      }
    }
  }

  func stop() {
    state.withLock { s -> SleepWatcher? in
      s.stopped = true
      return s.watcher
    }?.stop()
  }
}
