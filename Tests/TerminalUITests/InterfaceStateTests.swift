import Glibc
import Platform
import SessionCore
import Testing

@testable import TerminalUI
import PlayerCore
import AudioCore
import MediaFiles

/// What keys do, through the live bindings, without a terminal.
@Suite(.timeLimit(.minutes(2))) struct InterfaceStateTests {
  static let folder = "/music/Album"
  static let rows: [LibraryEntry] = [
    LibraryEntry(kind: .parent, name: "..", path: "/music"),
    LibraryEntry(kind: .folder, name: "Live", path: "/music/Album/Live"),
    LibraryEntry(kind: .file, name: "01 Morning.flac", path: "/music/Album/01 Morning.flac"),
    LibraryEntry(kind: .file, name: "02 Paper.ogg", path: "/music/Album/02 Paper.ogg"),
    LibraryEntry(kind: .file, name: "03 Lanterns.mp3", path: "/music/Album/03 Lanterns.mp3"),
  ]

  private func makeState(bindings: KeyBindings = .defaults) -> InterfaceState {
    var s = InterfaceState(
      folder: Self.folder, layout: Layout(rows: 24, columns: 80), bindings: bindings)
    s.showFolder(Self.folder, .success(Self.rows), now: 0)
    var snap = PlayerSnapshot()
    snap.queue = [
      QueuedTrack(id: 7, path: "/x/one.flac"), QueuedTrack(id: 8, path: "/x/two.flac"),
      QueuedTrack(id: 9, path: "/x/three.flac"),
    ]
    snap.current = snap.queue[1]
    snap.deviceName = "pulse"
    s.update(snap)
    return s
  }

  private func press(_ s: inout InterfaceState, _ names: String...) throws -> [InterfaceEffect] {
    var out: [InterfaceEffect] = []
    for n in names { out += s.handle(try Key(parsing: n), now: 0) }
    return out
  }

  /// The index scan's progress is background news: it never covers a warning at start (a
  /// damaged state file) or an answer to a key while it is up, and it shows over nothing else,
  /// each line replacing the one before.
  @Test func theIndexScanNeverCoversALineTheUserHasNotRead() {
    var s = makeState()
    s.say("State file damaged: set aside", style: .warning, now: 0)
    s.sayInBackground("Library indexed: 5 tracks", now: 1_000)
    #expect(s.message?.text == "State file damaged: set aside")
    // Once the warning has had its time, the scan's news shows, and the next line replaces it.
    let later = InterfaceState.messageLifetime + 1
    s.sayInBackground("Indexing the library: 1 of 9 files read", now: later)
    #expect(s.message?.text == "Indexing the library: 1 of 9 files read")
    s.sayInBackground("Library indexed: 9 tracks", now: later + 1)
    #expect(s.message?.text == "Library indexed: 9 tracks")
    // A line of the user's own replaces background news at once.
    s.say("Added 3 tracks to the queue", now: later + 2)
    #expect(s.message?.text == "Added 3 tracks to the queue")
    s.sayInBackground("Cannot index the library: disk I/O error", style: .warning, now: later + 3)
    #expect(s.message?.text == "Added 3 tracks to the queue")
    // Why playback is paused, and the file that could not play, rank above background news.
    let end = later + 3 + InterfaceState.messageLifetime
    s.sayInBackground("Library indexed: 9 tracks", now: end)
    #expect(Screen.status(s, now: end)?.0 == "Library indexed: 9 tracks")
    // A problem the background found stays up for its time: the progress after it waits.
    s.sayInBackground("The library index was set aside; rebuilding it", style: .warning, now: end)
    s.sayInBackground("Indexing the library: 1 of 9 files read", now: end + 1)
    #expect(s.message?.text == "The library index was set aside; rebuilding it")
    s.sayInBackground("Cannot index the library: disk full", style: .warning, now: end + 2)
    #expect(s.message?.text == "Cannot index the library: disk full")
    let after = end + 2 + InterfaceState.messageLifetime
    s.sayInBackground("Library indexed: 9 tracks", now: after)
    #expect(s.message?.text == "Library indexed: 9 tracks")
    var snap = s.snapshot
    snap.problem = .skipped(file: "04 Notes.mp3", reason: "not an audio file", moreBefore: 0)
    s.update(snap)
    #expect(Screen.status(s, now: after)?.0 == "Could not play 04 Notes.mp3: not an audio file")
  }

  /// The folder in the tab bar is written as a shell prompt writes it: `~` for the home
  /// folder, so a screen shows no machine's paths.
  /// } and { step the speed through the player (which knows the track's own), \ goes back to
  /// 1×; where there is no speed to change (a live stream) the keys say so and send nothing.
  @Test func theSpeedKeysStepThroughThePlayer() throws {
    var s = makeState()
    var snap = s.snapshot
    snap.enabledCommands = [.changePlaybackRate]
    snap.rate = 1.5
    s.update(snap)
    #expect(try press(&s, "}") == [.perform(.stepRate(faster: true))])
    #expect(try press(&s, "{") == [.perform(.stepRate(faster: false))])
    #expect(try press(&s, "\\") == [.send(.changePlaybackRate(1), label: "normal speed")])
    snap.rate = 1
    s.update(snap)
    #expect(try press(&s, "\\").isEmpty, "already at 1×")
    snap.enabledCommands = []
    snap.isLive = true
    s.update(snap)
    #expect(try press(&s, "}").isEmpty)
    #expect(s.message?.text == "A live stream plays at 1×")
  }

  @Test func theFolderShownStartsWithATildeBelowHome() {
    #expect(Screen.tilde("/home/me/Music/Album", home: "/home/me") == "~/Music/Album")
    #expect(Screen.tilde("/home/me", home: "/home/me/") == "~")
    #expect(Screen.tilde("/home/meg/Music", home: "/home/me") == "/home/meg/Music")
    #expect(Screen.tilde("/srv/music", home: "/") == "/srv/music")
    #expect(Screen.tilde("/srv/music", home: nil) == "/srv/music")
  }

  /// Nothing invisible: a file of no format hark plays is listed, marked, and says why when chosen
  /// or added; it never replaces the queue. Covers and booklets stay out.
  @Test func anUnplayableFileIsListedAndSaysWhyWhenChosen() throws {
    let folder = "/tmp/hark-folder-\(getpid())"
    _ = system("rm -rf '\(folder)'; mkdir -p '\(folder)'")
    defer { _ = system("rm -rf '\(folder)'") }
    for name in ["01 Song.m4a", "02 Tune.mid", "cover.jpg", "notes.txt"] {
      _ = system("touch '\(folder)/\(name)'")
    }
    let listing = Folder.list(folder)
    let rows = try listing.get()
    #expect(rows.map(\.name) == ["..", "01 Song.m4a", "02 Tune.mid"])
    #expect(rows[1].kind == .file)
    #expect(rows[2].kind == .unplayable(reason: "hark plays no .mid files"))
    var s = makeState()
    s.showFolder(folder, listing, now: 0)
    #expect(try press(&s, "down", "down", "enter").isEmpty, "chosen, it replaces nothing")
    #expect(s.message?.text == "Cannot play '02 Tune.mid': hark plays no .mid files")
    #expect(try press(&s, "a").isEmpty)
    #expect(s.message?.text == "Cannot add '02 Tune.mid': hark plays no .mid files")
  }

  /// An album ripped to one file with its cue sheet shows as its tracks; Enter on one plays the
  /// album from it.
  @Test func aCueSheetShowsAsItsTracksInsteadOfItsFile() throws {
    let folder = "/tmp/hark-cue-folder-\(getpid())"
    _ = system("rm -rf '\(folder)'; mkdir -p '\(folder)'; touch '\(folder)/Live.flac'")
    defer { _ = system("rm -rf '\(folder)'") }
    let sheet = """
      FILE "Live.flac" WAVE
        TRACK 01 AUDIO
          TITLE "Opening"
          INDEX 01 00:00:00
        TRACK 02 AUDIO
          TITLE "Encore"
          INDEX 01 03:00:00
      """
    let f = fopen(folder + "/Live.cue", "w")
    fputs(sheet, f)
    fclose(f)
    let listing = Folder.list(folder)
    let rows = try listing.get()
    #expect(rows.map(\.name) == ["..", "01 Opening", "02 Encore"])
    #expect(rows.dropFirst().map(\.path) == [folder + "/Live.cue#1", folder + "/Live.cue#2"])
    var s = makeState()
    s.showFolder(folder, listing, now: 0)
    #expect(
      try press(&s, "down", "down", "enter") == [
        .replaceQueue([folder + "/Live.cue#1", folder + "/Live.cue#2"], start: 1)
      ])
  }

  /// `hark FOLDER`: the library opens on the folder with its first file under the cursor, so
  /// that Enter plays what the user named rather than going to the folder above; going up
  /// afterwards still selects the folder come from, and a later folder starts at its top.
  @Test func theFolderNamedOpensOnItsFirstFile() throws {
    var s = InterfaceState(
      folder: Self.folder, layout: Layout(rows: 24, columns: 80), bindings: .defaults)
    s.selectWhenListed = "/music/Album/01 Morning.flac"
    s.showFolder(Self.folder, .success(Self.rows), now: 0)
    #expect(s.libraryPosition.selected == 2)
    #expect(
      try press(&s, "enter") == [.replaceQueue(Self.rows[2...].map(\.path), start: 0)])
    s.showFolder("/music/Album/Live", .success([Self.rows[0]]), now: 0)
    #expect(s.libraryPosition.selected == 0)
    s.showFolder(Self.folder, .success(Self.rows), now: 0)
    #expect(s.libraryPosition.selected == 1, "going up selects the folder come from")
    // Named but not in the folder listed (a file elsewhere): the top, as before.
    var t = InterfaceState(
      folder: Self.folder, layout: Layout(rows: 24, columns: 80), bindings: .defaults)
    t.selectWhenListed = "/elsewhere/x.flac"
    t.showFolder(Self.folder, .success(Self.rows), now: 0)
    #expect(t.libraryPosition.selected == 0)
  }

  /// Editing the queue from the keyboard: play next, move, clear, shuffle once, undo; each is a
  /// player action, so the player keeps what can be undone.
  @Test func theQueueIsEditedFromTheKeyboard() throws {
    var s = makeState()
    // In the library: e puts the song (or a folder) after the track playing.
    #expect(
      try press(&s, "down", "down", "e") == [
        .perform(.insert(["/music/Album/01 Morning.flac"], at: .next))
      ])
    #expect(try press(&s, "up", "up", "e") == [.addFolder("/music/Album/Live", next: true)])
    #expect(try press(&s, "J").isEmpty, "moving is for the queue")
    // In the queue (one, two (playing), three): J, K move; e puts an entry after the current.
    #expect(try press(&s, "2", "J") == [.perform(.move(entry: 7, to: 1))])
    // The queue is as the player will have it before its answer comes, and the selection
    // follows the entry: a second key (K K in one read) moves it once more.
    #expect(s.snapshot.queue.map(\.id) == [8, 7, 9])
    #expect(try press(&s, "K") == [.perform(.move(entry: 7, to: 0))])
    #expect(try press(&s, "K").isEmpty, "the first cannot go up")
    #expect(try press(&s, "G", "K") == [.perform(.move(entry: 9, to: 1))])
    #expect(try press(&s, "g", "e") == [.perform(.move(entry: 7, to: 2))])
    #expect(try press(&s, "X") == [.perform(.clear)])
    #expect(try press(&s, "S") == [.perform(.shuffleOnce)])
    #expect(s.message?.text == "Shuffled the queue (u brings its order back)")
    #expect(try press(&s, "u") == [.perform(.undo)])
    // News of the queue that a move makes untrue goes (it stood for its six seconds); a problem
    // stays.
    s.note(.message(.undone(count: 3)), now: 0)
    #expect(s.message != nil)
    _ = try press(&s, "g", "J")
    #expect(s.message == nil)
    s.say("Cannot play 'x.flac': damaged", style: .error, now: 0)
    _ = try press(&s, "K")
    #expect(s.message?.style == .error)
  }

  /// Keys that come before the player's answer each do what they say (a user's report: K K K
  /// K in one read moved the entry once, d d d removed one entry): J and K move the entry one
  /// place each, d removes the entry then selected each time.
  @Test func queueEditsTypedFasterThanThePlayerAnswersEachCount() throws {
    var s = makeState()
    var snap = s.snapshot
    snap.queue = (1...6).map { QueuedTrack(id: $0, path: "/x/\($0).flac") }
    snap.current = snap.queue[0]
    s.update(snap)
    #expect(
      try press(&s, "2", "G", "K", "K", "K") == [
        .perform(.move(entry: 6, to: 4)), .perform(.move(entry: 6, to: 3)),
        .perform(.move(entry: 6, to: 2)),
      ])
    #expect(s.queueRows[s.queuePosition.selected].id == 6)
    #expect(
      try press(&s, "g", "d", "d", "d") == [
        .perform(.remove(entry: 1)), .perform(.remove(entry: 2)), .perform(.remove(entry: 6)),
      ])
    #expect(s.snapshot.queue.map(\.id) == [3, 4, 5])
    // The player's answer, the same queue, changes nothing.
    var answer = s.snapshot
    answer.queue = [3, 4, 5].map { QueuedTrack(id: $0, path: "/x/\($0).flac") }
    s.update(answer)
    #expect(s.queuePosition.selected == 0)
  }

  /// Playlists in the library play, add and play next; the queue is saved under a name typed in the
  /// hint line.
  @Test func playlistsPlayAndTheQueueIsSavedUnderAName() throws {
    var s = makeState()
    s.showFolder(
      Self.folder,
      .success(
        Self.rows + [LibraryEntry(kind: .playlist, name: "Best.m3u8", path: "/p/Best.m3u8")]),
      now: 0)
    #expect(try press(&s, "G", "enter") == [.playPlaylist("/p/Best.m3u8")])
    #expect(try press(&s, "G", "a") == [.addFolder("/p/Best.m3u8")])
    #expect(try press(&s, "G", "e") == [.addFolder("/p/Best.m3u8", next: true)])
    #expect(try press(&s, "w").isEmpty)
    #expect(s.saveName == "")
    #expect(try press(&s, "R", "o", "a", "d", "/", "enter").isEmpty, "no '/' in a name")
    #expect(s.message?.text == "A playlist's name cannot hold '/'")
    #expect(try press(&s, "backspace", "enter") == [.saveQueue(name: "Road")])
    #expect(s.saveName == nil)
    #expect(try press(&s, "w", "x", "esc").isEmpty)
    #expect(s.saveName == nil, "Esc gives up")
    // A name hark has a playlist of: the owner asks, and only y replaces it.
    s.askToReplacePlaylist("Road")
    #expect(try press(&s, "enter", "x").isEmpty, "Enter or another key is no answer")
    #expect(s.prompt?.kind == .replacePlaylist(name: "Road"))
    #expect(try press(&s, "n").isEmpty)
    #expect(s.saveName == "Road", "n goes back to the name")
    #expect(try press(&s, "s", "enter") == [.saveQueue(name: "Roads")])
    s.askToReplacePlaylist("Road")
    #expect(try press(&s, "y") == [.saveQueue(name: "Road", replacing: true)])
    #expect(s.prompt == nil)
    s.askToReplacePlaylist("Road")
    #expect(try press(&s, "esc").isEmpty)
    #expect(s.prompt == nil)
    #expect(s.message?.text == "The queue is not saved; the playlist 'Road' is as it was")
  }

  /// With the tag index, `/` in the library searches all of it: each keystroke asks the owner,
  /// whose answer becomes the rows while that filter stands; Enter plays from the one chosen.
  @Test func theFilterSearchesTheWholeLibraryWhenTheIndexIsReady() throws {
    var s = makeState()
    #expect(try press(&s, "/", "z").isEmpty, "without the index the filter filters the folder")
    _ = try press(&s, "esc")
    s.indexReady = true
    #expect(try press(&s, "/", "z", "o") == [.searchLibrary("z"), .searchLibrary("zo")])
    let found = [
      LibraryEntry(kind: .file, name: "Zoë 1", path: "/elsewhere/z1.flac"),
      LibraryEntry(kind: .file, name: "Zoë 2", path: "/elsewhere/z2.flac"),
    ]
    s.showSearch("z", IndexListing(rows: [found[0]]))  // an answer to an older filter
    #expect(s.libraryRows.isEmpty, "rows for 'z' are not rows for 'zo'")
    s.showSearch(
      "zo", IndexListing(rows: found, tags: ["/elsewhere/z2.flac": TrackInfo(title: "Zoë 2")]))
    #expect(s.libraryRows == found)
    #expect(s.searchFound == "2 found")
    #expect(s.tags["/elsewhere/z2.flac"]?.title == "Zoë 2")
    #expect(try press(&s, "enter", "down", "enter") == [.replaceQueue(found.map(\.path), start: 1)])
    _ = try press(&s, "/", "esc")
    #expect(s.libraryRows == Self.rows, "Esc gives the folder back")
  }

  /// A search that found more than it lists says so where it lists them (a queue made from 500 of
  /// 4,400 matches was cut without a word).
  @Test func aSearchCutShortSaysHowManyItFound() throws {
    var s = makeState()
    s.indexReady = true
    _ = try press(&s, "/", "a")
    let rows = (0..<3).map { LibraryEntry(kind: .file, name: "A \($0)", path: "/m/a\($0).flac") }
    s.showSearch("a", IndexListing(rows: rows, cut: .of(4_400)))
    #expect(s.searchFound == "4,400 found, the first 3 listed")
    s.showSearch("a", IndexListing(rows: rows, cut: .more))
    #expect(s.searchFound == "the first 3 found listed")
    _ = try press(&s, "enter")
    let c = TextCanvas(rows: s.layout.rows, columns: s.layout.columns)
    Screen.draw(s, on: c, now: 0)
    let screen = c.lines.joined(separator: "\n")
    #expect(screen.contains("Search: the first 3 found listed"), "\(screen)")
    #expect(screen.contains("Filter: 'a': the first 3 found listed"), "\(screen)")
    _ = try press(&s, "/", "esc")
    #expect(s.searchFound == nil)
  }

  /// An index view's ".." (and the parent key) goes back where it was opened from.
  @Test func anIndexViewGoesBackWhereItCameFrom() throws {
    var s = makeState()
    let album = IndexView.album(artist: "Zoë", title: nil)
    #expect(IndexView(path: album.path) == album)
    #expect(IndexView(path: IndexView.artist(nil).path) == .artist(nil))
    #expect(IndexView(path: "/music/hark:index/artists") == nil)
    #expect(album.title == "Zoë › Unknown album")
    s.showFolder(
      album.path,
      .success([LibraryEntry(kind: .parent, name: "..", path: IndexView.albums.path)]), now: 0)
    #expect(try press(&s, "backspace") == [.openFolder(IndexView.albums.path)])
  }

  /// A file whose name is not UTF-8 is written as its bytes and read back as that very file.
  @Test func aSavedPlaylistKeepsANameThatIsNotUTF8() throws {
    let home = "/tmp/hark-playlists-raw-\(getpid())"
    _ = system("rm -rf '\(home)'")
    defer { _ = system("rm -rf '\(home)'") }
    let raw = Array(home.utf8) + Array("/caf".utf8) + [0xE9] + Array(".wav".utf8)
    let name = FileName.string(raw)
    _ = system("mkdir -p '\(home)'")
    let fd = open(FileName.c(name), O_WRONLY | O_CREAT, 0o600)
    try #require(fd >= 0)
    close(fd)
    let saved = try Playlists.save([name], as: "raw", in: home).get()
    let (files, problems) = QueueLoader.load([saved.path])
    #expect(problems.isEmpty)
    #expect(files == [name])
    #expect(access(FileName.c(files[0]), F_OK) == 0, "the name read back names the file")
  }

  @Test func aSavedPlaylistIsM3U8AndReadsBackAsTheQueue() throws {
    let home = "/tmp/hark-playlists-\(getpid())"
    _ = system("rm -rf '\(home)'")
    defer { _ = system("rm -rf '\(home)'") }
    let folder = home + "/hark/playlists"
    let paths = ["/music/a b.flac", "/music/Live.cue#2"]
    let saved = try Playlists.save(paths, as: " Road trip ", in: folder).get()
    #expect(saved.path == folder + "/Road trip.m3u8")
    #expect(!saved.replaced)
    #expect(try Playlists.save(paths.reversed(), as: "Road trip", in: folder).get().replaced)
    let f = try #require(fopen(saved.path, "r"))
    var text = ""
    var buffer = [CChar](repeating: 0, count: 256)
    while fgets(&buffer, 256, f) != nil {
      text += String(
        decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    fclose(f)
    #expect(text == "#EXTM3U\n/music/Live.cue#2\n/music/a b.flac\n")
    guard case .failure(let refused) = Playlists.save(paths, as: "a/b") else {
      Issue.record("a name with '/' was saved")
      return
    }
    #expect(refused.message == "a playlist's name cannot hold '/'")
  }

  /// A key bound to nothing says so and where the keys are listed, rather than doing nothing
  /// silently.
  @Test func anUnboundKeySaysSo() throws {
    var s = makeState()
    #expect(try press(&s, "y").isEmpty)
    #expect(s.message?.text == "'y' is not bound to anything; ? lists the keys")
  }

  /// Seek by typed time: ':' asks in the hint line; absolute and relative times go as the remote
  /// commands they are; a line that is no time is said and the prompt stays.
  @Test func colonGoesToATypedTime() throws {
    var s = makeState()
    var snap = s.snapshot
    snap.isSeekable = true
    s.update(snap)
    #expect(
      try press(&s, ":", "1", ":", "3", "0", "enter") == [
        .send(.changePlaybackPosition(seconds: 90), label: "go to")
      ])
    #expect(s.prompt == nil)
    #expect(
      try press(&s, ":", "-", "1", "5", "enter") == [
        .send(.skipBackward(seconds: 15), label: "go to")
      ])
    #expect(try press(&s, ":", "x", "enter").isEmpty)
    #expect(s.message?.text == "'x' is no time: 1:30, 90, +10 or -0:15")
    #expect(s.prompt == Prompt(kind: .goTo, text: "x"), "the prompt stays to be mended")
    #expect(try press(&s, "esc").isEmpty)
    #expect(s.prompt == nil)
  }

  /// The interface's keys are one more source of remote commands (G17), each key its own
  /// command (G19): they go through the same path as MPRIS and `hark ctl`, never to the
  /// engine directly.
  @Test func G17_G19_transportKeysSendRemoteCommands() throws {
    var s = makeState()
    #expect(try press(&s, "space") == [.send(.togglePlayPause, label: "play/pause")])
    #expect(try press(&s, "n") == [.send(.nextTrack, label: "next")])
    #expect(try press(&s, "b") == [.send(.previousTrack, label: "previous")])
    #expect(try press(&s, "right") == [.send(.skipForward(seconds: 5), label: "forward")])
    #expect(try press(&s, "h") == [.send(.skipBackward(seconds: 5), label: "back")])
    #expect(try press(&s, "+") == [.send(.volumeUp(percent: 5), label: "volume up")])
    #expect(try press(&s, "-") == [.send(.volumeDown(percent: 5), label: "volume down")])
    #expect(try press(&s, "m") == [.send(.mute, label: "mute")])
  }

  /// The terminal's media keys send the same remote commands as every other source (G17),
  /// each its own command: never remapped to another (G19).
  @Test func G17_G19_mediaKeysSendTheirOwnCommands() {
    var s = makeState()
    let expected: [(MediaKey, RemoteCommand?)] = [
      (.play, .play), (.pause, .pause), (.playPause, .togglePlayPause), (.stop, .stop),
      (.trackNext, .nextTrack), (.trackPrevious, .previousTrack), (.fastForward, .seekForward),
      (.rewind, .seekBackward), (.raiseVolume, .volumeUp(percent: 5)),
      (.lowerVolume, .volumeDown(percent: 5)), (.muteVolume, .mute), (.reverse, nil),
      (.record, nil),
    ]
    for (media, command) in expected {
      let effects = s.handle(Key(.media(media)), now: 0)
      if let command {
        #expect(effects.count == 1, "\(media)")
        if case .send(let sent, _)? = effects.first { #expect(sent == command, "\(media)") }
      } else {
        #expect(effects.isEmpty, "\(media) should do nothing")
      }
    }
  }

  @Test func shuffleAndRepeatCycle() throws {
    var s = makeState()
    #expect(try press(&s, "s") == [.perform(.setShuffle(true))])
    #expect(try press(&s, "r") == [.perform(.setRepeat(.all))])
    var snap = s.snapshot
    snap.repeatMode = .one
    s.update(snap)
    #expect(try press(&s, "r") == [.perform(.setRepeat(.off))])
  }

  @Test func enterOnASongQueuesItsFolderFromThere() throws {
    var s = makeState()
    _ = try press(&s, "j", "j", "j")  // .., Live, 01, 02
    let files = Self.rows.filter { $0.kind == .file }.map(\.path)
    #expect(try press(&s, "enter") == [.replaceQueue(files, start: 1)])
  }

  @Test func enterOnAFolderOpensIt() throws {
    var s = makeState()
    _ = try press(&s, "j")
    #expect(try press(&s, "enter") == [.openFolder("/music/Album/Live")])
    #expect(try press(&s, "backspace") == [.openFolder("/music")])
  }

  @Test func addAddsAndMovesOn() throws {
    var s = makeState()
    _ = try press(&s, "G")
    #expect(try press(&s, "a") == [.perform(.add(["/music/Album/03 Lanterns.mp3"], play: false))])
    _ = try press(&s, "g", "j")
    #expect(try press(&s, "a") == [.addFolder("/music/Album/Live")])
    #expect(s.libraryPosition.selected == 2)
  }

  @Test func theQueueView() throws {
    var s = makeState()
    _ = try press(&s, "tab")
    #expect(s.view == .queue)
    _ = try press(&s, "j")
    #expect(try press(&s, "enter") == [.perform(.playEntry(8))])
    #expect(try press(&s, "d") == [.perform(.remove(entry: 8))])
    #expect(s.message?.text == "Removed 'two' (u brings it back)")
    _ = try press(&s, "1")
    #expect(s.view == .library)
    #expect(try press(&s, "d").isEmpty)  // nothing to remove in the library
    #expect(s.message != nil)
  }

  @Test func theSelectionFollowsItsEntryWhenTheQueueChanges() throws {
    var s = makeState()
    _ = try press(&s, "2", "G")  // three.flac, id 9
    var snap = s.snapshot
    snap.queue.removeFirst()
    s.update(snap)
    #expect(s.queueRows[s.queuePosition.selected].id == 9)
  }

  @Test func searchFiltersAsYouTypeAndEscClears() throws {
    var s = makeState()
    _ = try press(&s, "/", "p", "a")
    #expect(s.isTyping)
    #expect(s.libraryRows.map(\.name) == ["02 Paper.ogg"])
    _ = try press(&s, "backspace")
    #expect(s.libraryRows.map(\.name) == ["02 Paper.ogg", "03 Lanterns.mp3"])
    // Typed keys are text while typing: 'q' does not quit.
    #expect(try press(&s, "q").isEmpty)
    #expect(s.libraryRows.isEmpty)
    _ = try press(&s, "backspace", "enter")
    #expect(!s.isTyping)
    #expect(s.libraryFilter == "p")
    // The filtered rows are what Enter plays.
    #expect(
      try press(&s, "enter") == [
        .replaceQueue(["/music/Album/02 Paper.ogg", "/music/Album/03 Lanterns.mp3"], start: 0)
      ])
    _ = try press(&s, "esc")
    #expect(s.libraryFilter.isEmpty)
    #expect(s.libraryRows.count == Self.rows.count)
  }

  /// A row picked with Down while typing is played by Enter, as a tap on a search result plays it;
  /// typing again after picking makes Enter only keep the filter once more.
  @Test func enterPlaysTheRowPickedWhileTyping() throws {
    var s = makeState()
    _ = try press(&s, "/", "p")
    #expect(
      try press(&s, "down", "enter") == [
        .replaceQueue(["/music/Album/02 Paper.ogg", "/music/Album/03 Lanterns.mp3"], start: 1)
      ])
    #expect(!s.isTyping)
    #expect(s.libraryFilter == "p")
    _ = try press(&s, "esc", "/", "p", "down", "backspace", "p")
    #expect(try press(&s, "enter").isEmpty)
    #expect(!s.isTyping)
  }

  @Test func searchMatchesTags() throws {
    var s = makeState()
    s.tags["/music/Album/01 Morning.flac"] = TrackInfo(title: "Sunrise", artist: "Quiet Band")
    _ = try press(&s, "/", "q", "u", "i", "e", "t")
    #expect(s.libraryRows.map(\.name) == ["01 Morning.flac"])
  }

  /// The queue's filter finds entries by their tags as they are now. Its folded rows are kept
  /// between keystrokes (a 50,000-entry queue took seconds a key when each was folded again), so a
  /// tag read after the filter was typed, a queue changed under it and a copy of the state with
  /// other tags must each be seen.
  @Test func theQueueFilterSeesTagsAndEntriesAsTheyChange() throws {
    var s = makeState()
    _ = try press(&s, "tab", "/", "z", "o", "e")
    #expect(s.queueRows.isEmpty)
    var copy = s
    s.tags["/x/two.flac"] = TrackInfo(title: "Song", artist: "Zoë Keating")
    #expect(s.queueRows.map(\.id) == [8])
    #expect(copy.queueRows.isEmpty, "a copy keeps its own tags")
    copy.tags["/x/one.flac"] = TrackInfo(title: "Zoetrope")
    #expect(copy.queueRows.map(\.id) == [7])
    #expect(s.queueRows.map(\.id) == [8])
    s.tags["/x/two.flac"] = TrackInfo(title: "Song", artist: "Someone else")
    #expect(s.queueRows.isEmpty)
    var snap = s.snapshot
    snap.queue.append(QueuedTrack(id: 10, path: "/x/Zoe Live.flac"))
    s.update(snap)
    #expect(s.queueRows.map(\.id) == [10], "found by its file name")
    #expect(s.queueRowPlaces == [3], "the fourth in the queue")
    // A name is a field of its own: the filter finds a phrase within one field, not across.
    _ = try press(&s, "backspace", "backspace", "backspace", "l", "i", "v", "e", " ", "s")
    #expect(s.queueRows.isEmpty)
    _ = try press(&s, "esc")
    #expect(s.queueRows.count == 4)
    #expect(s.queueRowPlaces == nil)
  }

  /// A file's title when it has no tags: the last part of its path without its extension.
  @Test func aTitleFromAFileName() {
    let table: [(String, String)] = [
      ("/music/Album/01 Morning.flac", "01 Morning"), ("/music/Album/", "Album"),
      ("Paper.ogg", "Paper"), ("/x/.hidden", ".hidden"), ("/x/no extension", "no extension"),
      ("/x/a.b.flac", "a.b"), ("/", "/"), ("", ""), ("/x/Zoë Live.m4a", "Zoë Live"),
    ]
    for (path, title) in table { #expect(Folder.title(fromName: path) == title, "\(path)") }
  }

  /// The queue's length in all (its tab shows it) is added up once for a queue and its tags,
  /// and again when either changes.
  @Test func theQueuesLengthFollowsItsTagsAndEntries() {
    var s = makeState()
    #expect(s.queueSeconds == nil)
    s.tags["/x/one.flac"] = TrackInfo(duration: 60)
    #expect(s.queueSeconds == 60)
    s.tags["/x/three.flac"] = TrackInfo(duration: 30.5)
    #expect(s.queueSeconds == 90.5)
    var snap = s.snapshot
    snap.queue.removeFirst()
    s.update(snap)
    #expect(s.queueSeconds == 30.5)
  }

  /// The folder's filter never lists "..", whatever is typed.
  @Test func theFolderFilterLeavesOutTheParent() throws {
    var s = makeState()
    _ = try press(&s, "/", ".")
    #expect(s.libraryRows.map(\.name) == ["01 Morning.flac", "02 Paper.ogg", "03 Lanterns.mp3"])
    _ = try press(&s, "esc", "/", "l", "i")
    #expect(s.libraryRows.map(\.name) == ["Live"])
  }

  /// G6: the user picks the output in the interface's route picker.
  @Test func G6_theRoutePickerSelectsADevice() throws {
    var s = makeState()
    #expect(try press(&s, "o") == [.listOutputs])
    s.showOutputs([
      OutputChoice(name: "default", summary: ""), OutputChoice(name: "pulse", summary: ""),
      OutputChoice(name: "null", summary: ""),
    ])
    #expect(s.overlay == .routePicker(ListPosition(selected: 1)))  // the current one
    // Keys go to the picker while it is open: 'j' moves in it, not in the library.
    #expect(try press(&s, "j") == [])
    #expect(s.libraryPosition.selected == 0)
    #expect(try press(&s, "enter") == [.perform(.selectDevice("null"))])
    #expect(s.overlay == nil)
    _ = try press(&s, "o")
    #expect(try press(&s, "esc") == [])
    #expect(s.overlay == nil)
  }

  @Test func helpOpensAndCloses() throws {
    var s = makeState()
    _ = try press(&s, "?")
    #expect(s.overlay == .help(top: 0))
    _ = try press(&s, "j")
    #expect(s.overlay == .help(top: 1))
    #expect(try press(&s, "space") == [])  // no play/pause behind the overlay
    _ = try press(&s, "esc")
    #expect(s.overlay == nil)
  }

  @Test func ctrlCQuitsAndCtrlZSuspendsWhateverTheBindings() throws {
    var s = makeState(bindings: KeyBindings.configured(["quit": []]).0)
    #expect(try press(&s, "q") == [])
    #expect(try press(&s, "C-c") == [.interrupt])
    #expect(try press(&s, "C-z") == [.suspend])
    _ = try press(&s, "/")
    #expect(try press(&s, "C-c") == [.interrupt])
  }

  /// Q leaves the interface with the player playing on; q quits; they differ, and Q can be rebound
  /// like any other.
  @Test func shiftQDetachesAndQQuits() throws {
    var s = makeState()
    #expect(try press(&s, "Q") == [.detach])
    #expect(try press(&s, "q") == [.quit])
    var r = makeState(bindings: KeyBindings.configured(["detach": ["C-d"]]).0)
    #expect(try press(&r, "Q") == [])
    #expect(try press(&r, "C-d") == [.detach])
    #expect(HelpText.lines(s.bindings).contains { $0.keys == "Q" && $0.action == "detach" })
  }

  @Test func reboundKeysWork() throws {
    var s = makeState(bindings: KeyBindings.configured(["play_pause": ["p"], "quit": ["C-q"]]).0)
    #expect(try press(&s, "space") == [])
    #expect(try press(&s, "p") == [.send(.togglePlayPause, label: "play/pause")])
    #expect(try press(&s, "C-q") == [.quit])
  }

  @Test func aMessageAboutTheStateGoesWhenTheStateChanges() {
    var s = makeState()
    var snap = s.snapshot
    snap.state = .paused
    snap.pausedBy = .interruption
    s.update(snap)
    s.note(
      .message(.interrupted(InterruptionCause(kind: .call, by: "call"), willResume: true)), now: 0)
    #expect(s.message?.text == "Paused: call in progress (will resume)")
    snap.state = .playing
    snap.pausedBy = nil
    s.update(snap)
    #expect(s.message == nil)
  }

  /// The player's messages are data: the interface picks the style by what happened, not by how the
  /// words begin.
  @Test func aProblemIsShownAsAnErrorAndNewsIsNot() {
    var s = makeState()
    s.note(.message(.volumeChangeFailed("the mixer is gone")), now: 0)
    #expect(s.message?.text == "Cannot change the volume: the mixer is gone")
    #expect(s.message?.style == .error)
    s.note(.message(.deviceWentAway("hw:1,0", reason: "No such device")), now: 0)
    #expect(s.message?.style == .error)
    s.note(.message(.handedOver(count: 2, first: "a.flac", placement: .next)), now: 0)
    #expect(s.message?.text == "2 files to play next")
    #expect(s.message?.style == .normal)
    // One file by its title, as `e` and `a` name it (the player gives its path).
    s.tags["/m/02 Glósóli.flac"] = TrackInfo(title: "Hunter")
    s.note(.message(.handedOver(count: 1, first: "/m/02 Glósóli.flac", placement: .next)), now: 0)
    #expect(s.message?.text == "'Hunter' plays next")
    s.note(.message(.handedOver(count: 1, first: "/m/03 Other.flac", placement: .end)), now: 0)
    #expect(s.message?.text == "Added '03 Other' to the queue")
  }

  /// A playlist with entries that are not there: what replaced the queue says what it left out,
  /// when the player says so within a few seconds; the remark is used once.
  @Test func whatAPlaylistLeftOutIsSaidWithWhatItReplaced() {
    var s = makeState()
    let second: UInt64 = 1_000_000_000
    s.remarkOnNextReplace("left out: cannot play '/m/gone.flac': no such file", now: 0)
    s.note(.message(.queueReplaced(count: 2, was: 11)), now: 2 * second)
    #expect(
      s.message?.text
        == "The queue is now 2 tracks (it had 11 tracks; u brings them back); left out: cannot play "
        + "'/m/gone.flac': no such file")
    s.note(.message(.queueReplaced(count: 3, was: 2)), now: 3 * second)
    #expect(s.message?.text == "The queue is now 3 tracks (it had 2 tracks; u brings them back)")
    s.remarkOnNextReplace("2 left out (named in hark.log)", now: 0)
    s.note(.message(.queueReplaced(count: 3, was: 2)), now: 6 * second)
    #expect(
      s.message?.text == "The queue is now 3 tracks (it had 2 tracks; u brings them back)",
      "a remark from another moment")
    #expect(BackgroundWorker.leftOut([]) == "")
    #expect(
      BackgroundWorker.leftOut(["cannot play 'x': gone"]) == "; left out: cannot play 'x': gone")
    #expect(BackgroundWorker.leftOut(["a", "b"]) == "; 2 left out (named in hark.log)")
  }

  /// "Resumed: 'call' ended" must not hide "Quieter — another app is speaking" (G9) or silent
  /// mode (G2) that come a moment later: a new reason makes it stale too.
  @Test func aMessageAboutTheStateGivesWayToANewReason() {
    var s = makeState()
    var snap = s.snapshot
    snap.state = .playing
    s.update(snap)
    s.note(.message(.resumed(after: "call")), now: 0)
    #expect(s.message?.text == "Resumed: 'call' ended")
    snap.ducked = true
    s.update(snap)
    #expect(s.message == nil)
    #expect(Screen.status(s, now: 1)?.0 == "Quieter — another app is speaking")
  }

  /// A damaged state file is said when the player starts, just before it queues the music
  /// folder instead: that change of state does not take the line away (ui.sh failed on a
  /// loaded machine, the folder queued before the screen was read).
  @Test func aDamagedStateFileOutlivesTheQueueThatReplacesIt() {
    var s = makeState()
    var snap = s.snapshot
    snap.state = .stopped
    s.update(snap)
    s.note(.message(.savedQueueDamaged(file: "/s/state.json", reason: "not JSON")), now: 0)
    let said = s.message
    #expect(said?.text.contains("damaged") == true)
    snap.state = .paused
    s.update(snap)
    #expect(s.message == said)
  }

  /// G19: a command the player has disabled right now is said to be impossible, not mapped to
  /// something else.
  @Test func G19_refusedCommandsAreSaid() {
    var s = makeState()
    s.commandAnswered("next", .commandDisabled, now: 0)
    #expect(s.message?.text == "'next' is not possible right now")
  }

  // MARK: The sleep timer

  /// As a phone's clock app: each press the next choice, then off; each sent to the session
  /// server at once, and said.
  @Test func theSleepTimersKeyGoesThroughTheChoicesAsPressedAgainAndAgain() throws {
    var s = makeState()
    var sent: [SleepTimerSetting?] = []
    var said: [String] = []
    for i in 0..<7 {
      let effects = s.handle(try Key(parsing: "z"), now: UInt64(i) * 1_000_000_000)
      for case .setSleepTimer(let setting) in effects { sent.append(setting) }
      said.append(s.message?.text ?? "")
    }
    #expect(
      sent == [
        SleepTimerSetting(.duration(seconds: 900)), SleepTimerSetting(.duration(seconds: 1800)),
        SleepTimerSetting(.duration(seconds: 2700)), SleepTimerSetting(.duration(seconds: 3600)),
        SleepTimerSetting(.endOfTrack), nil, SleepTimerSetting(.duration(seconds: 900)),
      ])
    #expect(
      said == [
        "Sleep timer: 15 min", "Sleep timer: 30 min", "Sleep timer: 45 min", "Sleep timer: 1 h",
        "Sleep timer: end of track", "Sleep timer off", "Sleep timer: 15 min",
      ])
  }

  /// Pressed after a while, it goes on from the timer that runs (one `hark timer` set too).
  @Test func theSleepTimersKeyGoesOnFromTheTimerThatRuns() throws {
    var s = makeState()
    var snap = s.snapshot
    snap.sleepTimer = SleepTimerStatus(
      state: .running, mode: .duration(seconds: 20 * 60), fade: 5, remaining: 600)
    s.update(snap)
    let effects = s.handle(try Key(parsing: "z"), now: 100_000_000_000)
    #expect(effects == [.setSleepTimer(SleepTimerSetting(.duration(seconds: 1800)))])
    snap.sleepTimer = SleepTimerStatus(state: .running, mode: .endOfChapter, fade: 5)
    s.update(snap)
    #expect(s.handle(try Key(parsing: "z"), now: 200_000_000_000) == [.setSleepTimer(nil)])
  }
}
