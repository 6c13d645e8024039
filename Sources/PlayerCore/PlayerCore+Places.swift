import AudioCore
import MediaFiles
import SessionCore

/// Long recordings keep their own place, as a phone's podcast and book apps do: an audiobook, a
/// lecture, a podcast (spoken word, `SpokenWord`) or anything longer than
/// `Settings.longRecording`. Where it was left is kept in the library index (the player's
/// effects `lookUpPlace` and `keepPlace`, carried out off its loop, in order) when the user
/// plays something else, changes the queue, pauses, stops or quits, and every
/// `Settings.placeInterval` of play; the next time it is heard it starts there,
/// `Settings.placeStepBack` earlier. Heard to its end, it is marked played and starts from its
/// start.
///
/// The rules:
/// - Only long recordings are looked up, kept and sent back to their place.
/// - Nothing is kept of a recording before its place has been found: the start of it would
///   overwrite the place it has.
/// - The place found is gone to only if nothing moved the recording since it arrived (the
///   user's seek, another load): the user's own move wins.
/// - Going back to a place is a jump (a seek), like any other: the position shown never goes
///   back otherwise.
extension PlayerCore {
  /// The long recording the engine holds, and what is known of its place.
  struct Listening: Equatable {
    var track: QueuedTrack
    var duration: Double?
    /// Where it was heard at the last look.
    var position: Double
    /// The place the index holds, as far as this player knows: nil until the lookup is
    /// answered (`answered`), and after it when there was none.
    var kept: ListeningPlace?
    var answered = false
    /// The engine's stretch of sound when it arrived: the place found is gone to only while it
    /// is the same one (no seek or load since).
    var segment: Int
    /// Where the place found sent it: kept as the place until the listener moves on from
    /// there (quitting right after would otherwise move the place a step back each time).
    var restoredTo: Double?
  }

  /// After each outside input: a track the engine holds that is new since the last look has
  /// arrived (its chapters are asked for; a long recording's place too), the one before it has
  /// left (its place is kept); while a long recording is held its place follows it.
  mutating func lookAtTrackHeld(_ world: Observation, _ effects: inout [PlayerEffect]) {
    let now = world.engine
    let track: QueuedTrack?
    if now.state == .stopped {
      // Nothing to listen to (at the end of the queue it holds the last track, stopped at its
      // end: that track has left too).
      track = nil
    } else if let t = now.track {
      track = now.isLive ? nil : t
    } else {
      // Between two stretches of sound (a seek, a load under way): nothing has left yet.
      return
    }
    if track != held {
      leaveListening(world, &effects)
      held = track
      if let track { arrived(track, world, &effects) }
    } else if let track, listening == nil, isLongRecording(track, world) {
      // Made spoken word by the user (`toggleSpoken`) while it plays.
      startListening(track, world, &effects)
    }
    guard var l = listening, let track, l.track == track else { return }
    l.position = now.position
    l.duration = now.duration ?? l.duration
    listening = l
    guard l.answered else { return }
    let from: Double =
      switch l.kept {
      case .at(let s): l.restoredTo ?? s
      case .finished, nil: l.restoredTo ?? 0
      }
    let moved = abs(l.position - from)
    // While playing, every few seconds of play; otherwise (paused, a seek while paused) as soon
    // as it has moved at all.
    if moved >= (policy.isPlaying ? settings.placeInterval : 0.5) {
      keep(.at(l.position), of: &l, &effects)
      listening = l
    }
  }

  /// A track has arrived in the engine: look for its chapters (a file, not a cue sheet's
  /// track: a sheet's tracks are its chapters already) and, for a long recording, its place.
  private mutating func arrived(
    _ track: QueuedTrack, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    if chaptersAsked != track.path {
      chapters = nil
      chaptersAsked = track.path
      if !QueueLoader.isStreamURL(track.path), CueSheet.Reference(track.path) == nil {
        effects.append(.findChapters(track))
      }
    }
    if isLongRecording(track, world) { startListening(track, world, &effects) }
  }

  private mutating func startListening(
    _ track: QueuedTrack, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    listening = Listening(
      track: track, duration: world.engine.duration, position: world.engine.position,
      segment: world.engine.segment)
    effects.append(.lookUpPlace(track))
  }

  /// Whether `track`, held by the engine, keeps its own place: spoken word, or long.
  func isLongRecording(_ track: QueuedTrack, _ world: Observation) -> Bool {
    guard world.engine.track == track, !world.engine.isLive else { return false }
    if isSpokenWord(track, world) { return true }
    return (world.engine.duration ?? 0) >= settings.longRecording
  }

  /// Whether `track` is spoken word: as the user said (`toggleSpoken`), else by its genre, its
  /// file type or its folder.
  func isSpokenWord(_ track: QueuedTrack, _ world: Observation) -> Bool {
    let metadata = world.engine.track == track ? world.engine.metadata : nil
    return spokenOverrides[track.path]
      ?? SpokenWord.isSpoken(
        path: track.path, genre: metadata?.genre, folders: settings.spokenFolders)
  }

  /// The long recording held is leaving (another track, a stop, the end of the queue, quit):
  /// its place is kept, or it is played when it was left near its end.
  mutating func leaveListening(_ world: Observation, _ effects: inout [PlayerEffect]) {
    guard var l = listening else { return }
    listening = nil
    // Not yet found: what was there stays (the recording's start must not replace it).
    guard l.answered else { return }
    if world.engine.track == l.track { l.position = world.engine.position }
    // (A short one's last 5 %: a three-minute news bulletin is not played 30 s before its end.)
    if let d = l.duration, l.position >= d - min(settings.finishedWithin, d * 0.05) {
      keep(.finished, of: &l, &effects)
    } else if l.kept == .finished, l.position < settings.placeInterval {
      // A played one started again and left at once: still played.
    } else if l.restoredTo.map({ abs($0 - l.position) < 0.5 }) != true {
      // (Not moved since it was sent back to its place: the place stays where it was.)
      keep(.at(l.position), of: &l, &effects)
    }
  }

  /// Tells the index where the recording is, when that is news.
  private mutating func keep(
    _ place: ListeningPlace, of l: inout Listening, _ effects: inout [PlayerEffect]
  ) {
    guard l.kept != place else { return }
    l.kept = place
    placesThisRun[l.track.path] = place
    l.restoredTo = nil
    effects.append(.keepPlace(path: l.track.path, place, duration: l.duration))
  }

  /// Where the recording was left came: it goes back there, a little earlier, unless it has
  /// moved since it arrived.
  mutating func placeFound(
    _ track: QueuedTrack, _ place: ListeningPlace?, _ world: Observation,
    _ effects: inout [PlayerEffect]
  ) {
    guard var l = listening, l.track == track, !l.answered else { return }
    l.answered = true
    l.kept = place
    if let place { placesThisRun[track.path] = place }
    listening = l
    let engine = world.engine
    guard case .at(let seconds) = place, engine.track == track, engine.segment == l.segment,
      engine.isSeekable
    else { return }
    var target = max(0, seconds - settings.placeStepBack)
    if let d = engine.duration { target = min(target, max(0, d - 0.05)) }
    guard abs(target - engine.position) >= 0.5 else { return }
    effects.append(.engine(.seek(to: target)))
    positionJumped = true
    requestedStart = (track.id, target)
    l.position = target
    l.restoredTo = target
    listening = l
    notices.append(.seeked(target))
    let title = world.engine.metadata?.title ?? QueueLoader.title(fromPath: track.path)
    say(.placeRestored(title: title, at: target))
  }
}
