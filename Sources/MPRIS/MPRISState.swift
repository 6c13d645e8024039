import Platform
/// What the player is doing, in MPRIS's words (the PlaybackStatus property).
public enum MPRISPlaybackStatus: String, Sendable, Hashable, CaseIterable {
  /// A track is playing.
  case playing = "Playing"
  /// A track is loaded and paused.
  case paused = "Paused"
  /// Nothing is playing and there is no position to resume from.
  case stopped = "Stopped"
}

/// What happens at the end of a track, in MPRIS's words (the LoopStatus property).
public enum MPRISLoopStatus: String, Sendable, Hashable, CaseIterable {
  /// Playback stops after the last track.
  case none = "None"
  /// The current track repeats.
  case track = "Track"
  /// The whole queue repeats.
  case playlist = "Playlist"
}

/// The current track, as the Metadata property shows it.
public struct MPRISTrack: Sendable, Hashable {
  /// The owner's name for this track, unique within the queue (a queue position will do).
  ///
  /// It becomes `mpris:trackid` (an object path made from it) and comes back unchanged in
  /// `MPRISRequest.setPosition(trackID:to:)`. Give the next track a different id even when it
  /// is the same file, so that a client's stale SetPosition is recognised and ignored.
  public var id: String
  /// `xesam:title`.
  public var title: String?
  /// `xesam:artist`; MPRIS wants a list.
  public var artists: [String]
  /// `xesam:album`.
  public var album: String?
  /// `xesam:url`, for example `file:///music/a.flac` (see `fileURL(path:)`).
  public var url: String?
  /// `mpris:length`; nil when the length is not known.
  public var length: Duration?
  /// `xesam:trackNumber`.
  public var trackNumber: Int?
  /// The owner's own metadata, each key in its own namespace (`hark:pauseReason`), as MPRIS
  /// allows beside the xesam and mpris keys.
  public var extra: [String: String] = [:]

  /// A track; everything but its id is optional.
  public init(
    id: String, title: String? = nil, artists: [String] = [], album: String? = nil,
    url: String? = nil, length: Duration? = nil, trackNumber: Int? = nil
  ) {
    self.id = id
    self.title = title
    self.artists = artists
    self.album = album
    self.url = url
    self.length = length
    self.trackNumber = trackNumber
  }

  /// The `file://` URL of an absolute path, percent-encoded as RFC 8089 and xesam:url want:
  /// the file system's bytes (`FileName`), so that a name that is not UTF-8 is named exactly.
  public static func fileURL(path: String) -> String {
    var url = "file://"
    for byte in FileName.bytes(path) {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
        url.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        url += "%" + hexByte(byte, uppercase: true)
      }
    }
    return url
  }
}

/// Everything the MPRIS server shows about the player. The owner pushes a new one on every change.
///
/// The `can...` flags are reported exactly as given and gate the commands (G19): a command whose
/// flag is false is ignored, never turned into another one. `canControl` false disables all of
/// them. Report `canPause` as a property of the current track (true while a pausable track is
/// loaded, paused or not), as MPRIS means it.
public struct MPRISState: Sendable, Hashable {
  /// PlaybackStatus.
  public var playbackStatus: MPRISPlaybackStatus
  /// LoopStatus.
  public var loopStatus: MPRISLoopStatus
  /// Shuffle.
  public var shuffle: Bool
  /// The current track; nil shows `mpris:trackid` /org/mpris/MediaPlayer2/TrackList/NoTrack.
  public var track: MPRISTrack?
  /// The system volume of the current output (G3), 0 is silent and 1 is full.
  ///
  /// Nil when the output has no volume control: Volume then reads 1.0 (the output plays at its
  /// own full level) and clients' writes to it are ignored.
  public var volume: Double?
  /// CanGoNext: whether Next would do something now.
  public var canGoNext: Bool
  /// CanGoPrevious.
  public var canGoPrevious: Bool
  /// CanPlay.
  public var canPlay: Bool
  /// CanPause.
  public var canPause: Bool
  /// CanSeek: whether Seek and SetPosition would do something now.
  public var canSeek: Bool
  /// CanControl: false disables every command and every property write.
  public var canControl: Bool
  /// Rate: the speed heard (1: as recorded), within the configuration's MinimumRate and
  /// MaximumRate.
  public var rate: Double = 1
  /// Whether a write to Rate would change anything now (a file loaded, not a live stream):
  /// MPRIS has no Can… property for it; a write is refused when not.
  public var canChangeRate = false

  /// A state; the default is a stopped player with nothing loaded and every command disabled.
  public init(
    playbackStatus: MPRISPlaybackStatus = .stopped, loopStatus: MPRISLoopStatus = .none,
    shuffle: Bool = false, track: MPRISTrack? = nil, volume: Double? = nil,
    canGoNext: Bool = false, canGoPrevious: Bool = false, canPlay: Bool = false,
    canPause: Bool = false, canSeek: Bool = false, canControl: Bool = true, rate: Double = 1,
    canChangeRate: Bool = false
  ) {
    self.playbackStatus = playbackStatus
    self.loopStatus = loopStatus
    self.shuffle = shuffle
    self.track = track
    self.volume = volume
    self.canGoNext = canGoNext
    self.canGoPrevious = canGoPrevious
    self.canPlay = canPlay
    self.canPause = canPause
    self.canSeek = canSeek
    self.canControl = canControl
    self.rate = rate
    self.canChangeRate = canChangeRate
  }
}

/// What a client asked the player to do. Only enabled commands arrive (see `MPRISState`).
public enum MPRISRequest: Sendable, Hashable {
  /// Play (CanPlay).
  case play
  /// Pause (CanPause).
  case pause
  /// Pause or PlayPause sent by the sound server's session manager, not by a person:
  /// WirePlumber (0.5.11 and later, `linking.pause-playback`) pauses the players whose stream
  /// played to a sink that went away. What it means is that the output went (G5), and the
  /// owner should take it as such, not as the user's pause.
  case pauseForLostOutput
  /// PlayPause: the owner toggles. Sent only when the command it resolves to (pause while
  /// playing, play otherwise) is enabled.
  case playPause
  /// Stop (CanControl).
  case stop
  /// Next (CanGoNext).
  case next
  /// Previous (CanGoPrevious).
  case previous
  /// Seek: move by this much, backwards when negative (CanSeek). Past the end of the track is
  /// the owner's call; MPRIS says to behave as at the track's end.
  case seek(by: Duration)
  /// SetPosition: jump to this position in the track with this id (CanSeek). The server has
  /// checked that the id is the current track's and that the position lies within the track.
  case setPosition(trackID: String, to: Duration)
  /// OpenUri: open and play this URI; its scheme is one of the supported ones.
  case openURI(String)
  /// A write to Volume: set the system volume (G3) to this, 0 or more. Not sent when the state's
  /// volume is nil.
  case setVolume(Double)
  /// A write to Shuffle.
  case setShuffle(Bool)
  /// A write to LoopStatus.
  case setLoopStatus(MPRISLoopStatus)
  /// A write to Rate, within MinimumRate and MaximumRate (and not 0): play at this speed.
  case setRate(Double)
}

/// How the server names and describes the player.
public struct MPRISConfiguration: Sendable {
  /// The D-Bus address to connect to; nil means the session bus (see
  /// `MPRISServer.sessionBusAddress(environment:)`). Tests pass a private bus here.
  public var busAddress: String?
  /// The bus name's last part: the server asks for `org.mpris.MediaPlayer2.<playerName>`, and for
  /// `org.mpris.MediaPlayer2.<playerName>.instance<PID>` if that is taken. Letters, digits, `_`
  /// and `-`, not starting with a digit.
  public var playerName: String
  /// Identity: the name people see.
  public var identity: String
  /// DesktopEntry: the .desktop file's basename without `.desktop`; nil leaves the property out.
  public var desktopEntry: String?
  /// SupportedUriSchemes; OpenUri refuses URIs with any other scheme.
  public var supportedURISchemes: [String]
  /// SupportedMimeTypes.
  public var supportedMIMETypes: [String]
  /// MinimumRate and MaximumRate: the speeds the player plays at (1 and 1: only as recorded).
  public var minimumRate = 1.0
  public var maximumRate = 1.0

  /// The audio types libsndfile (hark's decoder) reads: WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3,
  /// and the older formats it has always read (AU, CAF, Wave64, VOC).
  public static let libsndfileMIMETypes = [
    "audio/wav", "audio/x-wav", "audio/vnd.wave", "audio/aiff", "audio/x-aiff", "audio/x-aifc",
    "audio/flac", "audio/x-flac", "audio/ogg", "audio/x-vorbis+ogg", "audio/vorbis",
    "audio/opus", "audio/x-opus+ogg", "audio/mpeg", "audio/basic", "audio/x-caf",
    "audio/x-w64", "audio/x-voc",
  ]

  /// hark's configuration; every field can be changed.
  public init(
    busAddress: String? = nil, playerName: String = "hark", identity: String = "hark",
    desktopEntry: String? = "hark", supportedURISchemes: [String] = ["file", "http", "https"],
    supportedMIMETypes: [String] = MPRISConfiguration.libsndfileMIMETypes
  ) {
    self.busAddress = busAddress
    self.playerName = playerName
    self.identity = identity
    self.desktopEntry = desktopEntry
    self.supportedURISchemes = supportedURISchemes
    self.supportedMIMETypes = supportedMIMETypes
  }
}

/// Two hexadecimal digits.
func hexByte(_ byte: UInt8, uppercase: Bool = false) -> String {
  let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").unicodeScalars)
  var s = ""
  s.unicodeScalars.append(digits[Int(byte >> 4)])
  s.unicodeScalars.append(digits[Int(byte & 0xf)])
  return s
}
