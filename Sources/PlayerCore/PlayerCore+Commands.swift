import AudioCore
import SessionCore

/// Remote commands (G17–G19): every source sends the same `RemoteCommand`, and what is not
/// enabled now is refused and nothing else is done instead.
extension PlayerCore {
  mutating func handle(
    _ command: RemoteCommand, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    guard enabledCommands(world).contains(command.kind) else {
      reply(queue.isEmpty ? .noSuchContent : .commandDisabled, &effects)
      return
    }
    let engine = world.engine
    switch command {
    case .play:
      play(world, &effects)
    case .pause:
      pause(world, &effects)
    case .togglePlayPause:
      if policy.isPlaying { pause(world, &effects) } else { play(world, &effects) }
    case .stop:
      stop(.user, &effects)
    case .nextTrack:
      guard let current = queue.currentID, let next = queue.track(after: current, automatic: false)
      else { return reply(.commandDisabled, &effects) }
      go(to: next, &effects)
    case .previousTrack:
      if engine.track != nil && engine.isSeekable && engine.position > 3 {
        seek(to: 0, world, &effects)
      } else if let current = queue.currentID, let before = queue.track(before: current) {
        go(to: before, &effects)
      } else {
        seek(to: 0, world, &effects)
      }
    case .seekForward:
      seek(to: engine.position + settings.seekStep, world, &effects)
    case .seekBackward:
      seek(to: max(0, engine.position - settings.seekStep), world, &effects)
    case .skipForward(let s):
      seek(to: engine.position + s, world, &effects)
    case .skipBackward(let s):
      seek(to: max(0, engine.position - s), world, &effects)
    case .changePlaybackPosition(let s):
      seek(to: s, world, &effects)
    case .volumeUp(let p), .volumeDown(let p):
      guard let volume = world.volume else { return reply(.commandDisabled, &effects) }
      let sign: Double = command.kind == .volumeUp ? 1 : -1
      // Answered by `volumeAnswered`, which replies.
      effects.append(.setVolume(percent: min(100, max(0, volume.percent + sign * p))))
    case .mute:
      guard let volume = world.volume, volume.canMute else {
        return reply(.commandDisabled, &effects)
      }
      effects.append(.setMuted(!volume.muted))
    case .nextChapter, .previousChapter:
      guard let target = chapterTarget(next: command == .nextChapter, world) else {
        return reply(.commandDisabled, &effects)
      }
      seek(to: target, world, &effects)
    case .changePlaybackRate(let rate):
      changeRate(to: rate, world, &effects)
    }
  }

  /// The chapters of the track the engine holds, once found; empty otherwise.
  func heldChapters(_ world: Observation) -> [Chapter] {
    guard let t = world.engine.track, let found = chapters, found.path == t.path else { return [] }
    return found.list
  }

  /// Where the next chapter starts, or (`next` false) the previous one, or the start of this
  /// one when more than 3 s of it have played (as previous does for tracks, G19); nil when
  /// there is none to go to: the last chapter has no next, the first no previous, a track
  /// without chapters neither. Only for the current entry held and seekable.
  func chapterTarget(next: Bool, _ world: Observation) -> Double? {
    let now = world.engine
    guard let t = now.track, t.id == queue.currentID, now.isSeekable else { return nil }
    let list = heldChapters(world)
    guard !list.isEmpty else { return nil }
    let i = Chapter.index(in: list, at: now.position)
    if next {
      let n = (i ?? -1) + 1
      return n < list.count ? list[n].start : nil
    }
    guard let i else { return nil }
    if now.position - list[i].start > 3 { return list[i].start }
    return i > 0 ? list[i - 1].start : nil
  }

  /// The user's play (G1): activates first (G10 may refuse); the reply waits for the answer.
  mutating func play(_ world: Observation, _ effects: inout [PlayerEffect]) {
    // Play during the sleep timer's fade: the user is awake, and the music plays on.
    if timerFadeUntil != nil, policy.isPlaying {
      timerFadeUntil = nil
      effects.append(.engine(.endFade))
    }
    let asked = policy.userPlay()
    if asked.isEmpty { return reply(.success, &effects) }
    carryOut(asked, world, &effects)
  }

  mutating func pause(_ world: Observation, _ effects: inout [PlayerEffect]) {
    let wasPlaying = policy.isPlaying
    carryOut(policy.userPause(), world, &effects)
    if wasPlaying { lastUserPause = world.now }
    reply(.success, &effects)
  }

  /// Stops and forgets the position; what is current stays, and play starts it again from its
  /// start (MPRIS's Stop; cmus, mpv and MPD do the same).
  mutating func stop(_ why: PauseCause?, _ effects: inout [PlayerEffect]) {
    effects.append(.engine(.stop))
    policy.stopped(why)
    interruption = nil
    lastUserPause = nil
    lostRoute = nil
    firstPlay = .none
    effects.append(.deactivate)
    positionJumped = true
    reply(.success, &effects)
  }

  /// Makes `track` current: plays it if playing, else loads it paused at its start (stopped,
  /// the next play starts it).
  mutating func go(to track: QueuedTrack, _ effects: inout [PlayerEffect]) {
    editQueue { _ = $0.setCurrent(track.id) }
    firstPlay = .none
    switch policy.phase {
    case .playing:
      effects.append(.engine(.load(track, at: 0, playing: true, continuing: false)))
      positionJumped = true
    case .paused, .interrupted:
      effects.append(.engine(.load(track, at: 0, playing: false, continuing: false)))
      positionJumped = true
    case .stopped:
      queueEnded = false  // the next play starts what is current now
    }
    reply(.success, &effects)
  }

  /// Moves within the track heard, clamped to it.
  mutating func seek(to seconds: Double, _ world: Observation, _ effects: inout [PlayerEffect]) {
    let engine = world.engine
    guard let track = engine.track, engine.isSeekable else {
      return reply(.commandDisabled, &effects)
    }
    let target = max(0, engine.duration.map { min(seconds, max(0, $0 - 0.05)) } ?? seconds)
    effects.append(.engine(.seek(to: target)))
    positionJumped = true
    // Shown while a track that has to open afresh (the decoder had moved on) opens.
    requestedStart = (track.id, target)
    notices.append(.seeked(target))
    reply(.success, &effects)
  }
}
