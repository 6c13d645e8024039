import Glibc
import Platform

/// The playing album's cover as the hark-cover helper drew it (Sources/hark-cover/main.swift):
/// character cells, each a block element or a space with a foreground and a background from
/// the terminal's palette.
public struct CoverArt: Hashable, Sendable {
  /// One cell: a character one cell wide, and palette indexes (-1: the terminal's own colour).
  public struct Cell: Hashable, Sendable {
    public var character: Unicode.Scalar
    public var foreground: Int16
    public var background: Int16

    public init(_ character: Unicode.Scalar, foreground: Int16, background: Int16) {
      self.character = character
      self.foreground = foreground
      self.background = background
    }
  }

  public let columns: Int
  public let rows: Int
  /// Row by row, `columns * rows` of them.
  public let cells: [Cell]
  /// Where the picture came from: "embedded", or the picture file's name beside the music.
  public let source: String
  /// The picture itself, for a terminal that draws pictures (kitty's graphics protocol, or
  /// sixels), when it was asked for: it covers the cells.
  public let image: CoverImage?

  public init(columns: Int, rows: Int, cells: [Cell], source: String, image: CoverImage? = nil) {
    precondition(cells.count == columns * rows, "a cover's cells fill its rows")
    self.columns = columns
    self.rows = rows
    self.cells = cells
    self.source = source
    self.image = image
  }

  public func cell(row: Int, column: Int) -> Cell { cells[row * columns + column] }

  /// What hark-cover wrote; nil when it is not what the helper writes (a cell that is not one
  /// cell wide, a colour off the palette, rows short or long, pixels short or long are refused,
  /// never drawn).
  public static func parse(_ bytes: [UInt8]) -> CoverArt? {
    // The text: the header and the rows, up to the pixels when there are any.
    var newlines: [Int] = []
    for (i, b) in bytes.enumerated() where b == 0x0A {
      newlines.append(i)
      if newlines.count == 2, let r = rowCount(bytes[..<i]), r > 0 {
        // Where the text ends: after the header's 4 lines and the rows.
        if let end = Self.end(of: bytes, lines: 4 + r, from: i + 1, counted: 2) {
          return parse(text: bytes[..<end], tail: bytes[end...])
        }
        return nil
      }
    }
    return nil
  }

  /// The rows the "cells" line (the second) says, from the header's first two lines.
  private static func rowCount(_ header: ArraySlice<UInt8>) -> Int? {
    let text = String(decoding: header, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.count == 2 else { return nil }
    let size = lines[1].split(separator: " ")
    guard size.count == 3, size[0] == "cells", let rows = Int(size[2]), (1...100).contains(rows)
    else { return nil }
    return rows
  }

  /// The index just past the `lines`-th newline, having `counted` already before `from`.
  private static func end(of bytes: [UInt8], lines: Int, from: Int, counted: Int) -> Int? {
    var n = counted
    var i = from
    while i < bytes.count {
      if bytes[i] == 0x0A {
        n += 1
        if n == lines { return i + 1 }
      }
      i += 1
    }
    return nil
  }

  private static func parse(text bytes: ArraySlice<UInt8>, tail: ArraySlice<UInt8>) -> CoverArt? {
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.count >= 4, lines[0] == "hark-cover 1", lines[3].isEmpty else { return nil }
    let size = lines[1].split(separator: " ")
    guard size.count == 3, size[0] == "cells", let columns = Int(size[1]), let rows = Int(size[2]),
      (1...200).contains(columns), (1...100).contains(rows), lines[2].hasPrefix("source ")
    else { return nil }
    let source = String(lines[2].dropFirst("source ".count))
    guard lines.count >= 4 + rows else { return nil }
    var cells: [Cell] = []
    cells.reserveCapacity(columns * rows)
    for line in lines[4..<(4 + rows)] {
      let fields = line.split(separator: " ")
      guard fields.count == columns else { return nil }
      for field in fields {
        let parts = field.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 3, let value = UInt32(parts[0], radix: 16),
          let scalar = Unicode.Scalar(value), TextWidth.of([scalar]) == 1 || scalar == " ",
          let fg = Int16(parts[1]), let bg = Int16(parts[2]), (-1...255).contains(fg),
          (-1...255).contains(bg)
        else { return nil }
        cells.append(Cell(scalar, foreground: fg, background: bg))
      }
    }
    // Nothing but an empty last line after the rows, then the pixels if any.
    guard lines[(4 + rows)...].allSatisfy(\.isEmpty) else { return nil }
    var image: CoverImage?
    if !tail.isEmpty {
      guard let newline = tail.firstIndex(of: 0x0A) else { return nil }
      let fields = String(decoding: tail[..<newline], as: UTF8.self).split(separator: " ")
      let body = tail[(newline + 1)...]
      switch fields.first {
      case "pixels":
        guard fields.count == 3, let w = Int(fields[1]), let h = Int(fields[2]),
          (1...4096).contains(w), (1...4096).contains(h), body.count == w * h * 4
        else { return nil }
        image = CoverImage(width: w, height: h, rgba: Array(body))
      case "sixel":
        guard fields.count == 4, Int(fields[1]) == body.count, let w = Int(fields[2]),
          let h = Int(fields[3]), (1...4096).contains(w), (1...4096).contains(h),
          isSixelImage(body)
        else { return nil }
        image = CoverImage(sixel: Array(body), cellWidth: w, cellHeight: h)
      default: return nil
      }
    }
    return CoverArt(columns: columns, rows: rows, cells: cells, source: source, image: image)
  }

  /// A DCS sixel sequence and nothing else: `ESC P`, printable ASCII (its parameters, `q`,
  /// the sixels), `ESC \\`. Sent to the terminal as it is, so nothing that could be another
  /// control sequence.
  private static func isSixelImage(_ bytes: ArraySlice<UInt8>) -> Bool {
    guard bytes.count >= 5, bytes.prefix(2).elementsEqual([0x1B, 0x50]),
      bytes.suffix(2).elementsEqual([0x1B, 0x5C])
    else { return false }
    let inside = bytes.dropFirst(2).dropLast(2)
    guard let q = inside.firstIndex(of: 0x71),
      inside[..<q].allSatisfy({ (0x30...0x3B).contains($0) })
    else { return false }
    return inside.allSatisfy { (0x20...0x7E).contains($0) }
  }
}

/// A cover as a terminal that draws pictures is sent it. One object per picture: the terminal
/// tells a new picture from the one it shows by identity.
public final class CoverImage: Hashable, Sendable {
  public enum Form: Hashable, Sendable {
    /// Its pixels, RGBA row by row, for kitty's graphics protocol, which scales them to the
    /// cells.
    case rgba(width: Int, height: Int, pixels: [UInt8])
    /// A sixel image (its DCS sequence), drawn at its own size: no larger than the cells, for
    /// cells of this size in pixels.
    case sixel([UInt8], cellWidth: Int, cellHeight: Int)
  }

  public let form: Form

  public init(width: Int, height: Int, rgba: [UInt8]) {
    precondition(rgba.count == width * height * 4, "RGBA is 4 bytes a pixel")
    form = .rgba(width: width, height: height, pixels: rgba)
  }

  public init(sixel: [UInt8], cellWidth: Int, cellHeight: Int) {
    form = .sixel(sixel, cellWidth: cellWidth, cellHeight: cellHeight)
  }

  public static func == (a: CoverImage, b: CoverImage) -> Bool { a === b }
  public func hash(into h: inout Hasher) { h.combine(ObjectIdentifier(self)) }
}

/// Runs hark-cover for the interface (on its background thread: it blocks until the helper ends).
public enum CoverHelper {
  /// What a cover request came to.
  public enum Outcome: Hashable, Sendable {
    case picture(CoverArt)
    /// The file has no cover, embedded or beside it.
    case none
    /// There is one but it could not be drawn, or the helper could not run: why, in a line.
    case failed(String)
  }

  /// The cover of `path` in at most `columns` x `rows` cells of a `colors`-colour palette, and
  /// its pixels when `pixels` says how many the cells have (the window's cell size times the
  /// cells), as a sixel image with `sixel`. A helper that takes more than 5 s (a picture that
  /// hangs a decoder) is killed.
  public static func cover(
    of path: String, columns: Int, rows: Int, colors: Int,
    pixels: (width: Int, height: Int)? = nil, sixel: Bool = false
  ) -> Outcome {
    guard let helper = installedHelper("hark-cover", variable: "HARK_COVER_HELPER") else {
      return .failed("hark-cover is not installed next to hark (it draws covers)")
    }
    let run: HelperOutput
    do {
      run = try runHelper(
        helper,
        ["--cells", "\(columns)x\(rows)", "--colors", String(colors)]
          + (pixels.map { ["--pixels", "\($0.width)x\($0.height)"] } ?? [])
          + (pixels != nil && sixel ? ["--sixel"] : []) + ["--", path],
        timeout: .seconds(5), limit: 1 << 26)
    } catch {
      return .failed("cannot start hark-cover: \(error)")
    }
    if run.timedOut { return .failed("hark-cover took too long over the cover of '\(path)'") }
    if run.wroteTooMuch { return .failed("hark-cover wrote too much for the cover of '\(path)'") }
    switch run.status {
    case 0?:
      guard let art = parse(run.output) else {
        return .failed("hark-cover wrote something it should not for '\(path)'")
      }
      return .picture(art)
    case 3?: return .none
    case let status?:
      return .failed(run.errorLine.isEmpty ? "hark-cover failed (\(status))" : run.errorLine)
    case nil: return .failed("hark-cover crashed on the cover of '\(path)'")
    }
  }

  private static func parse(_ bytes: [UInt8]) -> CoverArt? { CoverArt.parse(bytes) }
}
