import SessionCore

/// What an ALSA jack element stands for, judged by its name alone.
///
/// The kernel names jack-detection controls after the pin or connector they watch, plus
/// " Jack": "Headphone Jack", "Front Headphone Jack", "Line Out Front Jack", "HDMI/DP,pcm=3 Jack",
/// "Speaker Phantom Jack", "Mic Jack", USB audio's "Headphone - Output Jack". PulseAudio's
/// `alsa-mixer/paths/*.conf` reads the same names the same way.
public enum JackMeaning: Hashable, Sendable {
  /// An output the user can plug something into; `label` names it within its card
  /// ("Headphones", "Front headphones", "Line out", "HDMI/DisplayPort 3").
  case output(RouteKind, label: String)
  /// Not an output we follow; the reason says why.
  case ignored(JackIgnoredReason)
}

/// Why a jack element is not followed as an output.
public enum JackIgnoredReason: Hashable, Sendable {
  /// The name does not end in " Jack": not a jack element at all.
  case notAJack
  /// A "... Phantom Jack": a fixed connection (built-in speakers, internal mic) that the driver
  /// reports as always plugged, so it never changes and says nothing about the user.
  case phantom
  /// An input (microphones, line in): it never carries our sound, so plugging or unplugging it
  /// must neither pause nor resume playback.
  case input
  /// The extra channels of a multichannel output ("Line Out Surround", "Speaker CLFE"): the
  /// front pair decides, as in PulseAudio, which ignores these for availability too.
  case extraChannels
}

/// Reading jack element names.
public enum JackName {
  /// The suffix every jack element's name carries.
  public static let suffix = " Jack"

  /// What the element `name` (with its element `index`, nonzero when a card has several of the
  /// same name) stands for.
  public static func meaning(of name: String, index: Int = 0) -> JackMeaning {
    guard name.hasSuffix(suffix) else { return .ignored(.notAJack) }
    var base = String(name.dropLast(suffix.count))
    if base.hasSuffix(" Phantom") { return .ignored(.phantom) }
    // USB audio names its connector controls "Headphone - Output Jack", "Mic - Input Jack".
    if base.hasSuffix(" - Input") { return .ignored(.input) }
    if base.hasSuffix(" - Output") { base = String(base.dropLast(" - Output".count)) }
    guard let (kind, label) = output(base) else { return .ignored(reason(base)) }
    return .output(kind, label: index > 0 ? "\(label) \(index + 1)" : label)
  }

  private static let extraChannelWords: Set<Substring> = [
    "Surround", "CLFE", "Side", "Center", "LFE",
  ]
  private static let inputWords: Set<Substring> = [
    "Mic", "Line", "Aux", "CD", "Video", "FM", "TV", "Phone", "Input",
  ]

  private static func reason(_ base: String) -> JackIgnoredReason {
    let words = base.split(separator: " ")
    return words.contains(where: extraChannelWords.contains) ? .extraChannels : .input
  }

  /// The kind and label of an output jack's base name, or nil when it is not an output.
  private static func output(_ base: String) -> (RouteKind, String)? {
    // HDA HDMI codecs: "HDMI/DP,pcm=3"; older drivers and SoC cards: "HDMI", "DP", "HDMI/DP".
    if base.hasPrefix("HDMI") || base.hasPrefix("DP") || base.hasPrefix("DisplayPort") {
      guard let range = base.firstRange(of: "pcm=") else { return (.hdmi, "HDMI/DisplayPort") }
      let device = base[range.upperBound...].prefix(while: \.isNumber)
      return (.hdmi, device.isEmpty ? "HDMI/DisplayPort" : "HDMI/DisplayPort \(device)")
    }
    let words = base.split(separator: " ")
    // "Headphone Mic": one socket that takes headphones or a mic (some ASUS netbooks);
    // PulseAudio counts it as headphones, and so do we: unplugging it ends a headphone route.
    if words.count == 2, words[0] == "Headphone", words[1] == "Mic" {
      return (.headphones, "Headphone/mic")
    }
    if let at = words.firstIndex(of: "Line"), at + 1 < words.count, words[at + 1] == "Out" {
      return located(words, at, 2, .line, "line out", "Line out")
    }
    if words.contains(where: inputWords.contains) { return nil }
    // ASoC machine drivers call a combo socket "Headset Jack"; its earpieces are an output.
    if let at = words.firstIndex(where: {
      $0 == "Headphone" || $0 == "Headphones" || $0 == "Headset"
    }) {
      return located(words, at, 1, .headphones, "headphones", "Headphones")
    }
    if let at = words.firstIndex(where: { $0 == "Speaker" || $0 == "Speakers" }) {
      return located(words, at, 1, .speakers, "speakers", "Speakers")
    }
    if words.contains(where: { $0 == "SPDIF" || $0 == "IEC958" || $0 == "Digital" }) {
      return (.line, "Digital out")
    }
    // A name we do not know: still an output the user plugged something into.
    return (.unknown, base)
  }

  /// The label of a jack whose keyword spans `words[at..<at + width]`: the words before it name
  /// where it is ("Front", "Dock", "Rear"); a word after it names a channel pair ("Line Out
  /// Front" is the front pair of a multichannel line out, "Line Out Surround" another pair).
  private static func located(
    _ words: [Substring], _ at: Int, _ width: Int, _ kind: RouteKind, _ noun: String,
    _ plain: String
  ) -> (RouteKind, String)? {
    let after = words[(at + width)...]
    if after.contains(where: extraChannelWords.contains) { return nil }
    let place = words[..<at].joined(separator: " ")
    return (kind, place.isEmpty ? plain : "\(place) \(noun)")
  }
}
