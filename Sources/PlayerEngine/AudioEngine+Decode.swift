import AudioCore
import Glibc
import Platform
import Synchronization

/// The decode thread: carries out the transport's commands (with the render thread parked),
/// fills the ring from the decoder, moves on to the next track (gaplessly where the format
/// stays), opens outputs, and tells the owner what is heard.
extension AudioEngine {
  /// A file opening on a thread of its own, and what it is for.
  struct Opening {
    enum Purpose {
      /// A load (or a reopen for a seek): begin at `seconds`, after a ring reset. `asked` is the
      /// track asked for: a seek within it is not a new track.
      case load(seconds: Double, seeking: Bool, asked: QueuedTrack)
      /// The track after the one that ended: gaplessly on if its format is the output's.
      case advance
    }
    var ticket: Int
    var track: QueuedTrack
    var purpose: Purpose
    /// The load this is part of, which is over when this is.
    var loadID: Int?
  }

  struct DecodeState {
    var decoder: (any AudioDecoder)?
    var track: QueuedTrack?
    var opening: Opening?
    var pending: (QueuedTrack, any AudioDecoder)?
    var buffer: [Float] = []
    /// Of the current track, since it began at `startFrame`.
    var framesDecoded = 0
    var startFrame = 0
    /// The current decoder's live state, as last published.
    var live: LiveState?
    /// The tracks that would not open since one last did: with repeat on, the queue would
    /// lead back to them for ever (repeat one, or a queue where nothing opens). Met again, the
    /// queue has ended.
    var failedInARow: Set<Int> = []
    /// The track after this one, opening ahead (`Configuration.openAhead`), and its ticket:
    /// taken at the boundary if it is still what follows, let go otherwise.
    var ahead: (ticket: Int, track: QueuedTrack)?
    /// The next track was asked for, for this track (once: at the end of the queue, nothing
    /// follows; it is asked again at the end).
    var lookedAhead = false
    /// The current decoder's speed; not 1: its frames go through `stretcher` (`stretching`).
    var rate = 1.0
    var stretching = false
    /// The stretcher holds a stream (frames put since its start): the next track of the same
    /// format at the same speed goes on in it, gaplessly; anything else ends it first.
    var streamOpen = false
    /// Segments whose first frame has not come out of the stretcher yet: where they begin in
    /// the stream's input, in frames. Each joins the segments as the output reaches it.
    var pendingSegments: [(at: Double, segment: Segment)] = []
    /// The stretched stream is ending (`TimeStretcher.finish()`): once its last frames are in
    /// the ring, this is done.
    var afterTail: AfterTail?
  }

  /// What follows the end of a stretched stream, once its tail is in the ring.
  enum AfterTail {
    /// A track that goes on gaplessly at another speed (1× among them).
    case begin(QueuedTrack, any AudioDecoder)
    /// A track of another format: the device plays out, then reopens.
    case boundary(QueuedTrack, any AudioDecoder)
    /// Nothing more: the queue ends with what the ring holds.
    case endOfInput
  }

  func decodeLoop() {
    var d = DecodeState()
    while true {
      // Commands first: they come with the render thread parked.
      let next = shared.withLock { s -> (Command, Int)? in
        s.commands.isEmpty ? nil : s.commands.removeFirst()
      }
      if let (command, ticket) = next {
        // A command replaces whatever was opening (a load, a seek, the next track): what it
        // was for is gone. Device commands leave it be.
        switch command {
        case .reopenDevice, .switchDevice: break
        case .load, .seek, .unload, .quit: cancelOpening(&d)
        }
        let outcome = execute(command, &d)
        shared.withLock {
          $0.completed = ticket
          $0.succeeded = outcome != .failed
        }
        commandDone.signal()
        if outcome == .quit { return }
        continue
      }
      if let o = d.opening, let outcome = opened.take(o.ticket, keeping: d.ahead?.ticket) {
        d.opening = nil
        place(outcome, o, &d)
        continue
      } else if d.opening == nil {
        // A file that opened after its opening was replaced (a stop, a later load): let it go
        // now (an FFmpeg helper process with it), not at the next opening. What opens ahead
        // stays.
        _ = opened.take(-1, keeping: d.ahead?.ticket)
      }
      syncTracks(d)
      if signals.startedNews.exchange(false, ordering: .acquiringAndReleasing) {
        eventContinuation.yield(.outputStarted)
      }
      let lost = signals.deviceLost.load(ordering: .acquiring)
      if lost != 0, shared.withLock({ $0.state == .playing }) {
        setState(.paused)
        eventContinuation.yield(.deviceLost(device: currentDeviceName, code: lost))
      }
      if signals.reachedEnd.exchange(false, ordering: .acquiringAndReleasing) {
        setState(.stopped)
        sayEndOfQueue()
      }
      if signals.reachedBoundary.load(ordering: .acquiring) {
        switchFormat(&d)
        continue
      }
      if let after = d.afterTail, let stretcher {
        // The stretched stream's last frames, into the ring as it has room; then what follows.
        if stretcher.availableFrames > 0 {
          if ring.writableCount < stretcher.channels || receiveStretched(&d) == 0 {
            decodeWake.wait()
          }
          continue
        }
        d.afterTail = nil
        d.streamOpen = false
        d.stretching = false
        switch after {
        case .begin(let track, let decoder): begin(track, decoder, atFrame: 0, &d)
        case .boundary(let track, let decoder): placeAtBoundary(track, decoder, &d)
        case .endOfInput: markEndOfInput()
        }
        continue
      }
      if d.stretching, let decoder = d.decoder, signals.formatBoundary.load(ordering: .relaxed) < 0
      {
        if decodeStretched(decoder, &d) { continue }
      } else if let decoder = d.decoder, signals.formatBoundary.load(ordering: .relaxed) < 0 {
        let channels = decoder.format.channels
        // Four chunks at a time, but never more than half the ring holds: with many channels
        // four chunks did not fit in the ring at all, and the decoder waited for room for ever.
        let want = min(configuration.chunkFrames * 4, ring.capacity / 2 / channels) * channels
        if ring.writableCount >= want {
          var frames = 0
          var failure: DecodeError?
          // Straight into the ring where a good part of a chunk fits before the end of its
          // storage (almost always); through a buffer where it would wrap.
          let region = ring.writableRegion()
          let fit = min(want, region.count / channels * channels)
          let inPlace = fit >= min(want, configuration.chunkFrames * channels)
          do throws(DecodeError) {
            if inPlace {
              frames = try decoder.read(into: UnsafeMutableBufferPointer(rebasing: region[0..<fit]))
            } else {
              if d.buffer.count < want { d.buffer = [Float](repeating: 0, count: want) }
              frames = try d.buffer.withUnsafeMutableBufferPointer { buf throws(DecodeError) in
                try decoder.read(into: UnsafeMutableBufferPointer(rebasing: buf[0..<want]))
              }
            }
          } catch {
            failure = error
          }
          if frames > 0 {
            d.framesDecoded += frames
            openAheadIfNear(decoder, &d)
            if inPlace {
              ring.commitWrite(frames * channels)
            } else {
              d.buffer.withUnsafeBufferPointer { buf in
                _ = ring.write(UnsafeBufferPointer(rebasing: buf[0..<(frames * channels)]))
              }
            }
            // The render thread, starved, waits for a good part of the ring, not every chunk.
            // (The fence pairs with the render thread's store of `renderNeedsAny` before it
            // looks at the ring: one of the two sees the other, so it never sleeps on a chunk.)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if ring.readableCount >= ring.capacity / 4 || ring.writableCount < want
              || signals.renderNeedsAny.load(ordering: .relaxed)
            {
              renderWake.signal()
            }
          }
          if let live = decoder.live {
            if live != d.live { publish(live, &d) }
            if frames == 0, failure == nil, !live.ended {
              // Nothing has come from the network yet: ask again shortly, commands first.
              _ = decodeWake.wait(microseconds: 50_000)
              continue
            }
          }
          if let failure, let track = d.track {
            sayFailed(track, failure)
          } else if frames == 0, d.framesDecoded == 0, d.startFrame == 0, let track = d.track {
            // Opened, but not one frame in it: an empty file, or one cut short before its
            // first audio (a FLAC cut in its header, an Ogg cut before its first audio page).
            // Said like any file that will not play; the next is announced in its place.
            sayFailed(
              track,
              DecodeError(
                .damaged, path: track.path, reason: "no sound in it (empty, or cut short)"))
          }
          if frames == 0 || failure != nil { advance(&d) }
          continue
        }
      }
      decodeWake.wait()
    }
  }

  enum Outcome { case done, failed, quit }

  /// Decode thread: a live stream says something new (a title, a dropped connection): its
  /// segment shows it from now on.
  func publish(_ live: LiveState, _ d: inout DecodeState) {
    d.live = live
    guard let track = d.track else { return }
    shared.withLock { s in
      guard let i = s.segments.lastIndex(where: { $0.track == track }) else { return }
      s.segments[i].live = live
      s.segments[i].metadata = live.metadata
    }
    eventContinuation.yield(.streamChanged(track))
  }

  /// Decode thread: publishes the decoder's track, says when the track heard changes, and
  /// tells the render thread where the next one to announce starts.
  ///
  /// Every track whose first frame has been heard is announced, in order, also when a device
  /// that is not paced (ALSA's null) plays several between two looks. A segment with no frames
  /// (a file that decoded to nothing: reported as failed by the decode loop) is passed over,
  /// and one still waiting for its first frames is announced once they are there.
  ///
  /// Nothing is announced while a transport call is under way (`transport` wakes this thread
  /// when it is over). Its park releases what the device says it has played, and a device deep
  /// behind a sound server may say it has played all it was given (PulseAudio's does, before
  /// its stream has really started): near the end of a track that reached into the next one,
  /// which was announced, and then the seek that had parked went back into the track still
  /// heard, which went on playing under the next one's name. The call's command decides what
  /// is heard next; a pause keeps what the park released, and it is announced once it is over.
  func syncTracks(_ d: DecodeState) {
    let played = ring.releasedPosition
    let written = ring.writePosition
    let news: [EngineEvent] = shared.withLock { s in
      if s.decoding != d.track { s.decoding = d.track }
      guard s.held == 0 else { return [] }
      var news: [EngineEvent] = []
      for (i, seg) in s.segments.enumerated() where seg.id > s.announced {
        guard seg.ringStart <= played else { break }
        let isLast = i + 1 == s.segments.count
        let end = isLast ? written : s.segments[i + 1].ringStart
        if end == seg.ringStart {
          if isLast { break }  // its frames are still to come
          s.announced = seg.id  // empty, passed over
          news += Self.takeFailures(upTo: seg.id, &s)
          continue
        }
        s.announced = seg.id
        // A track starting is news (repeat one plays one track again); a seek within it is not,
        // unless the track announced last is another (the next one was heard, and the seek was
        // asked for in this one a moment before).
        if !seg.isSeekWithin || seg.track != s.heardTrack { news.append(.nowHearing(seg.track)) }
        s.heardTrack = seg.track
        news += Self.takeFailures(upTo: seg.id, &s)
      }
      let next = s.segments.first { $0.id > s.announced }
      signals.announceAt.store(next?.ringStart ?? -1, ordering: .releasing)
      return news
    }
    for event in news { eventContinuation.yield(event) }
  }

  /// Decode thread: `track` will not play. Said now, unless the segment before it is still to
  /// be announced: then once it is. (The decoder runs ahead of what is heard: on a loaded
  /// machine it met two bad files after a short track before that track's first frame was
  /// heard, and the player showed their line over the track ahead of them.)
  func sayFailed(_ track: QueuedTrack, _ error: DecodeError) {
    let held: Bool = shared.withLock { s in
      guard let last = s.segments.last, last.id > s.announced else { return false }
      s.failuresAhead.append((last.id, track, error))
      return true
    }
    if !held { eventContinuation.yield(.trackFailed(track, error)) }
  }

  /// The failures held until segment `id` was announced, taken.
  private static func takeFailures(upTo id: Int, _ s: inout Shared) -> [EngineEvent] {
    guard let first = s.failuresAhead.first, first.after <= id else { return [] }
    let due = s.failuresAhead.prefix { $0.after <= id }
    s.failuresAhead.removeFirst(due.count)
    return due.map { .trackFailed($0.track, $0.error) }
  }

  /// Decode thread: the queue has ended; what was held back is said first.
  func sayEndOfQueue() {
    sayFailuresHeld(forgettingSegments: false)
    eventContinuation.yield(.endOfQueue)
  }

  /// Decode thread: the segments are let go (a load, a seek, a new format): the failures held
  /// for them are said now, in order.
  func forgetSegments() {
    sayFailuresHeld(forgettingSegments: true)
  }

  private func sayFailuresHeld(forgettingSegments: Bool) {
    let due: [EngineEvent] = shared.withLock { s in
      if forgettingSegments { s.segments = [] }
      return Self.takeFailures(upTo: .max, &s)
    }
    for event in due { eventContinuation.yield(event) }
  }

  /// Decode thread. Carries out a command.
  func execute(_ command: Command, _ d: inout DecodeState) -> Outcome {
    switch command {
    case .quit:
      d = DecodeState()
      return .quit
    case .unload:
      d = DecodeState()
      resetRing()
      forgetSegments()
      shared.withLock {
        $0.decoding = nil
        $0.heardTrack = nil
      }
      return .done
    case .reopenDevice:
      let played = ring.releasedPosition
      let heard = shared.withLock { s in
        (s.segments.last { $0.ringStart <= played } ?? s.segments.first)?.format
      }
      guard let format = heard ?? d.decoder?.format else { return .failed }
      output = nil
      return openOutput(format, refusalFails: true) == .opened ? .done : .failed
    case .switchDevice(let name):
      let old = currentDeviceName
      let played = ring.releasedPosition
      let heard = shared.withLock { s in
        (s.segments.last { $0.ringStart <= played } ?? s.segments.first)?.format
      }
      guard let format = heard ?? d.decoder?.format, output != nil else {
        // Nothing to play on it yet (a file still opening): the next open opens this device.
        output = nil
        shared.withLock { $0.deviceName = name }
        return .done
      }
      // Close the old device first: two opens of one card's hw device would fail.
      output = nil
      do {
        output = try configuration.openOutput(name, format)
        signals.deviceLost.store(0, ordering: .releasing)
        shared.withLock { $0.deviceName = name }
        return .done
      } catch {
        shared.withLock { $0.switchFailure = OutputOpenError(device: name, message: "\(error)") }
        output = try? configuration.openOutput(old, format)
        if output == nil { setState(.paused) }
        return .failed
      }
    case .load(let track, let seconds, let continuing, let id):
      d = DecodeState()
      resetRing()
      forgetSegments()
      startOpening(
        track, for: .load(seconds: seconds, seeking: continuing, asked: track), loadID: id, &d)
      return .done
    case .seek(let track, let seconds, let id):
      d.pending = nil
      resetRing()
      forgetSegments()
      if let decoder = d.decoder, d.track == track {
        let frame = min(
          decoder.format.frames(in: seconds), max(0, (decoder.frameCount ?? .max) - 1))
        do throws(DecodeError) {
          try decoder.seek(toFrame: frame)
          begin(track, decoder, atFrame: frame, &d, seeking: true)
          shared.withLock { $0.loadsFinished = max($0.loadsFinished, id) }
          return .done
        } catch {
          eventContinuation.yield(.trackFailed(track, error))
          d = DecodeState()
          startOpening(
            track, for: .load(seconds: seconds, seeking: true, asked: track), loadID: id, &d)
          return .done
        }
      }
      // The decoder has moved on (to the next track, or to the end of the queue): open the
      // track being heard again. As a load: the seek waits for it a little, and `loaded` says
      // when it is there.
      d = DecodeState()
      startOpening(
        track, for: .load(seconds: seconds, seeking: true, asked: track), loadID: id, &d)
      return .done
    }
  }

  /// Decode thread: opens `track` on a thread of its own, for `purpose`; `place` goes on once
  /// it has. A slow disk or a network mount holds that thread, not this one: commands go on
  /// being carried out meanwhile (and replace the opening), and the render thread plays what
  /// the ring holds.
  func startOpening(
    _ track: QueuedTrack, for purpose: Opening.Purpose, loadID: Int?, _ d: inout DecodeState
  ) {
    let ticket = shared.withLock { s -> Int in
      if case .load = purpose { s.loading = track }
      s.lastOpening += 1
      return s.lastOpening
    }
    d.opening = Opening(ticket: ticket, track: track, purpose: purpose, loadID: loadID)
    if case .advance = purpose { d.track = track }  // what the decoder is on, for `lookahead`
    let seconds: Double
    if case .load(let s, _, _) = purpose { seconds = s } else { seconds = 0 }
    open(track, ticket: ticket, at: seconds)
  }

  /// Opens `track` (at `seconds`) on a thread of its own; its outcome is posted to `opened`
  /// under `ticket`.
  func open(_ track: QueuedTrack, ticket: Int, at seconds: Double) {
    let open = configuration.openDecoder
    let results = opened
    startThread(named: "hark-open") {
      results.post(
        ticket,
        Result { () throws(DecodeError) -> (decoder: any AudioDecoder, frame: Int) in
          let decoder = try open(track.path)
          try Self.checkChannels(decoder, track.path)
          let frame =
            decoder.isSeekable && seconds > 0
            ? min(decoder.format.frames(in: seconds), max(0, (decoder.frameCount ?? .max) - 1))
            : 0
          if frame > 0 { try decoder.seek(toFrame: frame) }
          return (decoder, frame)
        })
    }
  }

  /// Decode thread: once the decoder is within `openAhead` of the end of its track, starts
  /// opening the track that follows, on a thread of its own (`advance` takes it). Not for a
  /// track of unknown length (a stream: the next one would connect early), nor while another
  /// file opens.
  func openAheadIfNear(_ decoder: any AudioDecoder, _ d: inout DecodeState) {
    guard !d.lookedAhead, d.opening == nil, d.ahead == nil, let track = d.track,
      let total = decoder.frameCount,
      total - (d.startFrame + d.framesDecoded)
        <= decoder.format.frames(in: seconds(configuration.openAhead))
    else { return }
    d.lookedAhead = true
    guard let next = nextTrack(track) else { return }
    let ticket = shared.withLock { s -> Int in
      s.lastOpening += 1
      return s.lastOpening
    }
    d.ahead = (ticket, next)
    open(next, ticket: ticket, at: 0)
  }

  /// Decode thread: a command came while a file was opening; its decoder will be let go, as
  /// will the one opening ahead.
  func cancelOpening(_ d: inout DecodeState) {
    d.ahead = nil
    guard let o = d.opening else { return }
    d.opening = nil
    finish(o)
  }

  /// Decode thread: `o` is over (opened, nothing from it on opened, or replaced): the engine
  /// is no longer loading, and the load it was part of is done.
  func finish(_ o: Opening) {
    shared.withLock { s in
      if case .load = o.purpose { s.loading = nil }
      if let id = o.loadID { s.loadsFinished = max(s.loadsFinished, id) }
    }
    if o.loadID != nil { commandDone.signal() }
  }

  /// Decode thread: a file has opened (or would not) for `o`: begin it, or go on with the next
  /// track that opens.
  func place(_ outcome: OpenedFiles.Outcome, _ o: Opening, _ d: inout DecodeState) {
    let decoder: any AudioDecoder
    let frame: Int
    switch outcome {
    case .success(let opened):
      (decoder, frame) = opened
      d.failedInARow = []
    case .failure(let error):
      failed(o, error, &d)
      return
    }
    switch o.purpose {
    case .load(_, let seeking, let asked):
      if output?.format != decoder.format || signals.deviceLost.load(ordering: .relaxed) != 0 {
        output = nil
        switch openOutput(decoder.format) {
        case .opened: break
        case .refused(let refusal):
          failed(
            o, DecodeError(.outputRefused, path: o.track.path, reason: "the output \(refusal)"), &d)
          return
        case .failed:
          finish(o)
          return
        }
      }
      begin(o.track, decoder, atFrame: frame, &d, seeking: seeking && o.track == asked)
      finish(o)
      if o.loadID != nil { eventContinuation.yield(.loaded(o.track)) }
      startRenderIfWanted()
    case .advance:
      let sameFormat = decoder.format == output?.format
      if d.streamOpen {
        // The track before it was stretched: at the same speed and format it goes on in the
        // same stream (no seam); otherwise the stream ends first, its last frames in the ring.
        if sameFormat, abs(rate(for: o.track, decoder) - d.rate) < 1e-9 {
          begin(o.track, decoder, atFrame: 0, &d, continuingStream: true)
        } else {
          d.track = o.track  // what the decoder is on, for `lookahead`
          d.afterTail = sameFormat ? .begin(o.track, decoder) : .boundary(o.track, decoder)
          stretcher?.finish()
        }
      } else if sameFormat {
        begin(o.track, decoder, atFrame: 0, &d)  // gapless: straight on in the ring
      } else {
        placeAtBoundary(o.track, decoder, &d)
      }
    }
  }

  /// Decode thread: `track` is of another format than the output: the device plays out what
  /// the ring holds, then reopens at its format (`switchFormat`).
  func placeAtBoundary(_ track: QueuedTrack, _ decoder: any AudioDecoder, _ d: inout DecodeState) {
    d.track = track
    d.pending = (track, decoder)
    signals.formatBoundary.store(ring.writePosition, ordering: .releasing)
    renderWake.signal()
  }

  /// Decode thread: nothing follows what was decoded: the queue ends once the ring is heard
  /// (after a stretched stream's last frames, which `finish` lets out).
  func endInput(_ d: inout DecodeState) {
    if d.streamOpen, let stretcher {
      d.afterTail = .endOfInput
      stretcher.finish()
    } else {
      markEndOfInput()
    }
  }

  /// Decode thread: `o`'s file will not play: say why and open the next, from its start; at
  /// the end of the queue, play out what the ring holds.
  func failed(_ o: Opening, _ error: DecodeError, _ d: inout DecodeState) {
    sayFailed(o.track, error)
    d.failedInARow.insert(o.track.id)
    if let next = nextTrack(o.track), !d.failedInARow.contains(next.id) {
      var purpose = o.purpose
      // The position asked for belongs to the track asked for.
      if case .load(_, _, let asked) = purpose {
        purpose = .load(seconds: 0, seeking: false, asked: asked)
      }
      startOpening(next, for: purpose, loadID: o.loadID, &d)
      return
    }
    d.track = nil
    endInput(&d)
    if case .load = o.purpose {
      // Nothing from here to the end of the queue opens: there is nothing to play out.
      setState(.stopped)
      sayEndOfQueue()
      finish(o)
    }
  }

  /// Decode thread: the current track is done; go on with the next one that opens: the one
  /// opening ahead when it is still what follows (at once if it has opened).
  func advance(_ d: inout DecodeState) {
    guard let finished = d.track else { return }
    d.decoder = nil
    let ahead = d.ahead
    d.ahead = nil
    guard let next = nextTrack(finished) else {
      d.track = nil
      endInput(&d)
      return
    }
    if let ahead, ahead.track == next {
      d.opening = Opening(ticket: ahead.ticket, track: next, purpose: .advance, loadID: nil)
      d.track = next
      return
    }
    startOpening(next, for: .advance, loadID: nil, &d)
  }

  /// Decode thread, render parked at the boundary: reopen at the new format and go on.
  func switchFormat(_ d: inout DecodeState) {
    signals.formatBoundary.store(-1, ordering: .releasing)
    if let (track, decoder) = d.pending {
      d.pending = nil
      output = nil
      // The render thread waits at the boundary until `reachedBoundary` is cleared, the last
      // step here: cleared with the ring, it went on while `output` was being replaced.
      resetRing(atBoundary: true)
      forgetSegments()
      switch openOutput(decoder.format) {
      case .opened:
        begin(track, decoder, atFrame: 0, &d)
      case .refused(let refusal):
        // The device will not take this track's format: skip it, as a file that will not
        // open is skipped, and go on with the next that plays (a device that refused a
        // rate stopped the queue for good).
        eventContinuation.yield(
          .trackFailed(
            track, DecodeError(.outputRefused, path: track.path, reason: "the output \(refusal)")))
        d = DecodeState()
        if let next = nextTrack(track) {
          // Parked (it is at rest once let go from the boundary: it no longer reads the
          // output) until the next track has opened and `place` starts it again.
          signals.renderWantsToPlay.store(false, ordering: .sequentiallyConsistent)
          startOpening(next, for: .load(seconds: 0, seeking: false, asked: next), loadID: nil, &d)
        } else {
          markEndOfInput()
          setState(.stopped)
          sayEndOfQueue()
        }
      case .failed:
        break
      }
    }
    signals.reachedBoundary.store(false, ordering: .releasing)
    renderWake.signal()
  }

  /// Decode thread: `track` starts being decoded at `frame`: its segment begins where its
  /// first frame goes in the ring. At a speed other than 1× its frames go through the
  /// stretcher: in a stream of their own (a load, a seek, the first stretched track), whose
  /// first frame is the ring's next; or (`continuingStream`, the next track gaplessly at the
  /// same speed) on in the stream of the track before, the segment joining once the output
  /// reaches the track's first frame.
  func begin(
    _ track: QueuedTrack, _ decoder: any AudioDecoder, atFrame frame: Int, _ d: inout DecodeState,
    seeking: Bool = false, continuingStream: Bool = false
  ) {
    d.decoder = decoder
    d.track = track
    d.framesDecoded = 0
    d.startFrame = frame
    d.lookedAhead = false
    d.live = decoder.live
    var rate = continuingStream ? d.rate : rate(for: track, decoder)
    if rate != 1, !continuingStream, !prepareStretcher(for: decoder.format, rate: rate) {
      rate = 1
    }
    d.rate = rate
    d.stretching = rate != 1
    let duration = decoder.frameCount.map { decoder.format.seconds($0) }
    let segment = Segment(
      id: 0, track: track, ringStart: ring.writePosition, trackStartFrame: frame,
      format: decoder.format,
      duration: duration, metadata: decoder.metadata, isSeekable: decoder.isSeekable,
      isSeekWithin: seeking, live: decoder.live, rate: rate)
    if continuingStream, let stretcher {
      d.pendingSegments.append((Double(stretcher.framesIn), segment))
      shared.withLock { $0.decoding = track }
      return
    }
    d.streamOpen = false
    d.pendingSegments = []
    addSegment(segment)
  }

  /// Decode thread: `segment` begins at the ring's next frame. `decoding`: its track is the
  /// one the decoder is on (not so for a segment that joins once a stretcher's output reaches
  /// it: the decoder may be on the next by then).
  func addSegment(_ new: Segment, decoding: Bool = true) {
    var segment = new
    segment.ringStart = ring.writePosition
    let track = segment.track
    shared.withLock { s in
      // Keep only what the render thread may still be playing or is still to announce, and
      // the new one.
      let played = ring.releasedPosition
      if let lastHeard = s.segments.lastIndex(where: { $0.ringStart <= played }) {
        let announced = s.segments.prefix { $0.id <= s.announced }.count
        s.segments.removeFirst(min(lastHeard, announced))
      }
      s.lastSegmentID += 1
      segment.id = s.lastSegmentID
      s.segments.append(segment)
      // At once, with the segment: a snapshot taken as soon as a load returns must not see
      // the segment without the decoder's track (which would read as the end of the queue).
      if decoding { s.decoding = track }
    }
  }

  enum OutputOpening: Equatable {
    case opened
    /// The device opened but will not take the format: the track's problem, not the device's.
    case refused(FormatRefused)
    /// The device is unavailable; the owner has been told (`deviceFailed`).
    case failed
  }

  func openOutput(_ format: PCMFormat, refusalFails: Bool = false) -> OutputOpening {
    do {
      output = try configuration.openOutput(currentDeviceName, format)
      signals.deviceLost.store(0, ordering: .releasing)
      return .opened
    } catch let refusal as FormatRefused where !refusalFails {
      output = nil
      return .refused(refusal)
    } catch {
      output = nil
      setState(.stopped)
      eventContinuation.yield(.deviceFailed("\(error)"))
      return .failed
    }
  }

  var currentDeviceName: String { shared.withLock { $0.deviceName } }

  func markEndOfInput() {
    signals.inputEnd.store(ring.writePosition, ordering: .releasing)
    renderWake.signal()
  }

  /// Only with the render thread parked, or waiting at a format's boundary (`atBoundary`:
  /// then it stays there, since `reachedBoundary` is left for the switch to clear).
  func resetRing(atBoundary: Bool = false) {
    ring.reset(to: ring.writePosition)
    signals.inputEnd.store(-1, ordering: .releasing)
    signals.formatBoundary.store(-1, ordering: .releasing)
    signals.reachedEnd.store(false, ordering: .releasing)
    if !atBoundary { signals.reachedBoundary.store(false, ordering: .releasing) }
  }
}

// MARK: - Speed

extension AudioEngine {
  /// Decode thread: the speed `track` plays at: as `setRate` said for it, else as `rateOf`
  /// says (its tags known now); a live stream at 1×.
  func rate(for track: QueuedTrack, _ decoder: any AudioDecoder) -> Double {
    if decoder.live != nil { return 1 }
    let set = shared.withLock { s in s.rateSet.flatMap { $0.track == track ? $0.rate : nil } }
    return PlaybackRate(clamping: set ?? rateOf(track, decoder.metadata)).value
  }

  /// Decode thread: the stretcher, new, for a stream at `rate` in `format` (the one kept is
  /// reused while the format stays: SoundTouch's buffers are grown once). False when
  /// SoundTouch cannot be had: the track plays at 1×, and the owner hears why once.
  func prepareStretcher(for format: PCMFormat, rate: Double) -> Bool {
    if let s = stretcher, s.channels == format.channels, s.sampleRate == format.sampleRate {
      s.reset()
      s.rate = PlaybackRate(clamping: rate)
      return true
    }
    stretcher = nil
    do {
      stretcher = try TimeStretcher(
        channels: format.channels, sampleRate: format.sampleRate,
        rate: PlaybackRate(clamping: rate), maxInputFrames: configuration.chunkFrames)
      return true
    } catch {
      cannotStretch(error.reason)
      return false
    }
  }

  /// Speeds other than 1× cannot be played (SoundTouch is missing): said once; the snapshot
  /// says so from now on (`EngineSnapshot.canChangeRate`).
  func cannotStretch(_ why: String) {
    let first = shared.withLock { s -> Bool in
      defer { s.stretchProblem = why }
      return s.stretchProblem == nil
    }
    if first { eventContinuation.yield(.fault(why)) }
  }

  /// Decode thread: the current track through the stretcher: what it has ready goes into the
  /// ring first, then a chunk of the file is read and put in. At the file's end (or a failure)
  /// the track is done as any other (`advance`), the stream left open for the next track.
  /// Whether anything was done (else the thread waits: the ring is full).
  func decodeStretched(_ decoder: any AudioDecoder, _ d: inout DecodeState) -> Bool {
    guard let stretcher else { return false }
    if stretcher.availableFrames > 0 { return receiveStretched(&d) > 0 }
    let channels = decoder.format.channels
    let chunk = stretcher.maxInputFrames
    // Room in the ring for what a chunk makes (at 0.5×, twice its length).
    guard Double(ring.writableCount / channels) >= Double(chunk) / d.rate else { return false }
    if d.buffer.count < chunk * channels {
      d.buffer = [Float](repeating: 0, count: chunk * channels)
    }
    var frames = 0
    var failure: DecodeError?
    do throws(DecodeError) {
      frames = try d.buffer.withUnsafeMutableBufferPointer { buf throws(DecodeError) in
        try decoder.read(into: UnsafeMutableBufferPointer(rebasing: buf[0..<(chunk * channels)]))
      }
    } catch {
      failure = error
    }
    if frames > 0 {
      d.framesDecoded += frames
      openAheadIfNear(decoder, &d)
      d.buffer.withUnsafeBufferPointer { buf in
        stretcher.put(UnsafeBufferPointer(rebasing: buf[0..<(frames * channels)]))
      }
      d.streamOpen = true
      _ = receiveStretched(&d)
    }
    if let failure, let track = d.track {
      sayFailed(track, failure)
    } else if frames == 0, d.framesDecoded == 0, d.startFrame == 0, let track = d.track {
      sayFailed(
        track,
        DecodeError(.damaged, path: track.path, reason: "no sound in it (empty, or cut short)"))
    }
    if frames == 0 || failure != nil { advance(&d) }
    return true
  }

  /// Decode thread: what the stretcher has ready, into the ring as far as it has room; a track
  /// waiting for its first frame (`pendingSegments`) begins its segment where that frame goes.
  /// How many frames went in.
  @discardableResult
  func receiveStretched(_ d: inout DecodeState) -> Int {
    guard let stretcher else { return 0 }
    let channels = stretcher.channels
    var total = 0
    while true {
      var limit = Int.max
      while let p = d.pendingSegments.first {
        let until = ((p.at - stretcher.sourcePosition) / stretcher.outputRate).rounded(.up)
        if until >= 1 {
          limit = Int(until)
          break
        }
        d.pendingSegments.removeFirst()
        addSegment(p.segment, decoding: false)
      }
      guard stretcher.availableFrames > 0 else { break }
      let region = ring.writableRegion()
      let frames = min(region.count / channels, limit)
      guard frames > 0 else { break }
      let n = stretcher.receive(
        into: UnsafeMutableBufferPointer(rebasing: region[0..<(frames * channels)]))
      guard n > 0 else { break }
      ring.commitWrite(n * channels)
      total += n
    }
    // The stream is over: a track that began in its last frames (shorter than SoundTouch's
    // delay) begins where they end.
    if stretcher.availableFrames == 0, d.afterTail != nil {
      for p in d.pendingSegments { addSegment(p.segment, decoding: false) }
      d.pendingSegments = []
    }
    if total > 0 {
      atomicMemoryFence(ordering: .sequentiallyConsistent)
      if ring.readableCount >= ring.capacity / 4 || ring.writableCount < ring.capacity / 4
        || signals.renderNeedsAny.load(ordering: .relaxed)
      {
        renderWake.signal()
      }
    }
    return total
  }
}
