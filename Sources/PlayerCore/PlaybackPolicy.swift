import SessionCore

/// How the player's transport reacts to the user, the session server and the output (G1, G5,
/// G10, G14), as a value: each input returns the effects the player carries out. No clock, no
/// I/O. `PlayerCore` holds one and turns its effects into the engine's and the session's.
///
/// Every way out of playing says why (`pausedBy`): the user, an interruption, the route, the
/// machine's sleep, the sleep timer, the end of the queue. The reason is the one that took it from playing: a
/// call that comes and goes while the user has paused leaves it paused by the user.
public struct PlaybackPolicy: Equatable, Sendable {
  public enum Phase: Equatable, Sendable {
    /// Nothing held: never played, stopped by the user (`.user`), at the end of the queue
    /// (`.endOfQueue`), or with an output that would not open (`.route`). Play starts the
    /// current entry from its start.
    case stopped(PauseCause?)
    case playing
    /// Held where it was heard; play goes on from there.
    case paused(PauseCause)
    /// Interrupted by another app; `resumeAfter` is whether it was playing when that began.
    case interrupted(resumeAfter: Bool, by: InterruptionCause)
  }

  public enum Effect: Equatable, Sendable {
    /// Activate the session, then start the output (or, refused, call `activationRefused`).
    case activateAndPlay
    /// Stop the output at once, keeping the position (its sound ramped down over a few
    /// milliseconds, so that it does not click).
    case stopOutput
    /// Stop the output now, without the ramp: it went away (G5), and whatever plays from here
    /// plays on another output.
    case stopOutputAtOnce
    /// Give the audio back (without notifying: a paused player resumes nobody).
    case deactivate
    /// A line for the user.
    case say(PlayerMessage)
  }

  public private(set) var phase: Phase = .stopped(nil)
  /// G5's opt-in: resume when the lost output comes back. Off by default.
  public var resumeOnReconnect = false
  /// The output that went away, while that is why it is paused or will not resume.
  public private(set) var pausedByRouteFrom: Route?

  public init() {}

  /// Why it is paused or stopped, for now-playing info and every view; nil while playing, and
  /// while stopped before anything played.
  public var pausedBy: PauseCause? {
    switch phase {
    case .playing: nil
    case .stopped(let cause): cause
    case .paused(let cause): cause
    case .interrupted: .interruption
    }
  }

  public var isPlaying: Bool { phase == .playing }

  public var isStopped: Bool { if case .stopped = phase { true } else { false } }

  /// The user pressed play (G1).
  public mutating func userPlay() -> [Effect] {
    phase == .playing ? [] : [.activateAndPlay]
  }

  /// The session server granted the activation; the output runs.
  public mutating func started() {
    phase = .playing
    pausedByRouteFrom = nil
  }

  /// The server refused (G10): stay as it was and say why; an activation lost while playing
  /// (asked again of a server that restarted) is an interruption.
  public mutating func activationRefused(_ reason: String) -> [Effect] {
    if phase == .playing { phase = .paused(.interruption) }
    return [.say(.cannotPlayNow(reason: reason))]
  }

  /// The resume an interruption's end asked for was refused or failed (another call has
  /// begun): the interruption is over, and it stays paused by it, with no resume to come.
  public mutating func resumeRefused() {
    guard case .interrupted = phase else { return }
    phase = pausedByRouteFrom != nil ? .paused(.route) : .paused(.interruption)
  }

  /// The user pressed pause.
  public mutating func userPause() -> [Effect] {
    switch phase {
    case .playing:
      phase = .paused(.user)
      return [.stopOutput, .deactivate]
    case .interrupted(_, let by):
      // Pausing during an interruption means: do not resume when it ends.
      phase = .interrupted(resumeAfter: false, by: by)
      return []
    case .paused, .stopped:
      return []
    }
  }

  /// Paused as the user left it, without having played (a saved queue restored, G1): the
  /// output and the session are as a pause leaves them already.
  public mutating func restoredPaused() {
    phase = .paused(.user)
    pausedByRouteFrom = nil
  }

  /// Another app took the audio (the server has already deactivated us).
  public mutating func interruptionBegan(_ cause: InterruptionCause) -> [Effect] {
    switch phase {
    case .playing:
      phase = .interrupted(resumeAfter: true, by: cause)
      pausedBefore = .user  // should the user pause during it
      return [.stopOutput, .say(.interrupted(cause, willResume: true))]
    case .paused(let why):
      // Paused already: nothing to resume; the reason it paused stays (`interruptionEnded`).
      phase = .interrupted(resumeAfter: false, by: cause)
      pausedBefore = why
      return []
    case .stopped:
      // Nothing to resume and no pause to show (a stopped player is not interrupted).
      return []
    case .interrupted(let resume, _):
      phase = .interrupted(resumeAfter: resume, by: cause)
      return []
    }
  }

  /// Why it was paused before an interruption that found it paused: it is paused for that
  /// reason again when the interruption ends.
  private var pausedBefore: PauseCause = .user

  /// G14: resume if and only if it was playing and the interrupter said it may.
  public mutating func interruptionEnded(shouldResume: Bool, reason: InterruptionEndReason)
    -> [Effect]
  {
    guard case .interrupted(let resumeAfter, let by) = phase else { return [] }
    if resumeAfter && shouldResume {
      return [.activateAndPlay]
    }
    if pausedByRouteFrom != nil {
      // The output went away during the interruption: paused by the route, as if unplugged
      // while playing (G5).
      phase = .paused(.route)
      return []
    }
    guard resumeAfter else {
      // Paused before it began (or by the user during it): paused as it was.
      phase = .paused(pausedBefore)
      pausedBefore = .user
      return []
    }
    phase = .paused(.interruption)
    switch reason {
    case .interrupterExited:
      return [.say(.interrupterVanished(by.by))]
    case .interrupterDeactivated:
      return [.say(.tookOver(by.by))]
    }
  }

  /// G4, G5, G6: pause at once when the output in use goes away; go on otherwise.
  public mutating func routeChanged(_ change: RouteChange) -> [Effect] {
    switch change.reason {
    case .oldDeviceUnavailable:
      if case .interrupted(true, let by) = phase {
        // Headphones pulled out during a call: when it ends, nothing may start playing from
        // the speakers (G5).
        phase = .interrupted(resumeAfter: false, by: by)
        pausedByRouteFrom = change.previous
        return [.say(.outputWentAwayWhileInterrupted(change.previous.name))]
      }
      if phase == .paused(.route) {
        // Paused for it already (the sound server's policy said so first): this names it.
        pausedByRouteFrom = change.previous
        return []
      }
      guard phase == .playing else { return [] }
      phase = .paused(.route)
      pausedByRouteFrom = change.previous
      return [.stopOutputAtOnce, .deactivate, .say(.outputWentAway(change.previous.name))]
    case .newDeviceAvailable:
      if resumeOnReconnect, phase == .paused(.route), change.current == pausedByRouteFrom {
        return [.activateAndPlay]
      }
      return []
    case .override, .categoryChange, .noSuitableRoute:
      return []
    }
  }

  /// The sound server's policy paused the player because its output went (`route`: the one it
  /// played on, when known): playing, it pauses by the route as if the output's news had come
  /// (it comes a moment later, or not at all when the output was a loopback the server routes
  /// through); interrupted (a Bluetooth headset switching to its call profile) or paused, the
  /// interruption or the pause says what happens, and this changes nothing.
  public mutating func outputLostByPolicy(_ route: Route?) -> [Effect] {
    guard phase == .playing else { return [] }
    phase = .paused(.route)
    pausedByRouteFrom = route
    return [.stopOutputAtOnce, .deactivate, .say(.outputWentAway(route?.name ?? "the output"))]
  }

  /// A pause that reached the player just before the news that its output went away (a sound
  /// server's policy pauses the players whose sink went, WirePlumber's `linking.pause-playback`,
  /// and its word can come first): paused by the route after all (G5), so that the reason is
  /// the output's, and `resumeOnReconnect` applies.
  public mutating func pauseWasTheRoute(_ previous: Route) {
    guard phase == .paused(.user) else { return }
    phase = .paused(.route)
    pausedByRouteFrom = previous
  }

  /// The machine is going to sleep: playing, it pauses as for an output that went (the phone's
  /// wakeFromSleep is a route change) and stays paused after waking, until the user plays.
  public mutating func machineWillSleep() -> [Effect] {
    guard phase == .playing else { return [] }
    phase = .paused(.sleep)
    pausedByRouteFrom = nil
    return [.stopOutput, .deactivate, .say(.machineSleeping)]
  }

  /// The sleep timer ended (its fade is over): playing, it pauses with the reason `timer` and
  /// stays paused, until the user plays (an interruption that comes and goes leaves it so).
  public mutating func timerEnded() -> [Effect] {
    guard phase == .playing else { return [] }
    phase = .paused(.timer)
    pausedByRouteFrom = nil
    return [.stopOutput, .deactivate, .say(.sleepTimerEnded)]
  }

  /// The output stopped for good: the user stopped (`.user`), the queue ran out
  /// (`.endOfQueue`), the output would not open (`.route`), or the queue was emptied (nil).
  public mutating func stopped(_ why: PauseCause?) {
    phase = .stopped(why)
    pausedByRouteFrom = nil
  }
}
