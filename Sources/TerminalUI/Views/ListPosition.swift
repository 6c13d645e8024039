/// A list's selected row and the first row shown.
public struct ListPosition: Hashable, Sendable {
  public var selected = 0
  public var top = 0

  public init(selected: Int = 0, top: Int = 0) {
    self.selected = selected
    self.top = top
  }

  /// Keeps the selection inside `count` rows and on screen in a window of `height` rows,
  /// scrolling as little as possible.
  public mutating func clamp(count: Int, height: Int) {
    selected = count == 0 ? 0 : min(max(0, selected), count - 1)
    guard height > 0 else {
      top = selected
      return
    }
    if selected < top { top = selected }
    if selected >= top + height { top = selected - height + 1 }
    top = max(0, min(top, max(0, count - height)))
  }

  /// Moves the selection by `delta` rows (a page is `height`), stopping at the ends.
  public mutating func move(by delta: Int, count: Int, height: Int) {
    selected += delta
    clamp(count: count, height: height)
  }
}

/// Where things go on a screen of a given size. Every view uses this, so the page a key
/// moves by is the page that is drawn.
public struct Layout: Hashable, Sendable {
  public let rows: Int
  public let columns: Int

  /// The list's width: all of it, less the cover picture's strip when one is shown.
  public var listWidth: Int

  public init(rows: Int, columns: Int) {
    self.rows = rows
    self.columns = columns
    listWidth = columns
  }

  /// The cells a cover picture may take, right of the list above the now-playing bar: as tall
  /// as the list allows up to 12 rows, twice as wide (cells are twice as tall as wide), and no
  /// wider than leaves the list 60 columns. Nil when there is no room for one of 6 rows.
  public var coverCells: (columns: Int, rows: Int)? {
    let r = min(12, listHeight, (columns - 61) / 2)
    guard r >= 6 else { return nil }
    return (2 * r, r)
  }

  /// Below this there is no room for the now-playing bar and a list: say so instead.
  public var isTooSmall: Bool { rows < 8 || columns < 30 }
  public var tabRow: Int { 0 }
  public var headerRow: Int { 1 }
  public var listTop: Int { 2 }
  public var listHeight: Int { max(0, rows - 6) }
  public var nowPlayingRow: Int { rows - 4 }
  public var progressRow: Int { rows - 3 }
  public var statusRow: Int { rows - 2 }
  public var hintRow: Int { rows - 1 }

  /// The list's columns: title, artist and time widths, after a two-cell marker.
  public var columnsForList: ListColumns {
    var c = ListColumns()
    // The track number, the year and the album come as the screen widens; narrow screens drop
    // the artist before squeezing the title.
    c.number = listWidth >= 60 ? 4 : 0
    c.year = listWidth >= 90 ? 6 : 0
    let room = max(0, listWidth - 2 - c.time - c.number - c.year)
    if listWidth >= 100 {
      c.artist = room * 28 / 100
      c.album = room * 28 / 100
    } else {
      c.artist = listWidth >= 60 ? room * 35 / 100 : 0
    }
    c.title = room - c.artist - c.album
    return c
  }
}

/// The widths of the list's columns, in cells (0: not shown), after the two of the marker.
public struct ListColumns: Equatable, Sendable {
  /// The track's number on its album (in the queue, its place in the queue).
  public var number = 0
  public var title = 0
  public var artist = 0
  public var album = 0
  public var year = 0
  public var time = 7
}
