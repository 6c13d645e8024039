import AudioCore
import Glibc
import Platform
import PlayerCore
import SessionCore

/// The terminal interface: a library browser, the queue, the now-playing bar, a status line
/// that says why playback is paused or quiet, a route picker and a help overlay, driven by
/// rebindable keys and the terminal's media keys.
///
/// Threads. One UI thread makes every curses call. It blocks in poll(2) on the terminal (fd 0)
/// and a wake pipe, which the player's observer, the background worker and signal handlers
/// write to. Its timeout is finite only while something moves: the playing track's clock (a
/// wake-up as each second of it passes), an Esc waiting for the rest of a sequence, a message
/// to take down. Paused or idle it sleeps until something happens. Requests to the player go,
/// in order, through one task that awaits them; the player answers by a new snapshot.
public final class TerminalInterface: @unchecked Sendable {
  /// What the interface is given besides the player.
  public struct Configuration: Sendable {
    /// The folder the library opens on.
    public var libraryFolder: String
    public var bindings = KeyBindings.defaults
    /// Lines for the status line at start (config problems, a damaged state file).
    public var startupMessages: [String] = []
    /// A line of news for the status line at start, when there is no problem to say first
    /// (attached again to a player that played on).
    public var greeting: String?
    /// Why detaching is refused (a player no `hark` could come back to); nil: it is not.
    public var detachRefusal: String?
    /// Tags and length of a file, read on the background thread.
    public var readTags: @Sendable (String) -> TrackInfo? = { _ in nil }
    /// Said on the background thread when the tags asked for are read, for now: `readTags`
    /// may keep what it reads from open between reads until then.
    public var readTagsDone: @Sendable () -> Void = {}
    /// The outputs for the route picker, listed on the background thread.
    public var listOutputs: @Sendable () -> [OutputChoice] = { [] }
    /// The audio files under a folder, in play order (on the background thread).
    /// The files a folder or a playlist holds, and a line for what could not be used (files
    /// of no format hark plays, unreadable folders), said once.
    public var expandFolder: @Sendable (String) -> (files: [String], problems: [String]) = { _ in
      ([], [])
    }
    /// Starts a simulated incoming call; returns a line for the status line.
    public var simulateCall: @Sendable () -> String = { "There is no way to simulate a call" }
    /// Sets the desktop's sleep timer (nil cancels it) through the session server; nil when
    /// done, else why not (a line for the status line). Called on the interface's request task.
    public var setSleepTimer: @Sendable (SleepTimerSetting?) async -> String? = { _ in
      "There is no session server to keep a sleep timer"
    }
    /// Where stderr goes while the interface runs; nil: /dev/null.
    public var logPath: String?
    /// The view shown first (the config's start_view).
    public var startView: ViewKind = .library
    /// Files handed to a running player as the interface starts: the first of them, and the
    /// last queue entry's id before them. The queue view shows it selected when it arrives.
    public var showWhenQueued: (path: String, after: Int, switchView: Bool)?
    /// The tag index (artists, albums, genres, search across the library); nil: folders only.
    public var index: IndexAccess?
    /// Draws the playing track's cover (on the background thread); nil: no covers.
    public var readCover: CoverReader?
    /// Finds a file's lyrics (on the background thread); nil: none are ever found.
    public var readLyrics: LyricsReader?
    /// The lyrics beside the list (the config's lyrics_beside).
    public var lyricsBeside = false

    public init(libraryFolder: String) { self.libraryFolder = libraryFolder }
  }

  /// The cover of a file in at most columns x rows cells of a palette of that many colours, and
  /// its picture when told how many pixels the cells have (a terminal that draws pictures): as
  /// a sixel image with `sixel`, else its pixels for kitty's graphics protocol.
  public typealias CoverReader =
    @Sendable (
      _ path: String, _ columns: Int, _ rows: Int, _ colors: Int,
      _ pixels: (width: Int, height: Int, sixel: Bool)?
    ) -> CoverHelper.Outcome

  /// The lyrics of a file (an .lrc beside it, its tags), or none, and why not when its tags
  /// cannot be read.
  public typealias LyricsReader = @Sendable (_ path: String) -> LyricsFound

  private let player: any PlayerConnection
  private let configuration: Configuration

  public init(player: any PlayerConnection, configuration: Configuration) {
    self.player = player
    self.configuration = configuration
  }

  /// How the interface ended.
  public enum Ending: Sendable, Equatable {
    /// The user quit (q, 0), a signal ended it (SIGINT, SIGTERM, SIGHUP or the terminal gone:
    /// 128 + the signal), or the terminal could not be taken (1, said on stderr): the owner stops
    /// the player.
    case quit(status: Int32)
    /// The user detached (Q): the player plays on.
    case detach
    /// The player went away under the interface (its process ended): why, in words.
    case playerGone(String)
  }

  /// Takes the terminal and runs until the user quits or detaches, a signal ends it or the
  /// player goes away.
  public func run() async -> Ending {
    let pipe: WakePipe
    do { pipe = try WakePipe() } catch {
      preconditionFailure("the interface needs a pipe: \(error)")
    }
    let mailbox = Mailbox(waking: pipe)
    let (requests, sink) = AsyncStream<PlayerRequest>.makeStream()
    let player = self.player
    let setSleepTimer = configuration.setSleepTimer
    let forwarder = Task {
      for await request in requests {
        switch request {
        case .command(let command, let label):
          let status = await player.send(command)
          if status != .success { mailbox.post { $0.answers.append((label, status)) } }
        case .action(let action):
          await player.perform(action)
        case .replaceQueue(let paths, let start):
          await player.perform(.replace(paths, start: start))
        case .sleepTimer(let setting):
          if let why = await setSleepTimer(setting) { mailbox.post { $0.messages.append(why) } }
        }
      }
    }
    player.observe { snapshot, notices in
      mailbox.post { inbox in
        inbox.snapshot = snapshot
        inbox.notices += notices
      }
    }
    player.observeEnd { why in mailbox.post { $0.playerGone = why } }
    let configuration = self.configuration
    let ending = await withCheckedContinuation { (done: CheckedContinuation<Ending, Never>) in
      startThread(named: "hark-ui") {
        let loop = InterfaceLoop(
          player: player, configuration: configuration, pipe: pipe, mailbox: mailbox,
          request: { sink.yield($0) })
        done.resume(returning: loop.run())
      }
    }
    // The last keys' requests reach the player before its owner says anything more to it (q).
    sink.finish()
    await forwarder.value
    return ending
  }
}

/// The UI thread's state and loop.
private final class InterfaceLoop {
  private let player: any PlayerConnection
  private let configuration: Configuration
  private let pipe: WakePipe
  private let mailbox: Mailbox
  private let request: @Sendable (PlayerRequest) -> Void
  private var worker: BackgroundWorker?
  private var terminal: CursesTerminal?
  private var state: InterfaceState
  private var decoder = KeyDecoder()
  private var requestedTags: Set<String> = []
  private var exitStatus: Int32?
  /// How it ends, when not by quitting: detached, or the player gone.
  private var ending: TerminalInterface.Ending?
  private var savedStderr: Int32 = -1
  private var askedForProtocol = false
  /// The terminal queries are out and their last answer (device attributes) has not come: an
  /// answer that came after Ctrl-Z would be typed into the shell ("1;2c" at its prompt).
  private var answersAwaited = false
  /// Where each index view was opened from: its ".." goes back there.
  private var cameFrom: [String: String] = [:]
  /// The cover last asked for: its size, palette and file.
  private var requestedCover = ""
  /// The playlist files below the music folder as the last walk found them (nil before the
  /// first ends), and whether a walk is under way (on the worker: `Playlists.found(under:)`).
  private var foundPlaylists: [LibraryEntry]?
  private var findingPlaylists = false

  typealias Configuration = TerminalInterface.Configuration

  init(
    player: any PlayerConnection, configuration: Configuration, pipe: WakePipe, mailbox: Mailbox,
    request: @escaping @Sendable (PlayerRequest) -> Void
  ) {
    self.player = player
    self.configuration = configuration
    self.pipe = pipe
    self.mailbox = mailbox
    self.request = request
    state = InterfaceState(
      folder: configuration.libraryFolder, layout: Layout(rows: 24, columns: 80),
      bindings: configuration.bindings)
    state.view = configuration.startView
    state.showWhenQueued = configuration.showWhenQueued
    state.selectWhenListed = configuration.showWhenQueued?.path
    state.homeFolder = environment("HOME")
    state.showsCover = configuration.readCover != nil
    state.lyricsBeside = configuration.lyricsBeside
  }

  func run() -> TerminalInterface.Ending {
    redirectStderr()
    InterfaceSignals.install(pipe)
    InterfaceSignals.installCrashHandlers()
    atexit { EmergencyRestore.shared.restore() }
    let terminal: CursesTerminal
    do { terminal = try CursesTerminal() } catch {
      restoreStderr()
      InterfaceSignals.uninstall()
      say("hark: \(error)\n")
      return .quit(status: 1)
    }
    self.terminal = terminal
    let request = self.request
    // A row of an index view (an artist, an album, a genre) is the index's tracks for it; a
    // folder or a playlist file is read as the command line reads it.
    let index = configuration.index
    let expandFolder = configuration.expandFolder
    worker = BackgroundWorker(
      mailbox: mailbox, readTags: configuration.readTags,
      readTagsDone: configuration.readTagsDone, listOutputs: configuration.listOutputs,
      expandFolder: { path in
        guard let view = IndexView(path: path) else { return expandFolder(path) }
        guard let files = index?.tracks(view) else {
          return ([], ["cannot read the library's index for '\(view.name)'"])
        }
        return (files, [])
      }, readCover: configuration.readCover, readLyrics: configuration.readLyrics,
      request: { request($0) })
    start(terminal)
    loop(terminal)
    finish(terminal)
    return ending ?? .quit(status: exitStatus ?? 0)
  }

  // MARK: Start and end

  private func start(_ terminal: CursesTerminal) {
    let now = monotonicNanoseconds()
    state.layout = Layout(rows: terminal.rows, columns: terminal.columns)
    state.update(player.snapshot)
    if let index = configuration.index {
      // What an earlier scan indexed is there at once; this run's scan brings it up to date
      // on a thread of its own, saying how it goes on the status line.
      state.indexReady = index.holdsTracks() ?? false
      let mailbox = self.mailbox
      startThread(named: "hark-index") {
        lowerThreadPriority()
        index.keepCurrent(
          { line, problem in
            mailbox.post { $0.progress.append((line, problem ? .warning : .normal)) }
          },
          { changed in
            mailbox.post {
              $0.indexUpdated = true
              $0.indexChanged += changed
            }
          })
      }
    }
    open(configuration.libraryFolder, now: now)
    requestQueueTags()
    let startup = configuration.startupMessages
    for line in startup { log(line) }
    if let first = startup.first {
      // One status line: the first problem, and where the others are.
      let more = startup.count > 1 ? "[1 of \(startup.count), all in hark.log] " : ""
      state.say(more + first, style: .warning, now: now)
    } else if let greeting = configuration.greeting {
      log(greeting)
      state.say(greeting, now: now)
    }
    draw(terminal)
    configuration.index?.prepareSearch()
    terminal.queryKeyboardProtocol()
    askedForProtocol = true
    answersAwaited = true
  }

  /// Gives the terminal back. The queue is saved by the player's process as it ends
  /// (`SavedState.of`), which outlives a detached interface.
  private func finish(_ terminal: CursesTerminal) {
    worker?.stop()
    terminal.close()
    self.terminal = nil
    InterfaceSignals.uninstall()
    restoreStderr()
  }

  /// stderr goes to the log while curses owns the screen: libmpg123 and ALSA print there.
  private func redirectStderr() {
    let path = configuration.logPath ?? "/dev/null"
    if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
      makeDirectories(String(path[..<slash]))
    }
    var fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    if fd < 0 { fd = Glibc.open("/dev/null", O_WRONLY | O_CLOEXEC) }
    guard fd >= 0 else { return }
    savedStderr = fcntl(2, F_DUPFD_CLOEXEC, 3)
    dup2(fd, 2)
    close(fd)
  }

  private func restoreStderr() {
    guard savedStderr >= 0 else { return }
    dup2(savedStderr, 2)
    close(savedStderr)
    savedStderr = -1
  }

  /// A line in the log (stderr, while the interface runs).
  private func log(_ line: String) { say("hark: \(line)\n") }

  private func say(_ text: String) { try? writeAll(2, text.utf8) }

  // MARK: The loop

  private func loop(_ terminal: CursesTerminal) {
    var fds = [
      pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
      pollfd(fd: pipe.readFD, events: Int16(POLLIN), revents: 0),
    ]
    var buffer = [UInt8](repeating: 0, count: 4096)
    while exitStatus == nil {
      let timeout = nextTimeout(now: monotonicNanoseconds())
      fds[0].revents = 0
      fds[1].revents = 0
      let n = poll(&fds, 2, timeout)
      if n < 0 && errno != EINTR {
        log("poll failed: \(String(cString: strerror(errno)))")
        exitStatus = 1
        break
      }
      let now = monotonicNanoseconds()
      var events: [InputEvent] = []
      if fds[1].revents != 0 {
        var signalled = false
        for byte in pipe.drainBytes() where byte != InterfaceSignals.mail {
          handleSignal(Int32(byte), terminal)
          signalled = true
        }
        applyMail(now: now)
        // What stdin had when poll returned may be gone now (read by the shell while this
        // process was stopped): a blocking read would wait for the next key, deaf to signals.
        if signalled && fds[0].revents != 0 {
          var again = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
          if poll(&again, 1, 0) <= 0 { fds[0].revents = 0 }
        }
      }
      if fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
        let got = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if got > 0 {
          events += decoder.feed(buffer[0..<got], at: now)
        } else if got == 0 || (errno != EINTR && errno != EAGAIN) {
          // The terminal is gone (its window closed): as SIGHUP.
          exitStatus = 128 + SIGHUP
        }
      }
      // A lone Esc is Esc once no byte followed it for the delay, however often the loop woke
      // meanwhile (the player's news, the worker's tags).
      events += decoder.expire(now: now)
      for event in events { handle(event, terminal, now: now) }
      takePendingTags()
      foldQueueFilterAhead()
      _ = state.expire(now: now)
      if exitStatus == nil { draw(terminal) }
    }
  }

  /// Milliseconds until the next thing that moves, or -1 (wait for an event) when nothing does.
  private func nextTimeout(now: UInt64) -> Int32 {
    var wait: UInt64?
    func consider(_ ns: UInt64) { wait = min(wait ?? ns, ns) }
    if let left = decoder.untilExpiry(now: now) { consider(left) }
    let snap = state.snapshot
    if snap.state == .playing {
      // Wake when the next second of the track has been heard, so the clock ticks on time.
      let p = snap.position(at: now)
      let untilNextSecond = (1 - (p - p.rounded(.down))) * 1e9
      consider(UInt64(max(20_000_000, untilNextSecond + 5_000_000)))
    }
    if let m = state.message, m.expires > now { consider(m.expires - now) }
    // The sleep timer's time left, second by second, playing or not (it counts either way).
    if let left = snap.sleepTimerRemaining(at: now), left > 0 {
      let untilNextSecond = (left - left.rounded(.down)) * 1e9
      consider(UInt64(max(20_000_000, untilNextSecond + 5_000_000)))
    }
    // The next line or word of the lyrics shown, and a line picked by hand let go.
    if let next = state.untilNextLyricsChange(at: now) { consider(next) }
    if let until = state.lyricsPane.manualUntil, until > now { consider(until - now) }
    if !pendingTags.isEmpty { consider(0) }  // the next slice, once the keys are seen to
    guard let wait else { return -1 }
    return Int32(min(UInt64(Int32.max), (wait + 999_999) / 1_000_000))
  }

  private func draw(_ terminal: CursesTerminal) {
    requestCover(terminal)
    if let path = state.lyricsWanted {
      state.lyricsPane.requested = path
      worker?.submit(.lyrics(path))
    }
    tagSearchResultsOnScreen()
    terminal.beginFrame()
    Screen.draw(state, on: terminal, now: monotonicNanoseconds())
    terminal.endFrame()
  }

  /// Asks the worker for the playing track's cover at the size the screen has room for, once
  /// per track, size and palette. Not for a stream (its URL is no file), nor without colours
  /// unless the terminal draws pictures.
  private func requestCover(_ terminal: CursesTerminal) {
    guard state.showsCover, configuration.readCover != nil, !terminal.cellSizeAwaited,
      let path = state.snapshot.current?.path, !path.contains("://"),
      let room = state.layout.coverCells
    else { return }
    // Where the terminal draws pictures, the picture too, in the pixels of the cells it covers
    // (and then a palette is not needed: xterm's TERM has 8 colours and too few pairs).
    let pixels = terminal.pictureProtocol.flatMap { form in
      terminal.cellPixels.map {
        (width: room.columns * $0.width, height: room.rows * $0.height, sixel: form == .sixel)
      }
    }
    let colors = pixels == nil ? terminal.pictureColors : max(terminal.pictureColors, 8)
    guard colors > 0 else { return }
    let size = pixels.map { "\($0.width)x\($0.height)\($0.sixel ? " sixel" : "")" } ?? ""
    let key = "\(room.columns)x\(room.rows)/\(colors)/\(size) \(path)"
    guard key != requestedCover else { return }
    requestedCover = key
    worker?.submit(
      .cover(path, columns: room.columns, rows: room.rows, colors: colors, pixels: pixels))
  }

  // MARK: Events

  private func handleSignal(_ signal: Int32, _ terminal: CursesTerminal) {
    switch signal {
    case SIGINT, SIGTERM, SIGHUP:
      exitStatus = 128 + signal
    case SIGTSTP:
      suspend(terminal)
    case SIGCONT:
      terminal.updateSize()
      state.layout = Layout(rows: terminal.rows, columns: terminal.columns)
      state.clampPositions()
      terminal.repaintAll()
    case SIGWINCH:
      terminal.updateSize()
      state.layout = Layout(rows: terminal.rows, columns: terminal.columns)
      state.clampPositions()
      terminal.repaintAll()
      // A font change changes the cells' size in pixels: asked again (answered before the
      // device attributes, which end the answers awaited).
      if terminal.askCellSizeAgain() { answersAwaited = true }
    default:
      break
    }
  }

  /// Ctrl-Z: give the terminal back, stop; after `fg`, take it again and redraw.
  private func suspend(_ terminal: CursesTerminal) {
    // Started by `hark` as a terminal's own program (no shell to come back to: tmux's
    // new-session, say), a stop would only be discarded (an orphaned process group).
    guard getsid(0) != getpgrp() else {
      state.say("There is no shell to go back to here", now: monotonicNanoseconds())
      return
    }
    awaitAnswers(terminal)
    terminal.suspend()
    InterfaceSignals.setDefault(SIGTSTP)
    kill(0, SIGTSTP)  // the whole process group stops, as the shell expects
    // The kernel gives the signal to any thread of ours that does not block it, not
    // necessarily this one, and not necessarily before this one goes on: the default action
    // stays until SIGCONT says the process was stopped and continued. A handler put back at
    // once caught the stop not yet taken, and the interface came straight back (with the
    // keys typed at the shell's prompt read as its own).
    let later = awaitContinue()
    InterfaceSignals.route(SIGTSTP)
    terminal.resume()
    state.layout = Layout(rows: terminal.rows, columns: terminal.columns)
    state.clampPositions()
    for signal in later where signal != SIGTSTP && signal != SIGCONT {
      handleSignal(signal, terminal)
    }
  }

  /// Waits (at most 2 s of running) for SIGCONT through the wake pipe; the other signals that
  /// came meanwhile, to be handled once the terminal is taken again. A wake for mail is left
  /// to the loop, which looks at the mailbox after every signal.
  private func awaitContinue() -> [Int32] {
    var others: [Int32] = []
    let deadline = monotonicNanoseconds() + 2_000_000_000
    while true {
      for byte in pipe.drainBytes() where byte != InterfaceSignals.mail {
        if Int32(byte) == SIGCONT { return others }
        others.append(Int32(byte))
      }
      let now = monotonicNanoseconds()
      guard now < deadline else {
        log("Ctrl-Z: the process was not stopped within 2 s; going on")
        return others
      }
      var ready = pollfd(fd: pipe.readFD, events: Int16(POLLIN), revents: 0)
      _ = poll(&ready, 1, Int32((deadline - now) / 1_000_000) + 1)
    }
  }

  /// Before the terminal is given back: the answers to the queries sent at start, read here
  /// (for at most 300 ms) rather than left for the shell to read as typed text. Keys typed
  /// meanwhile are dropped: the user has asked to leave.
  private func awaitAnswers(_ terminal: CursesTerminal) {
    let deadline = monotonicNanoseconds() + 300_000_000
    var buffer = [UInt8](repeating: 0, count: 256)
    while answersAwaited {
      let now = monotonicNanoseconds()
      guard now < deadline else { break }
      var input = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
      let ready = poll(&input, 1, Int32((deadline - now) / 1_000_000) + 1)
      if ready < 0 && errno == EINTR { continue }
      guard ready > 0 else { break }
      let got = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
      guard got > 0 else { break }
      for event in decoder.feed(buffer[0..<got]) {
        if case .key = event { continue }
        handle(event, terminal, now: now)
      }
    }
    answersAwaited = false
  }

  /// Tags the worker read that are not yet in the state: taken `tagsPerTurn` at a time, one
  /// slice a turn of the loop, so that a key typed while a 50,000-entry queue's tags come in
  /// waits for a slice, not for all that came since the last turn.
  private var pendingTags: [(path: String, info: TrackInfo)] = []
  private var pendingTagsTaken = 0
  static let tagsPerTurn = 1_000

  /// The worker has read every tag asked of it since this was last used.
  private var tagsAllRead = false
  /// The queue and the tags version the queue's filter was last folded ahead for.
  private var foldedAhead: (queue: [QueuedTrack], tagsVersion: Int)?

  /// Once a big queue's tags are all read and in the state, the worker folds the queue's
  /// filter with them (`InterfaceState.prepareQueueFilter`), on a copy of the state: the
  /// filter's first key then only searches. Again after the tags change (the index read a
  /// file again): then only the rows of those tags are folded again.
  private func foldQueueFilterAhead() {
    guard tagsAllRead, pendingTags.isEmpty, let worker,
      state.snapshot.queue.count >= InterfaceState.queueFoldedAheadFrom
    else { return }
    tagsAllRead = false
    if let done = foldedAhead, done.tagsVersion == state.tags.version,
      done.queue == state.snapshot.queue
    {
      return
    }
    foldedAhead = (state.snapshot.queue, state.tags.version)
    let copy = state
    worker.submit(.ahead { copy.prepareQueueFilter() })
  }

  /// Puts the next slice of the pending tags in the state; `all` of them.
  private func takePendingTags(all: Bool = false) {
    guard pendingTagsTaken < pendingTags.count else { return }
    let end = all ? pendingTags.count : min(pendingTags.count, pendingTagsTaken + Self.tagsPerTurn)
    state.tags.merge(pendingTags[pendingTagsTaken..<end])
    pendingTagsTaken = end
    if end == pendingTags.count {
      pendingTags.removeAll()
      pendingTagsTaken = 0
    }
  }

  private func applyMail(now: UInt64) {
    let mail = mailbox.take()
    if let why = mail.playerGone {
      log(why)
      ending = .playerGone(why)
      exitStatus = 1
      return
    }
    if let snapshot = mail.snapshot {
      state.update(snapshot)
      requestQueueTags()
    }
    // The worker's lines first: each was posted before (or as) it asked the player for what
    // the player's news in the same mail answers. "Playing 'favourites'; left out …" is said
    // as the worker hands the playlist over, and the player's "The queue is now 2 tracks …"
    // that follows carries the remark; taken the other way round (both in one mail, on a busy
    // machine) the worker's line covered the player's.
    for line in mail.logged { log(line) }
    for line in mail.messages { state.say(line, now: now) }
    if let leftOut = mail.leftOut { state.remarkOnNextReplace(leftOut, now: now) }
    for notice in mail.notices {
      if case .message(let message) = notice { log(message.description) }
      if case .couldNotPlay(_, let line) = notice { log(line) }
      state.note(notice, now: now)
    }
    pendingTags += mail.tags
    if mail.tagsAllRead { tagsAllRead = true }
    for (path, outcome) in mail.covers {
      switch outcome {
      case .picture(let art): state.cover = ShownCover(path: path, art: art)
      case .none: if state.cover?.path == path { state.cover = nil }
      case .failed(let line):
        // In hark.log only: a cover that cannot be drawn is not worth the status line.
        log("no cover for '\(path)': \(line)")
        if state.cover?.path == path { state.cover = nil }
      }
    }
    for (path, found) in mail.lyrics {
      if let problem = found.problem { log("no lyrics for '\(path)': \(problem)") }
      state.showLyrics(path, lyrics: found.lyrics, problem: found.problem)
    }
    if let outputs = mail.outputs { state.showOutputs(outputs) }
    for (label, status) in mail.answers { state.commandAnswered(label, status, now: now) }
    for (line, style) in mail.progress {
      if style != .normal { log(line) }
      state.sayInBackground(line, style: style, now: now)
    }
    if mail.indexUpdated, let index = configuration.index {
      state.indexReady = index.holdsTracks() ?? false
      // Tags the index read again (a file retagged, added or gone) are read again where they
      // show: the queue's now, the rows' as they are drawn.
      if !mail.indexChanged.isEmpty {
        // (Tags read before the change, still pending, are not to come back after it.)
        takePendingTags(all: true)
        for path in mail.indexChanged {
          state.tags[path] = nil
          requestedTags.remove(path)
        }
        worker?.forget(mail.indexChanged)
        taggedQueue = []
        requestQueueTags()
        requestTags(state.entries.filter { $0.kind == .file }.map(\.path))
      }
      // The music folder shows the ways into the index now, an index view its new rows.
      if state.folder == configuration.libraryFolder || IndexView(path: state.folder) != nil {
        refresh(now: now)
      }
    }
    if let found = mail.playlistsFound {
      foundPlaylists = found
      findingPlaylists = false
      state.lookingForPlaylists = false
      if state.folder == IndexView.playlists.path { refresh(now: now, lookingAgain: false) }
    }
    // A playlist just saved is listed at once (and may be the music folder's first way in).
    if mail.playlistSaved,
      state.folder == configuration.libraryFolder || state.folder == IndexView.playlists.path
    {
      refresh(now: now, lookingAgain: false)
    }
  }

  /// Reads the library's folder (or index view) again, keeping the selection where it was, and
  /// the filter or search being typed (a rescan that ended as the user typed "zo" left "e" to
  /// be searched for), searched again in the index as it now is. The Playlists view looks for
  /// the music folder's playlists again unless told not to (when a walk just found them).
  private func refresh(now: UInt64, lookingAgain: Bool = true) {
    let position = state.libraryPosition
    let filter = state.libraryFilter
    open(state.folder, now: now, keepingParent: true, lookingAgain: lookingAgain)
    state.libraryFilter = filter
    state.libraryPosition = position
    state.clampPositions()
    if !filter.isEmpty, state.indexReady, let listing = configuration.index?.search(filter) {
      state.showSearch(filter, listing)
    }
  }

  private func handle(_ event: InputEvent, _ terminal: CursesTerminal, now: UInt64) {
    switch event {
    case .keyboardProtocol:
      // The terminal speaks it: media keys, and Esc without a wait.
      terminal.pushKeyboardProtocol()
    case .deviceAttributes(let sixel):
      // The last of the answers to the queries sent at start.
      answersAwaited = false
      if terminal.deviceAttributesAnswered(sixel: sixel) { requestedCover = "" }
    case .cellSize(let width, let height):
      // The picture is made again for cells of that size.
      if terminal.cellSizeAnswered(width: width, height: height) { requestedCover = "" }
    case .graphicsProtocol(let ok):
      // The cover is asked for again, as a picture this time.
      terminal.graphicsAnswered(ok)
      requestedCover = ""
    case .key(let key):
      for effect in state.handle(key, now: now) { carryOut(effect, terminal, now: now) }
    }
  }

  private func carryOut(_ effect: InterfaceEffect, _ terminal: CursesTerminal, now: UInt64) {
    switch effect {
    case .send(let command, let label): request(.command(command, label: label))
    case .perform(let action): request(.action(action))
    case .replaceQueue(let paths, let start): request(.replaceQueue(paths, start: start))
    case .addFolder(let folder, let next): worker?.submit(.addFolder(folder, next: next))
    case .playPlaylist(let playlist): worker?.submit(.playPlaylist(playlist))
    case .saveQueue(let name, let replacing):
      // A playlist of that name is the user's: replaced only when they say so.
      if !replacing, let path = Playlists.path(of: name), access(path, F_OK) == 0 {
        state.askToReplacePlaylist(name)
      } else {
        worker?.submit(.save(state.snapshot.queue.map(\.path), name: name))
      }
    case .openFolder(let folder): open(folder, now: now)
    case .searchLibrary(let query):
      if let listing = configuration.index?.search(query) { state.showSearch(query, listing) }
    case .listOutputs: worker?.submit(.outputs)
    case .simulateCall:
      let line = configuration.simulateCall()
      log(line)
      state.say(line, now: now)
    case .setSleepTimer(let setting): request(.sleepTimer(setting))
    case .redraw: terminal.repaintAll()
    case .suspend: suspend(terminal)
    case .detach:
      if let why = configuration.detachRefusal {
        state.say(why, style: .warning, now: now)
      } else {
        ending = .detach
        exitStatus = 0
      }
    case .quit: exitStatus = 0
    case .interrupt: exitStatus = 128 + SIGINT
    }
  }

  private func open(
    _ folder: String, now: UInt64, keepingParent: Bool = false, lookingAgain: Bool = true
  ) {
    // Where long recordings were left, as they are now: the marks of the list opened (and of
    // the queue), as fresh as this list.
    if let places = configuration.index?.places() { state.places = places }
    if let view = IndexView(path: folder) {
      openIndexView(view, now: now, keepingParent: keepingParent, lookingAgain: lookingAgain)
      return
    }
    var listing = Folder.list(folder)
    // The music folder leads into the index's views too, once it has something in it (and into
    // the Playlists before that, when hark has some of its own).
    if folder == configuration.libraryFolder, case .success(var rows) = listing {
      let at = rows.first?.kind == .parent ? 1 : 0
      let entrances = IndexView.entrances(
        indexHoldsTracks: state.indexReady,
        ownPlaylists: !state.indexReady && Playlists.anyOwn(in: Playlists.folder()))
      rows.insert(contentsOf: entrances, at: at)
      listing = .success(rows)
    }
    state.showFolder(folder, listing, now: now)
    if case .success(let rows) = listing {
      requestTags(rows.filter { $0.kind == .file }.map(\.path))
    }
  }

  private func openIndexView(
    _ view: IndexView, now: UInt64, keepingParent: Bool, lookingAgain: Bool
  ) {
    let path = view.path
    // ".." leads back where the view was opened from (the music folder, the artists, the
    // albums A–Z, a genre); going back up keeps what it was.
    let goingUp = cameFrom[state.folder] == path
    if !keepingParent, !goingUp, state.folder != path { cameFrom[path] = state.folder }
    let found: IndexListing?
    if view == .playlists {
      // Not the index's: hark's own at once (one folder), the music folder's as last found,
      // and a walk for them as they are now, whose rows replace these when it ends.
      found = IndexListing(
        rows: Playlists.rows(own: Playlists.folder(), found: foundPlaylists ?? []))
      if lookingAgain, !findingPlaylists, let worker {
        findingPlaylists = true
        state.lookingForPlaylists = true
        worker.submit(.findPlaylists(under: configuration.libraryFolder))
      }
    } else {
      found = configuration.index?.browse(view)
    }
    guard let listing = found else {
      state.showFolder(
        path, .failure(FolderError(path: view.title, code: EIO)), now: now)
      return
    }
    let up = cameFrom[path] ?? configuration.libraryFolder
    let rows = [LibraryEntry(kind: .parent, name: "..", path: up)] + listing.rows
    state.tags.merge(listing.tags)
    state.showFolder(path, .success(rows), now: now)
  }

  /// The queue whose tags were last asked for: most snapshots bring the same queue (the same
  /// array, so comparing is at once), and 50,000 paths are not looked through each second.
  private var taggedQueue: [QueuedTrack] = []

  private func requestQueueTags() {
    guard state.snapshot.queue != taggedQueue else { return }
    taggedQueue = state.snapshot.queue
    // Room for them all at once: grown as they come, the table was hashed again at each
    // doubling, on this thread.
    state.tags.reserveCapacity(state.tags.count + taggedQueue.count)
    // All of them, unfiltered: the worker passes over those it has read already. (Looked up
    // here, in the tags and the paths asked for, 50,000 paths held the keys up for 0.15 s.)
    worker?.submit(.tags(taggedQueue.map(\.path)))
  }

  /// The tags of the search results on screen, from the index, before they are drawn: a
  /// search brings its matches' paths and titles only, for a keystroke's search is not to read
  /// 500 tracks' tags of which a screenful is seen. (Those the index lacks are read from the
  /// files, as a folder's are.)
  private func tagSearchResultsOnScreen() {
    guard state.view == .library, state.showsSearchResults, let index = configuration.index
    else { return }
    var unknown: [String] = []
    for entry in state.libraryRowsOnScreen
    where entry.kind == .file && state.tags[entry.path] == nil
      && !requestedTags.contains(entry.path)
    {
      if let info = index.tags(entry.path) {
        state.tags[entry.path] = info
      } else {
        unknown.append(entry.path)
      }
    }
    requestTags(unknown)
  }

  private func requestTags(_ paths: [String]) {
    let wanted = paths.filter { state.tags[$0] == nil && !requestedTags.contains($0) }
    guard !wanted.isEmpty else { return }
    requestedTags.formUnion(wanted)
    worker?.submit(.tags(wanted))
  }
}
