/// What a piece of the screen means; the terminal picks colours and attributes for it.
public enum Style: Hashable, Sendable, CaseIterable {
  case normal
  /// The tab bar and the column headers.
  case bar
  case activeTab
  case header
  /// The selected row.
  case selected
  /// The current track in a list.
  case current
  case folder
  case dim
  /// The now-playing bar.
  case nowPlaying
  case progress
  /// Why playback is paused or quiet.
  case warning
  /// Something went wrong.
  case error
  case popup
  case popupSelected
  /// A cell of the cover picture: its colours are its own.
  case picture
}

/// Where views draw: curses on a terminal, a grid of characters in tests.
public protocol Canvas: AnyObject {
  var rows: Int { get }
  var columns: Int { get }
  /// Draws `text` from a cell on; what does not fit in the row is cut. One row only.
  func put(_ text: String, row: Int, column: Int, style: Style)
  /// Draws a picture from a cell on (its top left): its cells in their own colours, or the
  /// picture itself where the terminal draws pictures.
  func put(_ picture: CoverArt, row: Int, column: Int)
}

/// A canvas in memory: what a terminal of that size would show, for tests.
public final class TextCanvas: Canvas {
  public let rows: Int
  public let columns: Int
  /// Each cell's text: one character, or "" for the right half of a wide one.
  private var cells: [[String]]
  private var styles: [[Style]]

  public init(rows: Int, columns: Int) {
    self.rows = rows
    self.columns = columns
    cells = Array(repeating: Array(repeating: " ", count: columns), count: rows)
    styles = Array(repeating: Array(repeating: .normal, count: columns), count: rows)
  }

  public func put(_ text: String, row: Int, column: Int, style: Style) {
    guard row >= 0, row < rows, column >= 0, column < columns else { return }
    var at = column
    // As the terminal's canvas draws it: control characters as their escapes.
    for character in text.escapingControlCharacters {
      let w = TextWidth.of(character.unicodeScalars)
      if w == 0 {
        // A combining mark joins the character before it.
        if at > 0 { cells[row][at - 1] += String(character) }
        continue
      }
      if at + w > columns { break }
      cells[row][at] = String(character)
      styles[row][at] = style
      if w == 2 {
        cells[row][at + 1] = ""
        styles[row][at + 1] = style
      }
      at += w
    }
  }

  public func put(_ picture: CoverArt, row: Int, column: Int) {
    for y in 0..<picture.rows where row + y >= 0 && row + y < rows {
      for x in 0..<picture.columns where column + x >= 0 && column + x < columns {
        cells[row + y][column + x] = String(Character(picture.cell(row: y, column: x).character))
        styles[row + y][column + x] = .picture
      }
    }
  }

  /// The screen's rows as text, trailing spaces kept.
  public var lines: [String] { cells.map { $0.joined() } }

  /// Everything on the screen, one row a line.
  public var text: String { lines.joined(separator: "\n") }

  /// The style of one cell.
  public func style(row: Int, column: Int) -> Style { styles[row][column] }
}
