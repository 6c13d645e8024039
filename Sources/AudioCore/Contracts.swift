/// Why a decoder could not go on, worded for the user.
public struct DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The file, as the user named it.
  public var path: String
  /// Plain words: "not an audio file libsndfile can read".
  public var reason: String
  /// The library's own text, for bug reports.
  public var detail: String?

  public init(path: String, reason: String, detail: String? = nil) {
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
  /// Render thread: discards what the device holds, at once (snd_pcm_drop).
  func discard()
  /// Render thread: makes the device ready to play again after `discard`.
  func prepare()
  /// Waits until everything written has been heard (at the end of the queue).
  func drain()
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
