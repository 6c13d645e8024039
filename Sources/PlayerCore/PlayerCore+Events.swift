import AudioCore
import Glibc
import MediaFiles
import SessionCore

/// What the session server, the engine and the machine say, and the answer to an activation.
extension PlayerCore {
  // MARK: The activation

  mutating func activated(
    _ answer: ActivationAnswer, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    var wanted = pendingStart ?? .current
    pendingStart = nil
    var resumedAfter: String?? = nil
    if case .resumeAfterInterruption(let by) = wanted {
      resumedAfter = .some(by)
      wanted = .current
    }
    let afterRouteLoss = policy.pausedBy == .route
    if resumedAfter != nil, answer != .granted { policy.resumeRefused() }
    switch answer {
    case .refused(let reason):
      carryOut(policy.activationRefused(reason), world, &effects)
      problem = .activationRefused(reason)
      if case .preloaded(let t, let heard, _) = firstPlay {
        firstPlay = .preloaded(t, heard: heard, asked: true)
      }
      return reply(.commandDisabled, &effects)
    case .failed(let why):
      say(.cannotPlay(why))
      return reply(.commandFailed, &effects)
    case .granted:
      break
    }
    interruption = nil
    lostRoute = nil
    if case .activationRefused = problem { problem = nil }
    let target: QueuedTrack? =
      switch wanted {
      case .entry(let t): t
      case .current, .resumeAfterInterruption: queue.current ?? queue.first
      }
    guard let target else {
      effects.append(.deactivate)
      return reply(.noSuchContent, &effects)
    }
    let engine = world.engine
    // A first play refused held the engine's word on what it holds: said now if that plays,
    // dropped if another is loaded.
    var heldNews: QueuedTrack?
    var playsThePreload = false
    if case .preloaded(let first, let heard, let asked) = firstPlay {
      heldNews = heard
      playsThePreload = !asked && first == target && wanted == .current
    }
    firstPlay = .none
    var loads = false
    var starts = true
    if playsThePreload {
      starts = engineHasATrack(world)
      // It holds the first entry, or the first after it that opened (those that would not were
      // said as they failed), or nothing when none did (the end of the queue is on its way): a
      // load again would try them all twice.
      effects.append(.engine(.play))
    } else if wanted != .current || queueEnded || (engine.track ?? engine.loading) != target {
      queueEnded = false
      effects.append(.engine(.load(target, at: 0, playing: true, continuing: false)))
      positionJumped = true
      loads = true
    } else if engine.isLive {
      // A live stream resumes live (G14), as a radio does: connected afresh, not from what was
      // buffered when it paused (the station has moved on; its server has likely dropped the
      // connection that stopped reading).
      effects.append(.engine(.load(target, at: 0, playing: true, continuing: false)))
      positionJumped = true
      loads = true
    } else {
      // The output that went away may have been replaced under the same device name (a sound
      // server moves streams to another sink): start on a fresh one.
      if afterRouteLoss { effects.append(.engine(.reopenOutput)) }
      effects.append(.engine(.play))
      // Nothing held and nothing opening: nothing to start (an output that will not reopen is
      // said by the engine, `deviceFailed`).
      starts = engineHasATrack(world)
    }
    guard starts else {
      policy.stopped(policy.pausedBy)
      effects.append(.deactivate)
      return reply(.commandFailed, &effects)
    }
    policy.started()
    lastUserPause = nil
    lastInterruption = nil
    if case .some(let by) = resumedAfter { say(.resumed(after: by)) }
    if !loads, let heldNews, world.engine.track == heldNews {
      heardNow(heldNews, world, &effects)
    }
    reply(.success, &effects)
  }

  // MARK: Session events

  mutating func handle(
    _ event: SessionEvent, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    switch event {
    case .interruption(.began(let cause)):
      // The sleep timer ended and its fade is under way: its pause comes now, so that the
      // interruption finds it paused by the timer, and its end resumes nothing.
      if timerFadeUntil != nil {
        timerFadeUntil = nil
        carryOut(policy.timerEnded(), world, &effects)
        effects.append(.engine(.endFade))
      }
      interruption = cause
      lastInterruption = cause
      var policyEffects = policy.interruptionBegan(cause)
      if spoken && (cause.kind == .otherAudio || cause.kind == .navigation) {
        // Spoken word paused for a prompt (which mixes with music, but not with words).
        policyEffects = policyEffects.map {
          if case .say(.interrupted) = $0 { .say(.pausedForPrompt(cause.by)) } else { $0 }
        }
      }
      carryOut(policyEffects, world, &effects)
    case .interruption(.ended(let shouldResume, let reason)):
      let by = interruption?.by
      let policyEffects = policy.interruptionEnded(shouldResume: shouldResume, reason: reason)
      let resumes = policyEffects.contains(.activateAndPlay)
      if spoken, resumes, let heard = world.engine.track, heard == queue.current,
        world.engine.isSeekable
      {
        // As podcast apps do: back a couple of seconds, so the sentence cut is heard whole.
        effects.append(
          .engine(.seek(to: max(0, world.engine.position - settings.spokenStepBack))))
        positionJumped = true
      }
      interruption = nil
      if resumes { pendingStart = .resumeAfterInterruption(by: by) }
      carryOut(policyEffects, world, &effects)
    case .routeChange(let change):
      routeChanged(change, world, &effects)
    case .ducking(let isDucked):
      ducked = isDucked
      effects.append(.engine(.setDucked(isDucked)))
    case .silentMode(let on, _):
      silentMode = on  // playback is never muted by silent mode (G2); the views say it is on
    case .mediaServicesWereReset:
      published = nil  // the new server must hear everything again
      nowPlaying = false  // and will say who is the now-playing app
    case .nowPlaying(let isNowPlaying):
      nowPlaying = isNowPlaying
    case .silenceSecondaryAudioHint:
      break  // hark's music is primary audio
    case .sleepTimer(let status):
      sleepTimer = status
      sleepTimerAt = world.now
      // Cancelled, or set again, during its fade: the fade stops and the music plays on.
      if timerFadeUntil != nil, status == nil || status?.state == .running {
        timerFadeUntil = nil
        effects.append(.engine(.endFade))
      }
    case .sleepTimerEnded(let fade):
      guard policy.isPlaying, timerFadeUntil == nil else { return }
      let length = UInt64(max(0, min(fade, SleepTimerSetting.longestFade)) * 1e9)
      timerFadeUntil = world.now &+ length
      if length > 0 {
        effects.append(.engine(.fadeOut(seconds: Double(length) / 1e9)))
        effects.append(.wake(afterNanoseconds: length))
      }
    }
  }

  /// The sleep timer's fade, after every input: over, it pauses the player (the reason `timer`);
  /// the player no longer playing (the user paused, the output went), it is called off.
  mutating func settleTimerFade(_ world: Observation, _ effects: inout [PlayerEffect]) {
    guard let until = timerFadeUntil else { return }
    if !policy.isPlaying {
      timerFadeUntil = nil
      effects.append(.engine(.endFade))  // after the pause: nothing is heard of it
      return
    }
    guard world.now >= until else { return }
    timerFadeUntil = nil
    carryOut(policy.timerEnded(), world, &effects)
    effects.append(.engine(.endFade))
  }

  /// G4–G6 (and G5 during an interruption), with what the views show of the output.
  mutating func routeChanged(
    _ change: RouteChange, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    route = change.current
    let wasPlaying = policy.isPlaying
    if change.reason == .oldDeviceUnavailable, !wasPlaying, policy.phase == .paused(.user),
      let paused = lastUserPause, world.now &- paused <= settings.pauseBeforeLossWindow
    {
      // A pause just before the output went: a sound server's policy pausing the players whose
      // sink went (WirePlumber's linking.pause-playback). The output's reason, not the user's.
      policy.pauseWasTheRoute(change.previous)
      lastUserPause = nil
      lostRoute = change.previous
      say(.outputWentAway(change.previous.name))
      return
    }
    carryOut(policy.routeChanged(change), world, &effects)
    if change.reason == .oldDeviceUnavailable && (wasPlaying || policy.pausedBy == .route) {
      // The device failing may have been seen first (the sound server ended the stream it had
      // moved): the output that really went is this one.
      if !wasPlaying, let known = lostRoute, known.kind == .unknown, known != change.previous {
        say(.outputWentAway(change.previous.name))
      }
      lostRoute = change.previous
    }
  }

  /// Before the machine sleeps a playing player pauses, as for an output gone (the inhibitor it
  /// holds while playing is let go as soon as it has); after waking it stays paused and says
  /// so; the media keys reach it as before.
  mutating func machineSleeps(_ going: Bool, _ world: Observation, _ effects: inout [PlayerEffect])
  {
    if going {
      carryOut(policy.machineWillSleep(), world, &effects)
    } else if policy.phase == .paused(.sleep) {
      say(.machineWoke)
    }
  }

  // MARK: Engine events

  mutating func handle(
    _ event: EngineEvent, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    switch event {
    case .trackFailed(let track, let error):
      failed[track.id] = error.reason
      notices.append(.couldNotPlay(track, line: error.description))
      skippedInARow += 1
      problem = .skipped(
        file: fileName(track.path), reason: error.reason, moreBefore: skippedInARow - 1)
      problemOutlivesNextTrack = true
    case .deviceLost(let device, let code):
      // Already paused because its output went: the session server ends a stream the sound
      // server moved off a sink that went away (G5), after telling this player why. The device
      // is opened afresh on play; the news adds nothing.
      if policy.pausedBy == .route { return }
      // The engine has already stopped writing; the route change itself comes through the
      // session server, like every real output event.
      let lost = Route(name: device, kind: .unknown)
      say(.deviceWentAway(device, reason: String(cString: strerror(-code))))
      lostRoute = lost
      effects.append(.reportOutputLost(lost))
    case .deviceFailed(let message):
      notices.append(.outputFailed(line: "cannot play on '\(world.engine.deviceName)': \(message)"))
      problem = .outputFailed(device: world.engine.deviceName, message: message)
      policy.stopped(.route)
      effects.append(.deactivate)
    case .nowHearing(let track):
      if case .preloaded(let first, _, let asked) = firstPlay, !policy.isPlaying {
        // Loaded paused for a first play not yet granted: not news yet.
        editQueue { _ = $0.setCurrent(track.id) }
        firstPlay = .preloaded(first, heard: track, asked: asked)
        return
      }
      firstPlay = .none
      heardNow(track, world, &effects)
    case .fault(let what):
      say(.engineFault(what))
    case .outputStarted:
      break  // the snapshot taken after each event says that the position now moves
    case .streamChanged(let track):
      let now = world.engine
      // Said once it is heard (`heardNow` notes what it said first), then as it changes.
      guard now.track == track, let before = stream, before.track == track else { return }
      let title = now.metadata.flatMap(Self.onAir)
      stream = (track, title, now.reconnecting)
      if let why = now.reconnecting, before.reconnecting == nil {
        say(.reconnecting(why))
      } else if now.reconnecting == nil, before.reconnecting != nil {
        say(.reconnected)
      }
      // A title cleared to the station's name is no news.
      if let title, title != before.title, title != now.liveStation { say(.onAir(title)) }
    case .loaded(let track):
      // The track asked for, or the first after it that opened (the queue's current follows,
      // unless a later load has been asked for meanwhile). The snapshot after it shows its
      // length and position, also paused.
      if world.engine.track == track, queue.currentID != track.id {
        editQueue { _ = $0.setCurrent(track.id) }
      }
    case .endOfQueue:
      queueEnded = true
      firstPlay = .none
      policy.stopped(.endOfQueue)
      effects.append(.deactivate)
      if queue.currentID != queue.first?.id { editQueue { q in _ = q.setCurrent(q.first?.id) } }
      notices.append(.queueEnded(nothingPlayed: !playedSomething))
      positionJumped = true
    }
  }

  /// A track is now heard: the queue's current follows, spoken word is told, the problem line
  /// moves on, and it is news.
  mutating func heardNow(
    _ track: QueuedTrack, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    if queue.currentID != track.id { editQueue { _ = $0.setCurrent(track.id) } }
    tellWhetherSpoken(track, world, &effects)
    playedSomething = true
    if failed[track.id] == nil {
      skippedInARow = 0
      if problemOutlivesNextTrack { problemOutlivesNextTrack = false } else { problem = nil }
    }
    notices.append(.nowPlaying(track))
    positionJumped = true
    let now = world.engine
    if now.track == track, now.isLive {
      stream = (track, now.metadata.flatMap(Self.onAir), now.reconnecting)
    }
  }

  /// Tells the session whether the track now heard is spoken word (spokenAudio) or music, when
  /// that changed.
  mutating func tellWhetherSpoken(
    _ track: QueuedTrack, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    let metadata = world.engine.track == track ? world.engine.metadata : nil
    let isSpoken =
      spokenOverrides[track.path]
      ?? SpokenWord.isSpoken(
        path: track.path, genre: metadata?.genre, folders: settings.spokenFolders)
    guard isSpoken != spoken else { return }
    spoken = isSpoken
    effects.append(.setCategory(isSpoken ? .spokenAudio : .default))
  }

  /// "Artist - Title" as a station says it, or its title alone; nil when it says nothing.
  static func onAir(_ m: TrackMetadata) -> String? {
    guard let title = m.title else { return nil }
    return m.artist.map { "\($0) - \(title)" } ?? title
  }
}

/// Which tracks are words, not music: a prompt pauses them (and they step back a little when
/// they resume) where it ducks music.
public enum SpokenWord {
  /// Genres that are words, not music (lower case; a genre containing one counts).
  public static let genres = [
    "podcast", "audiobook", "audio book", "hörbuch", "speech", "spoken", "lecture", "talk",
    "radio play", "audio drama",
  ]

  /// Whether a track is spoken word: by its genre tag, its file type (.m4b, an audiobook), or a
  /// folder the config names.
  public static func isSpoken(path: String, genre: String?, folders: [String]) -> Bool {
    if QueueLoader.fileExtension(path) == "m4b" { return true }
    if let g = genre?.lowercased(), genres.contains(where: { g.contains($0) }) {
      return true
    }
    return folders.contains { folder in
      let f = folder.hasSuffix("/") ? folder : folder + "/"
      return path.hasPrefix(f)
    }
  }
}
