import SessionCore

/// How the player reacts to the user, the session server and the output (G5, G10, G14), as a
/// value: each input returns the effects the player carries out. No clock, no I/O.
public struct PlaybackPolicy: Equatable, Sendable {
  public enum Phase: Equatable, Sendable {
    case stopped
    case playing
    case paused(PauseCause)
    /// Interrupted by another app; `resumeAfter` is whether it was playing when that began.
    case interrupted(resumeAfter: Bool, by: InterruptionCause)
  }

  public enum Effect: Equatable, Sendable {
    /// Activate the session, then start the output (or, refused, call `activationRefused`).
    case activateAndPlay
    /// Stop the output at once, keeping the position.
    case stopOutput
    /// Give the audio back (without notifying: a paused player resumes nobody).
    case deactivate
    /// A line for the user.
    case say(PlayerMessage)
  }

  public private(set) var phase: Phase = .stopped
  /// G5's opt-in: resume when the lost output comes back. Off by default.
  public var resumeOnReconnect = false
  private var pausedByRouteFrom: Route?

  public init() {}

  /// Why it is paused, for now-playing info and every view.
  public var pausedBy: PauseCause? {
    switch phase {
    case .stopped, .playing: nil
    case .paused(let cause): cause
    case .interrupted: .interruption
    }
  }

  public var isPlaying: Bool { phase == .playing }

  /// The user pressed play (G1).
  public mutating func userPlay() -> [Effect] {
    phase == .playing ? [] : [.activateAndPlay]
  }

  /// The session server granted the activation; the output runs.
  public mutating func started() {
    phase = .playing
    pausedByRouteFrom = nil
  }

  /// The server refused (G10): stay paused and say why.
  public mutating func activationRefused(_ reason: String) -> [Effect] {
    if phase == .playing { phase = .paused(.interruption) }
    return [.say(.cannotPlayNow(reason: reason))]
  }

  /// The user pressed pause.
  public mutating func userPause() -> [Effect] {
    switch phase {
    case .playing:
      phase = .paused(.user)
      return [.stopOutput, .deactivate]
    case .interrupted:
      // Pausing during an interruption means: do not resume when it ends.
      if case .interrupted(_, let by) = phase { phase = .interrupted(resumeAfter: false, by: by) }
      return []
    case .paused, .stopped:
      return []
    }
  }

  /// Another app took the audio (the server has already deactivated us).
  public mutating func interruptionBegan(_ cause: InterruptionCause) -> [Effect] {
    switch phase {
    case .playing:
      phase = .interrupted(resumeAfter: true, by: cause)
      return [.stopOutput, .say(.interrupted(cause, willResume: true))]
    case .paused:
      phase = .interrupted(resumeAfter: false, by: cause)
      return []
    case .stopped:
      // Nothing to resume and no pause to show (a stopped player is not in an audio context).
      return []
    case .interrupted(let resume, _):
      phase = .interrupted(resumeAfter: resume, by: cause)
      return []
    }
  }

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
    phase = resumeAfter ? .paused(.interruption) : .paused(.user)
    guard resumeAfter else { return [] }
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
      guard phase == .playing else { return [] }
      phase = .paused(.route)
      pausedByRouteFrom = change.previous
      return [.stopOutput, .deactivate, .say(.outputWentAway(change.previous.name))]
    case .newDeviceAvailable:
      if resumeOnReconnect, phase == .paused(.route), change.current == pausedByRouteFrom {
        return [.activateAndPlay]
      }
      return []
    case .override, .categoryChange, .noSuitableRoute:
      return []
    }
  }

  /// The machine is going to sleep: playing, it pauses as for an output that went (the phone's
  /// wakeFromSleep is a route change) and stays paused after waking, until the user plays.
  public mutating func machineWillSleep() -> [Effect] {
    guard phase == .playing else { return [] }
    phase = .paused(.route)
    pausedByRouteFrom = nil
    return [.stopOutput, .deactivate, .say(.machineSleeping)]
  }

  /// The queue ran out, or the user stopped.
  public mutating func stopped() {
    phase = .stopped
  }
}
