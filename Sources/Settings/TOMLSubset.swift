/// A value in hark's config file.
public enum ConfigValue: Hashable, Sendable, CustomStringConvertible {
  case string(String)
  case integer(Int)
  case float(Double)
  case boolean(Bool)
  case array([ConfigValue])

  public var description: String {
    switch self {
    case .string(let s): "\"\(s)\""
    case .integer(let i): "\(i)"
    case .float(let d): "\(d)"
    case .boolean(let b): "\(b)"
    case .array(let a): "[\(a.map(\.description).joined(separator: ", "))]"
    }
  }

  /// The kind of value, for messages: "a string", "a number".
  public var kind: String {
    switch self {
    case .string: "a string"
    case .integer, .float: "a number"
    case .boolean: "true or false"
    case .array: "a list"
    }
  }
}

/// A problem in a config file, with the line it is on.
public struct ConfigProblem: Hashable, Sendable, CustomStringConvertible {
  /// 1-based; 0 for the file as a whole.
  public var line: Int
  public var message: String

  public init(line: Int, message: String) {
    self.line = line
    self.message = message
  }

  public var description: String { line > 0 ? "line \(line): \(message)" : message }
}

/// The part of TOML a settings file needs: comments, `[table]` headers, and `key = value` with
/// strings (basic and literal), integers, floats, booleans and one-line arrays of them.
///
/// Why not TOMLKit: it imports Foundation, which adds about 7 MB to every hark process's
/// resident memory (measured: 10 MB → 17 MB for a trivial program), and the headless player
/// must stay under 20 MB. A line that is not this subset is reported with its number and
/// skipped; the rest of the file still counts.
public enum TOMLSubset {
  /// Keys as "table.key" ("device", "keys.next"), in file order, and the problems found.
  public static func parse(_ text: String) -> (
    entries: [(key: String, value: ConfigValue, line: Int)], problems: [ConfigProblem]
  ) {
    var entries: [(key: String, value: ConfigValue, line: Int)] = []
    var problems: [ConfigProblem] = []
    var table = ""
    var seen: Set<String> = []
    var number = 0
    // By scalars: "\r\n" is one Character, which a split on "\n" would not see.
    for raw in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
      number += 1
      var scanner = Scanner(Substring(raw))
      scanner.skipSpaces()
      if scanner.atEndOfLine { continue }
      do throws(ParseError) {
        if scanner.peek == "[" {
          scanner.advance()
          scanner.skipSpaces()
          let name = try scanner.key()
          scanner.skipSpaces()
          guard scanner.peek == "]" else { throw ParseError("expected ']' after '[\(name)'") }
          scanner.advance()
          scanner.skipSpaces()
          guard scanner.atEndOfLine else { throw ParseError("unexpected text after '[\(name)]'") }
          table = name
          continue
        }
        let key = try scanner.key()
        scanner.skipSpaces()
        guard scanner.peek == "=" else { throw ParseError("expected '=' after '\(key)'") }
        scanner.advance()
        scanner.skipSpaces()
        let value = try scanner.value()
        scanner.skipSpaces()
        guard scanner.atEndOfLine else { throw ParseError("unexpected text after the value") }
        let full = table.isEmpty ? key : table + "." + key
        guard seen.insert(full).inserted else {
          throw ParseError("'\(full)' is set twice; the first one counts")
        }
        entries.append((full, value, number))
      } catch {
        problems.append(ConfigProblem(line: number, message: error.message))
      }
    }
    return (entries, problems)
  }
}

private struct ParseError: Error {
  var message: String
  init(_ message: String) { self.message = message }
}

/// Reads one line.
private struct Scanner {
  private var rest: Substring.UnicodeScalarView

  init(_ line: Substring) {
    var l = line
    if l.last == "\r" { l = l.dropLast() }
    rest = l.unicodeScalars
  }

  var peek: Unicode.Scalar? { rest.first }
  var atEndOfLine: Bool { rest.isEmpty || rest.first == "#" }
  mutating func advance() { rest.removeFirst() }

  mutating func skipSpaces() {
    while let c = rest.first, c == " " || c == "\t" { rest.removeFirst() }
  }

  /// A bare key (letters, digits, '_', '-'), dotted keys joined with '.', or a quoted key.
  mutating func key() throws(ParseError) -> String {
    var parts: [String] = []
    while true {
      skipSpaces()
      if peek == "\"" || peek == "'" {
        guard case .string(let s) = try value() else { throw ParseError("expected a key") }
        parts.append(s)
      } else {
        var name = ""
        while let c = rest.first,
          c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "-"
        {
          name.unicodeScalars.append(c)
          rest.removeFirst()
        }
        guard !name.isEmpty else {
          throw ParseError(
            rest.isEmpty
              ? "expected a setting" : "expected a name, not '\(rest.first.map(String.init) ?? "")'"
          )
        }
        parts.append(name)
      }
      skipSpaces()
      guard peek == "." else { return parts.joined(separator: ".") }
      advance()
    }
  }

  mutating func value() throws(ParseError) -> ConfigValue {
    guard let c = peek else { throw ParseError("a value is missing after '='") }
    switch c {
    case "\"": return .string(try basicString())
    case "'": return .string(try literalString())
    case "[": return try array()
    case "t", "f":
      let word = takeWord()
      if word == "true" { return .boolean(true) }
      if word == "false" { return .boolean(false) }
      throw ParseError("'\(word)' is not a value; strings need quotes")
    default:
      let word = takeWord().replacingUnderscores()
      if let i = Int(word) { return .integer(i) }
      if let d = Double(word), d.isFinite, !word.isEmpty { return .float(d) }
      throw ParseError("'\(word)' is not a value; strings need quotes")
    }
  }

  private mutating func takeWord() -> String {
    var word = ""
    while let c = rest.first, c != " ", c != "\t", c != ",", c != "]", c != "#" {
      word.unicodeScalars.append(c)
      rest.removeFirst()
    }
    return word
  }

  private mutating func array() throws(ParseError) -> ConfigValue {
    advance()
    var items: [ConfigValue] = []
    while true {
      skipSpaces()
      if peek == "]" {
        advance()
        return .array(items)
      }
      items.append(try value())
      skipSpaces()
      if peek == "," {
        advance()
        continue
      }
      guard peek == "]" else {
        throw ParseError("expected ',' or ']' in a list (lists fit on one line)")
      }
    }
  }

  private mutating func literalString() throws(ParseError) -> String {
    advance()
    var s = ""
    while let c = rest.first {
      rest.removeFirst()
      if c == "'" { return s }
      s.unicodeScalars.append(c)
    }
    throw ParseError("a string is not closed with '")
  }

  private mutating func basicString() throws(ParseError) -> String {
    advance()
    var s = ""
    while let c = rest.first {
      rest.removeFirst()
      switch c {
      case "\"": return s
      case "\\":
        guard let e = rest.first else { break }
        rest.removeFirst()
        switch e {
        case "\"": s.append("\"")
        case "\\": s.append("\\")
        case "n": s.append("\n")
        case "t": s.append("\t")
        case "r": s.append("\r")
        case "u", "U":
          var hex = ""
          for _ in 0..<(e == "u" ? 4 : 8) {
            guard let h = rest.first else { break }
            hex.unicodeScalars.append(h)
            rest.removeFirst()
          }
          guard let v = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(v) else {
            throw ParseError("'\\\(e)\(hex)' is not a character")
          }
          s.unicodeScalars.append(scalar)
        default: throw ParseError("'\\\(e)' is not an escape TOML knows")
        }
      default: s.unicodeScalars.append(c)
      }
    }
    throw ParseError("a string is not closed with \"")
  }
}

extension String {
  fileprivate func replacingUnderscores() -> String {
    String(unicodeScalars.filter { $0 != "_" }.map(Character.init))
  }
}
