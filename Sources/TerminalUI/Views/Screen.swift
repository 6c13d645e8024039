import AudioCore
import Lyrics
import PlayerCore
import SessionCore

/// Draws the whole interface from an `InterfaceState`: the tab bar, the library or the queue,
/// the now-playing bar (always), the status line and the key hints, and an overlay on top.
/// Every row is drawn to its full width, so nothing of an earlier frame survives.
public enum Screen {
  public static func draw(_ s: InterfaceState, on c: some Canvas, now: UInt64) {
    var layout = Layout(rows: c.rows, columns: c.columns)
    guard !layout.isTooSmall else {
      drawTooSmall(s, on: c, now: now)
      return
    }
    let art = cover(s, layout)
    let beside = lyricsBesideWidth(s, layout)
    let side = max(art?.columns ?? 0, beside ?? 0)
    if side > 0 { layout.listWidth = c.columns - side - 1 }
    drawTabs(s, on: c, layout)
    drawList(s, on: c, layout, now: now)
    if side > 0 {
      // The strip right of the list: the lyrics above the cover (or all of it).
      for r in layout.headerRow..<(layout.listTop + layout.listHeight) {
        line(c, r, "", .normal, column: layout.listWidth)
      }
    }
    if let beside {
      let bottom = layout.listTop + layout.listHeight - (art.map { $0.rows + 1 } ?? 0)
      drawLyrics(
        s, on: c, top: layout.headerRow, height: bottom - layout.headerRow,
        left: c.columns - beside, width: beside, now: now)
    }
    if let art { drawCover(art, on: c, layout) }
    drawNowPlaying(s, on: c, layout, now: now)
    drawProgress(s, on: c, layout, now: now)
    drawStatus(s, on: c, layout, now: now)
    drawHints(s, on: c, layout)
    switch s.overlay {
    case .help(let top)?: drawHelp(s, top: top, on: c, layout)
    case .routePicker(let p)?: drawPicker(s, position: p, on: c, layout)
    case nil: break
    }
  }

  // MARK: Pieces

  private static func line(
    _ c: some Canvas, _ row: Int, _ text: String, _ style: Style, column: Int = 0, width: Int? = nil
  ) {
    let w = width ?? (c.columns - column)
    // A control character in a name or tag is drawn as its escape ("\t", "\x1b"), which is
    // what TextWidth measured it as when the row's columns were laid out.
    c.put(TextWidth.fit(text, to: w), row: row, column: column, style: style)
  }

  /// `text` cut from the left ("…/Music/Album") to `width` cells.
  static func truncateLeft(_ text: String, to width: Int) -> String {
    guard width > 0 else { return "" }
    if TextWidth.of(text) <= width { return text }
    var kept: [Character] = []
    var used = 1
    for ch in text.reversed() {
      let w = TextWidth.of(ch.unicodeScalars)
      if used + w > width { break }
      kept.append(ch)
      used += w
    }
    return "…" + String(kept.reversed())
  }

  private static func drawTooSmall(_ s: InterfaceState, on c: some Canvas, now: UInt64) {
    for r in 0..<c.rows { line(c, r, "", .normal) }
    guard c.rows > 0 else { return }
    let state = "\(Format.stateGlyph(s.snapshot.state)) \(Format.state(s.snapshot))"
    line(c, 0, state, .nowPlaying)
    if c.rows > 1 { line(c, 1, s.snapshot.title ?? "", .normal) }
    if c.rows > 2 { line(c, c.rows - 1, "Window too small", .dim) }
  }

  private static func drawTabs(_ s: InterfaceState, on c: some Canvas, _ layout: Layout) {
    line(c, layout.tabRow, "", .bar)
    var x = 0
    func tab(_ text: String, _ active: Bool) {
      let w = TextWidth.of(text)
      guard x + w <= c.columns else { return }
      c.put(text, row: layout.tabRow, column: x, style: active ? .activeTab : .bar)
      x += w
    }
    tab(" hark ", false)
    tab(" \(s.firstKey(.libraryView)) Library ", s.view == .library)
    tab(" \(s.firstKey(.queueView)) Queue (\(s.snapshot.queue.count)) ", s.view == .queue)
    tab(" \(s.firstKey(.lyricsView)) Lyrics ", s.view == .lyrics)
    // Offered where there are chapters to show.
    if !s.snapshot.chapters.isEmpty || s.view == .chapters {
      tab(" \(s.firstKey(.chaptersView)) Chapters ", s.view == .chapters)
    }
    let right: String
    switch s.view {
    case .lyrics:
      right = s.currentLyrics.map(lyricsSource) ?? ""
    case .chapters:
      let n = s.snapshot.chapters.count
      right = n == 0 ? "" : n == 1 ? "1 chapter" : "\(n) chapters"
    case .library:
      // Search results: how many, and whether the list holds them all.
      right =
        s.searchFound.map { "Search: " + $0 }
        ?? IndexView(path: s.folder)?.title ?? tilde(s.folder, home: s.homeFolder)
    case .queue:
      right = s.queueSeconds.map { "\(Format.time($0)) in all" } ?? ""
    }
    let room = c.columns - x - 2
    if room > 4 {
      let cut = truncateLeft(right, to: room)
      c.put(
        TextWidth.fitRight(cut + " ", to: c.columns - x), row: layout.tabRow, column: x, style: .bar
      )
    }
  }

  /// `path` with the home folder written `~`, as a shell prompt shows it.
  static func tilde(_ path: String, home: String?) -> String {
    guard let home, home.count > 1 else { return path }
    let h = home.hasSuffix("/") ? String(home.dropLast()) : home
    if path == h { return "~" }
    return path.hasPrefix(h + "/") ? "~" + path.dropFirst(h.count) : path
  }

  private static func drawList(
    _ s: InterfaceState, on c: some Canvas, _ layout: Layout, now: UInt64
  ) {
    if s.view == .lyrics {
      drawLyrics(
        s, on: c, top: layout.headerRow, height: layout.listHeight + 1, left: 0,
        width: layout.listWidth, now: now)
      return
    }
    if s.view == .chapters {
      drawChapters(s, on: c, layout, now: now)
      return
    }
    let cols = columns(s, layout)
    let header = row(
      marker: "", number: "#", title: "Title", artist: "Artist", album: "Album", year: "Year",
      time: "Time", columns: cols)
    line(c, layout.headerRow, header, .header, width: layout.listWidth)
    switch s.view {
    case .library: drawLibrary(s, on: c, layout)
    case .queue: drawQueue(s, on: c, layout)
    case .lyrics, .chapters: break  // above
    }
  }

  /// The list's columns: in the queue, the number column holds the place in the queue, as
  /// wide as the longest.
  static func columns(_ s: InterfaceState, _ layout: Layout) -> ListColumns {
    var cols = layout.columnsForList
    if s.view == .queue, cols.number > 0 {
      let wide = max(cols.number, String(s.snapshot.queue.count).count + 2)
      cols.title -= wide - cols.number
      cols.number = wide
    }
    return cols
  }

  /// One line of the list: each field fitted to its column, a space between columns.
  private static func row(
    marker: String, number: String = "", title: String, artist: String, album: String = "",
    year: String = "", time: String, columns cols: ListColumns
  ) -> String {
    func column(_ text: String, _ width: Int) -> String {
      width > 0 ? TextWidth.fit(text, to: width - 1) + " " : ""
    }
    return TextWidth.fit(marker, to: 2)
      + (cols.number > 0 ? TextWidth.fitRight(number, to: cols.number - 1) + " " : "")
      + column(title, cols.title) + column(artist, cols.artist) + column(album, cols.album)
      + column(year, cols.year) + TextWidth.fitRight(time + " ", to: cols.time)
  }

  private static func drawLibrary(_ s: InterfaceState, on c: some Canvas, _ layout: Layout) {
    let rows = s.libraryRows
    let cols = layout.columnsForList
    let playing = s.snapshot.current?.path
    // The playlists view names its rows in full (the music folder's by their relative paths).
    let inPlaylists = s.folder == IndexView.playlists.path
    let noPlaylists =
      inPlaylists && s.libraryFilter.isEmpty && rows.allSatisfy { $0.kind == .parent }
    for i in 0..<layout.listHeight {
      let r = layout.listTop + i
      let index = s.libraryPosition.top + i
      guard index < rows.count else {
        if noPlaylists && index == rows.count {
          let empty =
            s.lookingForPlaylists
            ? "Looking for playlists in the music folder…"
            : "No playlists: \(s.firstKey(.saveQueue)) saves the queue as one, and the music "
              + "folder's .m3u, .m3u8 and .pls files are listed here"
          line(c, r, "  " + empty, .dim, width: layout.listWidth)
        } else if rows.isEmpty && i == 0 {
          let empty =
            s.folderProblem
            ?? (s.libraryFilter.isEmpty
              ? "No audio files or folders here" : "Nothing here matches '\(s.libraryFilter)'")
          line(c, r, "  " + empty, .dim, width: layout.listWidth)
        } else {
          line(c, r, "", .normal, width: layout.listWidth)
        }
        continue
      }
      let e = rows[index]
      let text: String
      var style: Style
      switch e.kind {
      case .parent:
        text = row(marker: "", title: "../", artist: "", time: "", columns: cols)
        style = .dim
      case .folder:
        // The index's entrances (in the music folder's rows) say what they are.
        let note = e.path.hasPrefix(IndexView.prefix) ? IndexView(path: e.path)?.entranceNote : nil
        text = row(marker: "▸", title: e.name + "/", artist: note ?? "", time: "", columns: cols)
        style = .folder
      case .file:
        let info = s.tags[e.path]
        let isCurrent = e.path == playing
        text = row(
          marker: isCurrent ? Format.stateGlyph(s.snapshot.state) : mark(s.placeMark(of: e.path)),
          number: (e.count ?? info?.track).map(String.init) ?? "",
          title: info?.title ?? Folder.title(fromName: e.name), artist: info?.artist ?? "",
          album: info?.album ?? "", year: info?.year.map(String.init) ?? "",
          time: info?.duration.map(Format.time) ?? "", columns: cols)
        style = isCurrent ? .current : .normal
      case .unplayable(let reason):
        text = row(marker: "✗", title: e.name, artist: reason, time: "", columns: cols)
        style = .dim
      case .playlist:
        text = row(
          marker: "≡", title: inPlaylists ? e.name : Folder.title(fromName: e.name),
          artist: "playlist", time: "",
          columns: cols)
        style = .folder
      }
      if index == s.libraryPosition.selected { style = .selected }
      line(c, r, text, style, width: layout.listWidth)
    }
  }

  private static func drawQueue(_ s: InterfaceState, on c: some Canvas, _ layout: Layout) {
    let rows = s.queueRows
    let places = s.queueRowPlaces
    let cols = columns(s, layout)
    let digits = String(s.snapshot.queue.count).count
    for i in 0..<layout.listHeight {
      let r = layout.listTop + i
      let index = s.queuePosition.top + i
      guard index < rows.count else {
        if rows.isEmpty && i == 0 {
          let empty =
            s.queueFilter.isEmpty
            ? "The queue is empty: in the library, \(s.firstKey(.playSelection)) plays a song "
              + "and \(s.firstKey(.addToQueue)) adds one"
            : "Nothing in the queue matches '\(s.queueFilter)'"
          line(c, r, "  " + empty, .dim, width: layout.listWidth)
        } else {
          line(c, r, "", .normal, width: layout.listWidth)
        }
        continue
      }
      let t = rows[index]
      let number = (places.map { Int($0[index]) } ?? index) + 1
      let isCurrent = t.id == s.snapshot.current?.id
      let failed = s.snapshot.failed[t.id] != nil
      let info = s.tags[t.path]
      // The loaded track's own tags, else what the library read, else the file name.
      let title =
        (isCurrent ? s.snapshot.metadata.title : nil) ?? info?.title
        ?? (isCurrent ? s.snapshot.title : nil)
      let n = String(number)
      // The place in the queue has its column; on a narrow screen it leads the title.
      let label =
        cols.number > 0
        ? (title ?? Folder.title(fromName: t.path))
        : String(repeating: " ", count: max(0, digits - n.count)) + n + ". "
          + (title ?? Folder.title(fromName: t.path))
      let artist = (isCurrent ? s.snapshot.metadata.artist : nil) ?? info?.artist ?? ""
      let time = info?.duration ?? (isCurrent ? s.snapshot.duration : nil)
      let marker =
        failed
        ? "✗" : isCurrent ? Format.stateGlyph(s.snapshot.state) : mark(s.placeMark(of: t.path))
      var style: Style = failed ? .dim : isCurrent ? .current : .normal
      if index == s.queuePosition.selected { style = .selected }
      line(
        c, r,
        row(
          marker: marker, number: cols.number > 0 ? n + "." : "", title: label, artist: artist,
          album: (isCurrent ? s.snapshot.metadata.album : nil) ?? info?.album ?? "",
          year: info?.year.map(String.init) ?? "", time: time.map(Format.time) ?? "",
          columns: cols), style, width: layout.listWidth)
    }
  }

  /// A long recording's mark in a list: ◐ left partway, ✓ heard to its end.
  static func mark(_ place: PlaceMark?) -> String {
    switch place {
    case .inProgress?: "◐"
    case .played?: "✓"
    case nil: ""
    }
  }

  // MARK: Chapters

  /// The chapters of the track playing: number, title, where each starts and how long it is;
  /// the one heard marked, the one picked selected.
  private static func drawChapters(
    _ s: InterfaceState, on c: some Canvas, _ layout: Layout, now: UInt64
  ) {
    let cols = layout.columnsForList
    let chapters = s.snapshot.chapters
    let header = row(
      marker: "", number: "#", title: "Chapter", artist: "Starts", time: "Length", columns: cols)
    line(c, layout.headerRow, header, .header, width: layout.listWidth)
    let heard = s.snapshot.chapterIndex(at: s.snapshot.position(at: now))
    let digits = String(chapters.count).count
    for i in 0..<layout.listHeight {
      let r = layout.listTop + i
      let index = s.chaptersPosition.top + i
      guard chapters.indices.contains(index) else {
        if chapters.isEmpty && i == 0 {
          let empty =
            s.snapshot.current == nil
            ? "Nothing is playing"
            : "The track playing has no chapters: an audiobook's, a podcast's (ID3 CHAP), "
              + "Vorbis comments' CHAPTERxx and Matroska's are listed here"
          line(c, r, "  " + empty, .dim, width: layout.listWidth)
        } else {
          line(c, r, "", .normal, width: layout.listWidth)
        }
        continue
      }
      let chapter = chapters[index]
      let n = String(index + 1)
      let title = chapter.title ?? "Chapter \(index + 1)"
      let label =
        cols.number > 0
        ? title : String(repeating: " ", count: max(0, digits - n.count)) + n + ". " + title
      let end = Chapter.end(of: index, in: chapters, duration: s.snapshot.duration)
      var style: Style = index == heard ? .current : .normal
      if index == s.chaptersPosition.selected { style = .selected }
      line(
        c, r,
        row(
          marker: index == heard ? Format.stateGlyph(s.snapshot.state) : "",
          number: cols.number > 0 ? n + "." : "", title: label,
          artist: Format.time(chapter.start),
          time: end.map { Format.time($0 - chapter.start) } ?? "", columns: cols),
        style, width: layout.listWidth)
    }
  }

  // MARK: Lyrics

  /// "synced lyrics from Song.lrc", "lyrics from the tags (USLT)".
  static func lyricsSource(_ l: Lyrics) -> String {
    let kind = l.isSynced ? "synced lyrics" : "lyrics"
    switch l.source {
    case .file(let path):
      return kind + " from " + (path.split(separator: "/").last.map(String.init) ?? path)
    case .tag(let tag): return kind + " from the tags (\(tag))"
    }
  }

  /// The width of the lyrics beside the list: with lyrics_beside, outside the lyrics view, on a
  /// screen of 100 columns or more, when the track playing has lyrics; nil otherwise.
  static func lyricsBesideWidth(_ s: InterfaceState, _ layout: Layout) -> Int? {
    guard s.lyricsBeside, s.view != .lyrics, s.overlay == nil, layout.columns >= 100,
      s.currentLyrics != nil
    else { return nil }
    return min(48, layout.columns / 3)
  }

  /// The lyrics in a box of the screen: a title row, then the lines, the one sung highlighted
  /// (its words as they are sung) and kept in the middle, or the line picked by hand.
  private static func drawLyrics(
    _ s: InterfaceState, on c: some Canvas, top: Int, height: Int, left: Int, width: Int,
    now: UInt64
  ) {
    guard height > 0, width > 4 else { return }
    let title = s.snapshot.title.map { "Lyrics of '\($0)'" } ?? "Lyrics"
    line(c, top, " " + title, .header, column: left, width: width)
    let rows = height - 1
    guard rows > 0 else { return }
    let first = top + 1
    func blank(from i: Int) {
      for r in i..<rows { line(c, first + r, "", .normal, column: left, width: width) }
    }
    guard let lyrics = s.currentLyrics else {
      let path = s.snapshot.current?.path
      let text: String
      if path == nil {
        text = "Nothing is playing"
      } else if path?.contains("://") == true {
        text = "A stream has no lyrics to show"
      } else if s.lyricsPane.path != path {
        text = "Looking for lyrics…"
      } else if let problem = s.lyricsPane.problem {
        text = "The lyrics cannot be read: " + problem
      } else {
        text = "No lyrics for this track: an .lrc file beside it, or a lyrics tag, is shown here"
      }
      line(c, first, "  " + text, .dim, column: left, width: width)
      blank(from: 1)
      return
    }
    let count = lyrics.lines.count
    let sung = s.lyricsLine(at: now)
    let following = s.lyricsPane.isFollowing(at: now)
    let focus: Int
    let picked: Int?
    if !lyrics.isSynced {
      focus = -1
      picked = nil
    } else if following {
      focus = sung ?? 0
      picked = nil
    } else {
      focus = s.lyricsPane.position.selected
      picked = focus
    }
    // The focus in the middle (synced), or the text from where it was scrolled to.
    let start =
      lyrics.isSynced
      ? max(0, min(focus - rows / 2, count - rows))
      : min(s.lyricsPane.position.top, max(0, count - rows))
    let position = s.snapshot.position(at: now)
    for i in 0..<rows {
      let index = start + i
      guard index >= 0, index < count else {
        line(c, first + i, "", .normal, column: left, width: width)
        continue
      }
      let l = lyrics.lines[index]
      let marker = index == picked ? "▸ " : "  "
      if index == sung {
        let done = lyrics.wordsSung(inLine: index, at: position)
        if l.words.isEmpty || done >= l.words.count {
          line(
            c, first + i, marker + l.text, index == picked ? .selected : .current, column: left,
            width: width)
        } else {
          // The words sung so far in the line's style, the rest as the other lines.
          let sungText = marker + l.words[..<done].map(\.text).joined()
          let rest = l.words[done...].map(\.text).joined()
          line(c, first + i, "", .normal, column: left, width: width)
          let w = TextWidth.of(sungText)
          c.put(TextWidth.fit(sungText, to: width), row: first + i, column: left, style: .current)
          if w < width {
            c.put(
              TextWidth.fit(rest, to: width - w), row: first + i, column: left + w, style: .normal)
          }
        }
      } else {
        let style: Style =
          index == picked ? .selected : (sung.map { index < $0 } == true ? .dim : .normal)
        line(c, first + i, marker + l.text, style, column: left, width: width)
      }
    }
  }

  /// The cover to show: the playing track's, when it has one, the setting allows and it fits.
  static func cover(_ s: InterfaceState, _ layout: Layout) -> CoverArt? {
    // Not under the help or the output picker: a picture the terminal draws would lie over them.
    guard s.showsCover, s.overlay == nil, let shown = s.cover,
      shown.path == s.snapshot.current?.path,
      let room = layout.coverCells, shown.art.columns <= room.columns,
      shown.art.rows <= room.rows
    else { return nil }
    return shown.art
  }

  /// The picture at the bottom right of the list area, just above the now-playing bar; the
  /// strip above it and the column left of it blank.
  private static func drawCover(_ art: CoverArt, on c: some Canvas, _ layout: Layout) {
    let left = c.columns - art.columns
    let top = layout.listTop + layout.listHeight - art.rows
    for r in layout.headerRow..<(layout.listTop + layout.listHeight) {
      line(c, r, "", .normal, column: layout.listWidth)
    }
    c.put(art, row: top, column: left)
  }

  private static func drawNowPlaying(
    _ s: InterfaceState, on c: some Canvas, _ layout: Layout, now: UInt64
  ) {
    let snap = s.snapshot
    let title: String
    // Until the track is loaded the snapshot has only its file name; the library may have
    // read its tags already.
    let info = snap.current.flatMap { s.tags[$0.path] }
    if let t = snap.metadata.title ?? info?.title ?? snap.title {
      title = Format.titleAndArtist(t, snap.metadata.artist ?? info?.artist)
    } else {
      title = snap.queue.isEmpty ? "Nothing queued" : ""
    }
    // The chapter heard, after the title: "· ch 2/3 The Middle".
    let chapter = s.chapterLine(at: now).map { " · " + $0 } ?? ""
    let left = " \(Format.stateGlyph(snap.state)) \(Format.state(snap))   \(title)\(chapter)"
    // The ReplayGain the track plays at, when one is applied: "RG −6.5 dB · ".
    let gain = snap.metadata.replayGain.map { "RG \(Format.decibels($0)) · " } ?? ""
    // The sleep timer while it runs: "sleep 29:41 · ".
    let sleep = Format.sleepTimer(snap, now: now).map { $0 + " · " } ?? ""
    // The speed, when it is not as recorded: "1.5× · ".
    let speed =
      snap.current != nil && snap.rate != 1
      ? PlaybackRate(clamping: snap.rate).description + " · " : ""
    let right =
      sleep + speed + gain
      + "shuffle \(snap.shuffle ? "on" : "off") · \(Format.repeatMode(snap.repeatMode)) "
    let rw = TextWidth.of(right)
    if c.columns - rw >= 40 {
      line(c, layout.nowPlayingRow, left, .nowPlaying, width: c.columns - rw)
      c.put(right, row: layout.nowPlayingRow, column: c.columns - rw, style: .nowPlaying)
    } else {
      line(c, layout.nowPlayingRow, left, .nowPlaying)
    }
  }

  private static func drawProgress(
    _ s: InterfaceState, on c: some Canvas, _ layout: Layout, now: UInt64
  ) {
    let snap = s.snapshot
    let loaded = snap.duration != nil || snap.position > 0
    let position = snap.position(at: now)
    let elapsed = " " + (loaded ? Format.time(position) : "-:--") + " "
    let total = " " + (snap.isLive ? "live" : Format.time(snap.duration)) + "   "
    let route = snap.route.map { "  \($0.kind.rawValue)" } ?? ""
    // The volume bar shrinks, then the route goes, before the progress bar gets too short.
    var volumeBar = 10
    var right = total + Format.volume(snap.volume, barWidth: volumeBar) + route + " "
    func barRoom() -> Int { c.columns - TextWidth.of(elapsed) - TextWidth.of(right) }
    if barRoom() < 24 {
      volumeBar = 0
      right = total + Format.volume(snap.volume, barWidth: 0) + route + " "
    }
    if barRoom() < 12 { right = total + Format.volume(snap.volume, barWidth: 0) + " " }
    if barRoom() < 8 { right = total }
    let fraction = snap.duration.map { $0 > 0 ? position / $0 : 0 } ?? 0
    let width = max(0, barRoom())
    line(c, layout.progressRow, "", .normal)
    c.put(elapsed, row: layout.progressRow, column: 0, style: .normal)
    c.put(
      Format.bar(fraction, width: width), row: layout.progressRow,
      column: TextWidth.of(elapsed), style: .progress)
    c.put(
      TextWidth.truncate(right, to: c.columns - TextWidth.of(elapsed) - width),
      row: layout.progressRow, column: TextWidth.of(elapsed) + width, style: .normal)
  }

  /// The status line: a fresh message, else why playback is paused or quiet, else the last
  /// problem, else background news (the index scan's).
  static func status(_ s: InterfaceState, now: UInt64) -> (String, Style)? {
    let fresh = s.message.flatMap { $0.expires > now ? $0 : nil }
    if let m = fresh, !m.isBackground { return (m.text, m.style) }
    if let r = s.snapshot.reason { return (r, .warning) }
    if let p = s.snapshot.problem { return (p.description, .error) }
    if let m = fresh { return (m.text, m.style) }
    return nil
  }

  private static func drawStatus(
    _ s: InterfaceState, on c: some Canvas, _ layout: Layout, now: UInt64
  ) {
    let (text, style) = status(s, now: now) ?? ("", .normal)
    line(c, layout.statusRow, " " + text, style)
  }

  private static func drawHints(_ s: InterfaceState, on c: some Canvas, _ layout: Layout) {
    if let p = s.prompt {
      let (ask, help) =
        switch p.kind {
        case .saveQueue: ("Save the queue as: ", "(Enter saves, Esc cancels)")
        case .replacePlaylist(let name):
          (
            "Replace the playlist '\(name)' with the queue? ",
            "(y replaces, n renames, Esc cancels)"
          )
        case .goTo: ("Go to: ", "(1:30, 90, +10, -0:15; Enter goes, Esc cancels)")
        }
      line(c, layout.hintRow, " " + ask + p.text + "▏  " + help, .normal)
      return
    }
    if s.isTyping {
      let prompt = " /" + s.filter
      let help = "  (Enter keeps the filter, Esc clears it)"
      line(c, layout.hintRow, prompt + "▏" + help, .normal)
      return
    }
    if !s.filter.isEmpty {
      let found = s.view == .library ? s.searchFound.map { ": " + $0 } ?? "" : ""
      line(
        c, layout.hintRow,
        " Filter: '\(s.filter)'\(found) (\(s.firstKey(.search)) edits, esc clears)", .dim)
      return
    }
    let pairs: [(UIAction, String)] = [
      (.playPause, "play/pause"), (.next, "next"), (.previous, "prev"), (.routePicker, "output"),
      (.search, "search"), (.toggleView, "view"), (.help, "help"),
      (.quit, "quit"),
    ]
    let text = pairs.compactMap { action, word in
      s.bindings.keyNames(action).first.map { "\($0) \(word)" }
    }.joined(separator: "  ")
    line(c, layout.hintRow, " " + text, .dim)
  }

  // MARK: Overlays

  private static func box(
    _ c: some Canvas, top: Int, left: Int, height: Int, width: Int, title: String, footer: String
  ) {
    guard height >= 2, width >= 4 else { return }
    let inner = width - 2
    let t = TextWidth.truncate(" \(title) ", to: inner - 1)
    c.put(
      "┌─" + t + String(repeating: "─", count: max(0, inner - 1 - TextWidth.of(t))) + "┐",
      row: top, column: left, style: .popup)
    for r in (top + 1)..<(top + height - 1) {
      c.put("│" + String(repeating: " ", count: inner) + "│", row: r, column: left, style: .popup)
    }
    let f = TextWidth.truncate(" \(footer) ", to: inner - 1)
    c.put(
      "└─" + f + String(repeating: "─", count: max(0, inner - 1 - TextWidth.of(f))) + "┘",
      row: top + height - 1, column: left, style: .popup)
  }

  private static func drawHelp(
    _ s: InterfaceState, top: Int, on c: some Canvas, _ layout: Layout
  ) {
    let lines = HelpText.lines(s.bindings)
    let width = min(c.columns - 2, 86)
    let height = min(c.rows - 2, lines.count + 2)
    let shown = height - 2
    let left = (c.columns - width) / 2
    let boxTop = 1
    let first = min(top, max(0, lines.count - shown))
    let last = min(lines.count, first + shown)
    box(
      c, top: boxTop, left: left, height: height, width: width,
      title: "Keys — \(s.firstKey(.down))/\(s.firstKey(.up)) scroll, esc closes",
      footer: "\(first + 1)–\(last) of \(lines.count); rebind in config.toml [keys]")
    let inner = width - 4
    let kw = inner * 30 / 100
    let aw = inner * 22 / 100
    let sw = inner - kw - aw
    for (i, entry) in lines[first..<last].enumerated() {
      let text =
        TextWidth.fit(entry.keys, to: kw - 1) + " " + TextWidth.fit(entry.action, to: aw - 1) + " "
        + TextWidth.fit(entry.summary, to: sw)
      c.put(text, row: boxTop + 1 + i, column: left + 2, style: .popup)
    }
  }

  private static func drawPicker(
    _ s: InterfaceState, position p: ListPosition, on c: some Canvas, _ layout: Layout
  ) {
    let list = s.outputs ?? []
    let shown = max(1, min(list.count, s.pickerHeight))
    let width = min(c.columns - 4, 76)
    let height = shown + 2
    let left = (c.columns - width) / 2
    let top = max(1, (c.rows - height) / 2 - 1)
    box(
      c, top: top, left: left, height: height, width: width,
      title: "Output — now '\(s.snapshot.deviceName)'",
      footer: "\(s.firstKey(.playSelection)) picks, esc closes")
    let inner = width - 4
    guard let outputs = s.outputs else {
      c.put(
        TextWidth.fit("Looking for outputs…", to: inner), row: top + 1, column: left + 2,
        style: .popup)
      return
    }
    guard !outputs.isEmpty else {
      c.put(
        TextWidth.fit("No outputs found ('aplay -L' lists them)", to: inner), row: top + 1,
        column: left + 2, style: .popup)
      return
    }
    let nameWidth = min(max(outputs.map { TextWidth.of($0.name) }.max() ?? 8, 8), inner / 2)
    for i in 0..<shown {
      let index = p.top + i
      guard index < outputs.count else { break }
      let o = outputs[index]
      let mark = o.name == s.snapshot.deviceName ? "● " : "○ "
      let text =
        mark + TextWidth.fit(o.name, to: nameWidth) + "  "
        + TextWidth.fit(o.summary, to: max(0, inner - nameWidth - 4))
      c.put(
        TextWidth.fit(text, to: inner), row: top + 1 + i, column: left + 2,
        style: index == p.selected ? .popupSelected : .popup)
    }
  }
}
