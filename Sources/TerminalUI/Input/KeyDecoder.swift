/// What the terminal sent, decoded.
public enum InputEvent: Hashable, Sendable {
  case key(Key)
  /// The answer to the kitty keyboard protocol query (`CSI ? u`): the terminal speaks it, with
  /// these enhancement flags on now.
  case keyboardProtocol(flags: Int)
  /// The answer to a primary device attributes query (`CSI c`): whether the terminal says it
  /// draws sixel graphics (feature 4, after a VT100-family class of 61 or more:
  /// `CSI ? 62 ; 4 ; 22 c`).
  case deviceAttributes(sixel: Bool)
  /// The answer to xterm's query for the size of a character cell in pixels (`CSI 16 t`):
  /// `CSI 6 ; height ; width t`.
  case cellSize(width: Int, height: Int)
  /// The answer to the kitty graphics protocol's query (`APC G i=31 … ST`): the terminal draws
  /// pictures (true), or understood the query and cannot (false).
  case graphicsProtocol(Bool)
}

/// Turns the bytes a terminal sends into keys: plain UTF-8 text, control characters, legacy
/// escape sequences (xterm's `CSI A`, `SS3 P`, `CSI 5 ~` with `;modifiers`) and the kitty
/// keyboard protocol's `CSI number ; modifiers u`, media keys included.
///
/// Pure: no terminal, no clock. Bytes may arrive split anywhere; what is left of an unfinished
/// sequence waits for the next `feed`. A lone Esc cannot be told from the start of a sequence
/// until some time passes: once no byte came for `escapeDelay` (`expire(now:)`, times passed
/// in), what was pending is taken as typed (Esc, or Alt+`[`), or dropped when it is a sequence
/// cut short.
public struct KeyDecoder: Sendable {
  /// How long to wait after an Esc for the rest of a sequence: long enough for a terminal over
  /// ssh, short enough that Esc feels immediate. The kitty protocol sends Esc as `CSI 27 u`,
  /// so there the wait never matters.
  public static let escapeDelay: Duration = .milliseconds(50)

  private var pending: [UInt8] = []

  public init() {}

  /// Whether bytes of an unfinished sequence wait: the owner should call `timeout()` if
  /// nothing more comes within `escapeDelay`.
  public var isPending: Bool { !pending.isEmpty }

  /// Decodes what can be decoded of `bytes` (after what was pending).
  public mutating func feed(_ bytes: some Sequence<UInt8>) -> [InputEvent] {
    pending.append(contentsOf: bytes)
    var events: [InputEvent] = []
    var at = 0
    while at < pending.count {
      switch Self.parse(pending, at) {
      case .incomplete:
        pending.removeFirst(at)
        return events
      case .event(let event, let length):
        if let event { events.append(event) }
        at += length
      }
    }
    pending.removeAll(keepingCapacity: true)
    return events
  }

  /// `feed`, with the time the bytes came (monotonic nanoseconds), for `expire`.
  public mutating func feed(_ bytes: some Sequence<UInt8>, at now: UInt64) -> [InputEvent] {
    lastFed = now
    return feed(bytes)
  }

  /// What is pending, taken as typed (`timeout`) once no byte came for `escapeDelay` before
  /// `now`; nothing before that. The owner calls it at every wake of its loop, whatever woke
  /// it: an owner that took the Esc only when its wait for input timed out never took it while
  /// other news woke it more often than that.
  public mutating func expire(now: UInt64) -> [InputEvent] {
    guard isPending, now - min(now, lastFed) >= Self.escapeDelayNanoseconds else { return [] }
    return timeout()
  }

  /// Nanoseconds from `now` until `expire` takes what is pending; nil when nothing is.
  public func untilExpiry(now: UInt64) -> UInt64? {
    guard isPending else { return nil }
    let since = now - min(now, lastFed)
    return Self.escapeDelayNanoseconds - min(since, Self.escapeDelayNanoseconds)
  }

  private var lastFed: UInt64 = 0
  private static let escapeDelayNanoseconds: UInt64 = {
    let delay = escapeDelay.components
    return UInt64(delay.seconds) * 1_000_000_000 + UInt64(delay.attoseconds / 1_000_000_000)
  }()

  /// No more bytes came: takes what is pending as typed (a lone Esc is Esc; Esc then `[` or
  /// `O` is Alt with that key) or drops it (a sequence or character cut short).
  public mutating func timeout() -> [InputEvent] {
    defer { pending.removeAll() }
    guard pending.first == 0x1B else { return [] }
    switch pending.count {
    case 1: return [.key(Key(.escape))]
    case 2 where pending[1] == 0x5B || pending[1] == 0x4F || pending[1] == 0x5F:
      return [.key(Key.char(Unicode.Scalar(pending[1]), .alt))]
    default: return []
    }
  }

  private enum Parsed {
    case incomplete
    /// An event (nil: bytes understood and ignored) and how many bytes it took.
    case event(InputEvent?, Int)
  }

  private static func parse(_ b: [UInt8], _ at: Int) -> Parsed {
    let byte = b[at]
    guard byte == 0x1B else { return plain(b, at) }
    guard at + 1 < b.count else { return .incomplete }
    switch b[at + 1] {
    case 0x5B: return csi(b, at)
    case 0x4F: return ss3(b, at)
    case 0x5F: return apc(b, at)
    case 0x1B:
      // Esc Esc: the first is a key of its own (pressed twice, or Alt+Esc in some terminals).
      return .event(.key(Key(.escape)), 1)
    default:
      // Esc then a key: that key with Alt (the legacy encoding of Alt).
      switch plain(b, at + 1) {
      case .incomplete: return .incomplete
      case .event(.key(let k), let n):
        return .event(.key(Key(k.code, k.modifiers.union(.alt))), n + 1)
      case .event(let other, let n): return .event(other, n + 1)
      }
    }
  }

  /// A byte that does not start an escape sequence: a control character or UTF-8 text.
  private static func plain(_ b: [UInt8], _ at: Int) -> Parsed {
    let byte = b[at]
    switch byte {
    case 0x0D, 0x0A: return .event(.key(Key(.enter)), 1)
    case 0x09: return .event(.key(Key(.tab)), 1)
    case 0x7F, 0x08: return .event(.key(Key(.backspace)), 1)
    case 0x00: return .event(.key(Key.char(" ", .ctrl)), 1)
    case 0x01...0x1A: return .event(.key(Key.char(Unicode.Scalar(byte + 0x60), .ctrl)), 1)
    case 0x1B: return .event(.key(Key(.escape)), 1)
    case 0x1C...0x1F:
      // Ctrl+\ ] ^ _
      return .event(.key(Key.char(Unicode.Scalar(byte + 0x40), .ctrl)), 1)
    case 0x20..<0x7F: return .event(.key(Key.char(Unicode.Scalar(byte))), 1)
    default: return utf8(b, at)
    }
  }

  /// An application program command, `ESC _ … ESC \\` (or BEL): what kitty answers to the
  /// graphics query, `Gi=31;OK` (or an error code after the `;`). Any other is skipped; one that
  /// runs on for 4 KiB without its end is skipped up to there.
  private static func apc(_ b: [UInt8], _ at: Int) -> Parsed {
    var i = at + 2
    while i < b.count {
      if b[i] == 0x07 || (b[i] == 0x1B && i + 1 < b.count && b[i + 1] == 0x5C) {
        let body = String(decoding: b[(at + 2)..<i], as: UTF8.self)
        let length = i - at + (b[i] == 0x07 ? 1 : 2)
        guard body.hasPrefix("G"), let semicolon = body.firstIndex(of: ";") else {
          return .event(nil, length)
        }
        let keys = body[body.index(after: body.startIndex)..<semicolon].split(separator: ",")
        guard keys.contains("i=31") else { return .event(nil, length) }
        return .event(.graphicsProtocol(body[body.index(after: semicolon)...] == "OK"), length)
      }
      if b[i] == 0x1B && i + 1 == b.count { return .incomplete }
      i += 1
    }
    return b.count - at > 4_096 ? .event(nil, b.count - at) : .incomplete
  }

  private static func utf8(_ b: [UInt8], _ at: Int) -> Parsed {
    let lead = b[at]
    let length: Int
    switch lead {
    case 0xC2...0xDF: length = 2
    case 0xE0...0xEF: length = 3
    case 0xF0...0xF4: length = 4
    default: return .event(nil, 1)  // a stray continuation byte or an invalid lead: skip it
    }
    guard at + length <= b.count else {
      // Wait for the rest, unless what came already cannot be the rest.
      for i in (at + 1)..<b.count where b[i] & 0xC0 != 0x80 { return .event(nil, 1) }
      return .incomplete
    }
    for i in (at + 1)..<(at + length) where b[i] & 0xC0 != 0x80 { return .event(nil, 1) }
    var value = UInt32(lead) & (0xFF >> (length + 1))
    for i in (at + 1)..<(at + length) { value = value << 6 | UInt32(b[i] & 0x3F) }
    guard let scalar = Unicode.Scalar(value) else { return .event(nil, length) }
    return .event(.key(Key.char(scalar)), length)
  }

  /// `ESC O x`: cursor keys in application mode, F1–F4, keypad Enter.
  private static func ss3(_ b: [UInt8], _ at: Int) -> Parsed {
    guard at + 2 < b.count else { return .incomplete }
    let code: Key.Code? =
      switch b[at + 2] {
      case 0x41: .up
      case 0x42: .down
      case 0x43: .right
      case 0x44: .left
      case 0x48: .home
      case 0x46: .end
      case 0x50: .function(1)
      case 0x51: .function(2)
      case 0x52: .function(3)
      case 0x53: .function(4)
      case 0x4D: .enter
      default: nil
      }
    return .event(code.map { .key(Key($0)) }, 3)
  }

  /// `ESC [ parameters final`.
  private static func csi(_ b: [UInt8], _ at: Int) -> Parsed {
    var i = at + 2
    // The Linux console's F1–F5: ESC [ [ A … E.
    if i < b.count, b[i] == 0x5B {
      guard i + 1 < b.count else { return .incomplete }
      let f = Int(b[i + 1]) - 0x40
      return .event((1...5).contains(f) ? .key(Key(.function(f))) : nil, 4)
    }
    while i < b.count, (0x20...0x3F).contains(b[i]) { i += 1 }
    guard i < b.count else {
      // A sequence cannot be longer than this; more means garbage: drop the Esc.
      return i - at > 64 ? .event(nil, 1) : .incomplete
    }
    let final = b[i]
    let length = i - at + 1
    guard (0x40...0x7E).contains(final) else { return .event(nil, length) }
    let parameters = String(decoding: b[(at + 2)..<i], as: UTF8.self)
    return .event(csiEvent(parameters, final: final), length)
  }

  private static func csiEvent(_ parameters: String, final: UInt8) -> InputEvent? {
    if parameters.hasPrefix("?") {
      let rest = parameters.dropFirst()
      switch final {
      case 0x75: return .keyboardProtocol(flags: Int(rest) ?? 0)  // CSI ? flags u
      case 0x63:  // CSI ? class ; feature … c
        let fields = rest.split(separator: ";").map { Int($0) }
        // A VT100's answer (`?1;2c`) gives option bits after the class, not features (tmux
        // answers so, with 4 when it draws sixels itself: those terminals get blocks).
        let sixel = (fields.first.flatMap { $0 } ?? 0) >= 61 && fields.dropFirst().contains(4)
        return .deviceAttributes(sixel: sixel)
      default: return nil
      }
    }
    // Private parameters ('<' mouse, '>' and '=' replies): not keys.
    guard parameters.first.map({ !"<=>".contains($0) }) ?? true else { return nil }
    if final == 0x74 {  // t: a window report; the cell size's is `6 ; height ; width`
      let numbers = parameters.split(separator: ";").map { Int($0) }
      guard numbers.count == 3, numbers[0] == 6, let h = numbers[1], let w = numbers[2],
        (1...1_000).contains(h), (1...1_000).contains(w)
      else { return nil }
      return .cellSize(width: w, height: h)
    }
    // Fields by ';', sub-fields by ':'; only the first sub-field of each matters here, except
    // the event type after the modifiers.
    let fields = parameters.split(separator: ";", omittingEmptySubsequences: false).map {
      $0.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
    }
    let number = fields.first?.first.flatMap { $0 } ?? 1
    let modifierField = fields.count > 1 ? fields[1] : []
    let modifierValue = modifierField.first.flatMap { $0 } ?? 1
    let eventType = modifierField.count > 1 ? modifierField[1] ?? 1 : 1
    if eventType == 3 { return nil }  // a release, when the terminal reports them
    // Only Shift, Alt, Ctrl and Super: Caps Lock and Num Lock must not change what a key means.
    let modifiers = Key.Modifiers(rawValue: max(0, modifierValue - 1) & 0b1111)
    let code: Key.Code?
    switch final {
    case 0x75: code = kittyCode(number)  // u
    case 0x7E: code = tildeCode(number)  // ~
    case 0x41: code = .up
    case 0x42: code = .down
    case 0x43: code = .right
    case 0x44: code = .left
    case 0x48: code = .home
    case 0x46: code = .end
    case 0x50: code = .function(1)
    case 0x51: code = .function(2)
    case 0x52: code = .function(3)
    case 0x53: code = .function(4)
    case 0x5A: return .key(Key(.tab, modifiers.union(.shift)))  // CSI Z: Shift+Tab
    default: code = nil  // focus reports, cursor reports, keypad Begin, ...
    }
    return code.map { .key(Key($0, modifiers)) }
  }

  /// `CSI number ~`.
  private static func tildeCode(_ n: Int) -> Key.Code? {
    switch n {
    case 1, 7: .home
    case 2: .insert
    case 3: .delete
    case 4, 8: .end
    case 5: .pageUp
    case 6: .pageDown
    case 11...15: .function(n - 10)
    case 17...21: .function(n - 11)
    case 23...26: .function(n - 12)
    case 28, 29: .function(n - 13)
    case 31...34: .function(n - 14)
    default: nil
    }
  }

  /// The kitty protocol's key numbers: a Unicode code point, or a private-use number for keys
  /// that type nothing.
  private static func kittyCode(_ n: Int) -> Key.Code? {
    switch n {
    case 27: return .escape
    case 13: return .enter
    case 9: return .tab
    case 127, 8: return .backspace
    case 57376...57398: return .function(n - 57376 + 13)
    case 57399...57408: return .character(Unicode.Scalar(UInt8(0x30 + n - 57399)))  // KP_0…9
    case 57409: return .character(".")
    case 57410: return .character("/")
    case 57411: return .character("*")
    case 57412: return .character("-")
    case 57413: return .character("+")
    case 57414: return .enter
    case 57415: return .character("=")
    case 57417: return .left
    case 57418: return .right
    case 57419: return .up
    case 57420: return .down
    case 57421: return .pageUp
    case 57422: return .pageDown
    case 57423: return .home
    case 57424: return .end
    case 57425: return .insert
    case 57426: return .delete
    default:
      if let media = MediaKey(rawValue: n) { return .media(media) }
      // Other private-use numbers: Caps Lock, modifier keys on their own, ... Not ours.
      if (57344...63743).contains(n) { return nil }
      // A number from the terminal may be anything: past UInt32 it is no key (it trapped).
      guard n >= 0x20, n != 0x7F, let code = UInt32(exactly: n), let scalar = Unicode.Scalar(code)
      else { return nil }
      return .character(scalar)
    }
  }
}
