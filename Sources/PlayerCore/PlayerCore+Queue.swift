import AudioCore
import SessionCore

/// The user's edits of the queue and the output, and undo.
extension PlayerCore {
  mutating func handle(
    _ action: PlayerAction, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    switch action {
    case .add, .addReady, .insert, .remove, .move, .clear, .replace, .shuffleOnce:
      remember(world)
    case .playEntry, .setShuffle, .setRepeat, .setVolume, .selectDevice, .restore, .undo,
      .toggleSpoken, .pauseForLostOutput, .stepRate:
      break
    }
    switch action {
    case .add(let paths, let play):
      let added = editQueue { q -> [QueuedTrack] in
        let added = q.add(paths)
        if q.currentID == nil { q.setCurrent(added.first?.id) }
        return added
      }
      if play, let first = added.first { start(first, world, &effects) }
      effects.append(.recheckLookahead)
    case .addReady(let paths):
      let added = editQueue { $0.add(paths) }
      let idle =
        switch policy.phase {
        case .stopped, .paused: true
        case .playing, .interrupted: false
        }
      if let first = added.first, idle || queue.currentID == nil {
        go(to: first, &effects)
      }
      effects.append(.recheckLookahead)
    case .insert(let paths, let placement):
      let added = editQueue { q -> [QueuedTrack] in
        let added = q.insert(paths, at: placement)
        if q.currentID == nil { q.setCurrent(added.first?.id) }
        return added
      }
      if placement == .now, let first = added.first {
        start(first, world, &effects)
      } else if let first = added.first {
        say(.handedOver(count: added.count, first: first.path, placement: placement))
      }
      effects.append(.recheckLookahead)
    case .remove(let id):
      let wasCurrent = queue.currentID == id
      let next = queue.track(after: id, automatic: false)
      editQueue { _ = $0.remove(id) }
      if wasCurrent {
        if let next {
          editQueue { _ = $0.setCurrent(next.id) }
          if engineHasATrack(world) { go(to: next, &effects) }
        } else {
          stop(.user, &effects)
          editQueue { q in _ = q.setCurrent(q.first?.id) }
        }
      }
      effects.append(.recheckLookahead)
    case .move(let id, let index):
      editQueue { $0.move(id, to: index) }
      effects.append(.recheckLookahead)
    case .clear:
      let count = queue.count
      stop(nil, &effects)
      editQueue { $0.clear() }
      if count > 0 { say(.queueCleared(count: count)) }
    case .replace(let paths, let first):
      let before = queue.count
      let added = editQueue { q -> [QueuedTrack] in
        q.clear()
        return q.add(paths)
      }
      guard added.indices.contains(first) else { return }
      start(added[first], world, &effects)
      if before > 0 { say(.queueReplaced(count: added.count, was: before)) }
    case .shuffleOnce:
      editQueue { $0.shuffleOnce() }
      effects.append(.recheckLookahead)
    case .undo:
      undo(world, &effects)
    case .toggleSpoken:
      guard let track = world.engine.track ?? queue.current else { return }
      spokenOverrides[track.path] = !spoken
      rates.spokenOverrides[track.path] = !spoken
      ratesVersion += 1
      tellWhetherSpoken(track, world, &effects)
      say(.spokenWord(spoken, title: shown.title ?? fileName(track.path)))
    case .stepRate(let faster):
      stepRate(faster: faster, world, &effects)
    case .playEntry(let id):
      guard let t = queue.entry(id) else { return }
      start(t, world, &effects)
    case .setShuffle(let on):
      editQueue { $0.setShuffle(on) }
      effects.append(.recheckLookahead)
    case .setRepeat(let mode):
      editQueue { $0.repeatMode = mode }
      effects.append(.recheckLookahead)
    case .setVolume(let percent):
      if world.volume != nil { effects.append(.setVolume(percent: percent)) }
    case .selectDevice(let name):
      effects.append(.switchDevice(name))
    case .pauseForLostOutput:
      let wasPlaying = policy.isPlaying
      carryOut(policy.outputLostByPolicy(route), world, &effects)
      if wasPlaying { lostRoute = route }
    case .restore(let paths, let current, let position, let shuffle, let repeatMode):
      if engineHasATrack(world) || !policy.isStopped { stop(nil, &effects) }
      let target = editQueue { q -> QueuedTrack? in
        q.clear()
        let added = q.add(paths)
        q.repeatMode = repeatMode
        let t = current.flatMap { added.indices.contains($0) ? added[$0] : nil } ?? added.first
        q.setCurrent(t?.id)
        q.setShuffle(shuffle)
        return t
      }
      guard let target else { return }
      effects.append(.engine(.load(target, at: position, playing: false, continuing: false)))
      requestedStart = (target.id, position)
      positionJumped = true
      // Paused as the user left it: nothing was started, and nothing is heard (G1).
      policy.restoredPaused()
      lastUserPause = nil
    }
  }

  /// Keeps the queue as it is now for `undo`, before an edit.
  private mutating func remember(_ world: Observation) {
    history.append((queue.kept, world.engine.position))
    // 50 edits back, and no more than 200 000 entries kept in all (a long queue edited often
    // would otherwise hold many copies of itself).
    while history.count > Self.historyDepth
      || history.reduce(0, { $0 + $1.queue.count }) > 200_000 && history.count > 1
    {
      history.removeFirst()
    }
  }

  /// The queue as it was before the last edit. What is playing goes on if it is in it;
  /// otherwise the current entry it had comes back where it was heard, playing or paused as
  /// the player is now.
  private mutating func undo(_ world: Observation, _ effects: inout [PlayerEffect]) {
    guard let (earlier, position) = history.popLast() else {
      say(.nothingToUndo)
      return
    }
    let heard = world.engine.track
    let target = editQueue { q -> QueuedTrack? in
      q.restore(earlier)
      if let heard, q.entry(heard.id) == heard {
        q.setCurrent(heard.id)
        return nil
      }
      return q.current
    }
    say(.undone(count: earlier.count))
    if queue.isEmpty {
      // Back to an empty queue (a clear before a replace): nothing to play, as after a clear.
      if engineHasATrack(world) || !policy.isStopped { stop(nil, &effects) }
      return
    }
    guard let target else {
      effects.append(.recheckLookahead)
      return
    }
    switch policy.phase {
    case .playing:
      effects.append(.engine(.load(target, at: position, playing: true, continuing: false)))
    case .paused, .interrupted:
      effects.append(.engine(.load(target, at: position, playing: false, continuing: false)))
    case .stopped:
      return
    }
    requestedStart = (target.id, position)
    positionJumped = true
  }

  /// Plays `track` from its start, activating the session first (G10 may refuse).
  mutating func start(_ track: QueuedTrack, _ world: Observation, _ effects: inout [PlayerEffect]) {
    editQueue { _ = $0.setCurrent(track.id) }
    firstPlay = .none
    if policy.isPlaying {
      effects.append(.engine(.load(track, at: 0, playing: true, continuing: false)))
      positionJumped = true
      return
    }
    pendingStart = .entry(track)
    carryOut(policy.userPlay(), world, &effects)
  }

  /// After an edit of the queue: if the engine has already lined up something else than what
  /// now follows the track being heard, line up the right one (from where it is heard).
  mutating func replanIfNeeded(_ world: Observation, _ effects: inout [PlayerEffect]) {
    let now = world.engine
    guard let heard = now.track else { return }
    let wanted = queue.track(after: heard.id, automatic: true)
    switch now.lookahead {
    case .undecided: return
    case .next(let t) where t == wanted: return
    case .end where wanted == nil: return
    case .next, .end:
      effects.append(
        .engine(
          .load(heard, at: now.position, playing: now.state == .playing, continuing: true)))
      requestedStart = (heard.id, now.position)
      positionJumped = true
    }
  }
}
