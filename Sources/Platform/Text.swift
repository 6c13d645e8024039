/// A duration as a clock shows it: 83 → "1:23", 3725 → "1:02:05" (negative as 0). The status
/// line, the headless player's lines and a scan's time left all write time so.
public func clockTime(seconds: Int) -> String {
  let s = max(0, seconds)
  func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
  return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
}

extension String {
  /// The line with its first character in capitals, the rest as it is ("cannot open 'x'" →
  /// "Cannot open 'x'"): how the status line, a hello and `hark play` show a message. Messages
  /// are written lower-case so that they also read inside another sentence ("hark: cannot…").
  public var capitalisedFirst: String { prefix(1).uppercased() + dropFirst() }
}

/// Appends `text` (UTF-8) to `out` as one line of a tab-separated record: tabs and line breaks
/// (LF, CR, CR LF as one, VT, FF, NEL, U+2028, U+2029: what `Character.isNewline` calls one)
/// as spaces, and the spaces at either end left out. False, with nothing appended, when that
/// leaves nothing. Bytes, not `Character`s: hark-tags cleans every tag of every file so, and
/// walking 50,000 files' tags by grapheme cost more than reading them.
public func appendAsOneLine(_ text: UnsafeRawBufferPointer, to out: inout [UInt8]) -> Bool {
  let start = out.count
  var i = 0
  let n = text.count
  while i < n {
    let b = text[i]
    var width = 0  // the bytes of a break or tab at i, if one is there
    switch b {
    case 0x09, 0x0A, 0x0B, 0x0C: width = 1
    case 0x0D: width = i + 1 < n && text[i + 1] == 0x0A ? 2 : 1
    case 0xC2: width = i + 1 < n && text[i + 1] == 0x85 ? 2 : 0
    case 0xE2:
      width =
        i + 2 < n && text[i + 1] == 0x80 && (text[i + 2] == 0xA8 || text[i + 2] == 0xA9) ? 3 : 0
    default: width = 0
    }
    if width > 0 {
      // A space, unless at the start.
      if out.count > start { out.append(0x20) }
      i += width
      continue
    }
    if b == 0x20 && out.count == start {
      i += 1
      continue
    }
    out.append(b)
    i += 1
  }
  while out.count > start && out[out.count - 1] == 0x20 { out.removeLast() }
  return out.count > start
}
