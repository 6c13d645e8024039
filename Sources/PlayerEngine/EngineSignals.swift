import Synchronization

/// What the engine's three parties tell each other without a lock: the render thread (which may
/// not lock, allocate or block on anything but the device), the decode thread, and the callers
/// of the transport API (any thread: "control"). Each says who writes it and who reads it.
///
/// Orderings: a flag that hands over ring positions or the `output` is stored `.releasing` and
/// loaded `.acquiring`; counters read only for a hint are `.relaxed`.
final class EngineSignals: Sendable {
  // MARK: Play and park

  /// Control → render: play (true) or park (false). Written by `startRender`/`parkRender`.
  let renderWantsToPlay = Atomic<Bool>(false)
  /// Render → control, decode: the render thread is playing (false once it stops: parked, at a
  /// format boundary, at the end, or with its device lost). Snapshots read it to move the
  /// position on; parking waits for `renderAtRest`, not for this.
  let renderIsPlaying = Atomic<Bool>(false)
  /// Render → control: the render thread is parked: asked not to play, it waits, and it will
  /// not look at the `output` before it is asked to play again. Set before it waits, cleared when
  /// it wakes; sequentially consistent, like `renderWantsToPlay`, so that control, which stores
  /// false there and then sees true here, knows the render thread will see its false.
  let renderAtRest = Atomic<Bool>(false)
  /// Control → render: end the thread (shutdown).
  let renderQuit = Atomic<Bool>(false)
  /// Control → render: the next park drops what the device holds without the fade-out's ramp
  /// (`pauseAtOnce`). Taken (set back to false) by the park that honours it, and by
  /// `pauseAtOnce` once the render thread is parked.
  let parkWithoutRamp = Atomic<Bool>(false)
  /// Control → render: the gain to head for (a Float's bits): 1, the duck gain, or 0 (muted,
  /// or the sleep timer's fade).
  let targetGainBits = Atomic<UInt32>(Float(1).bitPattern)
  /// Control → render: how long the ramp to a new `targetGainBits` takes, in nanoseconds; 0:
  /// the duck ramp. Seconds for the sleep timer's fade. Stored (relaxed) before the target
  /// (releasing), so the render thread that sees the new target (acquiring) sees its ramp.
  let targetRampNanoseconds = Atomic<UInt64>(0)

  // MARK: Where the ring's contents end or change

  /// Decode → render: the ring position after which nothing comes (-1: more may come).
  let inputEnd = Atomic<Int>(-1)
  /// Decode → render: the ring position where the format changes (-1: none); the render
  /// thread plays up to it, drains, and parks at the boundary.
  let formatBoundary = Atomic<Int>(-1)
  /// Render → decode: the render thread has played everything to `inputEnd`.
  let reachedEnd = Atomic<Bool>(false)
  /// Render → decode: the render thread is parked at `formatBoundary`; the decode thread opens
  /// the new output and clears it.
  let reachedBoundary = Atomic<Bool>(false)
  /// Render → decode: the render thread waits for samples with the device empty (starting,
  /// resuming), so the decode thread wakes it with the first chunk. Otherwise it is woken once
  /// a good part of the ring is there: an unpaced device would otherwise ping-pong the threads.
  let renderNeedsAny = Atomic<Bool>(false)
  /// Decode → render: the ring position where the next track to announce starts (-1: none);
  /// the render thread wakes the decode thread when playback gets there, so that `nowHearing`
  /// is on time.
  let announceAt = Atomic<Int>(-1)

  // MARK: The device

  /// Render → decode, control: the device went away, with its error code (0: it is there).
  /// Cleared by the decode thread when it opens an output.
  let deviceLost = Atomic<Int32>(0)
  /// Render → control (snapshots): when the render thread last measured what was heard
  /// (monotonic ns), and how many frames the device held then (0 until it has started): between
  /// measurements, the position moves on with the clock.
  let heardAt = Atomic<UInt64>(0)
  let heardDelay = Atomic<Int>(0)
  /// Render → control (snapshots): the device is playing what it holds (it has started since
  /// the render thread last started or took back).
  let outputRunning = Atomic<Bool>(false)
  /// Render → decode: the device has just started; the decode thread tells the owner
  /// (`outputStarted`) and clears it.
  let startedNews = Atomic<Bool>(false)
}
