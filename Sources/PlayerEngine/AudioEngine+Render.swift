import AudioCore
import Glibc
import Platform
import Synchronization

/// The render thread: takes samples from the ring to the device, applies the gain, measures
/// what was heard. No locks, no allocation, no logging; it blocks only on the device (and its
/// wake pipe) and on `renderWake` while parked.
extension AudioEngine {
  func renderLoop() {
    var gain = GainRamp(1)
    var appliedTarget: Float = 1
    var lastDelay = 0  // frames the device held after the last write: not yet heard
    var writtenEnd = 0  // ring position after the last sample the device took
    var deviceEmpty = true  // nothing written since starting, resuming or taking back
    // The output taken back (snd_pcm_drop) and not made ready again yet: a new one (opened
    // by the decode thread meanwhile) is ready as it is.
    var dropped: ObjectIdentifier?
    let chunkFrames = configuration.chunkFrames

    /// What has been heard by now: what the device took less what it still holds.
    func releaseHeard(_ out: any AudioOutput, channels: Int) {
      lastDelay = out.delayFrames()
      ring.release(upTo: writtenEnd - lastDelay * channels)
      // Until the device has started, nothing it holds is being heard: the position waits
      // (it ran ahead by what the device held, then stepped back when it started).
      let running = out.isRunning()
      signals.heardDelay.store(running ? lastDelay : 0, ordering: .relaxed)
      signals.heardAt.store(monotonicNanoseconds(), ordering: .releasing)
      if running != signals.outputRunning.load(ordering: .relaxed) {
        signals.outputRunning.store(running, ordering: .releasing)
        if running {
          signals.startedNews.store(true, ordering: .releasing)
          decodeWake.signal()
        }
      }
    }

    /// Silence now: drops what the device holds and goes back in the ring to the first frame
    /// not heard, so that a resume (or a new gain) writes it again and none is lost.
    ///
    /// The device is made ready again when playing resumes, not here: ALSA's pulse device
    /// makes a new stream on the sound server in snd_pcm_prepare and waits until it is ready,
    /// which on PipeWire's pulse service is once WirePlumber has linked it: 70 to 200 ms when
    /// the sink it played on has just gone (the pause for G5 waited that long to be done), and
    /// as long as the role policy keeps the stream unlinked (an Alert's whole length) when
    /// that is why it pauses.
    func takeBack(_ out: any AudioOutput) {
      releaseHeard(out, channels: out.format.channels)
      out.discard()
      dropped = ObjectIdentifier(out)
      _ = ring.rewindToReleased()
      writtenEnd = ring.readPosition
      lastDelay = 0
      deviceEmpty = true
      signals.outputRunning.store(false, ordering: .releasing)
      signals.heardDelay.store(0, ordering: .relaxed)
    }

    /// Before the sound stops (a pause, a seek, a skip, a load, a stop), it ramps down over
    /// `fadeOut` rather than being cut, which clicks: what the device holds beyond what is
    /// about to be heard is taken back (as for a new gain), the ramp is written from the frame
    /// heard next at the gain heard, and played out; `takeBack` then drops the rest, and the
    /// ring goes back to where the ramp began (a resume fades in from there: nothing is lost).
    /// Where the device cannot take back enough (more than `fadeOutWithin` would be heard
    /// before the ramp: ALSA's pulse plugin, which has sent it on), it is cut as before: a
    /// pause is silent within `fadeOutWithin` plus the ramp, whatever the device.
    func fadeOut(_ out: any AudioOutput) {
      let channels = out.format.channels
      let rampFrames = out.format.frames(in: seconds(configuration.fadeOut))
      guard rampFrames > 0, out.isRunning() else { return }
      releaseHeard(out, channels: channels)
      let back = out.rewind(frames: max(0, writtenEnd - ring.releasedPosition) / channels)
      if back > 0 {
        writtenEnd -= back * channels
        _ = ring.rewind(to: writtenEnd)
      }
      let ahead = out.delayFrames()
      // From here what is heard is what the device kept: the clock that carries the position
      // between measurements stops there. (It counted on what the device held before it took
      // back: a snapshot taken during the ramp, from any thread, showed the position up to
      // 45 ms past where playing resumes, and the position shown never steps back. The player
      // itself waits for the pause to be done before it asks.)
      signals.heardDelay.store(ahead, ordering: .relaxed)
      signals.heardAt.store(monotonicNanoseconds(), ordering: .releasing)
      let within = max(
        out.format.frames(in: seconds(configuration.fadeOutWithin)),
        out.framesKeptByRewind + out.format.frames(in: 0.010))
      guard ahead <= within else { return }
      let start = writtenEnd
      let copy = UnsafeMutableBufferPointer(
        rebasing: scratch[0..<min(rampFrames * channels, scratch.count / channels * channels)])
      let n = ring.read(into: copy)
      guard n > 0 else { return }
      var down = gain
      down.ramp(to: 0, over: n / channels, smooth: true)
      down.apply(to: UnsafeMutableBufferPointer(rebasing: copy[0..<n]), channels: channels)
      // The park's wake is spent: the ramp's write waits for room, if it must, for as long as
      // `rampWriteLimit`. `parkRender` wakes it again every 100 ms: a stream the sound server
      // has ended under it (PipeWire's ALSA plugin, once the session server silences a stream
      // whose sink went) takes nothing and says nothing, and the pause waited on it for ever.
      wakePipe?.drain()
      let wakeFD = wakePipe?.readFD ?? -1
      let giveUp = monotonicNanoseconds() + Self.rampWriteLimit
      var block = UnsafeBufferPointer(rebasing: copy[0..<n])
      var tries = 0
      while !block.isEmpty, tries < 100 {
        tries += 1
        switch out.write(block, wakingOn: wakeFD) {
        case .written(let frames):
          block = UnsafeBufferPointer(rebasing: block[(frames * channels)...])
          if frames == 0 {
            wakePipe?.drain()
            // No room in time: the device does not play. Cut, as on a device that cannot
            // take back (what was written of the ramp is dropped with the rest).
            if monotonicNanoseconds() >= giveUp { return }
          }
        case .recovered: continue
        case .deviceGone: return
        }
      }
      // The rest of what was taken back is not written again: the ramp goes as it is.
      let silence = out.send()
      // Until it has been heard: what was ahead of it, itself and the silence after it (a
      // little more, at most).
      let deadline =
        monotonicNanoseconds()
        + UInt64(Double(ahead + n / channels + silence) / Double(out.format.sampleRate) * 1e9)
        + 5_000_000
      while out.delayFrames() > 0, monotonicNanoseconds() < deadline {
        usleep(500)
      }
      // The ramp is taken as not heard: playing again starts where it began.
      writtenEnd = start
      _ = ring.rewind(to: start)
      lastDelay = 0
    }

    while !signals.renderQuit.load(ordering: .acquiring) {
      guard signals.renderWantsToPlay.load(ordering: .sequentiallyConsistent), let out = output,
        signals.deviceLost.load(ordering: .relaxed) == 0
      else {
        if signals.renderIsPlaying.load(ordering: .relaxed) {
          if signals.deviceLost.load(ordering: .relaxed) == 0, let out = output {
            // A pause (a seek, a skip, a load, a stop: every park): faded out, then dropped;
            // dropped at once when the output it plays on went away (`pauseAtOnce`).
            if !signals.parkWithoutRamp.exchange(false, ordering: .acquiringAndReleasing) {
              fadeOut(out)
            }
            takeBack(out)
          } else {
            _ = ring.rewindToReleased()  // what the lost device held was released when it went
          }
          signals.renderIsPlaying.store(false, ordering: .releasing)
          signals.outputRunning.store(false, ordering: .releasing)
          decodeWake.signal()
        }
        // At rest only if asked to park (a lost device stops it, but it is still asked to play).
        let atRest = !signals.renderWantsToPlay.load(ordering: .sequentiallyConsistent)
        if atRest {
          signals.renderAtRest.store(true, ordering: .sequentiallyConsistent)
          renderParked.signal()
        }
        renderWake.wait()
        if atRest { signals.renderAtRest.store(false, ordering: .sequentiallyConsistent) }
        continue
      }
      let channels = out.format.channels
      if !signals.renderIsPlaying.load(ordering: .relaxed) {
        if dropped == ObjectIdentifier(out) { out.prepare() }
        dropped = nil
        // Starting or resuming: fade in so the first frame never clicks.
        appliedTarget = Float(bitPattern: signals.targetGainBits.load(ordering: .acquiring))
        gain = GainRamp(0)
        gain.ramp(
          to: appliedTarget, over: out.format.frames(in: seconds(configuration.fadeIn)),
          smooth: true)
        lastDelay = 0
        writtenEnd = ring.readPosition
        deviceEmpty = true
        signals.renderIsPlaying.store(true, ordering: .releasing)
      }
      let target = Float(bitPattern: signals.targetGainBits.load(ordering: .acquiring))
      if target != appliedTarget {
        // A new gain (a duck, its end, silent mode's mute) never restarts the stream: through
        // a sound server that was a restart with its start-up latency and a wrong idea of what
        // had been heard (the position stepped back, frames were heard twice). Where the device
        // can take back what it holds (a card's own device), it does, and that is written again
        // at the new gain: the duck is heard now. Where it cannot (a sound server's plugin has
        // sent it on), the new gain starts with the next frame written, heard once what the
        // device holds has played, which PlaybackDevice keeps short there (about 120 ms).
        let back = out.rewind(frames: max(0, writtenEnd - ring.releasedPosition) / channels)
        if back > 0 {
          writtenEnd -= back * channels
          _ = ring.rewind(to: writtenEnd)
          lastDelay = max(0, lastDelay - back)
        }
        appliedTarget = target
        let ramp = signals.targetRampNanoseconds.load(ordering: .relaxed)
        let rampSeconds = ramp > 0 ? Double(ramp) / 1e9 : seconds(configuration.duckRamp)
        gain.ramp(to: target, over: out.format.frames(in: rampSeconds))
      }

      var limit = chunkFrames * channels
      let boundary = signals.formatBoundary.load(ordering: .acquiring)
      let readPosition = ring.readPosition
      if boundary >= 0 { limit = min(limit, boundary - readPosition) }
      if limit <= 0 {
        // Every frame of the old format is written: let the device play them, then hand over.
        // Woken meanwhile (a pause, a new gain), the top of the loop sees to it first, and
        // this drains again if still playing.
        if !out.drain(wakingOn: wakePipe?.readFD ?? -1) {
          wakePipe?.drain()
          continue
        }
        ring.release(upTo: readPosition)
        signals.renderIsPlaying.store(false, ordering: .releasing)
        renderParked.signal()
        signals.reachedBoundary.store(true, ordering: .releasing)
        decodeWake.signal()
        while !reachedBoundaryConsumed() { renderWake.wait() }
        continue
      }
      // At unity gain the samples go to the device straight from the ring (they stay there
      // until heard); a gain is applied to a copy, since the ring may be read again (a pause,
      // a duck) at another gain.
      var block = UnsafeBufferPointer<Float>(start: nil, count: 0)
      if gain.isSettled && gain.current == 1 {
        block = ring.take(upTo: limit, unit: channels)
      }
      if block.isEmpty {
        let copy = UnsafeMutableBufferPointer(rebasing: scratch[0..<limit])
        let n = ring.read(into: copy)
        gain.apply(to: UnsafeMutableBufferPointer(rebasing: copy[0..<n]), channels: channels)
        block = UnsafeBufferPointer(rebasing: copy[0..<n])
      }
      let n = block.count
      if n == 0 {
        let end = signals.inputEnd.load(ordering: .acquiring)
        if end >= 0 && readPosition >= end {
          if !out.drain(wakingOn: wakePipe?.readFD ?? -1) {
            wakePipe?.drain()
            continue
          }
          ring.release(upTo: readPosition)
          signals.renderWantsToPlay.store(false, ordering: .releasing)
          signals.renderIsPlaying.store(false, ordering: .releasing)
          renderParked.signal()
          signals.reachedEnd.store(true, ordering: .releasing)
          decodeWake.signal()
          continue
        }
        // Starved: the decoder is behind (or an unpaced device is ahead of it). What the device
        // plays meanwhile is released: one that holds more than the ring (a sound server 2 s
        // deep, or 96 kHz through a deep one) would otherwise leave the decoder no room for ever.
        releaseHeard(out, channels: channels)
        if ring.writableCount >= ring.capacity / 2 { decodeWake.signal() }
        signals.renderNeedsAny.store(deviceEmpty, ordering: .sequentiallyConsistent)
        if ring.readableCount == 0 { renderWake.wait(microseconds: 5_000) }
        signals.renderNeedsAny.store(false, ordering: .relaxed)
        continue
      }
      deviceEmpty = false
      var gone: Int32 = 0
      write: while block.count > 0 && gone == 0 {
        switch out.write(block, wakingOn: wakePipe?.readFD ?? -1) {
        case .written(0):
          // Woken while waiting for room: a pause, a quit or a new gain is handled at the top
          // (what was not written is read again from the ring); anything else goes on.
          wakePipe?.drain()
          if !signals.renderWantsToPlay.load(ordering: .acquiring)
            || signals.renderQuit.load(ordering: .relaxed)
            || Float(bitPattern: signals.targetGainBits.load(ordering: .acquiring)) != appliedTarget
          {
            break write
          }
        case .written(let frames):
          block = UnsafeBufferPointer(rebasing: block[(frames * channels)...])
        case .recovered:
          continue
        case .deviceGone(let code):
          gone = code == 0 ? -EIO : code
        }
      }
      writtenEnd = ring.readPosition - block.count
      // Interrupted (a pause, a new gain), what was not written is read again from there.
      if gone == 0 && block.count > 0 { _ = ring.rewind(to: writtenEnd) }
      if gone != 0 {
        // A vanished device cannot say what it held; take what it held after the last write,
        // so that resuming repeats a little rather than skips.
        ring.release(upTo: writtenEnd - lastDelay * channels)
        signals.deviceLost.store(gone, ordering: .releasing)
        decodeWake.signal()
        continue
      }
      // Paused, the top of the loop takes the ring back to the frame being heard, so none is
      // lost.
      releaseHeard(out, channels: channels)
      // The decode thread is woken when there is half a ring to fill (it then fills it in one
      // go) or a new track starts being heard, not after every write: fewer wakeups.
      let announce = signals.announceAt.load(ordering: .acquiring)
      if ring.writableCount >= ring.capacity / 2
        || (announce >= 0 && ring.releasedPosition >= announce)
      {
        decodeWake.signal()
      }
    }
  }

  /// Render thread: whether the decode thread has taken over at a format boundary.
  func reachedBoundaryConsumed() -> Bool {
    !signals.reachedBoundary.load(ordering: .acquiring)
      || signals.renderQuit.load(ordering: .relaxed)
  }

}
