/// Text folded for searching: lower case, accents and other marks gone, letters that are two
/// in English written as two ("ß" → "ss", "æ" → "ae"), so that "zoe" finds "Zoë" and "sigur
/// ros" finds "Sigur Rós" (issue 13). Latin letters from Latin-1 to Latin Extended-B fold to
/// their base; combining marks (as in decomposed text) are dropped; other scripts stay as they
/// are, lower-cased.
public enum SearchText {
  /// `text` folded.
  public static func folded(_ text: String) -> String {
    var out = String.UnicodeScalarView()
    for scalar in text.lowercased().unicodeScalars {
      if (0x300...0x36F).contains(scalar.value) { continue }  // combining marks
      if scalar.value >= 0xC0, let plain = table[Character(scalar)] {
        out.append(contentsOf: plain.unicodeScalars)
      } else {
        out.append(scalar)
      }
    }
    return String(out)
  }

  /// Whether `text` holds `query`, both folded (`query` folded already, for a loop over rows).
  public static func contains(_ text: String?, foldedQuery query: String) -> Bool {
    guard let text else { return false }
    return folded(text).contains(query)
  }

  private static let table: [Character: String] = [
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
    "ŷ": "y", "ź": "z", "ż": "z", "ž": "z", "ơ": "o", "ư": "u", "ǎ": "a", "ǐ": "i", "ǒ": "o",
    "ǔ": "u", "ǖ": "u", "ǘ": "u", "ǚ": "u", "ǜ": "u", "ǟ": "a", "ǡ": "a", "ǧ": "g", "ǩ": "k",
    "ǫ": "o", "ǭ": "o", "ǰ": "j", "ǵ": "g", "ǹ": "n", "ǻ": "a", "ȁ": "a", "ȃ": "a", "ȅ": "e",
    "ȇ": "e", "ȉ": "i", "ȋ": "i", "ȍ": "o", "ȏ": "o", "ȑ": "r", "ȓ": "r", "ȕ": "u", "ȗ": "u",
    "ș": "s", "ț": "t", "ȟ": "h", "ȧ": "a", "ȩ": "e", "ȫ": "o", "ȭ": "o", "ȯ": "o", "ȱ": "o",
    "ȳ": "y",
  ]
}
