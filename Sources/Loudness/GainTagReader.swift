import Platform
import Glibc

/// Reads the ReplayGain tags of the files libsndfile plays, which libsndfile does not expose:
/// FLAC's Vorbis comments (after an ID3v2 header, if a tagger put one there), Ogg Vorbis and Opus
/// comment headers (Opus's R128 gains too), MP3's ID3v2 TXXX frames (v2.3 and v2.4), and APEv2
/// at the end of a file (what mp3gain and foobar2000 write). Only the gain and peak fields are
/// kept, unless a caller asks for more (`read(path:keep:)`: the library index also takes the
/// album artist and the disc number, which TagLib's C binding does not give, and whether a
/// cover picture is embedded: "HAS_COVER"). What the FFmpeg helper decodes has its tags read by
/// FFmpeg (its header carries them).
///
/// Every length and count comes from the file: each is checked against what is there before it
/// is used, and a damaged or hostile file gives no tags, never a crash or a long read.
public enum GainTagReader {
  /// The gain tags of the file at `path`; empty when it has none or cannot be read.
  public static func read(path: String) -> ReplayGainTags {
    guard let file = FileBytes(path: path) else { return ReplayGainTags() }
    return ReplayGainTags(tags: fields(file))
  }

  /// The fields `keep` accepts (by name in upper case), from the file at `path`: Vorbis
  /// comments and APEv2 items by their names, ID3v2 TXXX frames by their descriptions, and
  /// ID3v2's TPE2 as ALBUMARTIST and TPOS as DISCNUMBER; HAS_COVER "1" when a picture is
  /// embedded (a FLAC PICTURE block, METADATA_BLOCK_PICTURE, ID3v2 APIC, an APEv2 cover);
  /// HAS_CHAPTERS "1" when ID3v2 has chapters (CHAP, CTOC).
  public static func read(path: String, keep: (String) -> Bool) -> [String: String] {
    guard let file = FileBytes(path: path) else { return [:] }
    return fields(file, keep: keep)
  }

  /// The gain fields of a file given whole, for tests.
  static func fields(in bytes: [UInt8], keep: (String) -> Bool = isGainField) -> [String: String] {
    fields(ArrayBytes(bytes), keep: keep)
  }

  /// The fields `keep` accepts (the REPLAYGAIN_* and R128_* ones unless told), by name in upper
  /// case.
  static func fields(_ source: some ByteSource, keep: (String) -> Bool = isGainField)
    -> [String: String]
  {
    var found: [String: String] = [:]
    var start = 0
    let magic = source.bytes(at: 0, count: 4)
    if magic.starts(with: Array("ID3".utf8)) {
      let (frames, end) = id3v2(source, keep: keep)
      found.merge(frames) { a, _ in a }
      start = end
    }
    let next = start == 0 ? magic : source.bytes(at: start, count: 4)
    if next == Array("fLaC".utf8) {
      found.merge(flac(source, from: start + 4, keep: keep)) { a, _ in a }
    } else if next == Array("OggS".utf8) {
      found.merge(ogg(source, from: start, keep: keep)) { a, _ in a }
    }
    found.merge(apeV2(source, keep: keep)) { a, _ in a }
    return found
  }

  /// Keeps the fields that say something about loudness.
  static func isGainField(_ name: String) -> Bool {
    let upper = name.uppercased()
    return upper.hasPrefix("REPLAYGAIN_") || upper.hasPrefix("R128_")
  }

  // MARK: Vorbis comments (FLAC, Ogg Vorbis, Opus)

  /// "vendor length, vendor, count, (length, NAME=value)…", little-endian.
  static func vorbisComments(_ b: [UInt8], from start: Int, keep: (String) -> Bool)
    -> [String: String]
  {
    var at = start
    guard let vendor = le32(b, at) else { return [:] }
    at += 4 + vendor
    guard let count = le32(b, at) else { return [:] }
    at += 4
    var found: [String: String] = [:]
    for _ in 0..<min(count, 100_000) {
      guard let length = le32(b, at), at + 4 + length <= b.count else { break }
      let comment = b[(at + 4)..<(at + 4 + length)]
      at += 4 + length
      guard let eq = comment.firstIndex(of: UInt8(ascii: "=")) else { continue }
      let name = String(decoding: comment[..<eq], as: UTF8.self).uppercased()
      if name == "METADATA_BLOCK_PICTURE" {
        if keep(coverField) { found[coverField] = "1" }
        continue
      }
      let canonical = name == "ALBUM ARTIST" ? "ALBUMARTIST" : name
      guard keep(canonical) else { continue }
      found[canonical] = String(decoding: comment[(eq + 1)...], as: UTF8.self)
    }
    return found
  }

  /// FLAC's metadata blocks: the VORBIS_COMMENT one (type 4). Large blocks before it (a cover
  /// picture) are skipped, not read.
  static func flac(_ source: some ByteSource, from start: Int, keep: (String) -> Bool)
    -> [String: String]
  {
    var at = start
    var found: [String: String] = [:]
    for _ in 0..<128 {
      let header = source.bytes(at: at, count: 4)
      guard header.count == 4 else { break }
      let isLast = header[0] & 0x80 != 0
      let type = header[0] & 0x7F
      let length = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
      if type == 4 {
        let comments = vorbisComments(source.bytes(at: at + 4, count: length), from: 0, keep: keep)
        found.merge(comments) { a, _ in a }
      } else if type == 6, keep(coverField) {
        found[coverField] = "1"  // a PICTURE block
      }
      if isLast || type == 127 { break }
      at += 4 + length
    }
    return found
  }

  /// The field that says a picture is embedded ("1").
  static let coverField = "HAS_COVER"
  /// "1" when an ID3v2 tag has chapters (CHAP or CTOC frames), for those who ask for it: the
  /// player then has FFmpeg read them. (Vorbis comments' chapters are CHAPTERxx fields.)
  public static let chaptersField = "HAS_CHAPTERS"

  /// An Ogg stream's second packet (its comment header: Vorbis "\u{3}vorbis", Opus
  /// "OpusTags"), put together from the pages of the first logical stream.
  static func ogg(_ source: some ByteSource, from start: Int, keep: (String) -> Bool)
    -> [String: String]
  {
    var at = start
    var serial: [UInt8]?
    var packets: [[UInt8]] = []
    var current: [UInt8] = []
    // A comment header with a large cover picture in it spans many pages; 16 MiB at most.
    while packets.count < 2 && current.count < 16 << 20 {
      let header = source.bytes(at: at, count: 27)
      guard header.count == 27, header.starts(with: Array("OggS".utf8)) else { break }
      let segments = Int(header[26])
      let table = source.bytes(at: at + 27, count: segments)
      guard table.count == segments else { break }
      let bodyLength = table.reduce(0) { $0 + Int($1) }
      let pageSerial = Array(header[14..<18])
      if serial == nil { serial = pageSerial }
      let body = source.bytes(at: at + 27 + segments, count: bodyLength)
      guard body.count == bodyLength else { break }
      at += 27 + segments + bodyLength
      guard pageSerial == serial else { continue }
      var offset = 0
      for lacing in table {
        current += body[offset..<(offset + Int(lacing))]
        offset += Int(lacing)
        if lacing < 255 {
          packets.append(current)
          current = []
          if packets.count == 2 { break }
        }
      }
    }
    guard packets.count == 2 else { return [:] }
    let comment = packets[1]
    if comment.starts(with: [3] + Array("vorbis".utf8)) {
      return vorbisComments(comment, from: 7, keep: keep)
    }
    if comment.starts(with: Array("OpusTags".utf8)) {
      return vorbisComments(comment, from: 8, keep: keep)
    }
    return [:]
  }

  // MARK: ID3v2

  /// The TXXX frames of an ID3v2.3 or 2.4 tag at the start, and where the tag ends.
  static func id3v2(_ source: some ByteSource, keep: (String) -> Bool)
    -> (fields: [String: String], end: Int)
  {
    let header = source.bytes(at: 0, count: 10)
    guard header.count == 10, let size = syncsafe(Array(header[6..<10])) else { return ([:], 0) }
    let version = header[3]
    let flags = header[5]
    let footer = version == 4 && flags & 0x10 != 0 ? 10 : 0
    let end = 10 + size + footer
    // Unsynchronised tags (flag 0x80) are rare and would need undoing first: skipped.
    guard version == 3 || version == 4, flags & 0x80 == 0 else { return ([:], end) }
    let tag = source.bytes(at: 10, count: size)
    var at = 0
    if flags & 0x40 != 0 {  // an extended header
      let length = version == 4 ? syncsafe(Array(tag.prefix(4))) : be32(tag, 0).map { $0 + 4 }
      guard let length else { return ([:], end) }
      at = length
    }
    var found: [String: String] = [:]
    while at + 10 <= tag.count {
      let id = tag[at..<(at + 4)]
      guard id.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }) else {
        break  // padding, or the end of what is frames
      }
      let sizeBytes = Array(tag[(at + 4)..<(at + 8)])
      guard let length = version == 4 ? syncsafe(sizeBytes) : be32(sizeBytes, 0),
        at + 10 + length <= tag.count
      else { break }
      let body = Array(tag[(at + 10)..<(at + 10 + length)])
      at += 10 + length
      switch String(decoding: id, as: UTF8.self) {
      case "TXXX":
        guard let (name, value) = userText(body), keep(name.uppercased()) else { continue }
        found[name.uppercased()] = value
      case "TPE2" where keep("ALBUMARTIST"):
        found["ALBUMARTIST"] = text(body)
      case "TPOS" where keep("DISCNUMBER"):
        found["DISCNUMBER"] = text(body)
      case "APIC" where keep(coverField):
        found[coverField] = "1"
      case "CHAP" where keep(chaptersField), "CTOC" where keep(chaptersField):
        found[chaptersField] = "1"
      default:
        continue
      }
    }
    return (found, end)
  }

  /// A text frame's text (its first string), in its encoding.
  static func text(_ body: [UInt8]) -> String {
    guard let encoding = body.first else { return "" }
    var value = decode(Array(body.dropFirst()), encoding)
    if let nul = value.firstIndex(of: "\0") { value = String(value[..<nul]) }
    return value
  }

  /// A TXXX frame's description and value, in its text encoding.
  static func userText(_ body: [UInt8]) -> (String, String)? {
    guard let encoding = body.first else { return nil }
    let text = Array(body.dropFirst())
    let wide = encoding == 1 || encoding == 2
    // The description ends at a NUL (two, aligned, in UTF-16).
    var split: Int?
    var i = 0
    while i < text.count {
      if wide {
        if i + 1 < text.count, text[i] == 0, text[i + 1] == 0 {
          split = i
          break
        }
        i += 2
      } else {
        if text[i] == 0 {
          split = i
          break
        }
        i += 1
      }
    }
    guard let split else { return nil }
    let rest = Array(text[(split + (wide ? 2 : 1))...])
    let name = decode(Array(text[..<split]), encoding)
    var value = decode(rest, encoding)
    while value.last == "\0" { value.removeLast() }
    return (name, value)
  }

  static func decode(_ bytes: [UInt8], _ encoding: UInt8) -> String {
    switch encoding {
    case 1, 2:
      var units: [UInt16] = []
      var bigEndian = encoding == 2
      var i = 0
      if encoding == 1, bytes.count >= 2 {
        if bytes[0] == 0xFE && bytes[1] == 0xFF {
          bigEndian = true
          i = 2
        } else if bytes[0] == 0xFF && bytes[1] == 0xFE {
          i = 2
        }
      }
      while i + 1 < bytes.count {
        let pair = (UInt16(bytes[i]), UInt16(bytes[i + 1]))
        units.append(bigEndian ? pair.0 << 8 | pair.1 : pair.1 << 8 | pair.0)
        i += 2
      }
      return String(decoding: units, as: UTF16.self)
    case 3:
      return String(decoding: bytes, as: UTF8.self)
    default:  // ISO-8859-1
      return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
  }

  // MARK: APEv2

  /// An APEv2 tag at the end of the file (before an ID3v1 tag, if there is one).
  static func apeV2(_ source: some ByteSource, keep: (String) -> Bool) -> [String: String] {
    let size = source.size
    for end in [size, size - 128] where end >= 32 {
      let footer = source.bytes(at: end - 32, count: 32)
      guard footer.count == 32, footer.starts(with: Array("APETAGEX".utf8)),
        let tagSize = le32(footer, 12), let count = le32(footer, 16),
        tagSize >= 32, tagSize <= end
      else { continue }
      let items = source.bytes(at: end - tagSize, count: tagSize - 32)
      var found: [String: String] = [:]
      var at = 0
      for _ in 0..<min(count, 10_000) {
        guard let length = le32(items, at), at + 8 < items.count else { break }
        guard let keyEnd = items[(at + 8)...].firstIndex(of: 0),
          keyEnd + 1 + length <= items.count
        else { break }
        let key = String(decoding: items[(at + 8)..<keyEnd], as: UTF8.self)
        let value = String(decoding: items[(keyEnd + 1)..<(keyEnd + 1 + length)], as: UTF8.self)
        at = keyEnd + 1 + length
        let name = key.uppercased()
        let canonical =
          name == "ALBUM ARTIST" ? "ALBUMARTIST" : name == "DISC" ? "DISCNUMBER" : name
        if name.hasPrefix("COVER ART") {
          if keep(coverField) { found[coverField] = "1" }
        } else if keep(canonical) {
          found[canonical] = value
        }
      }
      return found
    }
    return [:]
  }

  // MARK: Numbers

  static func le32(_ b: [UInt8], _ at: Int) -> Int? {
    guard at >= 0, at + 4 <= b.count else { return nil }
    return Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24
  }

  static func be32(_ b: [UInt8], _ at: Int) -> Int? {
    guard at >= 0, at + 4 <= b.count else { return nil }
    return Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
  }

  /// Four bytes of seven bits each; nil when a high bit is set (not syncsafe).
  static func syncsafe(_ b: [UInt8]) -> Int? {
    guard b.count == 4, b.allSatisfy({ $0 < 0x80 }) else { return nil }
    return Int(b[0]) << 21 | Int(b[1]) << 14 | Int(b[2]) << 7 | Int(b[3])
  }
}

/// Bytes by position: a file, or an array in tests.
protocol ByteSource {
  var size: Int { get }
  /// Up to `count` bytes from `offset` (fewer at the end; none outside the source).
  func bytes(at offset: Int, count: Int) -> [UInt8]
}

struct ArrayBytes: ByteSource {
  let storage: [UInt8]
  init(_ storage: [UInt8]) { self.storage = storage }
  var size: Int { storage.count }
  func bytes(at offset: Int, count: Int) -> [UInt8] {
    guard offset >= 0, count > 0, offset < storage.count else { return [] }
    return Array(storage[offset..<min(storage.count, offset + count)])
  }
}

/// A regular file read with pread; reads are capped at 16 MiB each.
final class FileBytes: ByteSource {
  private let fd: Int32
  let size: Int

  init?(path: String) {
    let fd = open(FileName.c(path), O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
      close(fd)
      return nil
    }
    self.fd = fd
    size = Int(st.st_size)
  }

  deinit { close(fd) }

  func bytes(at offset: Int, count: Int) -> [UInt8] {
    guard offset >= 0, offset < size, count > 0 else { return [] }
    let wanted = min(count, size - offset, 16 << 20)
    var buffer = [UInt8](repeating: 0, count: wanted)
    var got = 0
    while got < wanted {
      let n = buffer.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return pread(fd, base + got, wanted - got, off_t(offset + got))
      }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { break }
      got += n
    }
    return Array(buffer.prefix(got))
  }
}
