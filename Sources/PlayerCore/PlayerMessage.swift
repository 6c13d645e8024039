import AudioCore
import SessionCore

/// Something the player tells the user besides its new state, as what happened rather than as
/// words: each view chooses the wording and the style (the interface shows a problem in its
/// error colour, the headless player prints `description`), with no matching on the text.
public enum PlayerMessage: Sendable, Equatable, Codable, CustomStringConvertible {
  /// Paused by another app's audio (G11, G13); `willResume` when it was playing and a call's
  /// end will bring it back (G14).
  case interrupted(InterruptionCause, willResume: Bool)
  /// Spoken word paused for another app's prompt (a navigation prompt), to resume after it.
  case pausedForPrompt(String)
  /// Playing again after an interruption (`by` the app that ended, when known).
  case resumed(after: String?)
  /// The interrupter went (crashed, killed) without saying it was done: no resume (G14).
  case interrupterVanished(String)
  /// The interrupter deactivated without letting others resume: another app took over.
  case tookOver(String)
  /// The output in use went away: paused, stays paused (G5).
  case outputWentAway(String)
  /// The output went away during an interruption: nothing resumes after it (G5).
  case outputWentAwayWhileInterrupted(String)
  /// The device itself failed (ENODEV and kin), with the system's words.
  case deviceWentAway(String, reason: String)
  /// The session server refused to let it play now (G10).
  case cannotPlayNow(reason: String)
  /// Activation failed for another reason (the session server unreachable mid-request).
  case cannotPlay(String)
  case cannotRegister(String)
  case volumeChangeFailed(String)
  case muteFailed(String)
  /// The user picked another output, and playback moved there (G6).
  case playingOn(String)
  /// The user picked an output that would not open; playback stays where it was.
  case outputRefused(String, reason: String, stayingOn: String)
  /// Files handed over from another terminal (or put in the queue by an interface): `count`
  /// files, the first's path given (said by its file name; an interface says its title), placed
  /// so.
  case handedOver(count: Int, first: String, placement: QueuePlacement)
  /// Something inside the engine the user cannot fix but should hear of.
  case engineFault(String)
  /// The queue was replaced (a tap on a song in an album): `count` tracks now, `was` before.
  case queueReplaced(count: Int, was: Int)
  case queueCleared(count: Int)
  /// An undo brought back the queue as it was (`count` tracks).
  case undone(count: Int)
  case nothingToUndo
  /// The machine is going to sleep: paused.
  case machineSleeping
  /// The machine woke up; still paused, as it slept.
  case machineWoke
  /// The sleep timer ended: faded out and paused; it stays paused.
  case sleepTimerEnded
  /// The user said the track playing is spoken word (true) or music.
  case spokenWord(Bool, title: String)
  /// The live stream's connection dropped (why); it is being made again.
  case reconnecting(String)
  /// The live stream is connected again.
  case reconnected
  /// The live stream says this is on now ("Artist - Title").
  case onAir(String)
  /// A long recording went back to where it was left (`at`, seconds: a little before it).
  case placeRestored(title: String, at: Double)
  /// The user's speed: the track plays at `rate` now, kept for the podcast or book in the
  /// folder named (spoken word), or for music.
  case rateChanged(Double, keptFor: String?)
  /// The queue saved when the player last ended cannot be read: the file is left as it is
  /// (set aside when the player next saves) and the music folder is queued instead.
  case savedQueueDamaged(file: String, reason: String)

  /// Whether it is a problem (shown as an error) rather than news.
  public var isProblem: Bool {
    switch self {
    case .deviceWentAway, .cannotPlayNow, .cannotPlay, .cannotRegister, .volumeChangeFailed,
      .muteFailed, .outputRefused, .engineFault, .reconnecting, .savedQueueDamaged:
      true
    case .interrupted, .pausedForPrompt, .resumed, .interrupterVanished, .tookOver, .outputWentAway,
      .outputWentAwayWhileInterrupted, .playingOn, .handedOver, .queueReplaced, .queueCleared,
      .undone, .nothingToUndo, .spokenWord, .machineSleeping, .machineWoke, .sleepTimerEnded,
      .reconnected, .onAir, .placeRestored, .rateChanged:
      false
    }
  }

  /// Whether playback resumed: a new state, not a new track.
  public var isResume: Bool { if case .resumed = self { true } else { false } }

  /// The words, lower case first (a view capitalises them where a line starts).
  public var description: String {
    switch self {
    case .interrupted(let cause, let willResume):
      switch cause.kind {
      case .call: "paused: call in progress" + (willResume ? " (will resume)" : "")
      case .otherAudio: "paused: '\(cause.by)' is playing"
      case .recording:
        "paused: '\(cause.by)' is recording" + (willResume ? " (will resume)" : "")
      case .alarm: "paused: alarm ('\(cause.by)')" + (willResume ? " (will resume)" : "")
      case .assistant:
        "paused: the assistant is speaking ('\(cause.by)')" + (willResume ? " (will resume)" : "")
      case .navigation:
        "paused for navigation ('\(cause.by)')" + (willResume ? " (will resume)" : "")
      }
    case .pausedForPrompt(let by): "paused for '\(by)'; resumes after"
    case .resumed(let by): "resumed" + (by.map { ": '\($0)' ended" } ?? "")
    case .interrupterVanished(let by): "'\(by)' ended without finishing; press play to resume"
    case .tookOver(let by): "'\(by)' took over; staying paused"
    case .outputWentAway(let name): "paused: '\(name)' went away"
    case .outputWentAwayWhileInterrupted(let name):
      "'\(name)' went away; will not resume after the interruption"
    case .deviceWentAway(let device, let reason): "output '\(device)' went away (\(reason))"
    case .cannotPlayNow(let reason): "cannot play now: \(reason)"
    case .cannotPlay(let why): "cannot play: \(why)"
    case .cannotRegister(let why): "cannot register with the session server: \(why)"
    case .volumeChangeFailed(let why): "cannot change the volume: \(why)"
    case .muteFailed(let why): "cannot mute: \(why)"
    case .playingOn(let device): "playing on '\(device)'"
    case .outputRefused(let device, let reason, let staying):
      "cannot play on '\(device)': \(reason); staying on '\(staying)'"
    case .handedOver(let count, let first, let placement):
      (count == 1 ? "'\(fileName(first))'" : "\(count) files")
        + (placement == .end ? " added to the queue" : " to play next")
    case .engineFault(let what): "audio engine fault: \(what)"
    case .queueReplaced(let count, let was):
      "the queue is now \(tracks(count)) (it had \(tracks(was)); undo brings them back)"
    case .queueCleared(let count): "cleared the queue of \(tracks(count)) (undo brings them back)"
    case .undone(let count): "the queue is back as it was: \(tracks(count))"
    case .nothingToUndo: "nothing to undo"
    case .machineSleeping: "paused: the computer is going to sleep"
    case .machineWoke: "the computer woke up; still paused (play resumes)"
    case .sleepTimerEnded: "paused: the sleep timer ended"
    case .reconnecting(let why): "the stream dropped (\(why)); reconnecting…"
    case .reconnected: "reconnected to the stream"
    case .onAir(let title): "on air: \(title)"
    case .placeRestored(let title, let at):
      "'\(title)' goes on from \(clock(at)), a little before where it was left"
    case .rateChanged(let rate, let kept):
      "playing at \(PlaybackRate(clamping: rate))"
        + (kept.map { " (kept for '\($0)')" } ?? " (music plays at this speed until changed)")
    case .savedQueueDamaged(let file, let reason):
      "the saved queue '\(file)' is damaged (\(reason)); it is left as it is and the music "
        + "folder is queued instead"
    case .spokenWord(let on, let title):
      on
        ? "'\(title)' is spoken word: a prompt pauses it"
        : "'\(title)' is music: a prompt ducks it"
    }
  }
}

private func tracks(_ n: Int) -> String { n == 1 ? "1 track" : "\(n) tracks" }

/// 83.4 → "1:23", 3725 → "1:02:05".
private func clock(_ seconds: Double) -> String {
  let s = seconds.isFinite ? max(0, Int(seconds)) : 0
  func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
  return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
}

/// Why the player cannot play what the user asked, kept up on the status line (the snapshot's
/// `problem`) longer than a message: until the next track is heard, or the cause is gone.
public enum PlayerProblem: Sendable, Equatable, Codable, CustomStringConvertible {
  /// A file was skipped, with its reason; `moreBefore` files were skipped just before it.
  case skipped(file: String, reason: String, moreBefore: Int)
  /// The output would not open.
  case outputFailed(device: String, message: String)
  /// The session server refused to let it play (G10).
  case activationRefused(String)

  /// The words, as a status line shows them.
  public var description: String {
    switch self {
    case .skipped(let file, let reason, let more):
      "Could not play \(file): \(reason)"
        + (more == 0 ? "" : " (\(more) more skipped before it: marked ✗ in the queue)")
    case .outputFailed(let device, let message): "Cannot play on '\(device)': \(message)"
    case .activationRefused(let why): "Cannot play — \(why)"
    }
  }
}

/// A file's name without its folder.
public func fileName(_ path: String) -> String {
  path.split(separator: "/").last.map(String.init) ?? path
}
