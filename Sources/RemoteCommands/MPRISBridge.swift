import AudioCore
import Glibc
import MPRIS
import MediaFiles
import Platform
import PlayerCore
import SessionCore

/// Connects a player (`PlayerConnection`) to MPRIS (G17): what it plays goes out as MPRIS state, and what
/// `playerctl`, the desktop's media keys and panel widgets ask comes in as the same remote
/// commands the session server carries. The bus name is held only while the player is in an
/// audio context (G18), and a command the player has disabled is disabled on the bus too
/// (G19: `CanGoNext` is exactly whether `nextTrack` is enabled).
public final class MPRISBridge: Sendable {
  private let server: MPRISServer
  private let requests: Task<Void, Never>

  /// Starts serving `player` on the session bus (or `busAddress`); throws when there is no bus.
  public init(player: any PlayerConnection, busAddress: String? = nil) throws(MPRISError) {
    let directory = currentDirectory()
    var configuration = MPRISConfiguration(busAddress: busAddress)
    // The speeds hark plays at, the pitch kept (Rate).
    configuration.minimumRate = PlaybackRate.slowest.value
    configuration.maximumRate = PlaybackRate.fastest.value
    let server = try MPRISServer(
      configuration: configuration,
      state: Self.state(of: player.snapshot, directory: directory),
      position: {
        let s = player.snapshot
        return .milliseconds(Int64((s.position(at: monotonicNanoseconds()) * 1000).rounded()))
      })
    self.server = server
    server.setEligible(player.snapshot.isInAudioContext)
    player.observe { snapshot, notices in
      server.update(Self.state(of: snapshot, directory: directory))
      for case .seeked(let seconds) in notices {
        server.seeked(to: .milliseconds(Int64((seconds * 1000).rounded())))
      }
      server.setEligible(snapshot.isInAudioContext)
    }
    requests = Task {
      for await request in server.requests {
        switch Self.translate(request, current: player.snapshot) {
        case .command(let command): _ = await player.send(command)
        case .action(let action): await player.perform(action)
        case nil: break
        }
      }
    }
  }

  /// The bus name held now, if any.
  public var busName: String? { server.busName }

  /// Stops serving and releases the name.
  public func close() {
    requests.cancel()
    server.close()
  }

  // MARK: The mapping (pure, tested on its own)

  /// What an MPRIS request becomes.
  public enum Translation: Equatable, Sendable {
    case command(RemoteCommand)
    case action(PlayerAction)
  }

  /// A request in hark's vocabulary; nil for what does not apply (a stale track id).
  public static func translate(
    _ request: MPRISRequest, current: PlayerSnapshot, now: UInt64 = monotonicNanoseconds()
  ) -> Translation? {
    switch request {
    case .play: return .command(.play)
    case .pause: return .command(.pause)
    case .pauseForLostOutput: return .action(.pauseForLostOutput)
    case .playPause: return .command(.togglePlayPause)
    case .stop: return .command(.stop)
    case .next: return .command(.nextTrack)
    case .previous: return .command(.previousTrack)
    case .seek(let offset):
      let s = seconds(offset)
      // MPRIS: a seek past the end of the track acts as Next (nothing at the last track, where
      // Next is disabled). hark's own seek forward stops short of the end instead.
      if s > 0, let length = current.duration, current.position(at: now) + s >= length {
        return .command(.nextTrack)
      }
      return .command(s >= 0 ? .skipForward(seconds: s) : .skipBackward(seconds: -s))
    case .setPosition(let trackID, let position):
      guard let current = current.current, trackID == "\(current.id)" else { return nil }
      return .command(.changePlaybackPosition(seconds: max(0, seconds(position))))
    case .openURI(let uri):
      guard let path = QueueLoader.isStreamURL(uri) ? uri : filePath(fromURI: uri) else {
        return nil
      }
      return .action(.add([path], play: true))
    case .setVolume(let v):
      return .action(.setVolume(percent: min(100, max(0, v * 100))))
    case .setShuffle(let on):
      return .action(.setShuffle(on))
    case .setRate(let rate):
      return .command(.changePlaybackRate(rate))
    case .setLoopStatus(let loop):
      switch loop {
      case .none: return .action(.setRepeat(.off))
      case .track: return .action(.setRepeat(.one))
      case .playlist: return .action(.setRepeat(.all))
      }
    }
  }

  /// The MPRIS view of a snapshot.
  public static func state(of s: PlayerSnapshot, directory: String) -> MPRISState {
    let enabled = s.enabledCommands
    let status: MPRISPlaybackStatus =
      switch s.state {
      case .playing: .playing
      case .paused: .paused
      case .stopped: .stopped
      }
    let loop: MPRISLoopStatus =
      switch s.repeatMode {
      case .off: .none
      case .one: .track
      case .all: .playlist
      }
    var track = s.current.map { t in
      MPRISTrack(
        id: "\(t.id)", title: s.title, artists: s.metadata.artist.map { [$0] } ?? [],
        album: s.metadata.album,
        url: QueueLoader.isStreamURL(t.path)
          ? t.path  // a stream's own URL
          : MPRISTrack.fileURL(path: t.path.hasPrefix("/") ? t.path : directory + "/" + t.path),
        length: s.duration.map { .milliseconds(Int64(($0 * 1000).rounded())) },
        trackNumber: s.metadata.trackNumber)
    }
    // Why it is paused or stopped, in the vocabulary of every view (docs/MANNERS.md).
    if let reason = s.pauseReason { track?.extra["hark:pauseReason"] = reason.rawValue }
    // The chapter heard (an audiobook's, a podcast's), by its title, else its number: MPRIS
    // has no word for chapters.
    if let i = s.chapterIndex(at: s.position) {
      track?.extra["hark:chapter"] = s.chapters[i].title ?? "Chapter \(i + 1)"
    }
    let volume: Double? =
      switch s.volume {
      case .level(let percent, let muted): muted ? 0 : percent / 100
      case .unavailable: nil
      }
    return MPRISState(
      playbackStatus: status, loopStatus: loop, shuffle: s.shuffle, track: track, volume: volume,
      canGoNext: enabled.contains(.nextTrack), canGoPrevious: enabled.contains(.previousTrack),
      canPlay: enabled.contains(.play), canPause: enabled.contains(.pause),
      canSeek: enabled.contains(.changePlaybackPosition), canControl: true,
      rate: s.rate, canChangeRate: enabled.contains(.changePlaybackRate))
  }

  /// "file:///music/a%20b.flac" → "/music/a b.flac"; nil for anything but a local file.
  static func filePath(fromURI uri: String) -> String? {
    var rest = Substring(uri)
    if rest.hasPrefix("file://") {
      rest = rest.dropFirst(7)
      if rest.hasPrefix("localhost/") { rest = rest.dropFirst(9) }
    } else if !rest.hasPrefix("/") {
      return nil
    }
    guard rest.hasPrefix("/") else { return nil }
    var bytes: [UInt8] = []
    var it = Array(rest.utf8)[...]
    while let b = it.first {
      it = it.dropFirst()
      if b == UInt8(ascii: "%"), it.count >= 2,
        let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16)
      {
        bytes.append(v)
        it = it.dropFirst(2)
      } else {
        bytes.append(b)
      }
    }
    // The bytes a URL names are the file system's: a name that is not UTF-8 stays whole.
    return FileName.string(bytes)
  }
}

private func currentDirectory() -> String {
  var buffer = [CChar](repeating: 0, count: 4096)
  guard getcwd(&buffer, buffer.count) != nil else { return "/" }
  return FileName.string(buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
}
