import Platform
/// How many terminal cells a character takes, as wcwidth(3) counts them: 0 for combining marks
/// and other zero-width characters, 2 for East Asian wide and fullwidth characters and emoji,
/// 1 for the rest. Control characters count 0: `sanitized` replaces them before drawing.
///
/// Pure Swift, so layout does not depend on the process's locale; the ranges follow Markus
/// Kuhn's wcwidth with the wide ranges of Unicode 15's EastAsianWidth.txt, which is what glibc
/// and so curses use.
public enum TextWidth {
  /// The cells `scalar` takes.
  public static func of(_ scalar: Unicode.Scalar) -> Int {
    let v = scalar.value
    // What reaches the screen for these is their escape (`escapingControlCharacters`): "\n",
    // "\x1b", "\u{9b}", and a file name's byte that is not UTF-8 as "\xe9". Measured as that, so
    // that a row laid out around a hostile name keeps its columns.
    if v == 0x0A || v == 0x09 || v == 0x0D { return 2 }
    if v < 0x20 || v == 0x7F { return 4 }
    if v >= 0x80 && v < 0xA0 { return 6 }
    if FileName.rawByte(scalar) != nil { return 4 }
    if v < 0x300 { return 1 }
    if v == 0x200B || (0x200C...0x200F).contains(v) || (0x2028...0x202E).contains(v)
      || (0x2060...0x2064).contains(v) || v == 0xFEFF || (0xFE00...0xFE0F).contains(v)
      || (0x1160...0x11FF).contains(v) || (0xE0000...0xE0FFF).contains(v)
    {
      return 0
    }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    return isWide(v) ? 2 : 1
  }

  private static let wideRanges: [ClosedRange<UInt32>] = [
    0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0,
    0x23F3...0x23F3, 0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F...0x267F,
    0x2693...0x2693, 0x26A1...0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5,
    0x26CE...0x26CE, 0x26D4...0x26D4, 0x26EA...0x26EA, 0x26F2...0x26F3, 0x26F5...0x26F5,
    0x26FA...0x26FA, 0x26FD...0x26FD, 0x2705...0x2705, 0x270A...0x270B, 0x2728...0x2728,
    0x274C...0x274C, 0x274E...0x274E, 0x2753...0x2755, 0x2757...0x2757, 0x2795...0x2797,
    0x27B0...0x27B0, 0x27BF...0x27BF, 0x2B1B...0x2B1C, 0x2B50...0x2B50, 0x2B55...0x2B55,
    0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
    0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
    0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF,
    0x1F004...0x1F004, 0x1F0CF...0x1F0CF, 0x1F18E...0x1F18E, 0x1F191...0x1F19A,
    0x1F200...0x1F202, 0x1F210...0x1F23B, 0x1F240...0x1F248, 0x1F250...0x1F251,
    0x1F260...0x1F265, 0x1F300...0x1F320, 0x1F32D...0x1F335, 0x1F337...0x1F37C,
    0x1F37E...0x1F393, 0x1F3A0...0x1F3CA, 0x1F3CF...0x1F3D3, 0x1F3E0...0x1F3F0,
    0x1F3F4...0x1F3F4, 0x1F3F8...0x1F43E, 0x1F440...0x1F440, 0x1F442...0x1F4FC,
    0x1F4FF...0x1F53D, 0x1F54B...0x1F54E, 0x1F550...0x1F567, 0x1F57A...0x1F57A,
    0x1F595...0x1F596, 0x1F5A4...0x1F5A4, 0x1F5FB...0x1F64F, 0x1F680...0x1F6C5,
    0x1F6CC...0x1F6CC, 0x1F6D0...0x1F6D2, 0x1F6D5...0x1F6D7, 0x1F6DC...0x1F6DF,
    0x1F6EB...0x1F6EC, 0x1F6F4...0x1F6FC, 0x1F7E0...0x1F7EB, 0x1F7F0...0x1F7F0,
    0x1F90C...0x1F93A, 0x1F93C...0x1F945, 0x1F947...0x1F9FF, 0x1FA70...0x1FAFF,
    0x20000...0x2FFFD, 0x30000...0x3FFFD,
  ]

  private static func isWide(_ v: UInt32) -> Bool {
    guard v >= 0x1100 else { return false }
    var lo = 0
    var hi = wideRanges.count - 1
    while lo <= hi {
      let mid = (lo + hi) / 2
      let r = wideRanges[mid]
      if v < r.lowerBound {
        hi = mid - 1
      } else if v > r.upperBound {
        lo = mid + 1
      } else {
        return true
      }
    }
    return false
  }

  /// The cells `text` takes.
  public static func of(_ text: some StringProtocol) -> Int { of(text.unicodeScalars) }

  /// The cells these scalars take (a `Character`'s, say).
  public static func of(_ scalars: some Sequence<Unicode.Scalar>) -> Int {
    scalars.reduce(0) { $0 + of($1) }
  }

  /// `text` cut to at most `width` cells, ending in "…" when something was cut. Never splits a
  /// wide character: the cell it would half fill stays empty.
  public static func truncate(_ text: String, to width: Int, ellipsis: String = "…") -> String {
    guard width > 0 else { return "" }
    if of(text) <= width { return text }
    let room = width - of(ellipsis)
    guard room >= 0 else { return truncate(ellipsis, to: width, ellipsis: "") }
    var out = ""
    var used = 0
    for character in text {
      let w = of(character.unicodeScalars)
      if used + w > room { break }
      out.append(character)
      used += w
    }
    return out + ellipsis
  }

  /// `text` cut (with "…") or padded with spaces to exactly `width` cells.
  public static func fit(_ text: String, to width: Int) -> String {
    let cut = truncate(text, to: width)
    let w = of(cut)
    return w < width ? cut + String(repeating: " ", count: width - w) : cut
  }

  /// `text` right-aligned in exactly `width` cells.
  public static func fitRight(_ text: String, to width: Int) -> String {
    let cut = truncate(text, to: width)
    let w = of(cut)
    return w < width ? String(repeating: " ", count: width - w) + cut : cut
  }

  /// `text` with control characters (a tag's newline, a tab, an escape) made spaces, so that
  /// what is drawn is exactly what was measured.
  public static func sanitized(_ text: String) -> String {
    guard
      text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) })
    else { return text }
    var out = String.UnicodeScalarView()
    for s in text.unicodeScalars {
      out.append(s.value < 0x20 || (0x7F..<0xA0).contains(s.value) ? " " : s)
    }
    return String(out)
  }
}
