import AudioCore
import Glibc

/// A track's ReplayGain tags: the gain that brings it (or its album) to the reference loudness
/// (89 dB SPL, about −18 LUFS), and its highest sample, each when the file says.
public struct ReplayGainTags: Hashable, Sendable {
  public var trackGain: Double?
  public var trackPeak: Double?
  public var albumGain: Double?
  public var albumPeak: Double?

  public init(
    trackGain: Double? = nil, trackPeak: Double? = nil, albumGain: Double? = nil,
    albumPeak: Double? = nil
  ) {
    self.trackGain = trackGain
    self.trackPeak = trackPeak
    self.albumGain = albumGain
    self.albumPeak = albumPeak
  }

  /// Whether any gain is known.
  public var isEmpty: Bool { trackGain == nil && albumGain == nil }

  /// From tags by name, as Vorbis comments, APEv2 and ID3v2 TXXX frames name them (case does
  /// not matter): REPLAYGAIN_TRACK_GAIN "-6.54 dB", REPLAYGAIN_TRACK_PEAK "0.98765", and the
  /// album's; Opus's R128_TRACK_GAIN and R128_ALBUM_GAIN (Q7.8 dB to −23 LUFS, 5 dB below
  /// ReplayGain's reference) when there is no ReplayGain gain. Values that are not numbers, or
  /// not sensible (a gain beyond ±60 dB, a peak not above 0 or beyond 100), are left out.
  public init(tags: [String: String]) {
    var byName: [String: String] = [:]
    for (key, value) in tags { byName[key.uppercased()] = value }
    trackGain = Self.gain(byName["REPLAYGAIN_TRACK_GAIN"])
    albumGain = Self.gain(byName["REPLAYGAIN_ALBUM_GAIN"])
    trackPeak = Self.peak(byName["REPLAYGAIN_TRACK_PEAK"])
    albumPeak = Self.peak(byName["REPLAYGAIN_ALBUM_PEAK"])
    if trackGain == nil { trackGain = Self.r128(byName["R128_TRACK_GAIN"]) }
    if albumGain == nil { albumGain = Self.r128(byName["R128_ALBUM_GAIN"]) }
  }

  /// "-6.54 dB", "+1.20 dB", "-6.54": the number; nil when it is none or beyond ±60 dB.
  static func gain(_ text: String?) -> Double? {
    guard let value = leadingNumber(text), abs(value) <= 60 else { return nil }
    return value
  }

  static func peak(_ text: String?) -> Double? {
    guard let value = leadingNumber(text), value > 0, value <= 100 else { return nil }
    return value
  }

  /// An Opus R128 gain: a whole number of 1/256 dB relative to −23 LUFS.
  static func r128(_ text: String?) -> Double? {
    guard let text, let q = Int(text.trimmingSpaces()), (-32_768...32_767).contains(q) else {
      return nil
    }
    return gain(String(Double(q) / 256 + 5))
  }

  /// The number a text starts with (after spaces, with a sign, a decimal point or comma).
  static func leadingNumber(_ text: String?) -> Double? {
    guard let text else { return nil }
    var digits = ""
    for c in text.trimmingSpaces() {
      if c.isASCII && (c.isNumber || c == "." || ((c == "-" || c == "+") && digits.isEmpty)) {
        digits.append(c)
      } else if c == "," && !digits.contains(".") {
        digits.append(".")  // "−6,54 dB", as some taggers in some locales write it
      } else {
        break
      }
    }
    guard let value = Double(digits), value.isFinite else { return nil }
    return value
  }
}

/// Which gain a track is played at, like the phone's Sound Check: the track's own, its album's
/// (tracks keep their loudness relative to one another), or none.
public enum ReplayGainMode: String, Sendable, CaseIterable {
  case off, track, album
}

/// How ReplayGain is applied: the mode, a preamp added to every tagged gain, and whether the
/// gain is lowered so that the track's peak does not clip.
public struct ReplayGainSettings: Hashable, Sendable {
  public var mode: ReplayGainMode
  /// Added to the tagged gain, −15…+15 dB.
  public var preampDecibels: Double
  /// Lower the gain so that the peak (from the tags; 1.0, full scale, when they do not say)
  /// stays at or below full scale.
  public var preventClipping: Bool

  public init(mode: ReplayGainMode = .off, preampDecibels: Double = 0, preventClipping: Bool = true)
  {
    self.mode = mode
    self.preampDecibels = preampDecibels
    self.preventClipping = preventClipping
  }

  /// The gain to play a track with these tags at, in dB; nil when none applies (off, or the
  /// track has no gain tag: it plays as it is). The album's gain in album mode, else the
  /// track's; either falls back to the other when missing.
  public func decibels(for tags: ReplayGainTags) -> Double? {
    let gain: Double?
    let peak: Double?
    switch mode {
    case .off: return nil
    case .track:
      gain = tags.trackGain ?? tags.albumGain
      peak = tags.trackGain != nil ? tags.trackPeak ?? tags.albumPeak : tags.albumPeak
    case .album:
      gain = tags.albumGain ?? tags.trackGain
      peak = tags.albumGain != nil ? tags.albumPeak ?? tags.trackPeak : tags.trackPeak
    }
    guard let gain else { return nil }
    var decibels = gain + preampDecibels
    if preventClipping {
      // The loudest sample at this gain must not pass full scale: 20·log10(1/peak) at most.
      let headroom = -20 * log10(peak ?? 1)
      decibels = min(decibels, headroom)
    }
    return decibels
  }
}

extension String {
  func trimmingSpaces() -> String {
    var s = Substring(self)
    while let f = s.first, f == " " || f == "\t" || f == "\0" { s = s.dropFirst() }
    while let l = s.last, l == " " || l == "\t" || l == "\0" { s = s.dropLast() }
    return String(s)
  }
}
