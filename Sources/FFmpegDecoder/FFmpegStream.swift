import AudioCore
import Glibc
import Platform

/// An http(s) stream (internet radio, Icecast, Shoutcast) decoded by FFmpeg in the hark-ffmpeg
/// helper process, as FFmpegFile decodes files: FFmpeg never loads into the player.
///
/// A live stream (no length) cannot seek. What the station says is on (its ICY titles, or an
/// Ogg stream's tags for each song) updates `live.metadata` as it comes. When the connection
/// drops or nothing comes for `Timing.stall`, the stream says why in `live.reconnecting` and
/// connects again after a pause that doubles from `Timing.firstRetry` up to `Timing.maxRetry`;
/// it gives up, with the reason, once it has been gone for `Timing.giveUp`. A stream with a
/// length (a file served over http) plays to its end and fails on a dropped connection.
///
/// Nothing here waits longer than `Timing.step`: `read` returns 0 while nothing has come (the
/// AudioDecoder contract for live streams), so that the decode thread goes on with commands.
public final class FFmpegStream: AudioDecoder {
  /// The URL.
  public let path: String
  public let format: PCMFormat
  public let frameCount: Int?
  public var isSeekable: Bool { false }
  public var metadata: TrackMetadata { state.metadata }
  public var live: LiveState? { state }
  /// The server's name for the stream (icy-name).
  public private(set) var station: String?
  /// FFmpeg's name for the codec ("mp3", "vorbis", "aac").
  public let codec: String

  /// How long the stream waits for what, and how it retries.
  public struct Timing: Sendable {
    /// The longest a read waits for data.
    public var step: Duration = .milliseconds(40)
    /// For a (re)connection to answer with its header.
    public var answer: Duration = .seconds(15)
    /// Nothing for this long while connected counts as a dropped connection.
    public var stall: Duration = .seconds(10)
    public var firstRetry: Duration = .milliseconds(500)
    public var maxRetry: Duration = .seconds(10)
    /// Gone for this long: the stream fails (the queue goes on).
    public var giveUp: Duration = .seconds(120)
    public init() {}
  }

  private let helperPath: String
  /// Whether helpers are started through the fork server (the installed one's are).
  private let served: Bool
  private let timing: Timing
  private var phase: Phase
  private var state: LiveState
  /// The tags the header and the stream's own updates gave (title, artist, album, genre).
  private var tags: [String: String]
  /// The station's last ICY title.
  private var streamTitle: String?
  /// Since when it has been trying to reconnect (monotonic ns); nil while connected.
  private var downSince: UInt64?
  private var retries = 0
  /// When frames last came (monotonic ns).
  private var lastData: UInt64

  private enum Phase {
    case streaming(HelperRun)
    case connecting(HelperRun, since: UInt64)
    case waiting(until: UInt64)
    case finished

    var isFinished: Bool { if case .finished = self { true } else { false } }
  }

  /// Connects to `url` and reads the helper's header, waiting at most `timing.answer` (on the
  /// thread that opens it). Throws with plain words when no helper is installed, the server
  /// cannot be reached or answers with an error, or what it sends is not audio FFmpeg reads.
  public init(url: String, helper: String? = nil, timing: Timing = Timing()) throws(DecodeError) {
    guard let helperPath = helper ?? FFmpegFile.installedHelper() else {
      throw DecodeError(
        .decoderFailed, path: url,
        reason: "hark-ffmpeg is not installed next to hark (it plays streams)")
    }
    self.path = url
    self.helperPath = helperPath
    served = helper == nil
    self.timing = timing
    let run = try Self.connect(helperPath, url, served: served)
    let header: HelperHeader
    switch try run.readHeader(timeout: timing.answer, finishTimeout: timing.answer) {
    case .header(let h): header = h
    case .waiting:
      run.process.kill()
      throw DecodeError(
        .connection, path: url, reason: "the stream did not answer within \(spoken(timing.answer))")
    }
    format = header.format
    frameCount = header.isLive ? nil : header.frames
    codec = header.codec
    station = header.station
    tags = header.tags
    phase = .streaming(run)
    lastData = monotonicNanoseconds()
    state = LiveState(metadata: TrackMetadata(), station: header.station)
    state.metadata = describe()
  }

  // MARK: AudioDecoder

  public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(DecodeError) -> Int {
    let now = monotonicNanoseconds()
    switch phase {
    case .finished:
      return 0
    case .waiting(let until):
      if now >= until {
        phase = .connecting(try Self.connect(helperPath, path, served: served), since: now)
      }
      return 0
    case .connecting(let run, let since):
      do throws(DecodeError) {
        switch try run.readHeader(timeout: timing.step, finishTimeout: timing.step) {
        case .waiting:
          if now - since > timing.answer.nanoseconds {
            run.process.kill()
            try dropped("the station did not answer within \(spoken(timing.answer))")
          }
          return 0
        case .header(let header):
          guard header.format == format else {
            run.process.kill()
            phase = .finished
            throw DecodeError(
              .unsupported, path: path,
              reason: "the stream came back as \(header.format), not \(format); play it again")
          }
          phase = .streaming(run)
          if let s = header.station {
            station = s
            state.station = s
          }
          tags = header.tags
          downSince = nil
          retries = 0
          lastData = now
          state.reconnecting = nil
          state.metadata = describe()
          return try read(into: buffer)
        }
      } catch  where phase.isFinished {
        throw error
      } catch {
        // The attempt failed (refused, not found, not audio): wait and try again. FFmpeg's
        // words say which ("Connection refused") better than "cannot open the stream".
        try dropped(error.detail.map(lowercasedFirst) ?? error.reason)
        return 0
      }
    case .streaming(let run):
      let arrival = run.readFrames(into: buffer, channels: format.channels, timeout: timing.step)
      takeEvents(run)
      switch arrival {
      case .frames(let n):
        lastData = now
        return n
      case .silence:
        if now - lastData > timing.stall.nanoseconds {
          run.process.kill()
          try dropped("nothing came for \(spoken(timing.stall))")
        }
        return 0
      case .end:
        let termination = run.process.finish(timeout: timing.step)
        let failure = run.failure(termination)
        if frameCount != nil, failure == nil {
          phase = .finished
          state.ended = true
          return 0
        }
        try dropped(failure?.reason ?? "the station closed the connection")
        return 0
      }
    }
  }

  public func seek(toFrame frame: Int) throws(DecodeError) {
    throw DecodeError(.cannotSeek, path: path, reason: "a live stream cannot seek")
  }

  // MARK: Connection

  /// The connection is gone (`reason`): wait, then connect again; past `giveUp`, fail. A
  /// stream with a length does not reconnect (it would start again from its beginning).
  private func dropped(_ reason: String) throws(DecodeError) {
    let now = monotonicNanoseconds()
    guard frameCount == nil else {
      phase = .finished
      throw DecodeError(.connection, path: path, reason: "the connection dropped (\(reason))")
    }
    let since = downSince ?? now
    downSince = since
    if now - since >= timing.giveUp.nanoseconds {
      phase = .finished
      state.ended = true
      throw DecodeError(
        .connection, path: path,
        reason: "the stream has been gone for \(spoken(timing.giveUp)) (\(reason))")
    }
    let delay = min(
      timing.maxRetry.nanoseconds, timing.firstRetry.nanoseconds << UInt64(min(retries, 20)))
    retries += 1
    phase = .waiting(until: now + delay)
    state.reconnecting = reason
  }

  private static func connect(_ helperPath: String, _ url: String, served: Bool)
    throws(DecodeError) -> HelperRun
  {
    try HelperRun.start(
      helperPath, ["--lifeline", "--stream", "--", url], path: url, events: true, served: served)
  }

  // MARK: What is on

  /// Reads the helper's event lines: ICY blocks and tag updates.
  private func takeEvents(_ run: HelperRun) {
    var changed = false
    for line in run.process.takeEventLines() {
      if line.starts(with: Array("icy ".utf8)) {
        let title = ICYMetadata(Array(line.dropFirst(4))).streamTitle
        if title != streamTitle {
          streamTitle = title
          changed = true
        }
      } else if line.starts(with: Array("tags".utf8)) {
        var updated: [String: String] = [:]
        for field in String(decoding: line.dropFirst(4), as: UTF8.self).split(separator: "\t") {
          guard let eq = field.firstIndex(of: "=") else { continue }
          let value = String(field[field.index(after: eq)...])
          if !value.isEmpty { updated[String(field[..<eq])] = value }
        }
        tags = updated
        streamTitle = nil  // the song's own tags say what is on now
        changed = true
      }
    }
    if changed { state.metadata = describe() }
  }

  /// The metadata to show: the station's title split into artist and title, else the stream's
  /// tags, else the station's name; the station as the album.
  private func describe() -> TrackMetadata {
    var m = TrackMetadata(genre: tags["genre"])
    if let streamTitle {
      let (artist, title) = ICYMetadata.split(streamTitle)
      m.title = title
      m.artist = artist
      m.album = station ?? tags["album"]
    } else if let title = tags["title"] {
      m.title = title
      m.artist = tags["artist"]
      m.album = tags["album"] ?? station
    } else {
      m.title = station
    }
    return m
  }
}

extension FFmpegStream {
  /// The pid of the helper while it streams (tests kill it).
  var helperProcessID: pid_t? {
    if case .streaming(let run) = phase { return run.process.pid }
    return nil
  }
}

/// "Connection refused" → "connection refused".
private func lowercasedFirst(_ text: String) -> String {
  guard let first = text.first else { return text }
  return first.lowercased() + text.dropFirst()
}

extension Duration {
  fileprivate var nanoseconds: UInt64 {
    let (s, atto) = components
    return UInt64(max(0, s)) * 1_000_000_000 + UInt64(max(0, atto / 1_000_000_000))
  }
}
