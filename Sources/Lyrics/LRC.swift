/// LRC, the lyrics file format of players since the 1990s, as found in the wild:
///
/// ```
/// [ar:Artist]
/// [offset:+250]
/// [00:12.00][01:40.50]A line sung twice
/// [00:15.30]<00:15.30>Each <00:15.80>word <00:16.10>timed (enhanced LRC)
/// [00:19.00]
/// ```
///
/// Read as leniently as players read it: a byte-order mark (UTF-8 or UTF-16), CRLF or CR line
/// ends, text that is not UTF-8 (Windows-1252, the Latin-1 that old LRC sites wrote), stamps out
/// of order, several stamps on a line, `[mm:ss]`, `[mm:ss.x]`, `[mm:ss.xxx]` and `[mm:ss:xx]`,
/// hours, `[offset:]` in milliseconds (positive: the lines come sooner), empty lines and stamps
/// with no text (a break: the line before it is over). A file with no time stamp at all is
/// unsynced lyrics, its lines as they are (ID tags left out).
public enum LRC {
  /// The lyrics in `bytes`; nil when they hold no line of text.
  public static func parse(_ bytes: some Collection<UInt8>, source: Lyrics.Source) -> Lyrics? {
    parse(text: decode(Array(bytes)), source: source)
  }

  /// The lyrics in `text`; nil when it holds no line of text.
  public static func parse(text: String, source: Lyrics.Source) -> Lyrics? {
    var stamped: [Lyrics.Line] = []
    var plain: [String] = []
    var offset = 0.0
    var tags: [String: String] = [:]
    for raw in splitLines(text) {
      var rest = Substring(raw)
      var times: [Double] = []
      var isTagLine = false
      // The tags at the start of the line: stamps, or one ID tag.
      while rest.first == "[", let close = rest.firstIndex(of: "]") {
        let inside = rest[rest.index(after: rest.startIndex)..<close]
        if let t = time(inside) {
          times.append(t)
        } else if let colon = inside.firstIndex(of: ":"), times.isEmpty {
          let key = inside[..<colon].lowercased().trimmingSpaces
          let value = String(inside[inside.index(after: colon)...]).trimmingSpaces
          guard key.allSatisfy({ $0.isLetter || $0 == "#" }), !key.isEmpty else { break }
          tags[key] = value
          if key == "offset", let ms = Double(value.replacingPlus) { offset = ms / 1000 }
          isTagLine = true
        } else {
          break
        }
        rest = rest[rest.index(after: close)...]
      }
      if isTagLine && times.isEmpty { continue }
      if times.isEmpty {
        plain.append(String(raw).trimmingTrailingSpaces)
        continue
      }
      // Word stamps are the line's first time's: a line sung twice has them moved along.
      let first = times[0]
      let (text, words) = wordsOf(rest, lineTime: first)
      for t in times {
        let shift = t - first
        stamped.append(
          Lyrics.Line(
            time: t, text: text,
            words: words.map { Lyrics.Word(time: $0.time + shift, text: $0.text) }))
      }
    }
    var lyrics: Lyrics
    if !stamped.isEmpty {
      // The offset moves every stamp, the words' too; nothing before the track's start.
      for i in stamped.indices {
        stamped[i].time = max(0, (stamped[i].time ?? 0) - offset)
        for w in stamped[i].words.indices {
          stamped[i].words[w].time = max(0, stamped[i].words[w].time - offset)
        }
      }
      // Lines without a stamp in a synced file (credits, a stray heading) are left out.
      lyrics = Lyrics(lines: inTimeOrder(stamped), source: source)
      // Breaks at the very start (a stamp at 0:00 with no text) show nothing useful.
      while let first = lyrics.lines.first, first.text.isEmpty { lyrics.lines.removeFirst() }
      guard lyrics.lines.contains(where: { !$0.text.isEmpty }) else { return nil }
    } else {
      // Unsynced: as written, without the blank lines at either end.
      while let first = plain.first, first.isEmpty { plain.removeFirst() }
      while let last = plain.last, last.isEmpty { plain.removeLast() }
      guard !plain.isEmpty else { return nil }
      lyrics = Lyrics(lines: plain.map { Lyrics.Line(time: nil, text: $0) }, source: source)
    }
    lyrics.title = tags["ti"].flatMap { $0.isEmpty ? nil : $0 }
    lyrics.artist = tags["ar"].flatMap { $0.isEmpty ? nil : $0 }
    lyrics.album = tags["al"].flatMap { $0.isEmpty ? nil : $0 }
    return lyrics
  }

  /// Lines by time, those of the same time in the order written (a stable sort).
  static func inTimeOrder(_ lines: [Lyrics.Line]) -> [Lyrics.Line] {
    lines.enumerated().sorted { a, b in
      let x = a.element.time ?? 0
      let y = b.element.time ?? 0
      return x != y ? x < y : a.offset < b.offset
    }.map(\.element)
  }

  /// "mm:ss", "mm:ss.x", "mm:ss.xx", "mm:ss.xxx", "mm:ss:xx", "h:mm:ss.xx" → seconds.
  static func time(_ s: Substring) -> Double? {
    let parts = s.trimmingSpaces.split(separator: ":", omittingEmptySubsequences: false)
    guard (2...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }) else { return nil }
    func digits(_ p: Substring) -> Int? {
      guard p.count <= 3, p.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
      return Int(p)
    }
    func seconds(_ p: Substring) -> Double? {
      let halves = p.split(separator: ".", omittingEmptySubsequences: false)
      guard (1...2).contains(halves.count), let whole = digits(halves[0]) else { return nil }
      guard halves.count == 2 else { return Double(whole) }
      guard !halves[1].isEmpty, let fraction = digits(halves[1]) else { return nil }
      return Double(whole) + Double(fraction) / pow10(halves[1].count)
    }
    if parts.count == 2 {
      guard let m = digits(parts[0]), let sec = seconds(parts[1]) else { return nil }
      return Double(m) * 60 + sec
    }
    // mm:ss:xx (hundredths after a colon), or h:mm:ss(.xx).
    guard let a = digits(parts[0]), let b = digits(parts[1]) else { return nil }
    if !parts[2].contains("."), parts[2].count == 2, let hundredths = digits(parts[2]), b < 60,
      a >= 10 || parts[0].count == 2
    {
      return Double(a) * 60 + Double(b) + Double(hundredths) / 100
    }
    guard let sec = seconds(parts[2]) else { return nil }
    return Double(a) * 3600 + Double(b) * 60 + sec
  }

  private static func pow10(_ n: Int) -> Double {
    var p = 1.0
    for _ in 0..<n { p *= 10 }
    return p
  }

  /// A line's text after its stamps: enhanced LRC's <mm:ss.xx> word stamps taken out into
  /// words, the text trimmed of spaces at its ends. Text before the first word stamp is a word
  /// from the line's own time (`lineTime`).
  static func wordsOf(_ rest: Substring, lineTime: Double) -> (String, [Lyrics.Word]) {
    guard rest.contains("<") else { return (String(rest).trimmingSpaces, []) }
    var words: [Lyrics.Word] = []
    var text = ""
    var current = Lyrics.Word(time: lineTime, text: "")
    var i = rest.startIndex
    while i < rest.endIndex {
      if rest[i] == "<", let close = rest[i...].firstIndex(of: ">"),
        let t = time(rest[rest.index(after: i)..<close])
      {
        words.append(current)
        current = Lyrics.Word(time: t, text: "")
        i = rest.index(after: close)
        continue
      }
      text.append(rest[i])
      current.text.append(rest[i])
      i = rest.index(after: i)
    }
    words.append(current)
    // A stamp that ends the line marks when its last word ends: no word of its own; nor is
    // the space before the first stamp.
    words.removeAll { $0.text.allSatisfy { $0 == " " || $0 == "\t" } }
    if let first = words.indices.first {
      words[first].text = String(words[first].text.drop { $0 == " " || $0 == "\t" })
    }
    if let last = words.indices.last {
      words[last].text = words[last].text.trimmingTrailingSpaces
    }
    return (text.trimmingSpaces, words.count > 1 ? words : [])
  }

  /// Lines split on LF, CRLF or CR.
  static func splitLines(_ text: String) -> [Substring] {
    text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
  }

  /// "mm:ss.xx" for `seconds`.
  public static func stamp(_ seconds: Double) -> String {
    let hundredths = Int((seconds * 100).rounded())
    let m = hundredths / 6000
    let s = hundredths / 100 % 60
    let h = hundredths % 100
    return (m < 10 ? "0" : "") + "\(m):" + (s < 10 ? "0" : "") + "\(s)." + (h < 10 ? "0" : "")
      + "\(h)"
  }

  // MARK: Text

  /// Bytes as text: after a UTF-8 BOM, UTF-8; after a UTF-16 BOM, UTF-16 of that order; UTF-8
  /// when they are valid UTF-8; else Windows-1252 (Latin-1 with curly quotes and dashes in
  /// 0x80–0x9F), which every byte is. NUL bytes are dropped.
  public static func decode(_ bytes: [UInt8]) -> String {
    var b = bytes[...]
    if b.starts(with: [0xEF, 0xBB, 0xBF]) {
      b = b.dropFirst(3)
    } else if b.starts(with: [0xFF, 0xFE]) || b.starts(with: [0xFE, 0xFF]) {
      let little = b.first == 0xFF
      b = b.dropFirst(2)
      var units: [UInt16] = []
      units.reserveCapacity(b.count / 2)
      var i = b.startIndex
      while i + 1 < b.endIndex {
        let (lo, hi) = little ? (b[i], b[i + 1]) : (b[i + 1], b[i])
        units.append(UInt16(hi) << 8 | UInt16(lo))
        i += 2
      }
      return String(decoding: units, as: UTF16.self).filter { $0 != "\0" }
    }
    let clean = b.filter { $0 != 0 }
    if let text = String(validating: clean, as: UTF8.self) { return text }
    var out = ""
    out.unicodeScalars.reserveCapacity(clean.count)
    for byte in clean { out.unicodeScalars.append(windows1252(byte)) }
    return out
  }

  /// A Windows-1252 byte as its character (the five bytes it leaves undefined as Latin-1's).
  static func windows1252(_ byte: UInt8) -> Unicode.Scalar {
    let high: [UInt32] = [
      0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
      0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
      0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]
    if (0x80...0x9F).contains(byte), let s = Unicode.Scalar(high[Int(byte) - 0x80]) { return s }
    return Unicode.Scalar(byte)
  }
}

extension StringProtocol {
  var trimmingSpaces: String {
    var s = Substring(self)
    while let f = s.first, f == " " || f == "\t" || f == "\u{FEFF}" { s = s.dropFirst() }
    while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
    return String(s)
  }

  var trimmingTrailingSpaces: String {
    var s = Substring(self)
    while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
    return String(s)
  }

  var replacingPlus: String { hasPrefix("+") ? String(dropFirst()) : String(self) }
}
