import AudioCore
import Platform
import PlayerCore
import SessionCore
import UserText

/// Which list fills the middle of the screen.
public enum ViewKind: Hashable, Sendable {
  case library, queue
  /// The playing track's lyrics (`LyricsPane`).
  case lyrics
  /// The playing track's chapters (`ChaptersView`).
  case chapters
}

/// How far a long recording has been heard, as the library index keeps it (and the player, for
/// those it played in this run): shown beside it in the queue and the library's lists.
public enum PlaceMark: Hashable, Sendable {
  /// Left partway: it goes on from there.
  case inProgress
  /// Heard to its end.
  case played
}

/// An output the route picker offers.
public struct OutputChoice: Hashable, Sendable {
  /// The ALSA device name ("default", "pulse", "hw:CARD=PCH,DEV=0").
  public var name: String
  /// What the system says it is ("PulseAudio Sound Server").
  public var summary: String

  public init(name: String, summary: String) {
    self.name = name
    self.summary = summary
  }
}

/// A line typed in the hint line.
public struct Prompt: Hashable, Sendable {
  public enum Kind: Hashable, Sendable {
    /// The name to save the queue under.
    case saveQueue
    /// Whether to replace hark's playlist of this name with the queue (y or n).
    case replacePlaylist(name: String)
    /// A time to go to in the track playing ("1:30", "+10").
    case goTo
  }
  public var kind: Kind
  public var text = ""

  public init(kind: Kind, text: String = "") {
    self.kind = kind
    self.text = text
  }
}

/// A box over the lists.
public enum Overlay: Hashable, Sendable {
  /// The key bindings, scrolled to this line.
  case help(top: Int)
  /// The route picker (G6, G20), with its selection.
  case routePicker(ListPosition)
}

/// A line in the status line for a while.
public struct StatusMessage: Hashable, Sendable {
  public var text: String
  public var style: Style
  /// Monotonic nanoseconds after which it is gone.
  public var expires: UInt64
  /// It tells of a change of the player's state ("paused: call in progress"): the next change
  /// makes it stale, and it goes.
  public var isAboutState = false
  /// It tells of work going on out of sight (the index scan's progress): it never covers a
  /// line the user has not had the time to read.
  public var isBackground = false
}

/// What the interface asks its owner to do, as the result of a key or an event. The owner
/// (`TerminalInterface`) carries these out: requests to the player, disk and processes.
public enum InterfaceEffect: Equatable, Sendable {
  /// A remote command, the same the session server and media keys send; `label` names it for
  /// a message when it is refused.
  case send(RemoteCommand, label: String)
  case perform(PlayerAction)
  /// The queue becomes these files, and the one at `start` plays (a tap on a song in an album).
  case replaceQueue([String], start: Int)
  /// The audio files under a folder (or a playlist's) are added to the queue (reading them is
  /// off the UI thread), at the end or to play next.
  case addFolder(String, next: Bool = false)
  /// A playlist becomes the queue and plays from its start (undo brings the old queue back).
  case playPlaylist(String)
  /// The queue is saved as hark's playlist of this name (written off the UI thread); one of
  /// that name is replaced only when the user said so (`replacing`), else the owner asks
  /// (`askToReplacePlaylist`).
  case saveQueue(name: String, replacing: Bool = false)
  /// Show this folder in the library (the owner reads it and calls `showFolder`).
  case openFolder(String)
  /// Search the whole library's index for this (the owner calls `showSearch`).
  case searchLibrary(String)
  /// List the outputs for the route picker (off the UI thread; `showOutputs` when done).
  case listOutputs
  case simulateCall
  /// Set the desktop's sleep timer (the session server keeps it), or cancel it (nil).
  case setSleepTimer(SleepTimerSetting?)
  case redraw
  case suspend
  /// Leave the interface with the player playing on in its own process.
  case detach
  case quit
  /// Ctrl-C typed as a key (the kitty protocol sends it so): quit as SIGINT does.
  case interrupt
}

/// Everything the interface shows, and how keys change it. Pure: no terminal, no clock (times
/// are passed in), no I/O; the effects say what the owner must do.
public struct InterfaceState: Sendable {
  public var snapshot = PlayerSnapshot()
  public var view: ViewKind = .library
  public var layout: Layout
  public var bindings: KeyBindings

  // The library.
  public private(set) var folder: String
  public private(set) var entries: [LibraryEntry] = []
  public private(set) var folderProblem: String?
  public var libraryPosition = ListPosition()
  public var libraryFilter = ""
  /// Tags and lengths read so far, by path.
  public var tags = TagTable()
  private let libraryFilterRows = RowFilter<LibraryEntry>()
  private let queueFilterRows = RowFilter<QueuedTrack>()
  private let queueLength = QueueLength()
  /// The tag index can be searched: `/` in the library searches all of it, not only the
  /// folder shown.
  public var indexReady = false
  /// The music folder is being walked for its playlists (the Playlists view says so while it
  /// has nothing to show).
  public var lookingForPlaylists = false
  /// The user's home folder: the folder shown in the tab bar starts with `~` below it.
  public var homeFolder: String?
  /// The cover last drawn for a track (hark-cover's), and whether covers are shown at all
  /// (the config's cover_art).
  public var cover: ShownCover?
  public var showsCover = true
  /// The index's answer to the library's filter, when it has come for the filter now typed.
  public private(set) var searchResults:
    (query: String, rows: [LibraryEntry], cut: IndexListing.Cut?)?

  // The lyrics.
  public var lyricsPane = LyricsPane()
  /// The lyrics beside the list (the config's lyrics_beside), on screens wide enough.
  public var lyricsBeside = false
  /// The list the lyrics and chapters views go back to.
  private var viewBeforePane: ViewKind = .library

  // The chapters.
  public var chaptersPosition = ListPosition()
  /// Where long recordings were left, as the index said when it was last read (the player's
  /// snapshot says where those it played since were left: `placeMark(of:)`).
  public var places: [String: PlaceMark] = [:]

  // The queue.
  public var queuePosition = ListPosition()
  public var queueFilter = ""

  /// The search prompt is taking keys.
  public var isTyping = false
  /// A row picked with Up or Down while typing the search (since the last character typed):
  /// Enter plays it, as a tap on a result does, rather than only keeping the filter.
  private var pickedWhileTyping = false
  /// A line being typed in the hint line: a playlist's name, or a time to go to.
  public var prompt: Prompt?
  /// The name typed so far while saving the queue as a playlist; nil when not saving.
  public var saveName: String? { prompt?.kind == .saveQueue ? prompt?.text : nil }
  public var overlay: Overlay?
  public var outputs: [OutputChoice]?
  public var message: StatusMessage?

  /// The sleep timer's key, pressed last: which choice it made, and when. Pressed again
  /// soon, it goes on from there, not from the player's word, which may not have come yet.
  private var lastTimerChoice: (index: Int, at: UInt64)?

  /// How long a message stays in the status line.
  public static let messageLifetime: UInt64 = 6_000_000_000

  /// What the sleep timer's key goes through, as a phone's clock app does: minutes, then the
  /// end of the track, then off (nil).
  public static let timerChoices: [SleepTimerMode?] = [
    .duration(seconds: 15 * 60), .duration(seconds: 30 * 60), .duration(seconds: 45 * 60),
    .duration(seconds: 60 * 60), .endOfTrack, nil,
  ]

  public init(folder: String, layout: Layout, bindings: KeyBindings) {
    self.folder = folder
    self.layout = layout
    self.bindings = bindings
  }

  // MARK: Rows

  /// The library rows the filter lets through.
  public var libraryRows: [LibraryEntry] {
    guard !libraryFilter.isEmpty else { return entries }
    // The whole library, when the index has answered for this very filter.
    if let found = searchResults, found.query == libraryFilter { return found.rows }
    return libraryFilterRows.rows(
      entries, matching: libraryFilter, tagsVersion: tags.version, path: \.path
    ) { entry, text in
      guard entry.kind != .parent else { return }
      addFields(path: entry.path, name: entry.name, to: &text)
    }.found
  }

  /// The index's search results are the library's rows (for the filter typed).
  public var showsSearchResults: Bool {
    !libraryFilter.isEmpty && searchResults?.query == libraryFilter
  }

  /// What the search results shown are of all the library holds for the filter, said where
  /// they are listed: "4,400 found, the first 500 listed", "the first 500 found listed",
  /// "12 found"; nil when no search results are shown.
  public var searchFound: String? {
    guard showsSearchResults, let found = searchResults else { return nil }
    switch found.cut {
    case .of(let all): return "\(Format.count(all)) found, the first \(found.rows.count) listed"
    case .more: return "the first \(found.rows.count) found listed"
    case nil: return "\(Format.count(found.rows.count)) found"
    }
  }

  /// The library rows on screen.
  public var libraryRowsOnScreen: ArraySlice<LibraryEntry> {
    let rows = libraryRows
    let top = min(max(0, libraryPosition.top), rows.count)
    return rows[top..<min(rows.count, top + layout.listHeight)]
  }

  /// The queue entries the filter lets through.
  public var queueRows: [QueuedTrack] { filteredQueue.found }

  /// Where each of `queueRows` is in the queue (from 0); nil when no filter is typed, and
  /// each row is where it is.
  public var queueRowPlaces: [Int32]? {
    queueFilter.isEmpty ? nil : filteredQueue.places
  }

  private var filteredQueue: (found: [QueuedTrack], places: [Int32]) {
    guard !queueFilter.isEmpty else { return (snapshot.queue, []) }
    return queueFilterRows.rows(
      snapshot.queue, matching: queueFilter, tagsVersion: tags.version, path: \.path
    ) { track, text in
      addFields(path: track.path, name: Folder.title(fromName: track.path), to: &text)
    }
  }

  /// How many entries a queue has for its filter to be folded ahead (`prepareQueueFilter`).
  public static let queueFoldedAheadFrom = 2_000

  /// Folds the queue's rows for its filter with the tags known now, so that the filter's first
  /// key only searches. For a thread other than the interface's, on a copy of the state: the
  /// filter's cache is shared by the copies.
  public func prepareQueueFilter() {
    guard snapshot.queue.count >= Self.queueFoldedAheadFrom else { return }
    queueFilterRows.prepare(snapshot.queue, tagsVersion: tags.version, path: \.path) {
      track, text in
      addFields(path: track.path, name: Folder.title(fromName: track.path), to: &text)
    }
  }

  /// The queue's length in all, of the entries whose length is known; nil when none is.
  public var queueSeconds: Double? {
    queueLength.seconds(of: snapshot.queue, tags: tags)
  }

  /// What a filter finds a row by: its name, title, artist or album, folded ("zoe" finds
  /// "Zoë").
  private func addFields(path: String, name: String, to text: inout FoldedRows) {
    text.append(folding: name)
    guard let info = tags[path] else { return }
    if let title = info.title { text.append(folding: title) }
    if let artist = info.artist { text.append(folding: artist) }
    if let album = info.album { text.append(folding: album) }
  }

  /// The filter of the view shown.
  public var filter: String {
    get { view == .library ? libraryFilter : queueFilter }
    set {
      if view == .library { libraryFilter = newValue } else { queueFilter = newValue }
    }
  }

  private var rowCount: Int { view == .library ? libraryRows.count : queueRows.count }

  private var position: ListPosition {
    get { view == .library ? libraryPosition : queuePosition }
    set {
      if view == .library { libraryPosition = newValue } else { queuePosition = newValue }
    }
  }

  /// Keeps both lists' selections valid after rows changed.
  public mutating func clampPositions() {
    libraryPosition.clamp(count: libraryRows.count, height: layout.listHeight)
    queuePosition.clamp(count: queueRows.count, height: layout.listHeight)
  }

  // MARK: Events from the owner

  /// The index answered a search: its tracks are the library's rows while that filter stands.
  public mutating func showSearch(_ query: String, _ listing: IndexListing) {
    searchResults = (query, listing.rows, listing.cut)
    tags.merge(listing.tags)
    clampPositions()
  }

  /// A folder was read: its rows, or why not.
  public mutating func showFolder(
    _ path: String, _ listing: Result<[LibraryEntry], FolderError>, now: UInt64
  ) {
    let previous = folder
    switch listing {
    case .success(let rows):
      folder = path
      entries = rows
      folderProblem = nil
      libraryFilter = ""
      // Going up selects the folder we came from; the folder `hark PATH` opened on, the first
      // file named (so that Enter plays what the user asked for, not the folder above).
      libraryPosition = ListPosition()
      if let i = rows.firstIndex(where: { $0.path == previous }) {
        libraryPosition.selected = i
      } else if let wanted = selectWhenListed, let i = rows.firstIndex(where: { $0.path == wanted })
      {
        libraryPosition.selected = i
      }
      selectWhenListed = nil
    case .failure(let error):
      if entries.isEmpty {
        folder = path
        folderProblem = error.description
      }
      say(error.description, style: .error, now: now)
    }
    clampPositions()
  }

  /// The file the library's cursor starts on when its first folder is listed: the first of
  /// the files `hark PATH` named, when that folder holds it.
  public var selectWhenListed: String?

  /// Files handed to the player as the interface started (`hark PATH`): the first of them, the
  /// last queue entry before they came, and whether to show the queue (a player that ran
  /// already; a new one opens on the library, at the folder named). When they arrive, the
  /// queue's selection is the first of them.
  public var showWhenQueued: (path: String, after: Int, switchView: Bool)?

  /// A new snapshot from the player.
  public mutating func update(_ snapshot: PlayerSnapshot) {
    let selectedID =
      queueRows.indices.contains(queuePosition.selected)
      ? queueRows[queuePosition.selected].id : nil
    let before = self.snapshot
    self.snapshot = snapshot
    if message?.isAboutState == true
      && (before.state != snapshot.state || before.pausedBy != snapshot.pausedBy
        || before.reason != snapshot.reason)
    {
      message = nil
    }
    // The selection follows its entry when the queue changes around it.
    if let id = selectedID, let i = queueRows.firstIndex(where: { $0.id == id }) {
      queuePosition.selected = i
    }
    // The newest entry of that path: a saved queue restored before them may hold it too.
    if let wanted = showWhenQueued,
      let i = queueRows.indices.filter({
        queueRows[$0].id > wanted.after && queueRows[$0].path == wanted.path
      }).max(by: { queueRows[$0].id < queueRows[$1].id })
    {
      showWhenQueued = nil
      if wanted.switchView { view = .queue }
      queuePosition.selected = i
    }
    clampPositions()
  }

  /// Puts a line in the status line for `messageLifetime`.
  public mutating func say(
    _ text: String, style: Style = .normal, now: UInt64, isAboutState: Bool = false
  ) {
    message = StatusMessage(
      text: TextWidth.sanitized(text), style: style, expires: now + Self.messageLifetime,
      isAboutState: isAboutState)
  }

  /// Puts a line of background news (the index scan's progress) in the status line, unless a
  /// line that is not background news is still up (a warning at start, an answer to a key), or
  /// this is progress and a problem of the background's is still up.
  public mutating func sayInBackground(_ text: String, style: Style = .normal, now: UInt64) {
    if let m = message, m.expires > now {
      // Not over the user's own line; nor, for a progress line, over a problem the background
      // found (an index set aside, then "Indexing the library: …" a moment later).
      if !m.isBackground || (m.style != .normal && style == .normal) { return }
    }
    message = StatusMessage(
      text: TextWidth.sanitized(text), style: style, expires: now + Self.messageLifetime,
      isBackground: true)
  }

  /// Said after what replaced the queue, when the player says so within a few seconds: what the
  /// playlist that replaced it left out.
  private var replaceRemark: (text: String, until: UInt64)?

  public mutating func remarkOnNextReplace(_ text: String, now: UInt64) {
    replaceRemark = (text, now + 5_000_000_000)
  }

  /// What the player reported besides its new state.
  public mutating func note(_ notice: PlayerNotice, now: UInt64) {
    switch notice {
    case .message(let message):
      // The player's words, but for what the keys undo: the interface names its key.
      let undo = firstKey(.undo)
      let text: String
      // News of the queue outlives the change of state it may bring (a tap on a song plays).
      var aboutState = true
      switch message {
      case .queueReplaced(let count, let was):
        text =
          "The queue is now \(tracks(count)) (it had \(tracks(was)); \(undo) brings them back)"
          + (replaceRemark.map { $0.until > now ? "; " + $0.text : "" } ?? "")
        replaceRemark = nil
      case .queueCleared(let count):
        text = "Cleared the queue of \(tracks(count)) (\(undo) brings them back)"
      case .handedOver(1, let path, let placement):
        // By its title, as the interface names a track it adds.
        let title = tags[path]?.title ?? Folder.title(fromName: path)
        text = placement == .end ? "Added '\(title)' to the queue" : "'\(title)' plays next"
      default:
        text = message.description.capitalisedFirst
      }
      switch message {
      // And a damaged state file: the music folder queued instead (a change of state) must
      // not take it away before it has been read.
      case .queueReplaced, .queueCleared, .undone, .nothingToUndo, .handedOver,
        .savedQueueDamaged:
        aboutState = false
      default: break
      }
      say(text, style: message.isProblem ? .error : .normal, now: now, isAboutState: aboutState)
    case .outputFailed(let line):
      say(line.capitalisedFirst, style: .error, now: now, isAboutState: true)
    case .queueEnded(let nothingPlayed):
      say(
        nothingPlayed ? "Nothing in the queue could be played" : "End of the queue",
        style: nothingPlayed ? .error : .normal, now: now)
    case .nowPlaying, .seeked, .couldNotPlay:
      break  // a skipped file is the snapshot's `problem`, which stays up longer than a message
    }
  }

  /// How a remote command the user typed was answered, when it was not done.
  public mutating func commandAnswered(_ label: String, _ status: CommandStatus, now: UInt64) {
    switch status {
    case .success: return
    case .commandDisabled: say("'\(label)' is not possible right now", style: .warning, now: now)
    case .noSuchContent:
      say(
        "The queue is empty: \(firstKey(.playSelection)) plays the selection, "
          + "\(firstKey(.addToQueue)) adds it", style: .warning, now: now)
    case .commandFailed: say("'\(label)' failed", style: .error, now: now)
    }
  }

  /// The outputs were listed.
  public mutating func showOutputs(_ list: [OutputChoice]) {
    outputs = list
    if case .routePicker = overlay {
      var p = ListPosition(selected: list.firstIndex { $0.name == snapshot.deviceName } ?? 0)
      p.clamp(count: list.count, height: pickerHeight)
      overlay = .routePicker(p)
    }
  }

  /// Drops an expired message; true when something changed.
  public mutating func expire(now: UInt64) -> Bool {
    guard let m = message, m.expires <= now else { return false }
    message = nil
    return true
  }

  /// Rows the route picker shows at most.
  var pickerHeight: Int { max(1, min(layout.rows - 6, 12)) }

  /// Lines of the help overlay's list.
  var helpHeight: Int { max(1, layout.rows - 6) }

  func firstKey(_ action: UIAction) -> String {
    bindings.keyNames(action).first ?? action.rawValue
  }

  private func tracks(_ n: Int) -> String { n == 1 ? "1 track" : "\(n) tracks" }

  // MARK: Keys

  /// What `key` does now. Ctrl-C quits and Ctrl-Z suspends whatever the bindings say: they are
  /// what the terminal's signals mean, and the kitty protocol delivers them as keys instead.
  public mutating func handle(_ key: Key, now: UInt64) -> [InterfaceEffect] {
    if key == Key.char("c", .ctrl) { return [.interrupt] }
    if key == Key.char("z", .ctrl) { return [.suspend] }
    if isTyping { return type(key, now: now) }
    if prompt != nil { return typePrompt(key, now: now) }
    let action = bindings.action(for: key)
    switch overlay {
    case .help(let top)?:
      return helpKey(key, action, top: top)
    case .routePicker(let p)?:
      return pickerKey(key, action, position: p)
    case nil:
      break
    }
    if key == Key(.escape) {
      if lyricsEscape() { return [] }
      if !filter.isEmpty {
        filter = ""
        clampPositions()
      }
      return []
    }
    guard let action else {
      // Nothing silently: a key that does nothing says so, and where the keys are.
      say("'\(key)' is not bound to anything; \(firstKey(.help)) lists the keys", now: now)
      return []
    }
    return perform(action, now: now)
  }

  /// A bound action, outside overlays and the search prompt.
  public mutating func perform(_ action: UIAction, now: UInt64) -> [InterfaceEffect] {
    let page = max(1, layout.listHeight - 1)
    if view == .lyrics, let effects = lyricsKey(action, now: now) { return effects }
    if view == .chapters, let effects = chaptersKey(action, now: now) { return effects }
    if snapshot.isLive,
      [.seekForward, .seekBackward, .fastForward, .rewind, .goTo].contains(action)
    {
      // Refused with its reason (G19), rather than a bare "not possible".
      say("A live stream cannot seek", style: .warning, now: now)
      return []
    }
    switch action {
    case .playPause: return [.send(.togglePlayPause, label: "play/pause")]
    case .play: return [.send(.play, label: "play")]
    case .pause: return [.send(.pause, label: "pause")]
    case .stop: return [.send(.stop, label: "stop")]
    case .next: return [.send(.nextTrack, label: "next")]
    case .previous: return [.send(.previousTrack, label: "previous")]
    case .seekForward: return [.send(.skipForward(seconds: 5), label: "forward")]
    case .seekBackward: return [.send(.skipBackward(seconds: 5), label: "back")]
    case .fastForward: return [.send(.seekForward, label: "fast forward")]
    case .rewind: return [.send(.seekBackward, label: "rewind")]
    case .volumeUp: return [.send(.volumeUp(percent: 5), label: "volume up")]
    case .volumeDown: return [.send(.volumeDown(percent: 5), label: "volume down")]
    case .mute: return [.send(.mute, label: "mute")]
    case .shuffle: return [.perform(.setShuffle(!snapshot.shuffle))]
    case .repeat: return [.perform(.setRepeat(snapshot.repeatMode.next))]
    case .routePicker:
      overlay = .routePicker(
        ListPosition(selected: outputs?.firstIndex { $0.name == snapshot.deviceName } ?? 0))
      return [.listOutputs]
    case .playSelection: return playSelection(now: now)
    case .addToQueue: return addSelection(now: now)
    case .playNext: return playNext(now: now)
    case .moveUp, .moveDown:
      guard view == .queue else {
        say("\(firstKey(action)) moves entries in the queue (\(firstKey(.toggleView)))", now: now)
        return []
      }
      let rows = snapshot.queue
      guard queueFilter.isEmpty, queueRows.indices.contains(queuePosition.selected) else {
        return []
      }
      let entry = queueRows[queuePosition.selected]
      guard let at = rows.firstIndex(where: { $0.id == entry.id }) else { return [] }
      let to = action == .moveUp ? at - 1 : at + 1
      guard rows.indices.contains(to) else { return [] }
      // The queue is not as the status line last told ("The queue is back as it was"): that
      // news goes; a problem stays until it has been read.
      if message?.style == .normal { message = nil }
      // As the player will have it, until it says so: keys that come before its answer (K K K
      // in one read) each move the entry one place more, not the same place again.
      snapshot.queue.swapAt(at, to)
      queuePosition.move(by: to - at, count: snapshot.queue.count, height: layout.listHeight)
      return [.perform(.move(entry: entry.id, to: to))]
    case .clearQueue:
      return snapshot.queue.isEmpty ? [] : [.perform(.clear)]
    case .shuffleOnce:
      guard snapshot.queue.count >= 2 else { return [] }
      say("Shuffled the queue (\(firstKey(.undo)) brings its order back)", now: now)
      return [.perform(.shuffleOnce)]
    case .undo:
      return [.perform(.undo)]
    case .toggleSpoken:
      return snapshot.current == nil ? [] : [.perform(.toggleSpoken)]
    case .faster, .slower:
      guard snapshot.enabledCommands.contains(.changePlaybackRate) else {
        say(snapshot.isLive ? "A live stream plays at 1×" : "Nothing to speed up", now: now)
        return []
      }
      return [.perform(.stepRate(faster: action == .faster))]
    case .normalSpeed:
      guard snapshot.enabledCommands.contains(.changePlaybackRate) else { return [] }
      return snapshot.rate == 1 ? [] : [.send(.changePlaybackRate(1), label: "normal speed")]
    case .saveQueue:
      guard !snapshot.queue.isEmpty else {
        say("The queue is empty: nothing to save", now: now)
        return []
      }
      prompt = Prompt(kind: .saveQueue)
      return []
    case .goTo:
      guard snapshot.isSeekable else {
        say("The track playing cannot seek", now: now)
        return []
      }
      prompt = Prompt(kind: .goTo)
      return []
    case .remove:
      guard view == .queue else {
        say(
          "\(firstKey(.remove)) removes entries in the queue (\(firstKey(.toggleView)))", now: now)
        return []
      }
      let rows = queueRows
      guard rows.indices.contains(queuePosition.selected) else { return [] }
      let entry = rows[queuePosition.selected]
      let title = tags[entry.path]?.title ?? Folder.title(fromName: entry.path)
      say("Removed '\(title)' (\(firstKey(.undo)) brings it back)", now: now)
      // Gone here at once, as it will be in the player's answer: a second d before that answer
      // removes the next entry, not this one again.
      snapshot.queue.removeAll { $0.id == entry.id }
      clampPositions()
      return [.perform(.remove(entry: entry.id))]
    case .search:
      // The library's search (the lyrics and chapters have none of their own).
      if view == .lyrics || view == .chapters { view = .library }
      isTyping = true
      pickedWhileTyping = false
      return []
    case .toggleView:
      view = view == .library ? .queue : .library
      return []
    case .libraryView:
      view = .library
      return []
    case .queueView:
      view = .queue
      return []
    case .lyricsView:
      if view == .lyrics {
        view = viewBeforePane
      } else {
        if view == .library || view == .queue { viewBeforePane = view }
        view = .lyrics
      }
      return []
    case .chaptersView:
      if view == .chapters {
        view = viewBeforePane
      } else {
        if view == .library || view == .queue { viewBeforePane = view }
        view = .chapters
        showChapterPlaying(now: now)
      }
      return []
    case .nextChapter:
      return [.send(.nextChapter, label: "next chapter")]
    case .previousChapter:
      return [.send(.previousChapter, label: "previous chapter")]
    case .down: moveSelection(by: 1)
    case .up: moveSelection(by: -1)
    case .pageDown: moveSelection(by: page)
    case .pageUp: moveSelection(by: -page)
    case .top: moveSelection(by: -rowCount)
    case .bottom: moveSelection(by: rowCount)
    case .parentFolder:
      guard view == .library, folder != "/" else { return [] }
      // An index view goes back where it was opened from (its ".." row).
      if let up = entries.first(where: { $0.kind == .parent }), IndexView(path: folder) != nil {
        return [.openFolder(up.path)]
      }
      return [.openFolder(Folder.parent(of: folder))]
    case .help:
      overlay = .help(top: 0)
      return []
    case .redraw: return [.redraw]
    case .simulateCall: return [.simulateCall]
    case .sleepTimer: return nextSleepTimer(now: now)
    case .detach: return [.detach]
    case .quit: return [.quit]
    }
    return []
  }

  /// The sleep timer's next choice: after the one this key made a moment ago, else after the
  /// timer that runs (a duration set by `hark timer` goes on to the next longer choice), else
  /// the first.
  private mutating func nextSleepTimer(now: UInt64) -> [InterfaceEffect] {
    let choices = Self.timerChoices
    var next = 0
    if let last = lastTimerChoice, now &- last.at < 5_000_000_000 {
      next = (last.index + 1) % choices.count
    } else if let timer = snapshot.sleepTimer, timer.state == .running {
      switch timer.mode {
      case .duration(let seconds):
        next =
          choices.firstIndex {
            if case .duration(let s) = $0 { s > seconds + 1 } else { true }
          } ?? 0
      case .endOfTrack, .endOfChapter: next = choices.count - 1
      }
    }
    lastTimerChoice = (next, now)
    let mode = choices[next]
    say(
      mode.map { "Sleep timer: " + Format.sleepTimerChoice($0) } ?? "Sleep timer off", now: now)
    return [.setSleepTimer(mode.map { SleepTimerSetting($0) })]
  }

  private mutating func moveSelection(by delta: Int) {
    var p = position
    p.move(by: delta, count: rowCount, height: layout.listHeight)
    position = p
  }

  private mutating func playSelection(now: UInt64) -> [InterfaceEffect] {
    switch view {
    case .library:
      let rows = libraryRows
      guard rows.indices.contains(libraryPosition.selected) else { return [] }
      let entry = rows[libraryPosition.selected]
      switch entry.kind {
      case .parent, .folder:
        return [.openFolder(entry.path)]
      case .file:
        // Like a tap on a song in an album: the album (what is shown) becomes the queue and
        // plays from that song. 'a' adds without replacing.
        let files = rows.filter { $0.kind == .file }.map(\.path)
        let start = files.firstIndex(of: entry.path) ?? 0
        return [.replaceQueue(files, start: start)]
      case .unplayable(let reason):
        say("Cannot play '\(entry.name)': \(reason)", now: now)
        return []
      case .playlist:
        return [.playPlaylist(entry.path)]
      }
    case .queue:
      let rows = queueRows
      guard rows.indices.contains(queuePosition.selected) else { return [] }
      return [.perform(.playEntry(rows[queuePosition.selected].id))]
    case .lyrics:
      return []  // `lyricsKey`: the line picked
    case .chapters:
      return []  // `chaptersKey`: the chapter picked
    }
  }

  private mutating func addSelection(now: UInt64) -> [InterfaceEffect] {
    guard view == .library else {
      say("\(firstKey(.addToQueue)) adds from the library (\(firstKey(.libraryView)))", now: now)
      return []
    }
    let rows = libraryRows
    guard rows.indices.contains(libraryPosition.selected) else { return [] }
    let entry = rows[libraryPosition.selected]
    // The next row, so that pressing it again adds the next one.
    libraryPosition.move(by: 1, count: rows.count, height: layout.listHeight)
    switch entry.kind {
    case .parent: return []
    case .folder: return [.addFolder(entry.path)]
    case .file:
      let title = tags[entry.path]?.title ?? Folder.title(fromName: entry.name)
      say("Added '\(title)' to the queue", now: now)
      return [.perform(.add([entry.path], play: false))]
    case .unplayable(let reason):
      say("Cannot add '\(entry.name)': \(reason)", now: now)
      return []
    case .playlist: return [.addFolder(entry.path)]
    }
  }

  /// The selection plays next, after the track playing (and what was put there before it): a
  /// song or a folder of the library, or an entry of the queue moved there.
  private mutating func playNext(now: UInt64) -> [InterfaceEffect] {
    switch view {
    case .library:
      let rows = libraryRows
      guard rows.indices.contains(libraryPosition.selected) else { return [] }
      let entry = rows[libraryPosition.selected]
      libraryPosition.move(by: 1, count: rows.count, height: layout.listHeight)
      switch entry.kind {
      case .parent: return []
      case .folder, .playlist: return [.addFolder(entry.path, next: true)]
      case .file:
        let title = tags[entry.path]?.title ?? Folder.title(fromName: entry.name)
        say("'\(title)' plays next", now: now)
        return [.perform(.insert([entry.path], at: .next))]
      case .unplayable(let reason):
        say("Cannot play '\(entry.name)': \(reason)", now: now)
        return []
      }
    case .queue:
      let rows = queueRows
      guard rows.indices.contains(queuePosition.selected),
        let current = snapshot.current,
        let at = snapshot.queue.firstIndex(where: { $0.id == current.id })
      else { return [] }
      let entry = rows[queuePosition.selected]
      guard entry.id != current.id,
        let from = snapshot.queue.firstIndex(where: { $0.id == entry.id })
      else { return [] }
      // Right after the current entry (in the user's order; one place less once it has left
      // its own place above it).
      return [.perform(.move(entry: entry.id, to: from < at ? at : at + 1))]
    case .lyrics, .chapters:
      say("\(firstKey(.playNext)) plays next from the library or the queue", now: now)
      return []
    }
  }

  /// The queue was to be saved as `name`, and hark has a playlist of that name: the hint line
  /// asks whether to replace it.
  public mutating func askToReplacePlaylist(_ name: String) {
    prompt = Prompt(kind: .replacePlaylist(name: name))
  }

  /// The hint line's prompt: Enter does what it is for, Esc gives up.
  private mutating func typePrompt(_ key: Key, now: UInt64) -> [InterfaceEffect] {
    guard var p = prompt else { return [] }
    if case .replacePlaylist(let name) = p.kind {
      // y replaces it; n goes back to the name, to choose another; Esc saves nothing.
      switch key.code {
      case .character("y"), .character("Y"):
        prompt = nil
        return [.saveQueue(name: name, replacing: true)]
      case .character("n"), .character("N"):
        prompt = Prompt(kind: .saveQueue, text: name)
      case .escape:
        prompt = nil
        say("The queue is not saved; the playlist '\(name)' is as it was", now: now)
      default:
        break
      }
      return []
    }
    switch key.code {
    case .escape:
      prompt = nil
    case .enter:
      return finish(p, now: now)
    case .backspace:
      if !p.text.isEmpty { p.text.removeLast() }
      prompt = p
    case .character(let c) where key.modifiers.isDisjoint(with: [.ctrl, .alt, .super]):
      p.text.unicodeScalars.append(c)
      prompt = p
    default:
      break
    }
    return []
  }

  /// What a prompt's Enter does; a line it cannot take is said, and the prompt stays.
  private mutating func finish(_ p: Prompt, now: UInt64) -> [InterfaceEffect] {
    switch p.kind {
    case .saveQueue:
      if let problem = Playlists.problem(with: p.text) {
        say(problem.capitalisedFirst, style: .warning, now: now)
        return []
      }
      prompt = nil
      return [.saveQueue(name: p.text)]
    case .replacePlaylist:
      return []  // answered with y or n, above
    case .goTo:
      guard let time = TypedTime(p.text.trimmingCharacters(" ")) else {
        say("'\(p.text)' is no time: 1:30, 90, +10 or -0:15", style: .warning, now: now)
        return []
      }
      prompt = nil
      if time.isRelative {
        return [
          time.seconds >= 0
            ? .send(.skipForward(seconds: time.seconds), label: "go to")
            : .send(.skipBackward(seconds: -time.seconds), label: "go to")
        ]
      }
      return [.send(.changePlaybackPosition(seconds: time.seconds), label: "go to")]
    }
  }

  /// The search prompt: typed characters filter, Enter keeps the filter (and plays the row
  /// picked with Up or Down since the last character), Esc clears it.
  private mutating func type(_ key: Key, now: UInt64) -> [InterfaceEffect] {
    switch key.code {
    case .escape:
      isTyping = false
      filter = ""
    case .enter:
      isTyping = false
      if pickedWhileTyping {
        pickedWhileTyping = false
        clampPositions()
        return playSelection(now: now)
      }
    case .backspace:
      if filter.isEmpty { isTyping = false } else { filter.removeLast() }
      pickedWhileTyping = false
    case .up:
      moveSelection(by: -1)
      pickedWhileTyping = true
    case .down:
      moveSelection(by: 1)
      pickedWhileTyping = true
    case .character(let c) where key.modifiers.isDisjoint(with: [.ctrl, .alt, .super]):
      filter.unicodeScalars.append(c)
      position = ListPosition()
      pickedWhileTyping = false
    default:
      break
    }
    clampPositions()
    // As you type, the whole library (the index), not only the folder shown.
    if view == .library, indexReady, !libraryFilter.isEmpty,
      searchResults?.query != libraryFilter
    {
      return [.searchLibrary(libraryFilter)]
    }
    return []
  }

  private mutating func helpKey(_ key: Key, _ action: UIAction?, top: Int) -> [InterfaceEffect] {
    let count = HelpText.lines(bindings).count
    let height = helpHeight
    let last = max(0, count - height)
    var t = top
    switch action {
    case .down?: t += 1
    case .up?: t -= 1
    case .pageDown?: t += height - 1
    case .pageUp?: t -= height - 1
    case .top?: t = 0
    case .bottom?: t = last
    case .help?, .quit?:
      overlay = nil
      return []
    case .redraw?: return [.redraw]
    default:
      if key == Key(.escape) || key == Key(.enter) { overlay = nil }
      return []
    }
    overlay = .help(top: max(0, min(t, last)))
    return []
  }

  private mutating func pickerKey(_ key: Key, _ action: UIAction?, position p: ListPosition)
    -> [InterfaceEffect]
  {
    let list = outputs ?? []
    var p = p
    let height = pickerHeight
    switch action {
    case .down?: p.move(by: 1, count: list.count, height: height)
    case .up?: p.move(by: -1, count: list.count, height: height)
    case .top?: p.move(by: -list.count, count: list.count, height: height)
    case .bottom?: p.move(by: list.count, count: list.count, height: height)
    case .pageDown?: p.move(by: height, count: list.count, height: height)
    case .pageUp?: p.move(by: -height, count: list.count, height: height)
    case .playSelection?:
      overlay = nil
      guard list.indices.contains(p.selected) else { return [] }
      let name = list[p.selected].name
      return name == snapshot.deviceName ? [] : [.perform(.selectDevice(name))]
    case .routePicker?, .quit?:
      overlay = nil
      return []
    case .redraw?: return [.redraw]
    default:
      if key == Key(.escape) { overlay = nil }
      return []
    }
    overlay = .routePicker(p)
    return []
  }
}

/// The help overlay's lines, from the live bindings.
enum HelpText {
  static func lines(_ bindings: KeyBindings) -> [(keys: String, action: String, summary: String)] {
    var out = UIAction.allCases.map { action in
      let keys = bindings.keyNames(action)
      return (
        keys.isEmpty ? "(none)" : keys.joined(separator: ", "), action.rawValue, action.summary
      )
    }
    out.append(("esc", "", "close this, the picker or the search; clear the filter"))
    out.append(("C-c", "", "quit, as SIGINT does (exit status 130)"))
    out.append(("C-z", "", "suspend; 'fg' comes back"))
    return out
  }
}

extension String {
  fileprivate func trimmingCharacters(_ c: Character) -> String {
    var s = Substring(self)
    while s.first == c { s = s.dropFirst() }
    while s.last == c { s = s.dropLast() }
    return String(s)
  }
}

/// A cover picture and the file it is the cover of.
public struct ShownCover: Hashable, Sendable {
  public var path: String
  public var art: CoverArt

  public init(path: String, art: CoverArt) {
    self.path = path
    self.art = art
  }
}
