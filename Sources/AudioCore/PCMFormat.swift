/// The shape of the samples that flow from a decoder to an output: 32-bit float, interleaved.
public struct PCMFormat: Hashable, Sendable, Codable, CustomStringConvertible {
  /// Frames per second.
  public var sampleRate: Int
  /// Samples per frame.
  public var channels: Int

  public init(sampleRate: Int, channels: Int) {
    precondition(sampleRate > 0 && channels > 0, "a format needs a rate and channels")
    self.sampleRate = sampleRate
    self.channels = channels
  }

  private enum CodingKeys: String, CodingKey { case sampleRate, channels }

  /// Decoded (a player's snapshot, read by an interface attached to it) only with a rate and
  /// channels, as `init(sampleRate:channels:)` requires.
  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    let rate = try c.decode(Int.self, forKey: .sampleRate)
    let channels = try c.decode(Int.self, forKey: .channels)
    guard rate > 0 && channels > 0 else {
      throw DecodingError.dataCorruptedError(
        forKey: .channels, in: c, debugDescription: "a format needs a rate and channels")
    }
    self.init(sampleRate: rate, channels: channels)
  }

  /// Whole frames in `seconds`, rounded down, forgiving floating-point error in the last bits:
  /// a position reported by `seconds(_:)` and handed back (to seek, to resume) lands on the same
  /// frame, not the one before it.
  public func frames(in seconds: Double) -> Int {
    Int((seconds * Double(sampleRate) * (1 + 1e-12)).rounded(.down))
  }

  /// Seconds that `frames` frames last.
  public func seconds(_ frames: Int) -> Double { Double(frames) / Double(sampleRate) }

  public var description: String {
    "\(sampleRate) Hz \(channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels) ch")"
  }
}

/// What a file says about itself, where the decoder can read it.
public struct TrackMetadata: Hashable, Sendable, Codable {
  public var title: String?
  public var artist: String?
  public var album: String?
  public var trackNumber: Int?
  /// The year, from the date tag ("1999", "1999-06-12").
  public var year: Int?
  /// The genre tag: "Podcast", "Audiobook" and their kin make a track spoken word.
  public var genre: String?
  /// The ReplayGain applied as it plays, in dB; nil when none is (off, or no tags).
  public var replayGain: Double?

  public init(
    title: String? = nil, artist: String? = nil, album: String? = nil, trackNumber: Int? = nil,
    genre: String? = nil, year: Int? = nil
  ) {
    self.title = title
    self.artist = artist
    self.album = album
    self.trackNumber = trackNumber
    self.genre = genre
    self.year = year
  }

  /// The year a date tag names: its first four digits ("1999-06-12" and "1999" are 1999), when
  /// they make a year a record could have.
  public static func year(fromDate date: String?) -> Int? {
    guard let date else { return nil }
    let digits = date.drop { !$0.isNumber }.prefix { $0.isNumber }
    guard digits.count >= 4, let year = Int(digits.prefix(4)), (1000...2999).contains(year)
    else { return nil }
    return year
  }
}
