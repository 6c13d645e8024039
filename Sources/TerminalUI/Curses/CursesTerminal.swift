import CNcursesw
import Glibc
import Platform
import Synchronization
import UserText

/// How a terminal draws pictures.
enum PictureProtocol: Hashable, Sendable {
  /// kitty's graphics protocol: RGBA pixels, scaled by the terminal to the cells they cover.
  case kitty
  /// DEC's sixel graphics (xterm as a VT340, foot, mlterm, Windows Terminal): drawn at their
  /// own size, which must be the cells' (they are pixels in the cells, not over them).
  case sixel
}

/// The terminal could not be taken over.
public struct TerminalError: Error, Hashable, Sendable, CustomStringConvertible {
  public var description: String
}

/// The terminal while the interface owns it: curses (wide characters, colours when there are
/// any) on the alternate screen, and the kitty keyboard protocol when the terminal speaks it.
/// Input is not read through curses: the owner reads fd 0 and decodes it with `KeyDecoder`,
/// because curses' own escape parsing does not know kitty's sequences.
///
/// UI thread only: every curses call is made from the thread that created it.
final class CursesTerminal: Canvas {
  private(set) var rows = 24
  private(set) var columns = 80
  private let screen: OpaquePointer
  private var attributes: [Style: Int32] = [:]
  private var isOpen = true
  private var isSuspended = false
  /// The kitty protocol is pushed on the terminal's stack (and must be popped on every exit).
  private(set) var keyboardProtocolPushed = false

  /// Takes the terminal: the locale's character set (UTF-8 when the locale says nothing),
  /// curses in cbreak mode without echo, cursor hidden, colours.
  init() throws(TerminalError) {
    if let failure = cnc_load() {
      throw TerminalError(description: "cannot load ncurses: \(String(cString: failure))")
    }
    setlocale(LC_ALL, "")
    // Titles are UTF-8 whatever the environment says; a "C" locale would make curses draw
    // them as escapes. Terminals are UTF-8 in practice.
    if cnc_locale_is_utf8() == 0 { setlocale(LC_CTYPE, "C.UTF-8") }
    EmergencyRestore.shared.saveTerminalModes()
    guard let output = fdopen(1, "w"), let input = fdopen(0, "r") else {
      throw TerminalError(description: "cannot open the terminal's streams")
    }
    guard let s = newterm(nil, output, input) else {
      let term = environment("TERM") ?? "(unset)"
      throw TerminalError(
        description: "the terminal type '\(term)' is not one curses knows (TERM); "
          + "try TERM=xterm-256color")
    }
    screen = s
    cbreak()
    noecho()
    nonl()
    intrflush(cnc_stdscr(), false)
    keypad(cnc_stdscr(), false)
    leaveok(cnc_stdscr(), true)
    curs_set(0)
    setUpColours()
    EmergencyRestore.shared.arm(exitSequence: Self.exitSequence())
    updateSize()
  }

  deinit {
    close()
    delscreen(screen)
  }

  private func setUpColours() {
    let bold = cnc_A_BOLD()
    let reverse = cnc_A_REVERSE()
    let dim = cnc_A_DIM()
    var a: [Style: Int32] = [
      .normal: cnc_A_NORMAL(), .bar: reverse, .activeTab: bold, .header: bold,
      .selected: reverse, .current: bold, .folder: bold, .dim: dim, .nowPlaying: reverse | bold,
      .progress: bold, .warning: bold, .error: bold, .popup: cnc_A_NORMAL(),
      .popupSelected: reverse, .picture: cnc_A_NORMAL(),
    ]
    if has_colors() {
      start_color()
      // -1: the terminal's own background, so the interface is not a grey slab.
      let hasDefault = use_default_colors() == OK
      let back: Int16 = hasDefault ? -1 : Int16(COLOR_BLACK)
      let pairs: [(Style, Int32, Int32?)] = [
        (.bar, COLOR_BLACK, COLOR_CYAN), (.activeTab, COLOR_WHITE, COLOR_BLUE),
        (.header, COLOR_CYAN, nil), (.current, COLOR_YELLOW, nil), (.folder, COLOR_BLUE, nil),
        (.nowPlaying, COLOR_BLACK, COLOR_CYAN), (.progress, COLOR_CYAN, nil),
        (.warning, COLOR_YELLOW, nil), (.error, COLOR_RED, nil), (.popup, COLOR_WHITE, nil),
        (.popupSelected, COLOR_BLACK, COLOR_YELLOW),
      ]
      for (i, (style, fg, bg)) in pairs.enumerated() {
        let n = Int16(i + 1)
        init_pair(n, Int16(fg), bg.map { Int16($0) } ?? back)
        let base: Int32 =
          switch style {
          case .bar, .popup: 0
          case .nowPlaying, .activeTab, .header, .current, .folder, .progress, .warning, .error,
            .popupSelected:
            bold
          case .normal, .selected, .dim, .picture: 0
          }
        a[style] = cnc_COLOR_PAIR(Int32(n)) | base
      }
    }
    attributes = a
  }

  /// What undoes the screen in an emergency: leave the alternate screen, show the cursor,
  /// plain attributes. From terminfo, as curses would send them.
  private static func exitSequence() -> [UInt8] {
    var out: [UInt8] = []
    for cap in ["sgr0", "cnorm", "rmcup"] {
      guard let s = tigetstr(cap), Int(bitPattern: s) != -1 else { continue }
      out += Array(String(cString: s).utf8)
    }
    return out + [0x0D, 0x0A]
  }

  // MARK: Drawing

  func put(_ text: String, row: Int, column: Int, style: Style) {
    guard isOpen, !isSuspended, row >= 0, row < rows, column >= 0, column < columns else {
      return
    }
    // Names and tags come from files: their control characters are shown, never sent (a title
    // with ESC ] 0 ; would retitle the user's terminal).
    let fitted = TextWidth.truncate(
      text.escapingControlCharacters, to: columns - column, ellipsis: "")
    var wide = fitted.unicodeScalars.map { wchar_t(bitPattern: $0.value) }
    wide.append(0)
    attrset(attributes[style] ?? 0)
    _ = mvaddnwstr(Int32(row), Int32(column), wide, Int32(wide.count - 1))
    attrset(0)
    if pictureProtocol == .sixel { note(row, text, column, style) }
  }

  /// The palette pictures are drawn in: 256, 16 or 8 colours; 0 without colours (no picture).
  var pictureColors: Int {
    // Pairs from 64 on, enough for a picture's: an 8-colour terminal (xterm, the console) has
    // 64 in all, and shows no picture rather than an empty box.
    guard has_colors(), cnc_color_pairs() >= 64 + 512 else { return 0 }
    let n = cnc_colors()
    return n >= 256 ? 256 : n >= 16 ? 16 : n >= 8 ? 8 : 0
  }

  /// The colour pair of each (foreground, background) a picture has used, from pair 64 on
  /// (below are the styles'); made once, kept for the run.
  private var picturePairs: [Int32: Int32] = [:]

  func put(_ picture: CoverArt, row: Int, column: Int) {
    guard isOpen, !isSuspended else { return }
    if let image = picture.image, pictureProtocol != nil {
      // Blank cells under it; the picture goes over them once curses has drawn the frame. One
      // made for cells of another size (the font changed) is not drawn: the one for the new
      // size is on its way.
      for y in 0..<picture.rows {
        put(
          String(repeating: " ", count: picture.columns), row: row + y, column: column,
          style: .normal)
      }
      if canDraw(image) {
        pictureWanted = Placement(
          image: image, row: row, column: column, columns: picture.columns, rows: picture.rows)
      }
      return
    }
    // Pairs are made as colours are met and kept; when what is left might not do for this
    // picture, they are made afresh from 64 (only the picture uses them, and it is redrawn
    // whole every frame).
    if 64 + picturePairs.count + picture.cells.count > Int(cnc_color_pairs()) {
      picturePairs.removeAll(keepingCapacity: true)
    }
    for y in 0..<picture.rows {
      for x in 0..<picture.columns {
        put(picture.cell(row: y, column: x), row: row + y, column: column + x)
      }
    }
  }

  private func put(_ cell: CoverArt.Cell, row: Int, column: Int) {
    guard row >= 0, row < rows, column >= 0, column < columns else { return }
    let key = Int32(cell.foreground) << 16 | Int32(UInt16(bitPattern: cell.background))
    var pair = picturePairs[key]
    if pair == nil {
      let next = Int32(64 + picturePairs.count)
      // Out of pairs (a terminal with few): the cell is left blank rather than miscoloured.
      guard next < cnc_color_pairs(),
        cnc_init_pair(next, Int32(cell.foreground), Int32(cell.background)) == OK
      else { return }
      picturePairs[key] = next
      pair = next
    }
    _ = cnc_put_cell(
      Int32(row), Int32(column), wchar_t(bitPattern: cell.character.value), pair ?? 0)
  }

  // MARK: Pictures (kitty's graphics protocol, sixels)

  /// Where a picture is shown: which, and over which cells.
  private struct Placement: Equatable {
    var image: CoverImage
    var row: Int
    var column: Int
    var columns: Int
    var rows: Int
  }

  /// How the terminal draws pictures: kitty's graphics protocol (it answered the graphics
  /// query), or sixels (its device attributes say so, and it did not answer that query); nil:
  /// not at all, or the size of its cells in pixels is not known.
  private(set) var pictureProtocol: PictureProtocol?
  /// The picture this frame draws, and the one on the terminal now.
  private var pictureWanted: Placement?
  private var pictureShown: Placement?
  /// The id hark's picture has on the terminal (one at a time).
  private let pictureID = 7_263

  /// The size of a cell in pixels: as the terminal answered `CSI 16 t` (kitty, foot, mlterm,
  /// WezTerm), else from the window's size in pixels (TIOCGWINSZ; xterm's counts its border,
  /// so a cell can come out a pixel or two too tall, `endFrame`). Nil when neither is known,
  /// or while the answer to a query sent on a resize is awaited.
  var cellPixels: (width: Int, height: Int)? {
    if cellSizeAwaited { return nil }
    if let cell = cellFromTerminal {
      return (min(cell.width, 170), min(cell.height, 340))
    }
    var w: Int32 = 0
    var h: Int32 = 0
    cnc_window_pixels(1, &w, &h)
    guard columns > 0, rows > 0, Int(w) / columns > 0, Int(h) / rows > 0 else { return nil }
    let cell = Self.cellSize(window: (Int(w), Int(h)), columns: columns, rows: rows)
    // hark-cover takes at most 4096 pixels a side; the cover is at most 24 x 12 cells.
    return (min(cell.width, 170), min(cell.height, 340))
  }

  /// A cell's size from the window's in pixels. xterm counts its border (on each side, the
  /// same across and down) and kitty and foot do not: the smallest border that leaves both
  /// sides a whole number of cells is taken (none, for those), else none.
  static func cellSize(window: (Int, Int), columns: Int, rows: Int) -> (width: Int, height: Int) {
    for border in 0...64 where window.0 - 2 * border >= columns && window.1 - 2 * border >= rows {
      let (w, h) = (window.0 - 2 * border, window.1 - 2 * border)
      if w % columns == 0 && h % rows == 0 { return (w / columns, h / rows) }
    }
    return (window.0 / columns, window.1 / rows)
  }

  /// The cell size the terminal last answered, and whether an answer to a new query is awaited
  /// (the window's size changed: a font change changes the cells).
  private var cellFromTerminal: (width: Int, height: Int)?
  private(set) var cellSizeAwaited = false
  /// The window's size in pixels when the cell size was last asked for.
  private var windowPixels: (Int32, Int32) = (0, 0)

  /// The terminal answered `CSI 16 t`; whether the cell size changed.
  func cellSizeAnswered(width: Int, height: Int) -> Bool {
    let changed = cellFromTerminal.map { $0 != (width, height) } ?? true
    cellFromTerminal = (width, height)
    cellSizeAwaited = false
    return changed
  }

  /// After a resize: asks for the cell size again (with device attributes after it, which
  /// every terminal answers) when the terminal answered before and the window's pixels
  /// changed. Whether it asked.
  func askCellSizeAgain() -> Bool {
    var w: Int32 = 0
    var h: Int32 = 0
    cnc_window_pixels(1, &w, &h)
    guard cellFromTerminal != nil, (w, h) != windowPixels else { return false }
    windowPixels = (w, h)
    cellSizeAwaited = true
    writeRaw("\u{1B}[16t\u{1B}[c")
    return true
  }

  /// The terminal said whether it draws pictures with kitty's protocol; it does so only when
  /// its cells' size is known.
  func graphicsAnswered(_ ok: Bool) {
    if ok && cellPixels != nil {
      pictureProtocol = .kitty
    } else if pictureProtocol == .kitty {
      pictureProtocol = nil
    }
  }

  /// The terminal's device attributes came (after its answer to the graphics query, if any):
  /// sixels, unless it speaks kitty's protocol. Whether pictures are now drawn as sixels.
  func deviceAttributesAnswered(sixel: Bool) -> Bool {
    // A terminal that did not answer a cell size query sent before this never will.
    cellSizeAwaited = false
    guard pictureProtocol == nil, sixel, cellPixels != nil else { return false }
    pictureProtocol = .sixel
    return true
  }

  /// The Linux console and VT-likes: asked nothing about pictures, which they would print.
  private static var isConsole: Bool {
    let term = environment("TERM") ?? ""
    return term == "linux" || term.hasPrefix("vt")
  }

  /// Whether `image` is in the form this terminal draws (a sixel picture, for cells of the
  /// size they are now).
  private func canDraw(_ image: CoverImage) -> Bool {
    switch (pictureProtocol, image.form) {
    case (.kitty?, .rgba): true
    case (.sixel?, .sixel(_, let width, let height)):
      cellPixels.map { $0 == (width, height) } ?? false
    default: false
    }
  }

  /// Sixels are drawn into the cells, not over them. Curses knows those cells as blank: it may
  /// clear to the end of a line across them, and it scrolls lines that moved up or down (with
  /// the picture's pixels in them, which leaves copies of it where nothing is drawn again). So
  /// each frame notes what it puts in each row, and while a sixel picture is shown, a row that
  /// differs from the last frame's is marked as unknown to curses (wredrawln): curses then
  /// writes it whole, in place, and never moves it. The picture is drawn again after a frame
  /// that wrote any of its rows.
  private var rowsDrawn: [Int: Int] = [:]
  private var rowsDrawnBefore: [Int: Int] = [:]

  private func note(_ row: Int, _ text: String, _ column: Int, _ style: Style) {
    var h = Hasher()
    h.combine(rowsDrawn[row] ?? 0)
    h.combine(text)
    h.combine(column)
    h.combine(style)
    rowsDrawn[row] = h.finalize()
  }

  /// Before curses' refresh, while a sixel picture is shown: the rows that changed are sent
  /// whole, and those of a picture that goes too (which wipes it).
  private func prepareSixels() {
    defer {
      rowsDrawnBefore = rowsDrawn
      rowsDrawn.removeAll(keepingCapacity: true)
    }
    guard let shown = pictureShown else { return }
    let rowsOfIt = shown.row..<(shown.row + shown.rows)
    let goes = pictureWanted != shown
    var rewritten = false
    for row in 0..<rows where rowsDrawn[row] != rowsDrawnBefore[row] || (goes && rowsOfIt ~= row) {
      _ = wredrawln(cnc_stdscr(), Int32(row), 1)
      if rowsOfIt ~= row { rewritten = true }
    }
    if goes || rewritten { pictureShown = nil }
  }

  /// Sends the wanted picture when it is not the one shown, and takes away one no longer wanted.
  /// After curses' refresh: the cursor is put back where curses left it (DECSC/DECRC), and the
  /// picture does not move it (C=1), so curses' idea of the screen stays true.
  private func placePicture() {
    defer { pictureWanted = nil }
    guard pictureWanted != pictureShown else { return }
    var out = "\u{1B}7"
    if pictureShown != nil, pictureProtocol == .kitty {
      out += "\u{1B}_Ga=d,d=I,i=\(pictureID),q=2\u{1B}\\"
    }
    pictureShown = nil
    if let p = pictureWanted, case .sixel(let sixel, _, _) = p.image.form {
      // Drawn from the top left cell down and right, no larger than the cells (made for
      // their size, `canDraw`): it ends above the now-playing bar and never scrolls the
      // screen; the cursor comes back with DECRC.
      out += "\u{1B}[\(p.row + 1);\(p.column + 1)H"
      out += String(decoding: sixel, as: UTF8.self)
      pictureShown = p
    } else if let p = pictureWanted, case .rgba(let width, let height, let rgba) = p.image.form {
      out += "\u{1B}[\(p.row + 1);\(p.column + 1)H"
      let data = Base64.encode(rgba)
      let chunk = 4_096
      var at = data.startIndex
      var first = true
      while at < data.endIndex {
        let next = data.index(at, offsetBy: chunk, limitedBy: data.endIndex) ?? data.endIndex
        let more = next < data.endIndex ? 1 : 0
        let keys =
          first
          ? "a=T,f=32,s=\(width),v=\(height),i=\(pictureID),c=\(p.columns),"
            + "r=\(p.rows),C=1,q=2,m=\(more)"
          : "m=\(more)"
        out += "\u{1B}_G\(keys);" + String(decoding: data[at..<next], as: UTF8.self) + "\u{1B}\\"
        at = next
        first = false
      }
      pictureShown = p
    }
    out += "\u{1B}8"
    writeRaw(out)
  }

  /// Takes hark's picture off the terminal (and out of its memory); a sixel picture goes with
  /// the cells it is drawn in, which the next frame sends again.
  private func removePicture() {
    guard pictureShown != nil else { return }
    if pictureProtocol == .kitty { writeRaw("\u{1B}_Ga=d,d=I,i=\(pictureID),q=2\u{1B}\\") }
    pictureShown = nil
  }

  /// Starts a frame: curses compares it with what is on the terminal and sends only changes.
  func beginFrame() {
    guard isOpen, !isSuspended else { return }
    erase()
  }

  func endFrame() {
    guard isOpen, !isSuspended else { return }
    if pictureProtocol == .sixel { prepareSixels() }
    refresh()
    guard pictureProtocol != nil else { return }
    let before = pictureShown
    placePicture()
    // A sixel picture made for cells taller than they are (xterm counts its border in the
    // window's pixels and does not answer CSI 16 t) reaches into the rows below it: they are
    // written again whole, which wipes what it put there.
    if pictureProtocol == .sixel, let p = pictureShown, p != before, p.row + p.rows < rows {
      _ = wredrawln(cnc_stdscr(), Int32(p.row + p.rows), Int32(rows - p.row - p.rows))
      refresh()
    }
  }

  /// The next frame is drawn from scratch (after garbage, a resume, Ctrl-L); a picture too.
  func repaintAll() {
    guard isOpen, !isSuspended else { return }
    clearok(cnc_stdscr(), true)
    removePicture()
  }

  /// Takes the terminal's new size from the kernel; true when it changed.
  @discardableResult
  func updateSize() -> Bool {
    var r: Int32 = 0
    var c: Int32 = 0
    if cnc_window_size(1, &r, &c) != 0 {
      cnc_getmaxyx(cnc_stdscr(), &r, &c)
    }
    let changed = Int(r) != rows || Int(c) != columns
    // Curses learns the size only from us: it never sees SIGWINCH (ours) nor reads input.
    resizeterm(r, c)
    rows = Int(r)
    columns = Int(c)
    return changed
  }

  // MARK: The kitty keyboard protocol

  /// Asks whether the terminal speaks the protocol (`CSI ? u`), followed by a primary device
  /// attributes query that every terminal answers, so an answer to the first is not waited
  /// for: the decoder reports either answer when it comes.
  func queryKeyboardProtocol() {
    // And whether it draws pictures (kitty's graphics protocol: a 1-pixel query it answers
    // and does not keep). Not on the Linux console, which would print what it does not know.
    // And the size of a cell in pixels (`CSI 16 t`), which no terminal prints.
    let graphics =
      Self.isConsole || cellPixels == nil
      ? "" : "\u{1B}_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\u{1B}\\"
    var w: Int32 = 0
    var h: Int32 = 0
    cnc_window_pixels(1, &w, &h)
    windowPixels = (w, h)
    writeRaw("\u{1B}[?u" + graphics + "\u{1B}[16t\u{1B}[c")
  }

  /// Turns on "disambiguate escape codes" (flag 1): Esc, Alt and Ctrl keys and the media keys
  /// arrive as `CSI … u`. Flag 8 (every key as an escape code) is not needed for media keys.
  func pushKeyboardProtocol() {
    guard !keyboardProtocolPushed, isOpen else { return }
    writeRaw("\u{1B}[>1u")
    keyboardProtocolPushed = true
    EmergencyRestore.shared.keyboardProtocolPushed.store(true, ordering: .releasing)
  }

  private func popKeyboardProtocol() {
    guard keyboardProtocolPushed else { return }
    writeRaw("\u{1B}[<u")
    keyboardProtocolPushed = false
    EmergencyRestore.shared.keyboardProtocolPushed.store(false, ordering: .releasing)
  }

  private func writeRaw(_ s: String) { try? writeAll(1, s.utf8) }

  // MARK: Giving the terminal back

  /// Ctrl-Z: gives the terminal back as it was (the protocol popped before leaving the
  /// alternate screen, whose stack it is on); `resume` takes it again.
  func suspend() {
    guard isOpen, !isSuspended else { return }
    removePicture()
    let hadProtocol = keyboardProtocolPushed
    popKeyboardProtocol()
    keyboardProtocolPushed = hadProtocol  // remembered for resume
    EmergencyRestore.shared.keyboardProtocolPushed.store(false, ordering: .releasing)
    curs_set(1)
    endwin()
    isSuspended = true
  }

  /// After `fg`: curses restores its modes and the alternate screen on the next refresh.
  func resume() {
    guard isOpen, isSuspended else { return }
    isSuspended = false
    refresh()
    curs_set(0)
    if keyboardProtocolPushed {
      keyboardProtocolPushed = false
      pushKeyboardProtocol()
    }
    updateSize()
    repaintAll()
  }

  /// Gives the terminal back for good: protocol popped, cursor shown, curses ended.
  func close() {
    guard isOpen else { return }
    if !isSuspended {
      removePicture()
      popKeyboardProtocol()
      curs_set(1)
      endwin()
    }
    isOpen = false
    EmergencyRestore.shared.disarm()
  }
}

/// What gives the terminal back when the process dies without `close` (a crash, `exit` from
/// another thread): async-signal-safe, so only preallocated bytes, write(2) and tcsetattr(3).
final class EmergencyRestore: @unchecked Sendable {
  static let shared = EmergencyRestore()

  private let termios = UnsafeMutablePointer<Glibc.termios>.allocate(capacity: 1)
  private let haveTermios = Atomic<Bool>(false)
  private let sequence = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
  private let sequenceLength = Atomic<Int>(0)
  let armed = Atomic<Bool>(false)
  let keyboardProtocolPushed = Atomic<Bool>(false)

  private init() {}

  /// Remembers the terminal's modes before curses changes them.
  func saveTerminalModes() {
    if tcgetattr(0, termios) == 0 { haveTermios.store(true, ordering: .releasing) }
  }

  func arm(exitSequence: [UInt8]) {
    let n = min(exitSequence.count, 256)
    for i in 0..<n { sequence[i] = exitSequence[i] }
    sequenceLength.store(n, ordering: .releasing)
    armed.store(true, ordering: .releasing)
  }

  func disarm() { armed.store(false, ordering: .releasing) }

  /// Restores the terminal if the interface still holds it. Async-signal-safe.
  func restore() {
    guard armed.exchange(false, ordering: .acquiringAndReleasing) else { return }
    if keyboardProtocolPushed.load(ordering: .acquiring) {
      let pop: StaticString = "\u{1B}[<u"
      _ = write(1, pop.utf8Start, pop.utf8CodeUnitCount)
    }
    _ = write(1, sequence, sequenceLength.load(ordering: .acquiring))
    if haveTermios.load(ordering: .acquiring) { tcsetattr(0, TCSANOW, termios) }
  }
}
