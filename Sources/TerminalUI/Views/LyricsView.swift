import Lyrics

/// What the owner found for a file: its lyrics, or none (and why not, when its tags could not
/// be read).
public struct LyricsFound: Sendable, Equatable {
  public var lyrics: Lyrics?
  public var problem: String?
  public init(lyrics: Lyrics?, problem: String?) {
    self.lyrics = lyrics
    self.problem = problem
  }
}

/// The playing track's lyrics as the interface shows them: in a view of their own (`3`, `L`)
/// and, with `lyrics_beside`, beside the list. Synced lyrics follow the song: the line sung is
/// highlighted (its words as they are sung, with enhanced LRC) and kept in the middle; a key
/// that moves picks a line instead, Enter goes there in the song, and after a few seconds
/// without a key (or Esc) the view follows the song again. Unsynced lyrics scroll by hand.
public struct LyricsPane: Sendable {
  /// The file the lyrics shown are of, and what was found for it.
  public private(set) var path: String?
  public private(set) var lyrics: Lyrics?
  /// Why the lyrics could not be read (the tags of a damaged file).
  public private(set) var problem: String?
  /// The file last asked for: its answer is awaited, or came.
  public var requested: String?
  /// Synced: the line picked by hand. Unsynced: the first line shown (`top`).
  public var position = ListPosition()
  /// Following the song is suspended until then (monotonic ns): a line is being picked.
  public var manualUntil: UInt64?

  /// How long a line picked by hand stays picked without a key.
  public static let manualLifetime: UInt64 = 8_000_000_000

  public init() {}

  /// The answer for `path` came.
  mutating func show(_ path: String, lyrics: Lyrics?, problem: String?) {
    self.path = path
    self.lyrics = lyrics
    self.problem = problem
    position = ListPosition()
    manualUntil = nil
  }

  /// Whether it follows the song at `now` (no line picked by hand lately).
  public func isFollowing(at now: UInt64) -> Bool { manualUntil.map { now >= $0 } ?? true }
}

extension InterfaceState {
  /// The track whose lyrics the interface should ask its owner for now: the one playing, when
  /// they are shown (the lyrics view, or beside the list) and were not asked for yet. Not for
  /// a stream.
  public var lyricsWanted: String? {
    guard view == .lyrics || lyricsBeside, let path = snapshot.current?.path,
      !path.contains("://"), lyricsPane.requested != path
    else { return nil }
    return path
  }

  /// The owner found (or did not find) the lyrics of `path`.
  public mutating func showLyrics(_ path: String, lyrics: Lyrics?, problem: String?) {
    guard lyricsPane.requested == path else { return }
    lyricsPane.show(path, lyrics: lyrics, problem: problem)
  }

  /// The lyrics of the track playing, when they are there.
  public var currentLyrics: Lyrics? {
    guard let path = snapshot.current?.path, lyricsPane.path == path else { return nil }
    return lyricsPane.lyrics
  }

  /// The line sung at `now`, in synced lyrics of the track playing.
  public func lyricsLine(at now: UInt64) -> Int? {
    currentLyrics?.lineIndex(at: snapshot.position(at: now))
  }

  /// Nanoseconds until the next line (or word) of the lyrics shown is sung, while playing:
  /// when the interface must draw again for them to follow the song.
  public func untilNextLyricsChange(at now: UInt64) -> UInt64? {
    guard view == .lyrics || lyricsBeside, snapshot.state == .playing, snapshot.isAdvancing,
      let lyrics = currentLyrics, lyrics.isSynced
    else { return nil }
    let p = snapshot.position(at: now)
    var next: Double?
    for line in lyrics.lines {
      for t in [line.time ?? 0] + line.words.map(\.time) where t > p {
        next = min(next ?? t, t)
      }
      if let n = next, (line.time ?? 0) > n { break }
    }
    guard let next else { return nil }
    return UInt64(((next - p) * 1e9).rounded(.up)) + 2_000_000
  }

  /// A key in the lyrics view; nil when it is not the view's (the player's keys, the views').
  mutating func lyricsKey(_ action: UIAction, now: UInt64) -> [InterfaceEffect]? {
    let height = max(1, layout.listHeight)
    let page = max(1, height - 1)
    let lines = currentLyrics?.lines.count ?? 0
    var step: Int?
    switch action {
    case .down: step = 1
    case .up: step = -1
    case .pageDown: step = page
    case .pageUp: step = -page
    case .top: step = -lines
    case .bottom: step = lines
    case .playSelection:
      guard let lyrics = currentLyrics else { return [] }
      guard lyrics.isSynced else {
        say("These lyrics are not synced: there is no time to go to", now: now)
        return []
      }
      // The line picked, or the one sung when none is.
      let index =
        lyricsPane.isFollowing(at: now) ? lyricsLine(at: now) ?? 0 : lyricsPane.position.selected
      guard lyrics.lines.indices.contains(index), let time = lyrics.lines[index].time else {
        return []
      }
      lyricsPane.manualUntil = nil
      return [.send(.changePlaybackPosition(seconds: time), label: "go to the line")]
    case .playPause, .play, .pause, .stop, .next, .previous, .seekForward, .seekBackward,
      .fastForward, .rewind, .volumeUp, .volumeDown, .mute, .shuffle, .repeat, .routePicker,
      .addToQueue, .playNext, .remove, .moveUp, .moveDown, .clearQueue, .shuffleOnce, .undo,
      .saveQueue, .toggleSpoken, .goTo, .search, .toggleView, .libraryView, .queueView,
      .lyricsView, .chaptersView, .nextChapter, .previousChapter, .faster, .slower, .normalSpeed,
      .parentFolder, .help, .redraw,
      .simulateCall, .sleepTimer, .detach, .quit:
      return nil
    }
    guard let step, let lyrics = currentLyrics else { return [] }
    if lyrics.isSynced {
      // From the line sung, when the view was following.
      if lyricsPane.isFollowing(at: now) { lyricsPane.position.selected = lyricsLine(at: now) ?? 0 }
      lyricsPane.position.move(by: step, count: lines, height: height)
      lyricsPane.manualUntil = now + LyricsPane.manualLifetime
    } else {
      // Unsynced: the text scrolls.
      let top = min(max(0, lyricsPane.position.top + step), max(0, lines - height))
      lyricsPane.position = ListPosition(selected: top, top: top)
    }
    return []
  }

  /// Esc in the lyrics view: follow the song again.
  mutating func lyricsEscape() -> Bool {
    guard view == .lyrics, lyricsPane.manualUntil != nil else { return false }
    lyricsPane.manualUntil = nil
    return true
  }
}
