import AudioCore
import PlayerCore
import SessionCore
import Testing

@testable import TerminalUI

/// Chapters in the interface: the now-playing line names the chapter heard, `[` and `]` send
/// the chapter commands (never next and previous), the chapters view lists them with the one
/// heard marked and Enter goes to the one picked; long recordings are marked in the lists.
@Suite struct ChaptersViewTests {
  static let second: UInt64 = 1_000_000_000

  /// An audiobook of three chapters, playing from `position` at time 0.
  func state(position: Double = 0, chapters: Bool = true) -> InterfaceState {
    var s = InterfaceState(
      folder: "/books", layout: Layout(rows: 24, columns: 100), bindings: .defaults)
    var snap = PlayerSnapshot()
    snap.queue = [QueuedTrack(id: 1, path: "/books/Book.m4b"), QueuedTrack(id: 2, path: "/b.mp3")]
    snap.current = snap.queue[0]
    snap.title = "Book"
    snap.state = .playing
    snap.isAdvancing = true
    snap.position = position
    snap.duration = 30
    snap.isSeekable = true
    if chapters {
      snap.chapters = [
        Chapter(start: 0, end: 10, title: "Opening"), Chapter(start: 10, end: 20, title: "Middle"),
        Chapter(start: 20, end: 30, title: "The End"),
      ]
    }
    s.update(snap)
    return s
  }

  func screen(_ s: InterfaceState, at now: UInt64 = 0) -> TextCanvas {
    let c = TextCanvas(rows: s.layout.rows, columns: s.layout.columns)
    Screen.draw(s, on: c, now: now)
    return c
  }

  @Test func theNowPlayingLineNamesTheChapterHeard() {
    let s = state(position: 12)
    #expect(screen(s).text.contains("Book · ch 2/3 Middle"))
    // Eight seconds later, the next one.
    #expect(screen(s, at: 8 * Self.second).text.contains("· ch 3/3 The End"))
    #expect(!screen(state(chapters: false)).text.contains("· ch "))
  }

  @Test func theChapterKeysSendTheChapterCommandsNeverNextAndPrevious() {
    var s = state()
    #expect(s.handle(Key(.character("]")), now: 0) == [.send(.nextChapter, label: "next chapter")])
    #expect(
      s.handle(Key(.character("[")), now: 0)
        == [.send(.previousChapter, label: "previous chapter")])
    #expect(s.handle(Key(.character("n")), now: 0) == [.send(.nextTrack, label: "next")])
  }

  @Test func theChaptersViewListsThemAndEnterGoesToTheOnePicked() {
    var s = state(position: 12)
    #expect(screen(s).lines[0].contains("4 Chapters"), "the tab is offered")
    _ = s.handle(Key(.character("4")), now: 0)
    #expect(s.view == .chapters)
    #expect(s.chaptersPosition.selected == 1, "opens on the chapter heard")
    let c = screen(s)
    #expect(c.lines[0].contains("4 Chapters"))
    #expect(c.lines[0].contains("3 chapters"))
    let middle = c.lines.first { $0.contains("Middle") } ?? ""
    #expect(middle.contains("▶") && middle.contains("0:10"), "\(middle)")
    _ = s.handle(Key(.character("j")), now: 0)
    #expect(
      s.handle(Key(.enter), now: 0)
        == [.send(.changePlaybackPosition(seconds: 20), label: "go to the chapter")])
    _ = s.handle(Key(.character("4")), now: 0)
    #expect(s.view == .library, "again: back to the list")
  }

  @Test func aTrackWithoutChaptersSaysSoInTheView() {
    var s = state(chapters: false)
    #expect(!screen(s).lines[0].contains("Chapters"), "no tab without chapters")
    _ = s.handle(Key(.character("#")), now: 0)
    #expect(screen(s).text.contains("The track playing has no chapters"))
  }

  @Test func longRecordingsAreMarkedInTheQueueAsLeftPartwayOrPlayed() {
    var s = state()
    s.view = .queue
    s.places = ["/b.mp3": .played]
    var snap = s.snapshot
    snap.current = nil
    snap.places = ["/books/Book.m4b": .at(600)]
    s.update(snap)
    let c = screen(s)
    #expect(c.lines.first { $0.contains("Book") }?.hasPrefix("◐") == true, "\(c.text)")
    #expect(c.lines.first { $0.contains("b.mp3") || $0.contains(" b ") }?.hasPrefix("✓") == true)
    // What the player says of this run outdoes what the index said.
    snap.places["/b.mp3"] = .at(3)
    s.update(snap)
    #expect(s.placeMark(of: "/b.mp3") == .inProgress)
  }
}
