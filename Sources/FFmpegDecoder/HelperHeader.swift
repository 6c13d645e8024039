import AudioCore

/// What hark-ffmpeg says about a file before its frames: text lines "key value", the first
/// "hark-ffmpeg 1", ended by an empty line. Keys it does not know are skipped, so that a newer
/// helper can say more.
struct HelperHeader: Equatable {
  var format: PCMFormat
  var frames: Int?
  var isSeekable: Bool
  var codec: String
  /// Tags, by key: title, artist, album, album_artist, track, disc, date, genre.
  var tags: [String: String]
  /// A stream with no end (internet radio): `--stream` and no length.
  var isLive = false
  /// A stream's name, as its server gives it (icy-name).
  var station: String?

  /// The version of the protocol this side speaks.
  static let version = "hark-ffmpeg 1"

  /// Nil when `text` is not a header of this version, or lacks a rate or channels hark plays.
  init?(_ text: String) {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: true)[...]
    guard lines.popFirst() == Substring(Self.version) else { return nil }
    var rate: Int?
    var channels: Int?
    var frames: Int?
    var isSeekable = false
    var codec = ""
    var tags: [String: String] = [:]
    var isLive = false
    var station: String?
    for line in lines {
      let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2 else { continue }
      let value = String(parts[1])
      switch parts[0] {
      case "rate": rate = Int(value)
      case "channels": channels = Int(value)
      case "frames": frames = Int(value).flatMap { $0 > 0 ? $0 : nil }
      case "seekable": isSeekable = value == "1"
      case "codec": codec = value
      case "live": isLive = value == "1"
      case "station": station = value.isEmpty ? nil : value
      case "title", "artist", "album", "album_artist", "track", "disc", "date", "genre",
        "replaygain_track_gain", "replaygain_track_peak", "replaygain_album_gain",
        "replaygain_album_peak":
        tags[String(parts[0])] = value
      default: continue
      }
    }
    // AudioEngine.maximumChannels is 32; the helper refuses more, and so does this side.
    guard let rate, (1...768_000).contains(rate), let channels, (1...32).contains(channels)
    else { return nil }
    format = PCMFormat(sampleRate: rate, channels: channels)
    self.frames = frames
    self.isSeekable = isSeekable
    self.codec = codec
    self.tags = tags
    self.isLive = isLive
    self.station = station
  }
}
