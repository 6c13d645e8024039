import SessionCore

/// What the user can do besides remote commands.
public enum PlayerAction: Sendable, Equatable, Codable {
  /// Adds files at the end of the queue; `play` starts the first of them at once.
  case add([String], play: Bool)
  /// Adds files at the end of the queue, ready to play: when nothing plays (stopped or paused
  /// by the user), the first of them becomes the current entry, at its start, so that play
  /// plays it (`hark PATH`); playing or interrupted, what plays goes on.
  case addReady([String])
  /// Files handed over from another terminal (`hark play`, `hark add`), placed as asked;
  /// `.now` plays the first of them at once (activating, as a user's play does).
  case insert([String], at: QueuePlacement)
  case remove(entry: Int)
  case move(entry: Int, to: Int)
  case clear
  /// The queue becomes `paths` and the one at `start` plays (a tap on a song in an album);
  /// said, with how many were there before, and undone by `undo`.
  case replace([String], start: Int)
  /// Shuffles the queue's own order once (shuffle mode aside).
  case shuffleOnce
  /// Brings the queue back as it was before the last edit (add, remove, move, clear,
  /// replace, shuffle once, files handed over).
  case undo
  /// The track playing is spoken word (a prompt pauses it) or music (a prompt ducks it),
  /// whatever its tags say, for as long as the player runs.
  case toggleSpoken
  /// The track held plays one step faster (or slower) than it does now
  /// (`PlaybackRate.steps`), as `RemoteCommand.changePlaybackRate` would have it play.
  case stepRate(faster: Bool)
  /// Plays this entry from its start.
  case playEntry(Int)
  case setShuffle(Bool)
  case setRepeat(RepeatMode)
  /// Sets the system volume (MPRIS's Volume property).
  case setVolume(percent: Double)
  /// Moves playback to another output without a pause (G6).
  case selectDevice(String)
  /// The sound server's session manager paused the player because the output it played on
  /// went away (WirePlumber's `linking.pause-playback`, over MPRIS): a pause by the route
  /// (G5), whichever word comes first, the session server's or this; not the user's.
  case pauseForLostOutput
  /// Replaces the queue with `paths` (a saved session) and loads entry `current` paused at
  /// `position`, as if the user had paused there.
  case restore(
    paths: [String], current: Int?, position: Double, shuffle: Bool, repeatMode: RepeatMode)
}
