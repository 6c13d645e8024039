import AudioCore
import MediaFiles
import SessionCore

/// What the views draw and what the session server is told.
extension PlayerCore {
  /// The player now, from the core's state and what it sees; `waiting` when what is shown
  /// waits for the engine's news of a new stretch heard (see below).
  ///
  /// The position shown never goes back between seeks, loads and new tracks, but at a pause:
  /// paused from playing, it is where the sound stopped, where playing resumes (never behind
  /// what was last shown, but not where the clock has carried it since, which can be up to the
  /// quarter second the clock runs ahead of what is heard, below):
  /// - A view moves it on with the clock from `positionTime` while it advances, and what the
  ///   engine says was heard can fall behind that (a sound server that buffers deeper as it
  ///   goes). A little behind, it goes on with the clock from where it was shown; up to two
  ///   seconds behind, it is held there, not advancing, until what is heard catches up.
  /// - The engine can start a new stretch of sound (the next track gaplessly, the same one on
  ///   repeat, the first after a file that would not open) a moment before its news
  ///   (`nowHearing`) reaches the core: until then, for a second at most, the track shown
  ///   stays as it was, at its end, rather than at 0:00 for a blink.
  func snapshot(seeing world: Observation) -> (snapshot: PlayerSnapshot, waiting: Bool) {
    let now = world.engine
    var s = PlayerSnapshot()
    switch policy.phase {
    case .stopped: s.state = .stopped
    case .playing: s.state = .playing
    case .paused, .interrupted: s.state = .paused
    }
    s.pausedBy = policy.pausedBy
    if case .interrupted(let resume, let by) = policy.phase {
      s.interruption = interruption ?? by
      s.willResume = resume
    }
    s.lostRoute = s.pausedBy == .route ? lostRoute : nil
    if let cause = s.pausedBy {
      s.pauseReason = PauseReason(cause, interruption: (s.interruption ?? lastInterruption)?.kind)
    }
    s.current = queue.current
    let loaded = now.track != nil && now.track == queue.current
    if let c = queue.current {
      s.title = (loaded ? now.metadata?.title : nil) ?? QueueLoader.title(fromPath: c.path)
    }
    if !loaded, s.state == .stopped, s.current != nil, shown.current == s.current {
      // Stopped, the track let go by the engine: it is still the one Play starts again, so
      // what was known of it (its tags, its length) stays in what is shown and published.
      s.title = shown.title
      s.metadata = shown.metadata
      s.duration = shown.duration
      s.isSeekable = shown.isSeekable
      s.chapters = shown.chapters
    }
    if !loaded, let r = requestedStart, r.id == queue.currentID, now.loading?.id == r.id {
      s.position = r.seconds  // opening: where it will begin
    }
    if loaded {
      s.metadata = now.metadata ?? TrackMetadata()
      s.position = now.position
      s.duration = now.duration
      s.isSeekable = now.isSeekable
      s.format = now.format
      s.isLive = now.isLive
      s.reconnecting = now.reconnecting
      s.chapters = heldChapters(world)
      s.rate = now.rate
    }
    s.positionTime = world.now
    s.isAdvancing = loaded && now.isAdvancing && s.state == .playing
    var waiting = false
    let continues = !positionJumped && shown.current == s.current && s.current != nil
    let newStretch = now.segment != shownSegment || !loaded
    if continues, newStretch, now.track != nil, now.loading == nil,
      world.now &- (waitingSince ?? world.now) < Self.newsWaitedAtMost
    {
      waiting = true
      s.title = shown.title
      s.metadata = shown.metadata
      s.duration = shown.duration
      s.isSeekable = shown.isSeekable
      s.format = shown.format
      s.isLive = shown.isLive
      s.chapters = shown.chapters
      let was = shown.position(at: world.now)
      s.position = shown.duration.map { min(was, $0) } ?? was
      s.isAdvancing = false
    } else if continues, !newStretch, s.state != .stopped {
      // Paused from playing: the sound stopped at the frame the engine says was heard last,
      // where playing resumes, not where the clock has carried what was shown since (the
      // pause's ramp and the engine's wait for it: 45 ms on PulseAudio; more where the clock
      // already ran ahead of what was heard, up to the quarter second at which it waits). Held
      // to that, the position shown ran ahead of what was heard by as much at each pause. It
      // is never behind what was last shown, though.
      let pausing = shown.state == .playing && s.state != .playing
      let before = pausing ? shown.position : shown.position(at: world.now)
      let behind = before - s.position
      if behind > 0 && behind < Self.heldAtMost {
        s.position = before
        // A little behind (the engine's own estimate between two reports of the device) goes
        // on with the clock; more is held until what is heard has caught up.
        if behind >= Self.advancesBehind { s.isAdvancing = false }
      }
    }
    s.queue = queue.entries
    s.playOrder = queue.playOrder
    s.shuffle = queue.shuffle
    s.repeatMode = queue.repeatMode
    s.failed = failed
    s.deviceName = now.deviceName
    if let v = world.volume {
      s.volume = .level(percent: v.percent, muted: v.muted)
    } else {
      s.volume = .unavailable(device: now.deviceName)
    }
    s.route = route
    s.ducked = ducked
    s.silentMode = silentMode
    s.problem = problem
    s.isNowPlaying = nowPlaying
    s.isSpoken = spoken
    s.places = placesThisRun
    s.sleepTimer = sleepTimer
    s.sleepTimerAt = sleepTimerAt
    s.enabledCommands = enabledCommands(world)
    return (s, waiting)
  }

  /// How far behind what was shown the engine's position may be and still not move it back.
  static let heldAtMost = 2.0
  /// Behind by less, the position shown goes on with the clock; by more, it waits.
  static let advancesBehind = 0.25
  /// How long what is shown waits for the news of a new stretch heard (nanoseconds).
  static let newsWaitedAtMost: UInt64 = 1_000_000_000

  /// What may be asked now (G19): what cannot be honoured is disabled, never mapped to another.
  func enabledCommands(_ world: Observation) -> Set<RemoteCommandKind> {
    guard let current = queue.currentID else { return [] }
    let now = world.engine
    let loaded = now.track != nil && now.track?.id == current
    var c: Set<RemoteCommandKind> = [.play, .togglePlayPause, .stop]
    // Nothing to pause while stopped (MPRIS's CanPause is of the track loaded, paused or not).
    if !policy.isStopped || pendingStart != nil { c.insert(.pause) }
    if queue.track(after: current, automatic: false) != nil { c.insert(.nextTrack) }
    if queue.track(before: current) != nil || (loaded && now.isSeekable && now.position > 3) {
      c.insert(.previousTrack)
    }
    if loaded && now.isSeekable {
      c.formUnion([
        .seekForward, .seekBackward, .skipForward, .skipBackward, .changePlaybackPosition,
      ])
      if chapterTarget(next: true, world) != nil { c.insert(.nextChapter) }
      if chapterTarget(next: false, world) != nil { c.insert(.previousChapter) }
    }
    if loaded && now.isSeekable && !now.isLive && now.canChangeRate {
      c.insert(.changePlaybackRate)
    }
    if let volume = world.volume {
      c.formUnion([.volumeUp, .volumeDown])
      if volume.canMute { c.insert(.mute) }
    } else if world.volumeSought {
      // Taken: the player finds the control before the core hears the command.
      c.formUnion([.volumeUp, .volumeDown, .mute])
    }
    return c
  }

  /// Tells the session server what plays, when that changed (not as the position moves: the
  /// server moves it on with the clock, from the rate). The snapshot's position never goes back
  /// between jumps but at a pause (`snapshot(seeing:)`); while it is held, the rate is 0 and a
  /// tick comes when what is heard will have caught up.
  mutating func publish(
    _ snap: PlayerSnapshot, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    let info = snap.playbackInfo
    let jumped = positionJumped
    positionJumped = false
    let behind = snap.position - world.engine.position
    if snap.state == .playing, !snap.isAdvancing, snap.current != nil, world.engine.isAdvancing,
      behind > 0, behind < Self.heldAtMost, world.engine.segment == shownSegment
    {
      // Held until what is heard has caught up: a look then.
      let rate = max(world.engine.rate, PlaybackRate.slowest.value)
      effects.append(.wake(afterNanoseconds: UInt64(behind / rate * 1e9) + 10_000_000))
    }
    if !jumped, let last = published, last.commands == snap.enabledCommands {
      var was = last.info
      was.position = nil
      var same = info
      same.position = nil
      let elapsed = Double(world.now &- last.at) / 1e9
      let expected =
        (last.info.position ?? 0)
        + (last.info.state == .playing ? (last.info.rate ?? 0) * elapsed : 0)
      if same == was && abs((info.position ?? 0) - expected) < 0.25 { return }
    }
    published = (info, snap.enabledCommands, world.now)
    effects.append(.publish(info, snap.enabledCommands))
  }
}
