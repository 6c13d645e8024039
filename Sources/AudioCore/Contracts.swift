/// Why a decoder could not go on, worded for the user.
public struct DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What kind of trouble it is, for code to decide on (`reason` words it for people): another
  /// decoder is tried for `.unknownFormat` only, say. The raw values cross the FFmpeg helper's
  /// pipe (its last line's third field).
  public enum Kind: String, Hashable, Sendable, CaseIterable {
    /// There is no such file (or no such track in a cue sheet).
    case notFound
    /// A folder, a named pipe, a device or a socket where a sound file should be.
    case notAFile
    /// The file is there but cannot be read: permission denied, an I/O error.
    case unreadable
    /// A readable file that is no audio this decoder knows; another decoder may.
    case unknownFormat
    /// Audio in a form this decoder knows but does not play: a codec without a decoder, more
    /// channels than hark plays, a stream that came back in another format.
    case unsupported
    /// Empty, cut short, or broken partway; a cue sheet that names no track, or one past the
    /// end of its file.
    case damaged
    /// A seek that failed, or a stream that cannot seek.
    case cannotSeek
    /// The decoder itself failed: its helper missing, not starting, crashing, not answering or
    /// answering nonsense.
    case decoderFailed
    /// A stream that does not answer, drops, or stays away.
    case connection
    /// The output cannot play the file's format.
    case outputRefused
  }

  /// What kind of trouble it is.
  public var kind: Kind
  /// The file, as the user named it.
  public var path: String
  /// Plain words: "not an audio file libsndfile can read".
  public var reason: String
  /// The library's own text, for bug reports.
  public var detail: String?

  public init(_ kind: Kind, path: String, reason: String, detail: String? = nil) {
    self.kind = kind
    self.path = path
    self.reason = reason
    self.detail = detail
  }

  public var description: String {
    "cannot play '\(path)': \(reason)" + (detail.map { " (\($0))" } ?? "")
  }
}

/*
 AudioDecoder — the boundary between a sound file and the engine.

 Used from the decode thread only, after it has been opened on any thread. `read` may block on
 the disk; it returns the number of whole frames it put at the start of the buffer (interleaved,
 `format.channels` samples a frame), 0 at the end of the stream, and throws when the file fails
 midway (the engine then skips to the next track and says why).

 A live stream (internet radio: `live` is not nil) has no length and does not seek. Its `read`
 waits only briefly (tens of milliseconds) and returns 0 while nothing has come (a slow network,
 a connection being made again) unless `live.ended`; the engine then asks again shortly, so that
 the decode thread goes on with commands. What the station plays and whether it is connected
 change as it goes: `live` says so after each read.
*/
/// A source of float frames.
public protocol AudioDecoder: AnyObject {
  var format: PCMFormat { get }
  /// The length in frames, when the file says.
  var frameCount: Int? { get }
  var isSeekable: Bool { get }
  var metadata: TrackMetadata { get }
  /// Decode thread. See the block comment above.
  func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(DecodeError) -> Int
  /// Decode thread. Moves to a frame from the start.
  func seek(toFrame frame: Int) throws(DecodeError)
  /// Decode thread: a live stream's state after the last read; nil for a file.
  var live: LiveState? { get }
}

extension AudioDecoder {
  public var live: LiveState? { nil }
}

/// Where a live stream is: what the station says it plays, and whether it is connected.
public struct LiveState: Hashable, Sendable {
  /// The station's name as album, and its now-playing title (split into artist and title where
  /// it reads "Artist - Title"), or the station's name as title until it sends one.
  public var metadata: TrackMetadata
  /// The connection dropped and is being made again: why it dropped, in plain words.
  public var reconnecting: String?
  /// The stream is over (a finite stream played to its end): a 0 from `read` is its end.
  public var ended: Bool
  /// The station's name, as its server gives it.
  public var station: String?

  public init(
    metadata: TrackMetadata, reconnecting: String? = nil, ended: Bool = false,
    station: String? = nil
  ) {
    self.metadata = metadata
    self.reconnecting = reconnecting
    self.ended = ended
    self.station = station
  }
}

/// An output that opened but will not play a format (a rate or a channel count the device and
/// its converters cannot take): the track is skipped with this reason, and the queue goes on.
/// Any other error opening an output means the output itself is unavailable.
public struct FormatRefused: Error, Hashable, Sendable, CustomStringConvertible {
  public var device: String
  public var format: PCMFormat
  /// The library's own words.
  public var detail: String

  public init(device: String, format: PCMFormat, detail: String) {
    self.device = device
    self.format = format
    self.detail = detail
  }

  public var description: String { "'\(device)' cannot play \(format) (\(detail))" }
}

/// What became of one write to an output.
public enum OutputWriteResult: Equatable, Sendable {
  /// This many frames were accepted (may be fewer than offered).
  case written(Int)
  /// An underrun or a suspend happened and was recovered; nothing was written, try again.
  case recovered
  /// The device is gone (unplugged, disconnected): write nothing more to it.
  case deviceGone(code: Int32)
}

/*
 AudioOutput — the boundary between the engine and a sound device.

 Opened and closed by the engine off the render thread. While it plays, only the render thread
 calls it: `write` takes what the device has room for now and returns; when there is no room it
 blocks until there is (about a period), or until `wakeFD` (a pipe the engine owns) becomes
 readable, and then returns `.written(0)` without reading it, so that the engine can pause at
 once however large the device's buffer. It recovers underruns (EPIPE) and suspends (ESTRPIPE)
 itself and reports them as `.recovered`, and reports a vanished device as `.deviceGone` instead
 of throwing. None of these calls allocate, lock anything the engine holds, or log.
*/
/// A place frames go to be heard.
public protocol AudioOutput: AnyObject {
  var format: PCMFormat { get }
  /// The device's name, for the user ("default", "pulse", "hw:1,0").
  var deviceName: String { get }
  /// Render thread. See the block comment above.
  func write(_ samples: UnsafeBufferPointer<Float>, wakingOn wakeFD: Int32) -> OutputWriteResult
  /// Render thread: frames written but not yet heard.
  func delayFrames() -> Int
  /// Render thread: whether the device is playing what it holds (it has started since it was
  /// opened or prepared). Until then nothing written is being heard, and the position must not
  /// move on with the clock.
  func isRunning() -> Bool
  /// Render thread: takes back up to `frames` of the latest frames written and not yet heard,
  /// so that they can be written again (at another gain: a duck heard at once, without
  /// restarting the stream); returns how many it took back. A device that cannot take back
  /// honestly (a sound server's plugin has already sent them on) returns 0.
  func rewind(frames: Int) -> Int
  /// The frames next to be heard that `rewind` always leaves alone (so that what it writes
  /// again reaches the device before it plays them); 0 for a device that takes back all it
  /// can. A fade-out allows for them on top of its own limit.
  var framesKeptByRewind: Int { get }
  /// Render thread: what has been written goes on to be heard now, though less was written
  /// again than `rewind` took back (a fade-out's ramp, after which nothing more comes). A
  /// device that holds a rewrite back until all of it is there (so that a deep sound server
  /// is not told of the rewind before what replaces it) sends it; others have nothing to do.
  /// Returns the frames of silence it put after the ramp, if any: a device whose count of
  /// what it holds can fall short of what is still to be heard has the ramp followed by
  /// silence, so that the drop after the ramp drops silence (the engine waits for it too).
  func send() -> Int
  /// Render thread: discards what the device holds, at once (snd_pcm_drop).
  func discard()
  /// Render thread: makes the device ready to play again after `discard`.
  func prepare()
  /// Waits until everything written has been heard (at the end of the queue).
  func drain()
  /// Render thread: as `drain`, but returns false at once when `wakeFD` becomes readable (a
  /// pause, a stop or a new gain while a deep buffer plays out), without reading it: what the
  /// device holds is still there, and the engine drains again if it still means to.
  func drain(wakingOn wakeFD: Int32) -> Bool
  /// While the render thread is parked, without blocking: whether the device failed while
  /// nothing was written to it (a sound server ended its stream during a pause), so that
  /// playing again must open it anew rather than find it gone at the first write.
  func isBroken() -> Bool
}

extension AudioOutput {
  /// Nothing: it takes back all it can.
  public var framesKeptByRewind: Int { 0 }

  /// A device whose drain is short enough to wait for: the plain drain, never woken.
  public func drain(wakingOn wakeFD: Int32) -> Bool {
    drain()
    return true
  }

  /// Never, unless the output can tell.
  public func isBroken() -> Bool { false }

  /// Nothing held back: every write is on its way, and its count of what it holds is right.
  public func send() -> Int { 0 }
}

/*
 SystemVolume — the volume of the output the player plays on (G3): the system's control, which
 every sound on that output goes through, never a private gain. Used from the player's own
 context only; calls may touch the device (ALSA's mixer), so not from the render thread.
*/
/// The system volume of one output.
public protocol SystemVolume: AnyObject {
  /// 0…100, the mean of the channels.
  var volumePercent: Double { get }
  var isMuted: Bool { get }
  /// Whether the output has a mute switch.
  var canMute: Bool { get }
  /// Sets every channel (clamped to 0…100).
  func setVolume(percent: Double) throws
  func setMuted(_ muted: Bool) throws
}
