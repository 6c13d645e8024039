import MediaFiles
import Platform
import Testing
import UserText

/// Names and tags reach terminals and output lines with their control characters shown, never
/// acted on.
@Suite(.timeLimit(.minutes(2))) struct TerminalTextTests {
  @Test(arguments: [
    ("plain", "plain"),
    ("Zoë — 夜行列車 🎵", "Zoë — 夜行列車 🎵"),
    ("\u{1B}]0;pwned\u{07}title", "\\x1b]0;pwned\\x07title"),
    ("\u{1B}[2J", "\\x1b[2J"),
    ("two\nlines", "two\\nlines"),
    ("tab\there\r", "tab\\there\\r"),
    ("del\u{7F}", "del\\x7f"),
    ("c1 \u{9B}31m", "c1 \\u{9b}31m"),
    ("nul\u{0}", "nul\\x00"),
    ("a\\b", "a\\b"),
  ])
  func controlCharactersAreShownEscaped(text: String, shown: String) {
    #expect(text.escapingControlCharacters == shown)
  }

  @Test func nothingAControlCharacterIsLeft() {
    let all = String(String.UnicodeScalarView((0...0x9F).compactMap(Unicode.Scalar.init)))
    let shown = all.escapingControlCharacters
    #expect(
      !shown.unicodeScalars.contains { $0.value < 0x20 || ($0.value >= 0x7F && $0.value <= 0x9F) })
  }

  /// Times as people type them for a seek: seconds, minutes:seconds, hours too, relative.
  @Test func typedTimesAreReadAsPeopleWriteThem() {
    #expect(TypedTime("90") == TypedTime(seconds: 90, isRelative: false))
    #expect(TypedTime("1:30")?.seconds == 90)
    #expect(TypedTime("1:02:03")?.seconds == 3_723)
    #expect(TypedTime("+1:00") == TypedTime(seconds: 60, isRelative: true))
    #expect(TypedTime("-0:15") == TypedTime(seconds: -15, isRelative: true))
    #expect(TypedTime("12.5")?.seconds == 12.5)
    for bad in ["1:75", "abc", "1:2:3:4", "", ":", "-", "1:-5", "inf"] {
      #expect(TypedTime(bad) == nil, "\(bad)")
    }
  }

  /// Search folds case and accents: "zoe" finds "Zoë", "sigur ros" finds "Sigur Rós", decomposed
  /// text too; other scripts stay.
  @Test func searchFoldsCaseAndAccents() {
    #expect(SearchText.folded("Zoë") == "zoe")
    #expect(SearchText.folded("Sigur Rós") == "sigur ros")
    #expect(SearchText.folded("Straße, Æther, Øresund, Łódź") == "strasse, aether, oresund, lodz")
    #expect(SearchText.folded("Zoe\u{0308}") == "zoe", "a decomposed ë")
    #expect(SearchText.folded("Björk 東京 坂本") == "bjork 東京 坂本", "scripts without case stay")
    #expect(SearchText.contains("Björk — Jóga", foldedQuery: "bjork"))
    #expect(!SearchText.contains(nil, foldedQuery: "x"))
  }

  /// Beyond Latin-1 and Latin Extended: Vietnamese (Latin Extended Additional), Greek with its
  /// tonos and final sigma, polytonic Greek, Cyrillic's ё, ligatures, full-width forms, and
  /// the vowel points of Hebrew and Arabic. Typed either way, folded to the same text.
  @Test func searchFoldsEveryScriptsAccents() {
    let table: [(text: String, typed: String, folded: String)] = [
      ("Nguyễn Văn Tý", "nguyen van ty", "nguyen van ty"),
      ("Việt Nam", "VIET NAM", "viet nam"),
      ("Μίκης Θεοδωράκης", "ΜΙΚΗΣ θεοδωρακης", "μικησ θεοδωρακησ"),
      ("Ωραίο τραγούδι", "ωραιο", "ωραιο τραγουδι"),
      ("Ἀθῆναι", "αθηναι", "αθηναι"),
      ("\u{1F71}λφα", "άλφα", "αλφα"),  // ά with oxia, a singleton of ά with tonos
      ("Ёлка", "елка", "елка"),
      ("Кино", "кино", "кино"),
      ("ﬁnal ﬂow", "final flow", "final flow"),
      ("ＡＢＣ１２３", "abc123", "abc123"),
      ("ǅoković", "dzokovic", "dzokovic"),
      ("שָׁלוֹם", "שלום", "שלום"),
      ("مُوسِيقَى", "موسيقى", "موسيقى"),
      ("Đặng Thái Sơn", "dang thai son", "dang thai son"),
      ("Çağ Erçağ Ağır", "cag ercag agir", "cag ercag agir"),
      ("İSTANBUL Sokakları", "istanbul sokaklari", "istanbul sokaklari"),
      ("ΣΟΦΙΑ Ǆ", "σοφια dz", "σοφια dz"),
    ]
    for (text, typed, folded) in table {
      #expect(SearchText.folded(text) == folded, "\(text)")
      #expect(SearchText.contains(text, foldedQuery: SearchText.folded(typed)), "'\(typed)'")
    }
  }
}

/// Folded rows searched as bytes (`FoldedRows`): the library's search table and the interface's
/// filters.
@Suite struct FoldedRowsTests {
  /// Folded into bytes as into a string, for every script the folding knows.
  @Test func bytesAreFoldedAsTextIs() {
    for text in [
      "Zoë", "Sigur Rós", "Straße, Æther", "Zoe\u{0308}", "Björk 東京 坂本", "Nguyễn Văn Tý",
      "Μίκης Θεοδωράκης", "Ἀθῆναι", "Ёлка", "ﬁnal ﬂow", "ＡＢＣ１２３", "ǅoković", "שָׁלוֹם",
      "مُوسِيقَى", "İSTANBUL", "", "Sigur Rós – Hoppípolla 🎵", "ABCxyz@[`{",
    ] {
      var bytes: [UInt8] = []
      SearchText.fold(text, into: &bytes)
      #expect(bytes == Array(SearchText.folded(text).utf8), "\(text)")
    }
  }

  /// Any text, folded into bytes as into a string: random scalars from ASCII, Latin, Greek,
  /// Cyrillic, combining marks, CJK and beyond the Basic Multilingual Plane.
  @Test func anyTextIsFoldedAsTextIs() {
    var rng = SystemRandomNumberGenerator()
    let ranges: [ClosedRange<UInt32>] = [
      0x20...0x7E, 0xC0...0x24F, 0x300...0x36F, 0x370...0x3FF, 0x400...0x4FF, 0x1E00...0x1FFF,
      0x3040...0x30FF, 0x4E00...0x4FFF, 0xFB00...0xFB06, 0xFF01...0xFF5E, 0x1F300...0x1F5FF,
    ]
    for _ in 0..<500 {
      var text = ""
      for _ in 0..<Int.random(in: 0...24, using: &rng) {
        let range = ranges.randomElement(using: &rng)!
        if let s = Unicode.Scalar(UInt32.random(in: range, using: &rng)) {
          text.unicodeScalars.append(s)
        }
      }
      var bytes: [UInt8] = [1, 2]
      SearchText.fold(text, into: &bytes)
      #expect(bytes == [1, 2] + Array(SearchText.folded(text).utf8), "\(text.debugDescription)")
      var fromSlice: [UInt8] = []
      SearchText.fold(text.dropFirst(0), into: &fromSlice)
      #expect(fromSlice == Array(SearchText.folded(text).utf8))
    }
  }

  private func table(_ rows: [[String]]) -> FoldedRows {
    var t = FoldedRows()
    for fields in rows {
      for f in fields { t.append(folding: f) }
      t.endRow()
    }
    return t
  }

  /// A word is found inside one field of a row, never across two fields or two rows; a row
  /// with no field is found by nothing; rows come in order.
  @Test func aWordIsFoundInsideOneField() {
    let t = table([["Zoë", "Keating"], [], ["Sigur Rós"], ["ros", "zoe"], ["Keat", "ing"]])
    #expect(t.count == 5)
    #expect(t.rows(containing: FoldedRows.phrase("zoe")) == [0, 3])
    #expect(t.rows(containing: FoldedRows.phrase("sigur ros")) == [2])
    #expect(t.rows(containing: FoldedRows.phrase("zoekeating")) == [])
    #expect(t.rows(containing: FoldedRows.phrase("keating")) == [0])
    #expect(t.rows(containing: FoldedRows.phrase("rós")) == [2, 3])
    #expect(t.rows(containing: []) == [0, 2, 3, 4], "an empty word: every row with a field")
    #expect(t.rows(containing: [0]) == [])
    #expect(t.rows([0, 1, 2, 3], containingAll: FoldedRows.words("ZOE ros")) == [3])
    #expect(t.rows([0, 2, 3], containingAll: FoldedRows.words("sigur  ros")) == [2])
    #expect(t.rows([0, 1, 2, 3, 4], containingAll: []) == [0, 2, 3, 4])
    #expect(FoldedRows().rows(containing: FoldedRows.phrase("a")) == [])
  }
}

/// A file name's bytes that are not UTF-8 (kept by `FileName`) reach a terminal as `\xNN`, not
/// as private-use characters a terminal would show as boxes.
@Suite struct RawByteDisplayTests {
  @Test func rawBytesShowAsHexEscapes() {
    let name = FileName.string(Array("caf".utf8) + [0xE9, 0xFF] + Array(" 2.flac".utf8))
    #expect(name.escapingControlCharacters == "caf\\xe9\\xff 2.flac")
    #expect(
      QueueLoader.title(fromPath: "/m/" + name).escapingControlCharacters == "caf\\xe9\\xff 2")
  }
}
