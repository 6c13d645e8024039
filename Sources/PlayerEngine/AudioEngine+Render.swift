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
    func takeBack(_ out: any AudioOutput) {
      releaseHeard(out, channels: out.format.channels)
      out.discard()
      out.prepare()
      _ = ring.rewindToReleased()
      writtenEnd = ring.readPosition
      lastDelay = 0
      deviceEmpty = true
      signals.outputRunning.store(false, ordering: .releasing)
      signals.heardDelay.store(0, ordering: .relaxed)
    }

    while !signals.renderQuit.load(ordering: .acquiring) {
      guard signals.renderWantsToPlay.load(ordering: .sequentiallyConsistent), let out = output,
        signals.deviceLost.load(ordering: .relaxed) == 0
      else {
        if signals.renderIsPlaying.load(ordering: .relaxed) {
          if signals.deviceLost.load(ordering: .relaxed) == 0, let out = output {
            takeBack(out)  // a pause
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
        // Starting or resuming: fade in so the first frame never clicks.
        appliedTarget = Float(bitPattern: signals.targetGainBits.load(ordering: .acquiring))
        gain = GainRamp(0)
        gain.ramp(to: appliedTarget, over: out.format.frames(in: seconds(configuration.fadeIn)))
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
        gain.ramp(to: target, over: out.format.frames(in: seconds(configuration.duckRamp)))
      }

      var limit = chunkFrames * channels
      let boundary = signals.formatBoundary.load(ordering: .acquiring)
      let readPosition = ring.readPosition
      if boundary >= 0 { limit = min(limit, boundary - readPosition) }
      if limit <= 0 {
        // Every frame of the old format is written: let the device play them, then hand over.
        out.drain()
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
          out.drain()
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
