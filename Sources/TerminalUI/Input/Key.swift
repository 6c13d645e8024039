/// A key the user pressed, as the terminal reported it, in one normal form: letters typed with
/// Shift alone are upper-case characters (`A`, not Shift+`a`); with Ctrl or Alt they are
/// lower-case with `.shift` (Ctrl+Shift+`a`), because that is all a terminal can tell apart.
public struct Key: Hashable, Sendable, CustomStringConvertible {
  /// Which key.
  public enum Code: Hashable, Sendable {
    /// A key that types a character, space included.
    case character(Unicode.Scalar)
    case enter, tab, backspace, escape
    case up, down, left, right, home, end, pageUp, pageDown, insert, delete
    /// F1…F35.
    case function(Int)
    /// A media or volume key (kitty keyboard protocol only).
    case media(MediaKey)
  }

  /// Modifier keys held, as the kitty keyboard protocol numbers them (value − 1 of its field).
  public struct Modifiers: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let shift = Modifiers(rawValue: 1)
    public static let alt = Modifiers(rawValue: 2)
    public static let ctrl = Modifiers(rawValue: 4)
    public static let `super` = Modifiers(rawValue: 8)
  }

  public let code: Code
  public let modifiers: Modifiers

  /// The key in its normal form (see the type's summary).
  public init(_ code: Code, _ modifiers: Modifiers = []) {
    var code = code
    var modifiers = modifiers
    if case .character(let c) = code, c.isASCII, let letter = Character(c).asciiValue,
      (letter >= 0x41 && letter <= 0x5A) || (letter >= 0x61 && letter <= 0x7A)
    {
      let upper = letter <= 0x5A
      if !modifiers.isDisjoint(with: [.ctrl, .alt, .super]) {
        // Ctrl+Shift+A: the terminal cannot send a Ctrl+"A"; name it by the key and Shift.
        if upper { modifiers.insert(.shift) }
        code = .character(Unicode.Scalar(upper ? letter + 0x20 : letter))
      } else if modifiers.contains(.shift) {
        // Shift+a is what types "A".
        modifiers.remove(.shift)
        code = .character(Unicode.Scalar(upper ? letter : letter - 0x20))
      }
    }
    self.code = code
    self.modifiers = modifiers
  }

  /// A plain character key.
  public static func char(_ c: Unicode.Scalar, _ modifiers: Modifiers = []) -> Key {
    Key(.character(c), modifiers)
  }

  /// The key as the config file writes it: "space", "n", "C-x", "M-x", "S-tab", "F1", "left".
  public var description: String {
    var prefix = ""
    if modifiers.contains(.ctrl) { prefix += "C-" }
    if modifiers.contains(.alt) { prefix += "M-" }
    if modifiers.contains(.super) { prefix += "D-" }
    if modifiers.contains(.shift) { prefix += "S-" }
    return prefix + Self.name(of: code)
  }

  static func name(of code: Code) -> String {
    switch code {
    case .character(" "): "space"
    case .character(let c): String(Character(c))
    case .enter: "enter"
    case .tab: "tab"
    case .backspace: "backspace"
    case .escape: "esc"
    case .up: "up"
    case .down: "down"
    case .left: "left"
    case .right: "right"
    case .home: "home"
    case .end: "end"
    case .pageUp: "pgup"
    case .pageDown: "pgdn"
    case .insert: "insert"
    case .delete: "delete"
    case .function(let n): "F\(n)"
    case .media(let m): m.name
    }
  }

  /// Names the config may use for keys that are not a single character (several spellings).
  static let namedCodes: [String: Code] = {
    var names: [String: Code] = [
      "space": .character(" "), "spc": .character(" "),
      "enter": .enter, "return": .enter, "ret": .enter,
      "tab": .tab,
      "backspace": .backspace, "bs": .backspace,
      "esc": .escape, "escape": .escape,
      "up": .up, "down": .down, "left": .left, "right": .right,
      "home": .home, "end": .end,
      "pgup": .pageUp, "pageup": .pageUp, "page_up": .pageUp, "prior": .pageUp,
      "pgdn": .pageDown, "pagedown": .pageDown, "page_down": .pageDown, "next": .pageDown,
      "insert": .insert, "ins": .insert,
      "delete": .delete, "del": .delete,
      // Characters the config cannot easily write alone.
      "minus": .character("-"), "plus": .character("+"), "hash": .character("#"),
      "quote": .character("\""), "backslash": .character("\\"),
    ]
    for m in MediaKey.allCases { names[m.name] = .media(m) }
    return names
  }()

  /// Parses a key as the config writes it. Modifier prefixes: `C-` (Ctrl), `M-` or `A-` (Alt),
  /// `S-` (Shift), `D-` (Super); then a single character, a name (`space`, `enter`, `tab`,
  /// `esc`, `backspace`, `up`, `down`, `left`, `right`, `home`, `end`, `pgup`, `pgdn`,
  /// `insert`, `delete`), `F1`…`F35`, or a media key name (`media_play_pause`, ...).
  public init(parsing text: String) throws(KeyNameError) {
    var rest = Substring(text)
    var modifiers: Modifiers = []
    // "C-" then more: a prefix. A text of exactly "C-" or "-" is a key of its own.
    while rest.count > 2, let dash = rest.dropFirst().first, dash == "-" {
      switch rest.first {
      case "C": modifiers.insert(.ctrl)
      case "M", "A": modifiers.insert(.alt)
      case "S": modifiers.insert(.shift)
      case "D": modifiers.insert(.super)
      default: throw KeyNameError(text: text, problem: "unknown modifier '\(rest.prefix(2))'")
      }
      rest = rest.dropFirst(2)
    }
    if rest.unicodeScalars.count == 1, let c = rest.unicodeScalars.first {
      guard c.value >= 0x20 && c.value != 0x7F else {
        throw KeyNameError(text: text, problem: "a control character; write it as 'C-x'")
      }
      self.init(.character(c), modifiers)
      return
    }
    let lower = rest.lowercased()
    if let code = Self.namedCodes[lower] {
      self.init(code, modifiers)
      return
    }
    if lower.first == "f", let n = Int(lower.dropFirst()), (1...35).contains(n) {
      self.init(.function(n), modifiers)
      return
    }
    throw KeyNameError(text: text, problem: rest.isEmpty ? "no key after the modifiers" : nil)
  }
}

/// A key name in the config that is not one.
public struct KeyNameError: Error, Hashable, Sendable, CustomStringConvertible {
  public var text: String
  public var problem: String?
  public var description: String {
    "unknown key '\(text)'" + (problem.map { " (\($0))" } ?? "")
      + "; keys are written like 'space', 'n', 'C-x', 'M-x', 'left', 'S-tab', 'pgdn', 'F1'"
  }
}

/// The media and volume keys of the kitty keyboard protocol, with its numbers (Unicode
/// private-use code points, https://sw.kovidgoyal.net/kitty/keyboard-protocol/ "Functional key
/// definitions").
public enum MediaKey: Int, CaseIterable, Hashable, Sendable {
  case play = 57428
  case pause = 57429
  case playPause = 57430
  case reverse = 57431
  case stop = 57432
  case fastForward = 57433
  case rewind = 57434
  case trackNext = 57435
  case trackPrevious = 57436
  case record = 57437
  case lowerVolume = 57438
  case raiseVolume = 57439
  case muteVolume = 57440

  /// The protocol's name, lower-cased: how the config names the key.
  public var name: String {
    switch self {
    case .play: "media_play"
    case .pause: "media_pause"
    case .playPause: "media_play_pause"
    case .reverse: "media_reverse"
    case .stop: "media_stop"
    case .fastForward: "media_fast_forward"
    case .rewind: "media_rewind"
    case .trackNext: "media_track_next"
    case .trackPrevious: "media_track_previous"
    case .record: "media_record"
    case .lowerVolume: "lower_volume"
    case .raiseVolume: "raise_volume"
    case .muteVolume: "mute_volume"
    }
  }
}
