import Platform

extension String {
  /// The text with every control character shown as an escape (`\n`, `\t`, `\r`, `\x1b`,
  /// `\u{9b}`), for anything from a file (a name, a tag) on its way to a terminal or a line of
  /// output: a title holding `ESC ] 0 ;` would retitle the user's terminal, `ESC [ 2 J` clear
  /// it, and a newline in a name would split one output line in two. Backslashes are
  /// left as they are; printable text, including every script and emoji, is unchanged. A file
  /// name's bytes that are not UTF-8 (`FileName`) show as `\xe9`.
  public var escapingControlCharacters: String {
    guard unicodeScalars.contains(where: { $0.isControlCharacter || FileName.rawByte($0) != nil })
    else { return self }
    var out = ""
    out.reserveCapacity(utf8.count + 8)
    for scalar in unicodeScalars {
      if let byte = FileName.rawByte(scalar) {
        out += "\\x" + String(byte, radix: 16)
        continue
      }
      guard scalar.isControlCharacter else {
        out.unicodeScalars.append(scalar)
        continue
      }
      switch scalar {
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      default:
        let hex = String(scalar.value, radix: 16)
        out += scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
      }
    }
    return out
  }
}

extension Unicode.Scalar {
  /// C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F): what a terminal acts on instead
  /// of showing.
  fileprivate var isControlCharacter: Bool {
    value < 0x20 || (value >= 0x7F && value <= 0x9F)
  }
}
