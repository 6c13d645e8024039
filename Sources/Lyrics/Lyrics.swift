/// A track's lyrics: lines in order, each with the time it is sung from when the lyrics are
/// synced (an LRC file, ID3's SYLT, LRC text in a tag), and the words' own times when enhanced
/// LRC gives them. Pure values: made by `LRC.parse` and `Lyrics.init(synced:)`, read by the
/// interface and `hark lyrics`.
public struct Lyrics: Hashable, Sendable {
  /// One line as shown.
  public struct Line: Hashable, Sendable {
    /// Seconds from the start of the track, offset applied; nil in unsynced lyrics.
    public var time: Double?
    /// The line's text, word stamps taken out; "" for a break between verses (a stamp with no
    /// text: the line before it is over).
    public var text: String
    /// Enhanced LRC's word stamps: each word (with its following space) from its time on.
    public var words: [Word]

    public init(time: Double?, text: String, words: [Word] = []) {
      self.time = time
      self.text = text
      self.words = words
    }
  }

  /// A word of an enhanced LRC line, and when it is sung.
  public struct Word: Hashable, Sendable {
    public var time: Double
    public var text: String
    public init(time: Double, text: String) {
      self.time = time
      self.text = text
    }
  }

  /// Where the lyrics came from, for the view's title and `hark lyrics --source`.
  public enum Source: Hashable, Sendable {
    /// A .lrc (or .txt) file beside the track.
    case file(String)
    /// A tag in the track: "USLT", "SYLT", "LYRICS", "UNSYNCEDLYRICS", "©lyr"…
    case tag(String)
  }

  public var lines: [Line]
  public var source: Source
  /// The [ti:], [ar:], [al:] of an LRC file, when it names them.
  public var title: String?
  public var artist: String?
  public var album: String?

  public init(lines: [Line], source: Source) {
    self.lines = lines
    self.source = source
  }

  /// Every line has a time: the view follows the track.
  public var isSynced: Bool { !lines.isEmpty && lines.allSatisfy { $0.time != nil } }

  /// The line sung at `seconds`: the last whose time has come; nil before the first, and in
  /// unsynced lyrics.
  public func lineIndex(at seconds: Double) -> Int? {
    guard isSynced else { return nil }
    // The lines are in time order (`LRC.parse` sorts them): the last at or before `seconds`.
    var low = 0
    var high = lines.count
    while low < high {
      let mid = (low + high) / 2
      if (lines[mid].time ?? 0) <= seconds { low = mid + 1 } else { high = mid }
    }
    return low == 0 ? nil : low - 1
  }

  /// How many of line `index`'s words have been sung at `seconds` (all of them for a line
  /// without word stamps once it has begun).
  public func wordsSung(inLine index: Int, at seconds: Double) -> Int {
    guard lines.indices.contains(index) else { return 0 }
    let words = lines[index].words
    guard !words.isEmpty else { return 0 }
    return words.firstIndex { $0.time > seconds } ?? words.count
  }

  /// The text, a line a line, as a person reads it.
  public var plainText: String { lines.map(\.text).joined(separator: "\n") }

  /// As an LRC file: "[mm:ss.xx]text" a line (word stamps kept as <mm:ss.xx>); unsynced lines
  /// as they are.
  public var lrcText: String {
    lines.map { line in
      guard let time = line.time else { return line.text }
      let body =
        line.words.isEmpty
        ? line.text
        : line.words.map { "<" + LRC.stamp($0.time) + ">" + $0.text }.joined()
      return "[" + LRC.stamp(time) + "]" + body
    }.joined(separator: "\n")
  }

  /// Lyrics from ID3v2's SYLT frame: (milliseconds, text) as the tag holds them. Taggers put
  /// a line in each entry, or a syllable in each with a line break starting (or ending) the
  /// first of a line: either way the result is a line a line, and a syllable's time is its
  /// word's.
  public init(synced entries: [(milliseconds: Int, text: String)], source: Source) {
    let breaks = entries.contains { $0.text.hasPrefix("\n") || $0.text.hasPrefix("\r") }
    let trailing = !breaks && entries.contains { $0.text.hasSuffix("\n") }
    var lines: [Line] = []
    if breaks || trailing {
      var current: Line?
      for (ms, raw) in entries {
        let startsLine = breaks ? (raw.hasPrefix("\n") || raw.hasPrefix("\r")) : false
        let text = String(raw.filter { $0 != "\n" && $0 != "\r" && $0 != "\r\n" })
        if current == nil || startsLine {
          if let c = current { lines.append(c) }
          current = Line(time: Double(ms) / 1000, text: "")
        }
        current?.text += text
        current?.words.append(Word(time: Double(ms) / 1000, text: text))
        if trailing && raw.hasSuffix("\n") {
          if let c = current { lines.append(c) }
          current = nil
        }
      }
      if let c = current { lines.append(c) }
      // A line of one syllable has no words worth showing apart.
      for i in lines.indices where lines[i].words.count == 1 { lines[i].words = [] }
    } else {
      lines = entries.map { Line(time: Double($0.milliseconds) / 1000, text: $0.text) }
    }
    self.init(lines: LRC.inTimeOrder(lines), source: source)
  }
}
