import SessionCore
import Testing

@testable import TerminalUI
import PlayerCore
import AudioCore

/// The screen drawn into a grid of characters, at the sizes terminals open at (80 × 24) and
/// narrower and wider ones.
@Suite(.timeLimit(.minutes(2))) struct ScreenTests {
  private func state(rows: Int, columns: Int) -> InterfaceState {
    var s = InterfaceState(
      folder: "/music/Album", layout: Layout(rows: rows, columns: columns),
      bindings: .defaults)
    s.showFolder(
      "/music/Album",
      .success([
        LibraryEntry(kind: .parent, name: "..", path: "/music"),
        LibraryEntry(kind: .file, name: "01.flac", path: "/music/Album/01.flac"),
        LibraryEntry(kind: .file, name: "02.flac", path: "/music/Album/02.flac"),
      ]), now: 0)
    s.tags["/music/Album/01.flac"] = TrackInfo(
      title: "夜行列車の歌、とても長い題名のある曲ですが、まだまだ続きます", artist: "東京の楽団", duration: 215)
    s.tags["/music/Album/02.flac"] = TrackInfo(
      title: "Paper Boats", artist: "hark demo", duration: 32)
    var snap = PlayerSnapshot()
    snap.queue = [QueuedTrack(id: 0, path: "/music/Album/01.flac")]
    snap.current = snap.queue[0]
    snap.title = "夜行列車の歌、とても長い題名のある曲ですが、まだまだ続きます"
    snap.metadata.artist = "東京の楽団"
    snap.state = .paused
    snap.pausedBy = .interruption
    snap.interruption = InterruptionCause(kind: .call, by: "call")
    snap.willResume = true
    snap.position = 83
    snap.duration = 215
    snap.volume = .level(percent: 60, muted: false)
    snap.route = Route(name: "Headphones", kind: .headphones)
    s.update(snap)
    return s
  }

  private func draw(_ s: InterfaceState, rows: Int, columns: Int) -> TextCanvas {
    let c = TextCanvas(rows: rows, columns: columns)
    Screen.draw(s, on: c, now: 0)
    return c
  }

  @Test(arguments: [(24, 80), (20, 60), (30, 100), (50, 200)])
  func everythingFitsAndTheBarIsAlwaysThere(rows: Int, columns: Int) {
    let s = state(rows: rows, columns: columns)
    let c = draw(s, rows: rows, columns: columns)
    let lines = c.lines
    #expect(lines.count == rows)
    for (i, line) in lines.enumerated() {
      #expect(TextWidth.of(line) == columns, "row \(i) is \(TextWidth.of(line)) cells: '\(line)'")
    }
    let layout = Layout(rows: rows, columns: columns)
    #expect(lines[layout.nowPlayingRow].contains("Paused (call)"))
    #expect(lines[layout.nowPlayingRow].contains("夜行列車"))
    #expect(lines[layout.progressRow].contains("1:23"))
    #expect(lines[layout.progressRow].contains("3:35"))
    #expect(lines[layout.progressRow].contains("60%"))
    #expect(lines[layout.progressRow].contains("headphones"))
    #expect(lines[layout.statusRow].contains("Paused — call in progress (will resume)"))
    #expect(lines[0].contains("Library"))
    #expect(lines[0].contains("Queue (1)"))
    #expect(c.text.contains("Paper Boats"))
  }

  /// The track number, album and year have columns as the screen widens (the number from 60
  /// columns, the year from 90, the album from 100), in the library and, with the place in the
  /// queue for the number, in the queue.
  @Test func trackNumberAlbumAndYearHaveColumnsAsTheScreenWidens() throws {
    func listLines(_ s: InterfaceState, columns: Int) -> [String] {
      let c = draw(s, rows: 24, columns: columns)
      return Array(c.lines[1...4])
    }
    var s = state(rows: 24, columns: 120)
    s.tags["/music/Album/02.flac"] = TrackInfo(
      title: "Paper Boats", artist: "hark demo", album: "hark demo tracks", duration: 32,
      track: 2, year: 2026)
    var wide = listLines(s, columns: 120)
    #expect(wide[0].contains("#") && wide[0].contains("Album") && wide[0].contains("Year"))
    let paper = wide.first { $0.contains("Paper Boats") } ?? ""
    #expect(paper.contains(" 2 ") && paper.contains("hark demo tracks") && paper.contains("2026"))
    let number = try #require(paper.firstRange(of: " 2 ")?.lowerBound)
    #expect(number < (try #require(paper.firstRange(of: "Paper")?.lowerBound)))
    // 80 columns: the number and the artist, no album or year.
    s.layout = Layout(rows: 24, columns: 80)
    let narrow = listLines(s, columns: 80)
    #expect(!narrow[0].contains("Album") && !narrow[0].contains("Year"))
    #expect(narrow.contains { $0.contains("Paper Boats") && $0.contains(" 2 ") })
    // The queue: its place in the queue in the number column, and the album beside it.
    s.layout = Layout(rows: 24, columns: 120)
    var snap = s.snapshot
    snap.queue = [
      QueuedTrack(id: 0, path: "/music/Album/01.flac"),
      QueuedTrack(id: 1, path: "/music/Album/02.flac"),
    ]
    s.update(snap)
    s.view = .queue
    wide = listLines(s, columns: 120)
    let queued = wide.first { $0.contains("Paper Boats") } ?? ""
    #expect(queued.contains(" 2. ") && queued.contains("hark demo tracks"))
    // In its column: the titles start under the header's "Title".
    let titleAt = try #require(wide[0].firstRange(of: "Title")?.lowerBound)
    let paperAt = try #require(queued.firstRange(of: "Paper")?.lowerBound)
    #expect(
      wide[0].distance(from: wide[0].startIndex, to: titleAt)
        == queued.distance(from: queued.startIndex, to: paperAt), "'\(wide[0])' / '\(queued)'")
  }

  /// Most played shows each row's count of plays in the number column, the row's own: the
  /// same track's tags (its number, read again as it plays) do not replace it.
  @Test func aRowsCountIsShownInsteadOfItsTracksNumber() {
    var s = state(rows: 24, columns: 100)
    s.showFolder(
      "/music/Album",
      .success([
        LibraryEntry(kind: .file, name: "02.flac", path: "/music/Album/02.flac", count: 17)
      ]), now: 0)
    s.tags["/music/Album/02.flac"] = TrackInfo(
      title: "Paper Boats", artist: "hark demo", duration: 32, track: 2)
    let paper = draw(s, rows: 24, columns: 100).lines.first { $0.contains("Paper Boats") } ?? ""
    #expect(paper.contains(" 17 ") && !paper.contains(" 2 "), "'\(paper)'")
  }

  /// A filtered queue numbers each entry by its place in the whole queue, and its tab says how
  /// long the queue is in all.
  @Test func aFilteredQueueKeepsEachEntrysPlace() {
    var s = state(rows: 24, columns: 100)
    var snap = s.snapshot
    snap.queue = (0..<5).map { QueuedTrack(id: $0, path: "/music/Album/0\($0 % 2 + 1).flac") }
    s.update(snap)
    s.view = .queue
    s.queueFilter = "paper"
    let lines = draw(s, rows: 24, columns: 100).lines
    let listed = lines.filter { $0.contains("Paper Boats") }
    #expect(listed.count == 2)
    #expect(listed.first?.contains(" 2.") == true, "\(listed)")
    #expect(listed.last?.contains(" 4.") == true, "\(listed)")
    #expect(lines[0].contains("11:49 in all"), "\(lines[0])")
  }

  /// Control characters in tags and names are drawn as their escapes and measured as such:
  /// every column of the row stays where it is in the rows around it (a user's report: rows
  /// with a tab or an escape in a tag came out up to 6 cells short, their artists out of line).
  @Test func controlCharactersInTagsKeepTheColumnsInLine() {
    var s = state(rows: 24, columns: 100)
    s.tags["/music/Album/01.flac"] = TrackInfo(
      title: "Tab\there\u{1}ctl\u{1B}[2J", artist: "Esc\u{1B}[31mRED", duration: 215)
    let lines = draw(s, rows: 24, columns: 100).lines
    guard let hostile = lines.first(where: { $0.contains("Tab") }),
      let plain = lines.first(where: { $0.contains("Paper Boats") })
    else {
      Issue.record("rows missing: \(lines)")
      return
    }
    #expect(hostile.contains("Tab\\there\\x01ctl\\x1b[2J"), "\(hostile)")
    #expect(TextWidth.of(hostile) == 100 && TextWidth.of(plain) == 100)
    // The cell each row's artist starts at.
    func artistCell(_ line: String) -> Int? {
      (line.firstRange(of: "Esc") ?? line.firstRange(of: "hark demo")).map {
        TextWidth.of(String(line[..<$0.lowerBound]))
      }
    }
    #expect(artistCell(hostile) != nil && artistCell(hostile) == artistCell(plain))
    #expect(hostile.hasSuffix("3:35 ") && plain.hasSuffix("0:32 "), "\(hostile)\n\(plain)")
  }

  @Test func aLongCJKTitleIsCutInItsColumn() {
    let s = state(rows: 24, columns: 80)
    let c = draw(s, rows: 24, columns: 80)
    let row = c.lines[3]  // the first file, after the header and ".."
    #expect(row.contains("夜行列車"))
    #expect(row.contains("…"))
    #expect(row.contains("3:35"))
    #expect(row.contains("東京の楽団"))
    #expect(TextWidth.of(row) == 80)
  }

  @Test func withoutAVolumeTheDevicesNameIsShown() {
    var s = state(rows: 24, columns: 80)
    var snap = s.snapshot
    snap.volume = .unavailable(device: "null")
    s.update(snap)
    let c = draw(s, rows: 24, columns: 80)
    #expect(c.lines[Layout(rows: 24, columns: 80).progressRow].contains("out: null"))
  }

  @Test func theSelectionIsDrawnSelected() {
    var s = state(rows: 24, columns: 80)
    s.libraryPosition.selected = 2
    let c = draw(s, rows: 24, columns: 80)
    #expect(c.style(row: 4, column: 5) == .selected)
    #expect(c.style(row: 3, column: 5) == .current)
  }

  @Test func theHelpOverlayShowsTheLiveBindings() {
    var s = state(rows: 24, columns: 80)
    s.bindings = KeyBindings.configured(["play_pause": ["p"]]).0
    s.overlay = .help(top: 0)
    let c = draw(s, rows: 24, columns: 80)
    #expect(c.text.contains("play_pause"))
    #expect(c.lines.contains { $0.contains("│ p ") && $0.contains("play_pause") })
    for line in c.lines { #expect(TextWidth.of(line) == 80) }
  }

  @Test func thePickerMarksTheCurrentOutput() {
    var s = state(rows: 20, columns: 60)
    var snap = s.snapshot
    snap.deviceName = "pulse"
    s.update(snap)
    s.overlay = .routePicker(ListPosition())
    let loading = draw(s, rows: 20, columns: 60)
    #expect(loading.text.contains("Looking for outputs"))
    s.showOutputs([
      OutputChoice(name: "default", summary: "Default ALSA Output"),
      OutputChoice(name: "pulse", summary: "PulseAudio Sound Server"),
    ])
    let c = draw(s, rows: 20, columns: 60)
    #expect(c.lines.contains { $0.contains("● pulse") })
    #expect(c.lines.contains { $0.contains("○ default") })
  }

  /// A current entry not loaded yet (stopped) has only its file name in the snapshot; the
  /// tags the library read are shown instead, in the queue and in the now-playing bar.
  @Test func tagsNameACurrentEntryThatIsNotLoaded() {
    var s = state(rows: 24, columns: 80)
    var snap = PlayerSnapshot()
    snap.queue = [QueuedTrack(id: 3, path: "/music/Album/02.flac")]
    snap.current = snap.queue[0]
    snap.title = "02"
    s.update(snap)
    s.view = .queue
    let c = draw(s, rows: 24, columns: 80)
    #expect(c.lines[2].contains("1. Paper Boats"))
    #expect(
      c.lines[Layout(rows: 24, columns: 80).nowPlayingRow].contains("Paper Boats – hark demo"))
  }

  @Test func aTinyTerminalSaysSo() {
    let s = state(rows: 5, columns: 20)
    let c = draw(s, rows: 5, columns: 20)
    #expect(c.lines[0].contains("Paused"))
    #expect(c.text.contains("too small"))
  }

  @Test func theSearchPromptShowsWhatIsTyped() {
    var s = state(rows: 24, columns: 80)
    _ = s.handle(Key.char("/"), now: 0)
    _ = s.handle(Key.char("p"), now: 0)
    let c = draw(s, rows: 24, columns: 80)
    #expect(c.lines[23].hasPrefix(" /p"))
    // Only what matches is listed: "Paper Boats", not the other song (nor "..").
    #expect(c.lines[2].contains("Paper Boats"))
    #expect(!c.lines[3].contains("夜行列車"))
  }

  /// A speed other than as recorded is shown on the now-playing bar; 1× is not; the position
  /// moves on at that speed, in the file's own time.
  @Test func theNowPlayingBarShowsTheSpeedAndThePositionMovesAtIt() {
    var s = state(rows: 24, columns: 100)
    let layout = Layout(rows: 24, columns: 100)
    #expect(!draw(s, rows: 24, columns: 100).lines[layout.nowPlayingRow].contains("×"))
    var snap = s.snapshot
    snap.rate = 1.5
    snap.state = .playing
    snap.isAdvancing = true
    snap.position = 10
    snap.duration = 100
    snap.positionTime = 0
    s.update(snap)
    let c = TextCanvas(rows: 24, columns: 100)
    Screen.draw(s, on: c, now: 2_000_000_000)
    #expect(c.lines[layout.nowPlayingRow].contains("1.5× ·"))
    #expect(c.lines[layout.progressRow].hasPrefix(" 0:13 "), "two seconds at 1.5× are three")
  }

  /// While the sleep timer runs, the now-playing bar says how long is left, counting down with
  /// the clock from when the player heard it.
  @Test func theNowPlayingBarShowsTheSleepTimer() {
    var s = state(rows: 24, columns: 100)
    var snap = s.snapshot
    snap.sleepTimer = SleepTimerStatus(
      state: .running, mode: .duration(seconds: 1800), fade: 5, remaining: 1781)
    snap.sleepTimerAt = 0
    s.update(snap)
    let layout = Layout(rows: 24, columns: 100)
    #expect(draw(s, rows: 24, columns: 100).lines[layout.nowPlayingRow].contains("sleep 29:41 ·"))
    let c = TextCanvas(rows: 24, columns: 100)
    Screen.draw(s, on: c, now: 60_000_000_000)
    #expect(c.lines[layout.nowPlayingRow].contains("sleep 28:41 ·"))
    snap.sleepTimer = SleepTimerStatus(state: .running, mode: .endOfTrack, fade: 5)
    s.update(snap)
    #expect(
      draw(s, rows: 24, columns: 100).lines[layout.nowPlayingRow].contains("sleep: end of track"))
    snap.sleepTimer = SleepTimerStatus(state: .ending, mode: .endOfTrack, fade: 5, apps: ["hark"])
    s.update(snap)
    #expect(draw(s, rows: 24, columns: 100).lines[layout.nowPlayingRow].contains("sleep: fading"))
    snap.sleepTimer = nil
    s.update(snap)
    #expect(!draw(s, rows: 24, columns: 100).lines[layout.nowPlayingRow].contains("sleep"))
  }
}
