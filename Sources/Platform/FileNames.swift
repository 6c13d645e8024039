/*
 File names are bytes on Linux; hark keeps them as Strings.

 A name that is not valid UTF-8 (a Latin-1 name from an old disk, a zip made on Windows) would
 lose its bad bytes to U+FFFD in a plain String and then name no file. Here each byte that is
 not part of valid UTF-8 becomes one scalar of U+EF80–U+EFFF (a private-use block: the byte
 plus U+EF00), as MirBSD's OPTU-8 does, so that the String holds the name whole and turns back
 into the very bytes: through the queue, the saved state, playlists and the session's wire
 (all of which carry Strings as UTF-8, where these scalars are valid). A valid UTF-8 name that
 itself holds a scalar of that block is escaped byte by byte too, so the mapping is exact both
 ways for every name.

 Everything that hands a path to the system goes through `FileName.c` (or `bytes`); everything
 that reads one from the system (readdir, argv) through `FileName.string`. Shown to people,
 the escaped bytes read "\xE9" (`escapingControlCharacters` does that).
*/

import Glibc
public enum FileName {
  /// The first and last scalar standing for a raw byte (0x80–0xFF).
  static let firstEscape: UInt32 = 0xEF80
  static let lastEscape: UInt32 = 0xEFFF

  /// `bytes` as a String: UTF-8 where it is valid, each other byte escaped.
  public static func string<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String
  where Bytes.Index == Int {
    // Almost every name: valid UTF-8 with nothing of the escape block in it.
    if let text = String(validating: bytes, as: UTF8.self),
      !text.unicodeScalars.contains(where: isEscape)
    {
      return text
    }
    var out = String.UnicodeScalarView()
    var i = bytes.startIndex
    while i < bytes.endIndex {
      if let (scalar, length) = scalar(in: bytes, at: i), !isEscape(scalar) {
        out.append(scalar)
        i += length
      } else {
        let length = scalar(in: bytes, at: i)?.1 ?? 1
        for k in i..<(i + length) { out.append(escape(bytes[k])) }
        i += length
      }
    }
    return String(out)
  }

  /// "a/b" from "a" and "b", without doubling a slash, in a string of exactly that size: a
  /// walk of a 50,000-track library keeps every path it makes, and a path grown by appending
  /// holds up to twice the room it needs.
  public static func join(_ folder: String, _ name: String) -> String {
    let slash = folder.hasSuffix("/") ? 0 : 1
    var path = String()
    path.reserveCapacity(folder.utf8.count + slash + name.utf8.count)
    path += folder
    if slash == 1 { path += "/" }
    path += name
    return path
  }

  /// A NUL-terminated C string's bytes as a String (see `string`).
  public static func string(cString: UnsafePointer<CChar>) -> String {
    var length = 0
    while cString[length] != 0 { length += 1 }
    return cString.withMemoryRebound(to: UInt8.self, capacity: length) {
      string(UnsafeBufferPointer(start: $0, count: length))
    }
  }

  /// The bytes `path` stands for: its UTF-8, with each escaped byte as itself.
  public static func bytes(_ path: String) -> [UInt8] {
    guard path.unicodeScalars.contains(where: isEscape) else { return Array(path.utf8) }
    var out: [UInt8] = []
    out.reserveCapacity(path.utf8.count)
    for scalar in path.unicodeScalars {
      if isEscape(scalar) {
        out.append(UInt8(scalar.value - 0xEF00))
      } else {
        out += String(scalar).utf8
      }
    }
    return out
  }

  /// `bytes(path)` with a NUL after it, for the system's calls: `stat(FileName.c(path), &st)`.
  public static func c(_ path: String) -> [CChar] {
    guard path.unicodeScalars.contains(where: isEscape) else { return Array(path.utf8CString) }
    return bytes(path).map { CChar(bitPattern: $0) } + [0]
  }

  /// Whether `path` holds bytes that are not UTF-8.
  public static func hasRawBytes(_ path: String) -> Bool {
    path.unicodeScalars.contains(where: isEscape)
  }

  /// The byte an escape stands for; nil for any other scalar.
  public static func rawByte(_ scalar: Unicode.Scalar) -> UInt8? {
    isEscape(scalar) ? UInt8(scalar.value - 0xEF00) : nil
  }

  static func isEscape(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value >= firstEscape && scalar.value <= lastEscape
  }

  static func escape(_ byte: UInt8) -> Unicode.Scalar {
    // Bytes below 0x80 are ASCII, always valid: only 0x80–0xFF are ever escaped.
    Unicode.Scalar(0xEF00 + UInt32(byte)) ?? "?"
  }

  /// The scalar of the well-formed UTF-8 sequence at `i`, and its length; nil when there is none
  /// (a stray continuation byte, a cut sequence, an overlong form, a surrogate, past U+10FFFF).
  static func scalar<Bytes: Collection<UInt8>>(in b: Bytes, at i: Int) -> (Unicode.Scalar, Int)?
  where Bytes.Index == Int {
    let lead = b[i]
    if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
    let length: Int
    var value: UInt32
    switch lead {
    case 0xC2...0xDF: (length, value) = (2, UInt32(lead & 0x1F))
    case 0xE0...0xEF: (length, value) = (3, UInt32(lead & 0x0F))
    case 0xF0...0xF4: (length, value) = (4, UInt32(lead & 0x07))
    default: return nil
    }
    guard i + length <= b.endIndex else { return nil }
    for k in 1..<length {
      let c = b[i + k]
      guard c & 0xC0 == 0x80 else { return nil }
      value = value << 6 | UInt32(c & 0x3F)
    }
    let smallest: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
    guard value >= smallest, let scalar = Unicode.Scalar(value) else { return nil }
    return (scalar, length)
  }
}

/// A file's path as the key of a table, compared and hashed by its bytes (the interface's tags,
/// a scan's table of what the index holds). A `String` key is
/// hashed through its Unicode normalization, scalar by scalar wherever it is not ASCII: a
/// 50,000-entry queue whose folders hold an "ë" or a "坂本" took 40 ms to look up, in each
/// frame after its tags changed, most of it in that normalization. A path is bytes to the file
/// system, too: two names that differ in their bytes are two files, even where Unicode calls
/// them the same text.
public struct PathKey: Hashable, Comparable, Sendable {
  public let path: String

  public init(_ path: String) { self.path = path }

  public static func == (a: PathKey, b: PathKey) -> Bool {
    let equal = a.path.utf8.withContiguousStorageIfAvailable { x in
      b.path.utf8.withContiguousStorageIfAvailable { y in
        guard x.count == y.count else { return false }
        guard let p = x.baseAddress, let q = y.baseAddress else { return true }  // both empty
        return memcmp(p, q, x.count) == 0
      }
    }
    return (equal ?? nil) ?? a.path.utf8.elementsEqual(b.path.utf8)
  }

  /// Byte order (memcmp's, as SQLite's BINARY collation compares text).
  public static func < (a: PathKey, b: PathKey) -> Bool {
    let less = a.path.utf8.withContiguousStorageIfAvailable { x in
      b.path.utf8.withContiguousStorageIfAvailable { y in
        guard let p = x.baseAddress, let q = y.baseAddress else { return x.count < y.count }
        let order = memcmp(p, q, min(x.count, y.count))
        return order != 0 ? order < 0 : x.count < y.count
      }
    }
    return (less ?? nil) ?? a.path.utf8.lexicographicallyPrecedes(b.path.utf8)
  }

  public func hash(into hasher: inout Hasher) {
    let hashed: Void? = path.utf8.withContiguousStorageIfAvailable {
      hasher.combine(bytes: .init($0))
    }
    if hashed == nil {
      for byte in path.utf8 { hasher.combine(byte) }
    }
    hasher.combine(path.utf8.count)
  }
}
