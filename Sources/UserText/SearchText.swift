/// Text folded for searching: lower case, accents and other marks gone, letters that are two in
/// English written as two ("ß" → "ss", "æ" → "ae"), so that "zoe" finds "Zoë", "sigur ros" finds
/// "Sigur Rós", "nguyen" finds "Nguyễn" and "θεοδωρακης" finds "Θεοδωράκης". The letters of the
/// Latin, Greek and Cyrillic blocks (Latin and Greek Extended among them), the Latin ligatures and
/// the full-width ASCII forms fold to their base; combining marks (as in decomposed text, and
/// Hebrew's and Arabic's vowel points) are dropped; other scripts stay as they are, lower-cased.
///
/// What the library index holds is folded here: a change to the folding needs
/// `Library.schemaVersion` raised, so that existing indexes are folded again.
public enum SearchText {
  /// `text` folded.
  public static func folded(_ text: String) -> String {
    var out = String.UnicodeScalarView()
    fold(text) { out.append($0) }
    return String(out)
  }

  /// `text` folded, as scalars (name order compares them, `NameOrder`).
  public static func foldedScalars(_ text: String) -> [Unicode.Scalar] {
    var out: [Unicode.Scalar] = []
    out.reserveCapacity(text.utf8.count)
    fold(text) { out.append($0) }
    return out
  }

  /// `text` folded, in UTF-8, appended to `bytes` (`FoldedRows` searches bytes). Its ASCII,
  /// most of most tags, byte by byte; a longer character through its scalar.
  public static func fold(_ text: some StringProtocol, into bytes: inout [UInt8]) {
    func emit(_ scalar: Unicode.Scalar) {
      if scalar.value < 0x80 {
        bytes.append(UInt8(truncatingIfNeeded: scalar.value))
      } else {
        UTF8.encode(scalar) { bytes.append($0) }
      }
    }
    let start = bytes.count
    let done: Bool? = text.utf8.withContiguousStorageIfAvailable { utf8 in
      var i = 0
      while i < utf8.count {
        let lead = utf8[i]
        if lead < 0x80 {
          bytes.append(lead &- 65 < 26 ? lead | 0x20 : lead)
          i += 1
          continue
        }
        // A string's UTF-8 is valid: the lead byte says how long the character is.
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
        guard i + length <= utf8.count else { return false }
        var value = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for k in 1..<length { value = value << 6 | UInt32(utf8[i + k] & 0x3F) }
        guard let scalar = Unicode.Scalar(value) else { return false }
        foldScalar(scalar, emit)
        i += length
      }
      return true
    }
    if done == true { return }
    if done == false { bytes.removeSubrange(start...) }  // (never: a string's UTF-8 is valid)
    fold(text, emit)
  }

  /// Scalar by scalar, as `lowercased()` maps them, without its string for ASCII: a scan folds
  /// every track's tags, a rescan every folder's names (for their order).
  @inline(__always)
  private static func fold(_ text: some StringProtocol, _ emit: (Unicode.Scalar) -> Void) {
    for scalar in text.unicodeScalars { foldScalar(scalar, emit) }
  }

  @inline(__always)
  private static func foldScalar(_ scalar: Unicode.Scalar, _ emit: (Unicode.Scalar) -> Void) {
    let value = scalar.value
    if value < 0x80 {
      emit(value >= 65 && value <= 90 ? Unicode.Scalar(UInt8(value) | 0x20) : scalar)
      return
    }
    for lower in scalar.properties.lowercaseMapping.unicodeScalars {
      if isMark(lower.value) { continue }
      if let plain = table[lower] {
        for p in plain.unicodeScalars { emit(p) }
      } else {
        emit(lower)
      }
    }
  }

  /// Whether `text` holds `query`, both folded (`query` folded already, for a loop over rows).
  public static func contains(_ text: String?, foldedQuery query: String) -> Bool {
    guard let text else { return false }
    return folded(text).contains(query)
  }

  /// Combining marks: diacritical marks (and their supplement and extended blocks, for
  /// symbols, half marks), Hebrew points and accents, Arabic vowel signs.
  static func isMark(_ value: UInt32) -> Bool {
    switch value {
    case 0x300...0x36F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F,
      0x591...0x5C7, 0x64B...0x65F, 0x670:
      return true
    default:
      return false
    }
  }

  /// Each lower-case letter to what it folds to: made by scripts/make-fold-table (from
  /// Unicode's decompositions; it says which letters and why).
  private static let table: [Unicode.Scalar: String] = [
    "ß": "ss", "à": "a", "á": "a", "â": "a", "ã": "a", "ä": "a", "å": "a", "æ": "ae", "ç": "c",
    "è": "e", "é": "e", "ê": "e", "ë": "e", "ì": "i", "í": "i", "î": "i", "ï": "i", "ð": "d",
    "ñ": "n", "ò": "o", "ó": "o", "ô": "o", "õ": "o", "ö": "o", "ø": "o", "ù": "u", "ú": "u",
    "û": "u", "ü": "u", "ý": "y", "þ": "th", "ÿ": "y", "ā": "a", "ă": "a", "ą": "a", "ć": "c",
    "ĉ": "c", "ċ": "c", "č": "c", "ď": "d", "đ": "d", "ē": "e", "ĕ": "e", "ė": "e", "ę": "e",
    "ě": "e", "ĝ": "g", "ğ": "g", "ġ": "g", "ģ": "g", "ĥ": "h", "ħ": "h", "ĩ": "i", "ī": "i",
    "ĭ": "i", "į": "i", "ı": "i", "ĳ": "ij", "ĵ": "j", "ķ": "k", "ĺ": "l", "ļ": "l", "ľ": "l",
    "ŀ": "l", "ł": "l", "ń": "n", "ņ": "n", "ň": "n", "ŉ": "n", "ō": "o", "ŏ": "o", "ő": "o",
    "œ": "oe", "ŕ": "r", "ŗ": "r", "ř": "r", "ś": "s", "ŝ": "s", "ş": "s", "š": "s", "ţ": "t",
    "ť": "t", "ŧ": "t", "ũ": "u", "ū": "u", "ŭ": "u", "ů": "u", "ű": "u", "ų": "u", "ŵ": "w",
    "ŷ": "y", "ź": "z", "ż": "z", "ž": "z", "ſ": "s", "ơ": "o", "ư": "u", "ǆ": "dz", "ǉ": "lj",
    "ǌ": "nj", "ǎ": "a", "ǐ": "i", "ǒ": "o", "ǔ": "u", "ǖ": "u", "ǘ": "u", "ǚ": "u", "ǜ": "u",
    "ǟ": "a", "ǡ": "a", "ǣ": "ae", "ǧ": "g", "ǩ": "k", "ǫ": "o", "ǭ": "o", "ǯ": "ʒ", "ǰ": "j",
    "ǳ": "dz", "ǵ": "g", "ǹ": "n", "ǻ": "a", "ǽ": "ae", "ǿ": "o", "ȁ": "a", "ȃ": "a", "ȅ": "e",
    "ȇ": "e", "ȉ": "i", "ȋ": "i", "ȍ": "o", "ȏ": "o", "ȑ": "r", "ȓ": "r", "ȕ": "u", "ȗ": "u",
    "ș": "s", "ț": "t", "ȟ": "h", "ȧ": "a", "ȩ": "e", "ȫ": "o", "ȭ": "o", "ȯ": "o", "ȱ": "o",
    "ȳ": "y", "\u{374}": "ʹ", "ΐ": "ι", "ά": "α", "έ": "ε", "ή": "η", "ί": "ι", "ΰ": "υ",
    "ς": "σ", "ϊ": "ι", "ϋ": "υ", "ό": "ο", "ύ": "υ", "ώ": "ω", "ϐ": "β", "ϑ": "θ", "ϒ": "υ",
    "ϓ": "υ", "ϔ": "υ", "ϕ": "φ", "ϖ": "π", "ϰ": "κ", "ϱ": "ρ", "ϲ": "σ", "ϵ": "ε", "й": "и",
    "ѐ": "е", "ё": "е", "ѓ": "г", "ї": "і", "ќ": "к", "ѝ": "и", "ў": "у", "ѷ": "ѵ", "ӂ": "ж",
    "ӑ": "а", "ӓ": "а", "ӗ": "е", "ӛ": "ә", "ӝ": "ж", "ӟ": "з", "ӣ": "и", "ӥ": "и", "ӧ": "о",
    "ӫ": "ө", "ӭ": "э", "ӯ": "у", "ӱ": "у", "ӳ": "у", "ӵ": "ч", "ӹ": "ы", "ḁ": "a", "ḃ": "b",
    "ḅ": "b", "ḇ": "b", "ḉ": "c", "ḋ": "d", "ḍ": "d", "ḏ": "d", "ḑ": "d", "ḓ": "d", "ḕ": "e",
    "ḗ": "e", "ḙ": "e", "ḛ": "e", "ḝ": "e", "ḟ": "f", "ḡ": "g", "ḣ": "h", "ḥ": "h", "ḧ": "h",
    "ḩ": "h", "ḫ": "h", "ḭ": "i", "ḯ": "i", "ḱ": "k", "ḳ": "k", "ḵ": "k", "ḷ": "l", "ḹ": "l",
    "ḻ": "l", "ḽ": "l", "ḿ": "m", "ṁ": "m", "ṃ": "m", "ṅ": "n", "ṇ": "n", "ṉ": "n", "ṋ": "n",
    "ṍ": "o", "ṏ": "o", "ṑ": "o", "ṓ": "o", "ṕ": "p", "ṗ": "p", "ṙ": "r", "ṛ": "r", "ṝ": "r",
    "ṟ": "r", "ṡ": "s", "ṣ": "s", "ṥ": "s", "ṧ": "s", "ṩ": "s", "ṫ": "t", "ṭ": "t", "ṯ": "t",
    "ṱ": "t", "ṳ": "u", "ṵ": "u", "ṷ": "u", "ṹ": "u", "ṻ": "u", "ṽ": "v", "ṿ": "v", "ẁ": "w",
    "ẃ": "w", "ẅ": "w", "ẇ": "w", "ẉ": "w", "ẋ": "x", "ẍ": "x", "ẏ": "y", "ẑ": "z", "ẓ": "z",
    "ẕ": "z", "ẖ": "h", "ẗ": "t", "ẘ": "w", "ẙ": "y", "ẚ": "aʾ", "ẛ": "s", "ạ": "a", "ả": "a",
    "ấ": "a", "ầ": "a", "ẩ": "a", "ẫ": "a", "ậ": "a", "ắ": "a", "ằ": "a", "ẳ": "a", "ẵ": "a",
    "ặ": "a", "ẹ": "e", "ẻ": "e", "ẽ": "e", "ế": "e", "ề": "e", "ể": "e", "ễ": "e", "ệ": "e",
    "ỉ": "i", "ị": "i", "ọ": "o", "ỏ": "o", "ố": "o", "ồ": "o", "ổ": "o", "ỗ": "o", "ộ": "o",
    "ớ": "o", "ờ": "o", "ở": "o", "ỡ": "o", "ợ": "o", "ụ": "u", "ủ": "u", "ứ": "u", "ừ": "u",
    "ử": "u", "ữ": "u", "ự": "u", "ỳ": "y", "ỵ": "y", "ỷ": "y", "ỹ": "y", "ἀ": "α", "ἁ": "α",
    "ἂ": "α", "ἃ": "α", "ἄ": "α", "ἅ": "α", "ἆ": "α", "ἇ": "α", "ἐ": "ε", "ἑ": "ε", "ἒ": "ε",
    "ἓ": "ε", "ἔ": "ε", "ἕ": "ε", "ἠ": "η", "ἡ": "η", "ἢ": "η", "ἣ": "η", "ἤ": "η", "ἥ": "η",
    "ἦ": "η", "ἧ": "η", "ἰ": "ι", "ἱ": "ι", "ἲ": "ι", "ἳ": "ι", "ἴ": "ι", "ἵ": "ι", "ἶ": "ι",
    "ἷ": "ι", "ὀ": "ο", "ὁ": "ο", "ὂ": "ο", "ὃ": "ο", "ὄ": "ο", "ὅ": "ο", "ὐ": "υ", "ὑ": "υ",
    "ὒ": "υ", "ὓ": "υ", "ὔ": "υ", "ὕ": "υ", "ὖ": "υ", "ὗ": "υ", "ὠ": "ω", "ὡ": "ω", "ὢ": "ω",
    "ὣ": "ω", "ὤ": "ω", "ὥ": "ω", "ὦ": "ω", "ὧ": "ω", "ὰ": "α", "\u{1F71}": "α", "ὲ": "ε",
    "\u{1F73}": "ε", "ὴ": "η", "\u{1F75}": "η", "ὶ": "ι", "\u{1F77}": "ι", "ὸ": "ο",
    "\u{1F79}": "ο", "ὺ": "υ", "\u{1F7B}": "υ", "ὼ": "ω", "\u{1F7D}": "ω", "ᾀ": "α", "ᾁ": "α",
    "ᾂ": "α", "ᾃ": "α", "ᾄ": "α", "ᾅ": "α", "ᾆ": "α", "ᾇ": "α", "ᾐ": "η", "ᾑ": "η", "ᾒ": "η",
    "ᾓ": "η", "ᾔ": "η", "ᾕ": "η", "ᾖ": "η", "ᾗ": "η", "ᾠ": "ω", "ᾡ": "ω", "ᾢ": "ω", "ᾣ": "ω",
    "ᾤ": "ω", "ᾥ": "ω", "ᾦ": "ω", "ᾧ": "ω", "ᾰ": "α", "ᾱ": "α", "ᾲ": "α", "ᾳ": "α", "ᾴ": "α",
    "ᾶ": "α", "ᾷ": "α", "\u{1FBE}": "ι", "ῂ": "η", "ῃ": "η", "ῄ": "η", "ῆ": "η", "ῇ": "η",
    "ῐ": "ι", "ῑ": "ι", "ῒ": "ι", "\u{1FD3}": "ι", "ῖ": "ι", "ῗ": "ι", "ῠ": "υ", "ῡ": "υ",
    "ῢ": "υ", "\u{1FE3}": "υ", "ῤ": "ρ", "ῥ": "ρ", "ῦ": "υ", "ῧ": "υ", "ῲ": "ω", "ῳ": "ω",
    "ῴ": "ω", "ῶ": "ω", "ῷ": "ω", "ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl",
    "ﬅ": "st", "ﬆ": "st", "！": "!", "＂": "\"", "＃": "#", "＄": "$", "％": "%", "＆": "&", "＇": "'",
    "（": "(", "）": ")", "＊": "*", "＋": "+", "，": ",", "－": "-", "．": ".", "／": "/", "０": "0",
    "１": "1", "２": "2", "３": "3", "４": "4", "５": "5", "６": "6", "７": "7", "８": "8", "９": "9",
    "：": ":", "；": ";", "＜": "<", "＝": "=", "＞": ">", "？": "?", "＠": "@", "［": "[", "＼": "\\",
    "］": "]", "＾": "^", "＿": "_", "｀": "`", "ａ": "a", "ｂ": "b", "ｃ": "c", "ｄ": "d", "ｅ": "e",
    "ｆ": "f", "ｇ": "g", "ｈ": "h", "ｉ": "i", "ｊ": "j", "ｋ": "k", "ｌ": "l", "ｍ": "m", "ｎ": "n",
    "ｏ": "o", "ｐ": "p", "ｑ": "q", "ｒ": "r", "ｓ": "s", "ｔ": "t", "ｕ": "u", "ｖ": "v", "ｗ": "w",
    "ｘ": "x", "ｙ": "y", "ｚ": "z", "｛": "{", "｜": "|", "｝": "}", "～": "~",
  ]
}
