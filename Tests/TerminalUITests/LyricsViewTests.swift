import AudioCore
import Lyrics
import PlayerCore
import SessionCore
import Testing

@testable import TerminalUI

/// The lyrics view: it follows the song (the line sung highlighted and kept in the middle, its
/// words as they are sung), Enter goes to a line, a line picked by hand is let go after a few
/// seconds or with Esc, unsynced lyrics scroll, control characters are escaped, and the lyrics
/// beside the list.
@Suite struct LyricsViewTests {
  static let second: UInt64 = 1_000_000_000
  let path = "/music/Album/01.flac"

  func lyrics(_ text: String) throws -> Lyrics {
    try #require(LRC.parse(text: text, source: .file("/music/Album/01.lrc")))
  }

  /// 30 lines, one every 10 s from 0:05: "Line 1" … "Line 30".
  func synced() throws -> Lyrics {
    try lyrics(
      (1...30).map { "[\(LRC.stamp(Double($0 * 10 - 5)))]Line \($0)" }.joined(separator: "\n"))
  }

  /// Playing from `position` at time 0.
  func state(_ lyrics: Lyrics?, position: Double = 0, rows: Int = 24, columns: Int = 80)
    -> InterfaceState
  {
    var s = InterfaceState(
      folder: "/music/Album", layout: Layout(rows: rows, columns: columns), bindings: .defaults)
    var snap = PlayerSnapshot()
    snap.queue = [QueuedTrack(id: 1, path: path)]
    snap.current = snap.queue[0]
    snap.title = "Song"
    snap.state = .playing
    snap.isAdvancing = true
    snap.position = position
    snap.positionTime = 0
    snap.duration = 400
    snap.isSeekable = true
    s.update(snap)
    s.view = .lyrics
    if let wanted = s.lyricsWanted {
      s.lyricsPane.requested = wanted
      s.showLyrics(wanted, lyrics: lyrics, problem: nil)
    }
    return s
  }

  func screen(_ s: InterfaceState, at now: UInt64) -> TextCanvas {
    let c = TextCanvas(rows: s.layout.rows, columns: s.layout.columns)
    Screen.draw(s, on: c, now: now)
    return c
  }

  func row(_ c: TextCanvas, containing text: String) -> Int? {
    c.lines.firstIndex { $0.contains(text) }
  }

  @Test func theLyricsAreAskedForOnceWhenShownAndForEachNewTrack() throws {
    var s = InterfaceState(
      folder: "/music", layout: Layout(rows: 24, columns: 80), bindings: .defaults)
    var snap = PlayerSnapshot()
    snap.current = QueuedTrack(id: 1, path: path)
    s.update(snap)
    #expect(s.lyricsWanted == nil, "not shown: not asked for")
    _ = s.perform(.lyricsView, now: 0)
    #expect(s.view == .lyrics)
    #expect(s.lyricsWanted == path)
    s.lyricsPane.requested = path
    #expect(s.lyricsWanted == nil)
    #expect(screen(s, at: 0).text.contains("Looking for lyrics…"))
    s.showLyrics(path, lyrics: nil, problem: nil)
    #expect(screen(s, at: 0).text.contains("No lyrics for this track"))
    snap.current = QueuedTrack(id: 2, path: "/music/Album/02.flac")
    s.update(snap)
    #expect(s.lyricsWanted == "/music/Album/02.flac")
    snap.current = QueuedTrack(id: 3, path: "http://radio/stream")
    s.update(snap)
    #expect(s.lyricsWanted == nil, "a stream has none")
    _ = s.perform(.lyricsView, now: 0)
    #expect(s.view == .library, "the key again goes back")
  }

  @Test func theLineSungIsHighlightedAndKeptInTheMiddleAsTimeGoesOn() throws {
    let s = state(try synced())
    for t in [0.0, 6, 44, 101, 200, 299] {
      let now = UInt64(t * 1e9)
      let sung = s.lyricsLine(at: now)
      let c = screen(s, at: now)
      guard let sung else {
        #expect(t < 5)
        continue
      }
      let r = try #require(
        row(c, containing: "Line \(sung + 1) ") ?? row(c, containing: "Line \(sung + 1)"))
      #expect(c.style(row: r, column: 3) == .current, "at \(t) s")
      // In the middle of the list's rows (as near as the ends allow).
      let middle = s.layout.headerRow + 1 + (s.layout.listHeight) / 2
      if sung >= 9 && sung <= 20 { #expect(abs(r - middle) <= 1, "row \(r) at \(t) s") }
      // Lines before it are dimmed, after it as they are.
      if let before = row(c, containing: "Line \(sung) "), sung > 0 {
        #expect(c.style(row: before, column: 3) == .dim)
      }
    }
    #expect(s.untilNextLyricsChange(at: 6 * Self.second) == 9 * Self.second + 2_000_000)
  }

  @Test func enhancedWordsAreLitAsTheyAreSung() throws {
    let s = state(try lyrics("[00:01.00]<00:01.00>One <00:02.00>two <00:03.00>three"))
    let c = screen(s, at: 2_500_000_000)
    let r = try #require(row(c, containing: "One two three"))
    let col = try #require(c.lines[r].firstRange(of: "One")).lowerBound.utf16Offset(in: c.lines[r])
    #expect(c.style(row: r, column: col) == .current)
    #expect(c.style(row: r, column: col + 4) == .current, "two is sung")
    #expect(c.style(row: r, column: col + 8) == .normal, "three is not yet")
    #expect(s.untilNextLyricsChange(at: 2_500_000_000) == 502_000_000)
  }

  @Test func enterGoesToTheLinePickedAndTheViewFollowsAgainAfterAWhile() throws {
    var s = state(try synced(), position: 100)
    let now: UInt64 = 0
    // Line 10 is sung (from 95 s); three down picks line 13.
    for _ in 0..<3 { #expect(s.handle(Key(.down), now: now).isEmpty) }
    #expect(s.lyricsPane.position.selected == 12)
    let c = screen(s, at: now)
    let picked = try #require(row(c, containing: "▸ Line 13"))
    #expect(c.style(row: picked, column: 3) == .selected)
    let effects = s.handle(Key(.enter), now: now)
    #expect(effects == [.send(.changePlaybackPosition(seconds: 125), label: "go to the line")])
    #expect(s.lyricsPane.isFollowing(at: now))
    // Picked again, then let go: by Esc, or by the time without a key.
    _ = s.handle(Key(.up), now: now)
    #expect(!s.lyricsPane.isFollowing(at: now + Self.second))
    _ = s.handle(Key(.escape), now: now + Self.second)
    #expect(s.lyricsPane.isFollowing(at: now + Self.second))
    _ = s.handle(Key(.up), now: now)
    #expect(s.lyricsPane.isFollowing(at: now + LyricsPane.manualLifetime))
    // Enter while following goes to the start of the line sung.
    #expect(
      s.handle(Key(.enter), now: now + LyricsPane.manualLifetime)
        == [.send(.changePlaybackPosition(seconds: 105), label: "go to the line")])
  }

  @Test func unsyncedLyricsScrollByHandAndHaveNoTimeToGoTo() throws {
    var s = state(
      try lyrics((1...60).map { "Verse line \($0)" }.joined(separator: "\n")), rows: 24)
    #expect(screen(s, at: 0).lines[2].contains("Verse line 1"))
    _ = s.handle(Key(.pageDown), now: 0)
    let c = screen(s, at: 0)
    #expect(c.lines[2].contains("Verse line \(s.layout.listHeight)"))
    #expect(s.handle(Key(.enter), now: 0).isEmpty)
    #expect(s.message?.text.contains("not synced") == true)
    _ = s.handle(Key.char("G"), now: 0)
    #expect(screen(s, at: 0).text.contains("Verse line 60"))
    _ = s.handle(Key.char("g"), now: 0)
    #expect(screen(s, at: 0).lines[2].contains("Verse line 1"))
  }

  @Test func controlCharactersInLyricsAreShownEscaped() throws {
    let s = state(try lyrics("[00:00.10]Evil\u{1B}[2Jline\u{07}"))
    let text = screen(s, at: Self.second).text
    #expect(text.contains("Evil\\x1b[2Jline\\x07"), "\(text)")
    #expect(!text.contains("\u{1B}"))
  }

  @Test func theLyricsBesideTheListFollowTooOnAWideScreen() throws {
    var s = state(try synced(), position: 50, rows: 30, columns: 120)
    s.view = .library
    s.lyricsBeside = true
    let c = screen(s, at: 0)
    let r = try #require(row(c, containing: "Line 5"))
    let col = try #require(c.lines[r].firstRange(of: "Line 5")).lowerBound.utf16Offset(
      in: c.lines[r])
    #expect(col >= 120 - 40 - 2, "beside, at the right")
    #expect(c.style(row: r, column: col) == .current)
    // Narrow: the list keeps the screen.
    var narrow = s
    narrow.layout = Layout(rows: 30, columns: 90)
    #expect(!screen(narrow, at: 0).text.contains("Line 5"))
  }

  @Test func theTabBarNamesTheLyricsAndWhereTheyCameFrom() throws {
    let s = state(try synced())
    let top = screen(s, at: 0).lines[0]
    #expect(top.contains("3 Lyrics"))
    #expect(top.contains("synced lyrics from 01.lrc"))
  }
}
