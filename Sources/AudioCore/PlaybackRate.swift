/// How fast a recording plays: seconds of the file per second heard (at 1.5× an hour-long
/// episode is heard in 40 minutes), with the pitch kept. From 0.5× to 3×, held in hundredths so
/// that the steps, what is shown and the arithmetic agree exactly (no 1.1 that is 1.0999…).
public struct PlaybackRate: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The rate in hundredths: 150 is 1.5×.
  public let hundredths: Int

  /// 0.5×: slower, speech drags into stretched vowels and doubled syllables.
  public static let slowest = PlaybackRate(checked: 50)
  /// 3×: about as fast as a practised listener follows speech; the stretcher is measured to it.
  public static let fastest = PlaybackRate(checked: 300)
  /// 1×: the recording as made.
  public static let normal = PlaybackRate(checked: 100)

  /// The speeds `next` and `previous` move through. A change of speed is felt in proportion
  /// (1.1× after 1× is as big a step as 2.2× after 2×), so each step is a tenth or so of the
  /// speed, as the audiobook and podcast apps step by tenths near 1× and by halves near 3×:
  /// fine where listeners settle (0.8× to 1.5×), coarser beyond it, each step 7 % to 20 %
  /// (0.5× to 0.6× excepted). From 1× to 2× is seven presses. Other speeds (1.25×, 1.33×) are
  /// typed.
  public static let steps: [PlaybackRate] = [
    50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 175, 200, 250, 300,
  ].map(PlaybackRate.init(checked:))

  private init(checked hundredths: Int) {
    precondition((50...300).contains(hundredths), "a rate in hundredths from 50 to 300")
    self.hundredths = hundredths
  }

  /// `value` rounded to hundredths and brought into 0.5…3 (nan is 1×).
  public init(clamping value: Double) {
    guard !value.isNaN else {
      self = .normal
      return
    }
    let h = (min(max(value, 0.5), 3) * 100).rounded()
    self.init(checked: Int(h))
  }

  /// `hundredths` brought into 50…300.
  public init(clampingHundredths hundredths: Int) {
    self.init(checked: min(max(hundredths, 50), 300))
  }

  /// The rate as a multiplier (1.5 for 1.5×).
  public var value: Double { Double(hundredths) / 100 }

  /// Whether this is 1×, where nothing needs stretching.
  public var isNormal: Bool { hundredths == 100 }

  /// The first step faster than this rate; the fastest stays.
  public var next: PlaybackRate { Self.steps.first { $0 > self } ?? .fastest }

  /// The first step slower than this rate; the slowest stays.
  public var previous: PlaybackRate { Self.steps.last { $0 < self } ?? .slowest }

  public static func < (a: PlaybackRate, b: PlaybackRate) -> Bool { a.hundredths < b.hundredths }

  /// "1.5×", "1×", "0.75×": the fewest digits that say it.
  public var description: String {
    let whole = hundredths / 100
    let cents = hundredths % 100
    if cents == 0 { return "\(whole)×" }
    if cents % 10 == 0 { return "\(whole).\(cents / 10)×" }
    return "\(whole).\(cents < 10 ? "0" : "")\(cents)×"
  }

  // MARK: Time in the file and time heard

  /// File frames covered by `heardFrames` frames heard at this rate, rounded.
  public func fileFrames(heardFrames: Int) -> Int {
    Self.divideRounded(heardFrames * hundredths, by: 100)
  }

  /// Frames heard while `fileFrames` frames of the file play at this rate, rounded.
  public func heardFrames(fileFrames: Int) -> Int {
    Self.divideRounded(fileFrames * 100, by: hundredths)
  }

  /// Seconds of the file covered by `heardFrames` frames heard at `sampleRate`.
  public func fileSeconds(heardFrames: Int, sampleRate: Int) -> Double {
    Double(heardFrames) * value / Double(sampleRate)
  }

  /// Seconds it takes to hear `fileSeconds` of the file (what is left of an episode, say).
  public func heardSeconds(fileSeconds: Double) -> Double { fileSeconds / value }

  /// a / b rounded to the nearest, halves away from zero; b > 0.
  private static func divideRounded(_ a: Int, by b: Int) -> Int {
    a >= 0 ? (a + b / 2) / b : -((-a + b / 2) / b)
  }

  // MARK: Speeds as people type them

  /// A speed that cannot be played, with what was typed.
  public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
      /// Not a number (nor a number with "x" or "%").
      case notASpeed
      /// Below 0.5×.
      case tooSlow
      /// Above 3×.
      case tooFast
    }
    public let kind: Kind
    /// What was typed.
    public let text: String

    public init(_ kind: Kind, text: String) {
      self.kind = kind
      self.text = text
    }

    /// One line, naming what was typed and why it will not do.
    public var description: String {
      switch kind {
      case .notASpeed: "speed '\(text)' is not a speed; write it as 1.5, 1.5x or 150%"
      case .tooSlow: "speed '\(text)' is too slow; \(PlaybackRate.slowest) is the slowest"
      case .tooFast: "speed '\(text)' is too fast; \(PlaybackRate.fastest) is the fastest"
      }
    }
  }

  /// Reads a speed as people type it: "1.5", "1.5x", "1.5×", "150%", "1,5" (a decimal comma),
  /// spaces around allowed; rounded to hundredths ("1.333" is 1.33×). Speeds outside 0.5…3 are
  /// refused, not clamped: the listener is told rather than given a speed they did not ask for.
  public init(parsing text: String) throws(ParseError) {
    var body = Substring(text).drop(while: \.isWhitespace)
    while body.last?.isWhitespace == true { body = body.dropLast() }
    var scale = 1.0
    if let last = body.last, last == "x" || last == "X" || last == "×" {
      body = body.dropLast()
    } else if body.last == "%" {
      body = body.dropLast()
      scale = 0.01
    }
    while body.last?.isWhitespace == true { body = body.dropLast() }
    // Digits and one decimal mark only: Double(_:) would also take "nan", "inf", "1e1", "0x1p0".
    let marks = body.filter { $0 == "." || $0 == "," }.count
    guard marks <= 1, body.contains(where: \.isASCIIDigit),
      body.allSatisfy({ $0.isASCIIDigit || $0 == "." || $0 == "," }),
      let number = Double(String(body.map { $0 == "," ? "." : $0 }))
    else { throw ParseError(.notASpeed, text: text) }
    let h = (number * scale * 100).rounded()
    guard h >= 50 else { throw ParseError(.tooSlow, text: text) }
    guard h <= 300 else { throw ParseError(.tooFast, text: text) }
    self.init(checked: Int(h))
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
