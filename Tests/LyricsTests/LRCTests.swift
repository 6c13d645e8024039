import Testing

@testable import Lyrics

/// LRC as found in the wild, and the line sung at a time.
@Suite struct LRCTests {
  let source = Lyrics.Source.file("/music/a.lrc")

  func parse(_ text: String) throws -> Lyrics {
    try #require(LRC.parse(text: text, source: source))
  }

  @Test func stampsGiveLinesInTimeOrder() throws {
    let lyrics = try parse(
      """
      [ti:Song]
      [ar:Somebody]
      [al:Record]
      [00:20.50]Second
      [00:10.00]First
      [01:02.345]Third
      """)
    #expect(lyrics.isSynced)
    #expect(lyrics.lines.map(\.text) == ["First", "Second", "Third"])
    #expect(lyrics.lines.map(\.time) == [10, 20.5, 62.345])
    #expect(lyrics.title == "Song")
    #expect(lyrics.artist == "Somebody")
    #expect(lyrics.album == "Record")
  }

  @Test func severalStampsOnALineRepeatIt() throws {
    let lyrics = try parse("[00:05.00]Verse\n[00:10.00][00:30.00]Chorus\n[00:20.00]Verse two")
    #expect(lyrics.lines.map(\.text) == ["Verse", "Chorus", "Verse two", "Chorus"])
    #expect(lyrics.lines.map(\.time) == [5, 10, 20, 30])
  }

  @Test func everyStampFormInTheWild() {
    #expect(LRC.time("01:02") == 62)
    #expect(LRC.time("01:02.5") == 62.5)
    #expect(LRC.time("01:02.50") == 62.5)
    #expect(LRC.time("01:02.500") == 62.5)
    #expect(LRC.time("01:02:50") == 62.5)
    #expect(LRC.time("1:02:03.50") == 3723.5)
    #expect(LRC.time(" 00:01.00 ") == 1)
    #expect(LRC.time("ar:Someone") == nil)
    #expect(LRC.time("00:") == nil)
    #expect(LRC.time("0a:10") == nil)
    #expect(LRC.time("00:10.") == nil)
  }

  @Test func theOffsetMovesEveryStampAndNothingBeforeTheStart() throws {
    // A positive offset brings the lines sooner.
    let sooner = try parse("[offset:+500]\n[00:10.00]A\n[00:00.20]B")
    #expect(sooner.lines.map(\.time) == [0, 9.5])
    let later = try parse("[offset:-250]\n[00:10.00]<00:10.00>A <00:10.50>b")
    #expect(later.lines[0].time == 10.25)
    #expect(later.lines[0].words.map(\.time) == [10.25, 10.75])
  }

  @Test func enhancedWordStampsGiveWords() throws {
    let lyrics = try parse("[00:15.30]<00:15.30>Each <00:15.80>word <00:16.10>timed<00:17.00>")
    let line = lyrics.lines[0]
    #expect(line.text == "Each word timed")
    #expect(line.words.map(\.text) == ["Each ", "word ", "timed"])
    #expect(line.words.map(\.time) == [15.3, 15.8, 16.1])
    #expect(lyrics.wordsSung(inLine: 0, at: 15.0) == 0)
    #expect(lyrics.wordsSung(inLine: 0, at: 15.9) == 2)
    #expect(lyrics.wordsSung(inLine: 0, at: 99) == 3)
    // Text before the first word stamp is sung from the line's own time.
    let lead = try parse("[00:01.00]Oh <00:02.00>yes")
    #expect(lead.lines[0].words.map(\.text) == ["Oh ", "yes"])
    #expect(lead.lines[0].words.map(\.time) == [1, 2])
    // A line sung twice has its words moved along with it.
    let twice = try parse("[00:01.00][00:11.00]<00:01.00>a <00:01.50>b")
    #expect(twice.lines[1].words.map(\.time) == [11, 11.5])
  }

  @Test func emptyLinesAndStampsWithoutText() throws {
    let lyrics = try parse(
      "\n[00:00.00]\n[00:01.00]One\n\n[00:05.00]\n[00:09.00]Two\nno stamp here\n")
    // The break at 0:00 is dropped; the one at 0:05 ends "One"; the unstamped line is left out.
    #expect(lyrics.lines.map(\.text) == ["One", "", "Two"])
    #expect(lyrics.lineIndex(at: 6) == 1)
    #expect(LRC.parse(text: "[00:01.00]\n[ar:x]\n", source: source) == nil)
    #expect(LRC.parse(text: "\n \n", source: source) == nil)
  }

  @Test func bracketsInTheTextStay() throws {
    let lyrics = try parse("[00:01.00]Hey [echo] hey\n[00:02.00][Chorus]")
    #expect(lyrics.lines.map(\.text) == ["Hey [echo] hey", "[Chorus]"])
  }

  @Test func withoutStampsTheLyricsAreUnsynced() throws {
    let lyrics = try parse("[ar:Someone]\n\nFirst line\n\nSecond verse\n\n")
    #expect(!lyrics.isSynced)
    #expect(lyrics.lines.map(\.text) == ["First line", "", "Second verse"])
    #expect(lyrics.lines.allSatisfy { $0.time == nil })
    #expect(lyrics.lineIndex(at: 10) == nil)
  }

  @Test func theLineSungIsTheLastWhoseTimeHasCome() throws {
    let lyrics = try parse("[00:10.00]A\n[00:20.00]B\n[00:20.00]C\n[00:30.00]D")
    #expect(lyrics.lineIndex(at: 0) == nil)
    #expect(lyrics.lineIndex(at: 9.99) == nil)
    #expect(lyrics.lineIndex(at: 10) == 0)
    #expect(lyrics.lineIndex(at: 25) == 2)
    #expect(lyrics.lineIndex(at: 1000) == 3)
    // Random times against a straight search.
    for _ in 0..<1000 {
      let t = Double.random(in: -5...40)
      let straight = lyrics.lines.lastIndex { ($0.time ?? 0) <= t }
      #expect(lyrics.lineIndex(at: t) == straight)
    }
  }

  // MARK: Bytes

  @Test func aByteOrderMarkCRLFAndCRAreRead() throws {
    let utf8 = [0xEF, 0xBB, 0xBF] + Array("[00:01.00]Zoë\r\n[00:02.00]Two\r".utf8)
    let a = try #require(LRC.parse(utf8, source: source))
    #expect(a.lines.map(\.text) == ["Zoë", "Two"])
    var utf16: [UInt8] = [0xFF, 0xFE]
    for unit in "[00:01.00]Ça va\r\n[00:03.00]ねこ".utf16 {
      utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
    }
    let b = try #require(LRC.parse(utf16, source: source))
    #expect(b.lines.map(\.text) == ["Ça va", "ねこ"])
    var bigEndian: [UInt8] = [0xFE, 0xFF]
    for unit in "[00:01.00]Big".utf16 { bigEndian += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
    #expect(LRC.parse(bigEndian, source: source)?.lines.first?.text == "Big")
  }

  @Test func textThatIsNotUTF8IsWindows1252() throws {
    // "Café ’92" in Windows-1252: é is 0xE9, the curly apostrophe 0x92.
    let bytes = Array("[00:01.00]Caf".utf8) + [0xE9, 0x20, 0x92] + Array("92".utf8)
    let lyrics = try #require(LRC.parse(bytes, source: source))
    #expect(lyrics.lines[0].text == "Café \u{2019}92")
  }

  @Test func theTextAndLRCForms() throws {
    let lyrics = try parse("[00:01.00]One\n[01:02.50]<01:02.50>Two <01:03.00>words")
    #expect(lyrics.plainText == "One\nTwo words")
    #expect(lyrics.lrcText == "[00:01.00]One\n[01:02.50]<01:02.50>Two <01:03.00>words")
    #expect(try parse(lyrics.lrcText).lines == lyrics.lines)
  }

  @Test func randomBytesNeverCrashAndAlwaysGiveOrderedLines() {
    let pieces = [
      "[00:01.00]", "[0", ":", "]", "<00:02.00>", "<", ">", "text ", "\n", "\r\n", "[offset:",
      "-100", "[ar:", "[99:99.99]", "\u{0}", "ü", "[", "word", "\r",
    ]
    for _ in 0..<2000 {
      var text = ""
      for _ in 0..<Int.random(in: 0...30) { text += pieces.randomElement() ?? "" }
      guard let lyrics = LRC.parse(Array(text.utf8), source: source) else { continue }
      #expect(!lyrics.lines.isEmpty)
      if lyrics.isSynced {
        let times = lyrics.lines.compactMap(\.time)
        #expect(times == times.sorted())
        #expect(times.allSatisfy { $0 >= 0 })
      }
    }
  }

  // MARK: SYLT

  @Test func syltEntriesAreLinesOrSyllables() {
    let lines = Lyrics(
      synced: [(2000, "Second"), (1000, "First")], source: .tag("SYLT"))
    #expect(lines.lines.map(\.text) == ["First", "Second"])
    #expect(lines.lines.map(\.time) == [1, 2])
    // Syllables, each line's first starting with a line break.
    let syllables = Lyrics(
      synced: [(1000, "\nHel"), (1200, "lo "), (1500, "world"), (3000, "\nBye")],
      source: .tag("SYLT"))
    #expect(syllables.lines.map(\.text) == ["Hello world", "Bye"])
    #expect(syllables.lines[0].words.map(\.time) == [1, 1.2, 1.5])
    #expect(syllables.lines[1].words.isEmpty)
    // Or ending with one.
    let trailing = Lyrics(
      synced: [(1000, "Hel"), (1200, "lo\n"), (3000, "Bye\n")], source: .tag("SYLT"))
    #expect(trailing.lines.map(\.text) == ["Hello", "Bye"])
  }
}
