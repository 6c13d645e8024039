/// What a station says between the audio of a Shoutcast/Icecast stream (an ICY metadata
/// block): `StreamTitle='Artist - Title';StreamUrl='http://…';`, padded with NULs.
///
/// Stations send UTF-8 or, as often, Latin-1 (Windows-1252): bytes that are not valid UTF-8 are
/// read as Windows-1252, so that "Café" from an old encoder is not shown as "Caf�".
public struct ICYMetadata: Equatable, Sendable {
  /// The block's fields, by name as sent ("StreamTitle").
  public var fields: [String: String]

  public init(_ bytes: [UInt8]) {
    let trimmed = bytes.prefix { $0 != 0 }
    let text = Self.decode(Array(trimmed))
    fields = Self.parse(text)
  }

  /// What the station says is on now; nil when it says nothing (an empty title).
  public var streamTitle: String? {
    guard let t = fields["StreamTitle"] else { return nil }
    let trimmed = t.trimmingSpaces()
    return trimmed.isEmpty ? nil : trimmed
  }

  /// `name='value';…` pairs. A value runs to the first `';` after its opening quote (so that
  /// "Guns N' Roses" keeps its apostrophe), or to the end of the block; an unquoted value to
  /// the next `;`.
  static func parse(_ text: String) -> [String: String] {
    var fields: [String: String] = [:]
    var rest = Substring(text)
    while !rest.isEmpty {
      rest = rest.drop { $0 == ";" || $0 == " " }
      guard let eq = rest.firstIndex(of: "=") else { break }
      let name = String(rest[..<eq]).trimmingSpaces()
      var value = rest[rest.index(after: eq)...]
      if value.first == "'" {
        value = value.dropFirst()
        if let end = value.firstRange(of: "';") {
          fields[name] = String(value[..<end.lowerBound])
          rest = value[end.upperBound...]
        } else {
          // The last field: up to a closing quote at the very end, if there is one.
          fields[name] = String(value.last == "'" ? value.dropLast() : value)
          rest = ""
        }
      } else {
        let end = value.firstIndex(of: ";") ?? value.endIndex
        fields[name] = String(value[..<end])
        rest = value[end...]
      }
      if name.isEmpty { fields[name] = nil }
    }
    return fields
  }

  /// UTF-8 when the bytes are valid UTF-8, else Windows-1252.
  static func decode(_ bytes: [UInt8]) -> String {
    if let text = String(validating: bytes, as: UTF8.self) { return text }
    return String(String.UnicodeScalarView(bytes.map(windows1252)))
  }

  /// Splits "Artist - Title", the convention stations follow, at its first " - "; the whole as
  /// the title when there is no such separator or either side would be empty.
  public static func split(_ streamTitle: String) -> (artist: String?, title: String) {
    guard let dash = streamTitle.firstRange(of: " - ") else { return (nil, streamTitle) }
    let artist = String(streamTitle[..<dash.lowerBound]).trimmingSpaces()
    let title = String(streamTitle[dash.upperBound...]).trimmingSpaces()
    guard !artist.isEmpty, !title.isEmpty else { return (nil, streamTitle) }
    return (artist, title)
  }
}

/// Windows-1252's 0x80–0x9F where it differs from Latin-1 (C1 controls in Latin-1).
private let windows1252High: [UInt32] = [
  0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
  0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
  0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
]

private func windows1252(_ byte: UInt8) -> Unicode.Scalar {
  let value = (0x80...0x9F).contains(byte) ? windows1252High[Int(byte) - 0x80] : UInt32(byte)
  return Unicode.Scalar(value) ?? "?"
}

extension String {
  func trimmingSpaces() -> String {
    var s = Substring(self)
    while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
    while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
    return String(s)
  }
}
