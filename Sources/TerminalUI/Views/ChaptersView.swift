import AudioCore
import PlayerCore

/// The playing track's chapters as the interface shows them: in a view of their own (`4`,
/// `#`), the one heard marked; up and down pick one, Enter goes there. The now-playing line
/// names the chapter heard (`chapterLine`), and `[` and `]` move between them from any view.
extension InterfaceState {
  /// The chapter heard at `now`, and how many there are: "ch 2/3 The Middle" (a chapter without
  /// a title by its number alone); nil when the track has none, or before the first.
  public func chapterLine(at now: UInt64) -> String? {
    let snap = snapshot
    guard let i = snap.chapterIndex(at: snap.position(at: now)) else { return nil }
    let title = snap.chapters[i].title.map { " " + $0 } ?? ""
    return "ch \(i + 1)/\(snap.chapters.count)" + title
  }

  /// Selects the chapter heard now (as the view opens).
  mutating func showChapterPlaying(now: UInt64) {
    let i = snapshot.chapterIndex(at: snapshot.position(at: now)) ?? 0
    chaptersPosition = ListPosition(selected: i)
    chaptersPosition.clamp(count: snapshot.chapters.count, height: layout.listHeight)
  }

  /// A key in the chapters view; nil when it is not the view's (the player's keys, the views').
  mutating func chaptersKey(_ action: UIAction, now: UInt64) -> [InterfaceEffect]? {
    let height = max(1, layout.listHeight)
    let count = snapshot.chapters.count
    var step: Int?
    switch action {
    case .down: step = 1
    case .up: step = -1
    case .pageDown: step = max(1, height - 1)
    case .pageUp: step = -max(1, height - 1)
    case .top: step = -count
    case .bottom: step = count
    case .playSelection:
      guard snapshot.chapters.indices.contains(chaptersPosition.selected) else { return [] }
      let start = snapshot.chapters[chaptersPosition.selected].start
      return [.send(.changePlaybackPosition(seconds: start), label: "go to the chapter")]
    case .playPause, .play, .pause, .stop, .next, .previous, .seekForward, .seekBackward,
      .fastForward, .rewind, .volumeUp, .volumeDown, .mute, .shuffle, .repeat, .routePicker,
      .addToQueue, .playNext, .remove, .moveUp, .moveDown, .clearQueue, .shuffleOnce, .undo,
      .saveQueue, .toggleSpoken, .goTo, .search, .toggleView, .libraryView, .queueView,
      .lyricsView, .chaptersView, .nextChapter, .previousChapter, .faster, .slower, .normalSpeed,
      .parentFolder, .help, .redraw,
      .simulateCall, .sleepTimer, .detach, .quit:
      return nil
    }
    guard let step else { return [] }
    chaptersPosition.move(by: step, count: count, height: height)
    return []
  }

  /// Where `path` was left, as the player said in this run, else as the index says.
  public func placeMark(of path: String) -> PlaceMark? {
    switch snapshot.places[path] {
    case .at?: .inProgress
    case .finished?: .played
    case nil: places[path]
    }
  }
}
