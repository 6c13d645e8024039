import Glibc
import Platform
import Testing

@testable import TerminalUI
import PlayerCore
import AudioCore

/// The playing album's cover in the now-playing area, as coloured character cells (hark-cover's,
/// chafa's), off by a setting; what the helper writes is checked before it is drawn, and a file
/// without a cover, or a picture no decoder survives, costs only its cover.
@Suite(.timeLimit(.minutes(2))) struct CoverArtTests {
  /// A well-formed picture of `columns` x `rows` cells, each a full block in colour 16 + its
  /// index, on the terminal's own background.
  private func helperOutput(columns: Int, rows: Int, source: String = "embedded") -> [UInt8] {
    var text = "hark-cover 1\ncells \(columns) \(rows)\nsource \(source)\n\n"
    for y in 0..<rows {
      text +=
        (0..<columns).map { x in "2588,\(16 + (y * columns + x) % 240),-1" }.joined(
          separator: " ") + "\n"
    }
    return Array(text.utf8)
  }

  @Test func whatTheHelperWritesIsReadCellByCell() throws {
    let art = try #require(CoverArt.parse(helperOutput(columns: 4, rows: 2, source: "cover.jpg")))
    #expect(art.columns == 4)
    #expect(art.rows == 2)
    #expect(art.source == "cover.jpg")
    #expect(art.cell(row: 1, column: 3) == CoverArt.Cell("█", foreground: 23, background: -1))
  }

  @Test(arguments: [
    "hark-cover 2\ncells 1 1\nsource embedded\n\n2588,1,1\n",  // another version
    "hark-cover 1\ncells 2 1\nsource embedded\n\n2588,1,1\n",  // a row short of cells
    "hark-cover 1\ncells 1 2\nsource embedded\n\n2588,1,1\n",  // a row missing
    "hark-cover 1\ncells 1 1\nsource embedded\n\n2588,1,256\n",  // off the palette
    "hark-cover 1\ncells 1 1\nsource embedded\n\n2588,-2,1\n",
    "hark-cover 1\ncells 1 1\nsource embedded\n\n1B,1,1\n",  // ESC: a control character
    "hark-cover 1\ncells 1 1\nsource embedded\n\n5B57,1,1\n",  // a wide character
    "hark-cover 1\ncells 1 1\nsource embedded\n\n2588,1,1\nmore\n",  // more than its rows
    "hark-cover 1\ncells 0 1\nsource embedded\n\n\n",
    "hark-cover 1\ncells 1 1\n\n2588,1,1\n",  // no source line
    "",
  ])
  func anythingElseIsRefused(text: String) {
    #expect(CoverArt.parse(Array(text.utf8)) == nil)
  }

  /// With --pixels, the picture's RGBA follows the rows: exactly width * height * 4 bytes.
  @Test func thePixelsFollowTheCells() throws {
    let pixels = (0..<(3 * 2 * 4)).map { UInt8($0) }
    let art = try #require(
      CoverArt.parse(helperOutput(columns: 2, rows: 1) + Array("pixels 3 2\n".utf8) + pixels))
    #expect(art.columns == 2 && art.rows == 1)
    let image = try #require(art.image)
    #expect(image.form == .rgba(width: 3, height: 2, pixels: pixels))
    #expect(CoverArt.parse(helperOutput(columns: 2, rows: 1))?.image == nil)
    for bad in [
      Array("pixels 3 2\n".utf8) + pixels.dropLast(), Array("pixels 3 2\n".utf8) + pixels + [0],
      Array("pixels 0 2\n".utf8), Array("pixels 3 2".utf8) + pixels,
      Array("pixel 3 2\n".utf8) + pixels,
    ] {
      #expect(CoverArt.parse(helperOutput(columns: 2, rows: 1) + bad) == nil)
    }
  }

  /// With --pixels --sixel, a sixel image follows the rows: exactly its length, and nothing
  /// but a DCS sixel sequence (it is sent to the terminal as it is).
  @Test func aSixelImageFollowsTheCells() throws {
    let sixel = Array("\u{1B}P0;1;0q\"1;1;2;6#0;2;13;80;27#0~~-\u{1B}\\".utf8)
    let art = try #require(
      CoverArt.parse(
        helperOutput(columns: 2, rows: 1) + Array("sixel \(sixel.count) 1 6\n".utf8) + sixel))
    #expect(art.image?.form == .sixel(sixel, cellWidth: 1, cellHeight: 6))
    let inside = Array("\u{1B}P0;1;0q#0~\u{1B}]0;title\u{07}~\u{1B}\\".utf8)
    for bad in [
      Array("sixel \(sixel.count + 1) 1 6\n".utf8) + sixel,
      Array("sixel \(sixel.count - 1) 1 6\n".utf8) + sixel.dropLast(),  // no ST
      Array("sixel\n".utf8) + sixel, Array("sixel \(sixel.count) 1 6".utf8) + sixel,
      Array("sixel \(sixel.count)\n".utf8) + sixel,  // no cell size
      Array("sixel \(sixel.count) 0 6\n".utf8) + sixel,
      Array("sixel \(inside.count) 1 6\n".utf8) + inside,  // another sequence inside
      Array("sixel 9 1 6\n\u{1B}P1$q\u{1B}\\".utf8),  // DECRQSS, not sixels
      Array("sixel 6 1 6\n\u{1B}Pq\n\u{1B}\\".utf8),
    ] {
      #expect(CoverArt.parse(helperOutput(columns: 2, rows: 1) + bad) == nil)
    }
  }

  /// A cell's size from the window's pixels: xterm counts its border (30 pixels here) and does
  /// not answer CSI 16 t; kitty and foot count none; a size that fits no border is divided.
  @Test func aCellsSizeFromTheWindowsWithOrWithoutABorder() {
    #expect(CursesTerminal.cellSize(window: (1020, 740), columns: 120, rows: 40) == (8, 17))
    #expect(CursesTerminal.cellSize(window: (960, 680), columns: 120, rows: 40) == (8, 17))
    #expect(CursesTerminal.cellSize(window: (604, 394), columns: 100, rows: 30) == (6, 13))
    #expect(CursesTerminal.cellSize(window: (1001, 700), columns: 120, rows: 40) == (8, 17))
  }

  @Test func base64IsRFC4648s() {
    for (plain, coded) in [
      ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
      ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ] {
      #expect(String(decoding: Base64.encode(Array(plain.utf8)), as: UTF8.self) == coded)
    }
    #expect(String(decoding: Base64.encode([0xFB, 0xFF, 0xBF]), as: UTF8.self) == "+/+/")
  }

  private func state(rows: Int, columns: Int, coverOf path: String?, art: CoverArt)
    -> InterfaceState
  {
    var s = InterfaceState(
      folder: "/music/Album", layout: Layout(rows: rows, columns: columns), bindings: .defaults)
    s.showFolder(
      "/music/Album",
      .success([LibraryEntry(kind: .file, name: "01.flac", path: "/music/Album/01.flac")]),
      now: 0)
    s.tags["/music/Album/01.flac"] = TrackInfo(
      title: "A title long enough to be cut where the cover begins, and then some more words",
      artist: "Artist", duration: 215)
    var snap = PlayerSnapshot()
    snap.queue = [QueuedTrack(id: 0, path: "/music/Album/01.flac")]
    snap.current = snap.queue[0]
    snap.state = .playing
    s.update(snap)
    if let path { s.cover = ShownCover(path: path, art: art) }
    return s
  }

  private func draw(_ s: InterfaceState, rows: Int, columns: Int) -> TextCanvas {
    let c = TextCanvas(rows: rows, columns: columns)
    Screen.draw(s, on: c, now: 0)
    return c
  }

  /// Bottom right of the list, just above the now-playing bar; the list narrower beside it and
  /// nothing of the list under it.
  @Test func theCoverSitsAtTheBottomRightOfTheListAboveTheBar() throws {
    let art = try #require(CoverArt.parse(helperOutput(columns: 24, rows: 12)))
    let s = state(rows: 30, columns: 120, coverOf: "/music/Album/01.flac", art: art)
    let c = draw(s, rows: 30, columns: 120)
    let layout = Layout(rows: 30, columns: 120)
    let room = try #require(layout.coverCells)
    #expect(room.columns == 24 && room.rows == 12)
    let top = layout.nowPlayingRow - 12
    for r in 0..<30 {
      for col in 96..<120 {
        let inPicture = (top..<layout.nowPlayingRow).contains(r)
        #expect(
          (c.style(row: r, column: col) == .picture) == inPicture,
          "row \(r), column \(col): \(c.style(row: r, column: col))")
      }
      #expect(TextWidth.of(c.lines[r]) == 120, "row \(r) is not 120 cells")
    }
    #expect(c.lines[top].hasSuffix(String(repeating: "█", count: 24)))
    // The list stops a column short of the picture: its title is cut there, not under it.
    let row = c.lines[layout.listTop]
    #expect(row.contains("A title long"))
    #expect(row.hasSuffix(String(repeating: " ", count: 25)), "'\(row)'")
    #expect(c.lines[layout.nowPlayingRow].contains("Playing"))
  }

  @Test func anotherTracksCoverANarrowWindowOrTheSettingOffShowNone() throws {
    let art = try #require(CoverArt.parse(helperOutput(columns: 24, rows: 12)))
    func pictureCells(_ s: InterfaceState, rows: Int, columns: Int) -> Int {
      let c = draw(s, rows: rows, columns: columns)
      return (0..<rows).reduce(0) { n, r in
        n + (0..<columns).count { c.style(row: r, column: $0) == .picture }
      }
    }
    #expect(
      pictureCells(
        state(rows: 30, columns: 120, coverOf: "/music/Album/01.flac", art: art), rows: 30,
        columns: 120) == 24 * 12)
    // The cover that came for the track before: not this track's.
    #expect(
      pictureCells(
        state(rows: 30, columns: 120, coverOf: "/music/Other/09.flac", art: art), rows: 30,
        columns: 120) == 0)
    // 80 columns: a smaller picture, the list keeping 61; the 24-column one does not fit.
    #expect(Layout(rows: 30, columns: 80).coverCells.map { [$0.columns, $0.rows] } == [18, 9])
    #expect(
      pictureCells(
        state(rows: 30, columns: 80, coverOf: "/music/Album/01.flac", art: art), rows: 30,
        columns: 80) == 0)
    // 72 columns leave no room for one of 6 rows beside a list of 60.
    #expect(Layout(rows: 30, columns: 72).coverCells == nil)
    // Not under the help (a picture the terminal draws would lie over it).
    var helped = state(rows: 30, columns: 120, coverOf: "/music/Album/01.flac", art: art)
    helped.overlay = .help(top: 0)
    #expect(pictureCells(helped, rows: 30, columns: 120) == 0)
    // Too short a list for 6 rows of picture.
    #expect(Layout(rows: 11, columns: 120).coverCells == nil)
    // A picture drawn for a bigger window than this one now is: not drawn cut.
    let small = state(rows: 16, columns: 120, coverOf: "/music/Album/01.flac", art: art)
    #expect(Layout(rows: 16, columns: 120).coverCells.map { $0.rows } == 10)
    #expect(pictureCells(small, rows: 16, columns: 120) == 0)
    var off = state(rows: 30, columns: 120, coverOf: "/music/Album/01.flac", art: art)
    off.showsCover = false
    #expect(pictureCells(off, rows: 30, columns: 120) == 0)
  }
}
