import Platform
import Testing

/// hark-tags writes each tag as one line of its record, by bytes: held to the reading by
/// `Character` it replaced (each tab or line break a space, spaces at the ends trimmed) on
/// thousands of random texts of tabs, breaks of every kind, spaces and letters of several
/// lengths in UTF-8.
@Suite struct OneLineTests {
  static func reference(_ text: String) -> String {
    var s = Substring(String(text.map { $0 == "\t" || $0.isNewline ? " " : $0 }))
    while s.first == " " { s = s.dropFirst() }
    while s.last == " " { s = s.dropLast() }
    return String(s)
  }

  static func bytes(_ text: String) -> [UInt8]? {
    var copy = text
    var out: [UInt8] = [9]  // what is there before is kept
    let kept = copy.withUTF8 { appendAsOneLine(UnsafeRawBufferPointer($0), to: &out) }
    #expect(out.first == 9)
    return kept ? Array(out.dropFirst()) : (out.count == 1 ? nil : [])
  }

  @Test func aTagIsOneLineAsByCharacter() {
    let pieces = [
      "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}", " ", "  ",
      "a", "Zoë", "坂本", "\u{2027}", "\u{C3}", "e\u{301}", "🎵", "\u{E2}",
    ]
    var rng = SystemRandomNumberGenerator()
    for _ in 0..<5_000 {
      let text = (0..<Int.random(in: 0...8, using: &rng)).map { _ in
        pieces.randomElement(using: &rng) ?? ""
      }.joined()
      let expected = Self.reference(text)
      let got = Self.bytes(text)
      if expected.isEmpty {
        #expect(got == nil, "\(Array(text.unicodeScalars))")
      } else {
        #expect(got == Array(expected.utf8), "\(Array(text.unicodeScalars))")
      }
    }
  }
}

/// A path as a table's key: equal, hashed and ordered by its bytes (the order SQLite's BINARY
/// collation gives the index's paths), on random paths of ASCII, Latin and CJK names, and of
/// the same text composed and decomposed (two files to the file system).
@Suite struct PathKeyTests {
  @Test func pathsCompareByTheirBytes() {
    let pieces = ["/", "a", "B", "é", "e\u{301}", "坂本", "0", "10", "2", " ", "~"]
    var rng = SystemRandomNumberGenerator()
    func path() -> String {
      (0..<Int.random(in: 0...6, using: &rng)).map { _ in
        pieces.randomElement(using: &rng) ?? ""
      }.joined()
    }
    for _ in 0..<5_000 {
      let a = path()
      let b = path()
      #expect((PathKey(a) < PathKey(b)) == Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)))
      #expect((PathKey(a) == PathKey(b)) == (Array(a.utf8) == Array(b.utf8)))
      if PathKey(a) == PathKey(b) { #expect(PathKey(a).hashValue == PathKey(b).hashValue) }
    }
    #expect(PathKey("é") != PathKey("e\u{301}"))
  }
}
