import Glibc
import Platform
import PlayerCore
import SessionCore

/// What other threads have for the UI thread since it last looked.
struct Inbox: Sendable {
  var snapshot: PlayerSnapshot?
  /// The player went away under the interface: why.
  var playerGone: String?
  var notices: [PlayerNotice] = []
  /// Tags the worker read, in the order read (a path read again later, later). A list, not a
  /// table: the worker posts them under the box's lock at a low priority, and hashing a few
  /// thousand paths there held up the UI thread's `take` for milliseconds.
  var tags: [(path: String, info: TrackInfo)] = []
  /// The worker has read every tag asked for (and posted them).
  var tagsAllRead = false
  var outputs: [OutputChoice]?
  /// Remote commands the user typed that were not carried out, with their labels.
  var answers: [(String, CommandStatus)] = []
  /// Lines for the status line.
  var messages: [String] = []
  /// Lines for hark.log only.
  var logged: [String] = []
  /// What a playlist played left out (its entries that are not there), for the line that says
  /// what replaced the queue.
  var leftOut: String?
  /// Background news for the status line (the index scan): shown only over nothing else.
  var progress: [(String, Style)] = []
  /// The tag index has been brought up to date.
  var indexUpdated = false
  /// Paths the index read again or removed since the last mail: their tags are read again.
  var indexChanged: [String] = []
  /// The playlist files found below the music folder (`Playlists.found(under:)`).
  var playlistsFound: [LibraryEntry]?
  /// The queue was saved as one of hark's playlists.
  var playlistSaved = false
  /// Covers drawn by hark-cover, with the file each is the cover of.
  var covers: [(path: String, outcome: CoverHelper.Outcome)] = []
  /// Lyrics found (or not), with the file they are of.
  var lyrics: [(path: String, found: LyricsFound)] = []
}

/// Where the player's observer, the background worker and the request forwarder leave things
/// for the UI thread, which they wake through the pipe. Posting never blocks for long.
final class Mailbox: Sendable {
  private let inbox = Locked(Inbox())
  private let pipe: WakePipe

  init(waking pipe: WakePipe) { self.pipe = pipe }

  func post(_ body: (inout Inbox) -> Void) {
    inbox.withLock { body(&$0) }
    pipe.wake(InterfaceSignals.mail)
  }

  /// Everything posted so far; the box is empty after.
  func take() -> Inbox {
    inbox.withLock { i in
      defer { i = Inbox() }
      return i
    }
  }
}

/// What the UI thread asks of the player, in order.
enum PlayerRequest: Sendable {
  case command(RemoteCommand, label: String)
  case action(PlayerAction)
  case replaceQueue([String], start: Int)
  /// The desktop's sleep timer, to the session server (not the player's: the desktop's).
  case sleepTimer(SleepTimerSetting?)
}

/// One thread for the slow things the UI must not wait for: reading tags (libsndfile opens
/// every file), listing outputs (ALSA's hints), walking a folder to queue it. It sleeps on a
/// semaphore when there is nothing to do.
final class BackgroundWorker: @unchecked Sendable {
  enum Job: Sendable {
    case tags([String])
    case outputs
    case addFolder(String, next: Bool)
    /// A playlist becomes the queue.
    case playPlaylist(String)
    /// The queue (these paths) saved as hark's playlist `name`.
    case save([String], name: String)
    /// The playlist files below the music folder, for the Playlists view: a walk of the whole
    /// tree.
    case findPlaylists(under: String)
    /// The cover of a file, in at most that many cells of a palette of that many colours, and
    /// its picture when the terminal draws pictures (as sixels, or for kitty's protocol).
    case cover(
      String, columns: Int, rows: Int, colors: Int, pixels: (width: Int, height: Int, sixel: Bool)?
    )
    /// The lyrics of a file.
    case lyrics(String)
    /// Work done ahead for the interface (the queue's filter folded), when nothing more
    /// urgent waits.
    case ahead(@Sendable () -> Void)
  }

  private struct Jobs {
    var urgent: [Job] = []
    /// Batches of paths whose tags are wanted, each with how far it has been read; the newest
    /// batch (the folder just opened) first.
    var tagBatches: [(paths: [String], next: Int)] = []
    /// The paths whose tags have been read (or are being): asked for again (the queue each
    /// time it changes, 50,000 paths), they are passed over here rather than looked up on the
    /// UI thread.
    var asked: Set<PathKey> = []
    var stopping = false
  }

  /// Forgets that `paths` were read, so that their tags are read again when next asked for
  /// (the index read them again: a file retagged).
  func forget(_ paths: [String]) {
    jobs.withLock { j in
      for p in paths { j.asked.remove(PathKey(p)) }
    }
  }

  private let jobs = Locked(Jobs())
  private let semaphore = Platform.Semaphore()
  private let mailbox: Mailbox
  private let readTags: @Sendable (String) -> TrackInfo?
  /// Called when the worker has read the tags asked for, for now (`readTags` may hold the
  /// index open between reads until then).
  private let readTagsDone: @Sendable () -> Void
  private let listOutputs: @Sendable () -> [OutputChoice]
  private let expandFolder: @Sendable (String) -> (files: [String], problems: [String])
  private let request: @Sendable (PlayerRequest) -> Void
  private let readCover: TerminalInterface.CoverReader?
  private let readLyrics: TerminalInterface.LyricsReader?

  init(
    mailbox: Mailbox, readTags: @escaping @Sendable (String) -> TrackInfo?,
    readTagsDone: @escaping @Sendable () -> Void = {},
    listOutputs: @escaping @Sendable () -> [OutputChoice],
    expandFolder: @escaping @Sendable (String) -> (files: [String], problems: [String]),
    readCover: TerminalInterface.CoverReader? = nil,
    readLyrics: TerminalInterface.LyricsReader? = nil,
    request: @escaping @Sendable (PlayerRequest) -> Void
  ) {
    self.readCover = readCover
    self.readLyrics = readLyrics
    self.mailbox = mailbox
    self.readTags = readTags
    self.readTagsDone = readTagsDone
    self.listOutputs = listOutputs
    self.expandFolder = expandFolder
    self.request = request
    // Tags for a queue of 50,000 tracks take it a second or two: not at the keystrokes' cost.
    startThread(named: "hark-ui-worker") { [self] in
      lowerThreadPriority()
      loop()
    }
  }

  /// What a folder or playlist added left out, for the end of the line that says what was
  /// added: the reason when there is one, else how many (each is in hark.log).
  static func leftOut(_ problems: [String]) -> String {
    switch problems.count {
    case 0: ""
    case 1: "; left out: " + problems[0]
    case let n: "; \(n) left out (named in hark.log)"
    }
  }

  func submit(_ job: Job) {
    jobs.withLock { j in
      switch job {
      case .tags(let paths): if !paths.isEmpty { j.tagBatches.append((paths, 0)) }
      case .outputs, .addFolder, .playPlaylist, .save, .findPlaylists, .ahead: j.urgent.append(job)
      case .cover:
        // Only the newest cover is wanted: the track (or the window) changed since the others.
        j.urgent.removeAll { if case .cover = $0 { true } else { false } }
        j.urgent.append(job)
      case .lyrics:
        // And the newest lyrics: the track changed since the others were asked for.
        j.urgent.removeAll { if case .lyrics = $0 { true } else { false } }
        j.urgent.append(job)
      }
    }
    semaphore.signal()
  }

  func stop() {
    jobs.withLock { $0.stopping = true }
    semaphore.signal()
  }

  private enum Next {
    case job(Job)
    case tag(String)
    case idle
    case stop
  }

  private func next() -> Next {
    jobs.withLock { j in
      if j.stopping { return .stop }
      if !j.urgent.isEmpty { return .job(j.urgent.removeFirst()) }
      while let last = j.tagBatches.last {
        guard last.next < last.paths.count else {
          j.tagBatches.removeLast()
          continue
        }
        j.tagBatches[j.tagBatches.count - 1].next += 1
        let path = last.paths[last.next]
        if j.asked.insert(PathKey(path)).inserted { return .tag(path) }
      }
      return .idle
    }
  }

  private func loop() {
    var found: [(path: String, info: TrackInfo)] = []
    var readSince = false  // tags read since the worker was last idle
    var lastPost = monotonicNanoseconds()
    func flush() {
      guard !found.isEmpty else { return }
      let batch = found
      found = []
      mailbox.post { $0.tags += batch }
      lastPost = monotonicNanoseconds()
    }
    while true {
      switch next() {
      case .stop:
        return
      case .idle:
        flush()
        if readSince {
          // Every tag asked for is read: what depends on them all may be done now.
          readSince = false
          readTagsDone()
          mailbox.post { $0.tagsAllRead = true }
        }
        semaphore.wait()
      case .tag(let path):
        readSince = true
        found.append((path, readTags(path) ?? TrackInfo()))
        // A redraw every 100 ms while a big folder is read, not one per file.
        if monotonicNanoseconds() - lastPost > 100_000_000 { flush() }
      case .job(.outputs):
        let list = listOutputs()
        mailbox.post { $0.outputs = list }
      case .job(.addFolder(let folder, let next)):
        let (files, problems) = expandFolder(folder)
        let leftOut = Self.leftOut(problems)
        if files.isEmpty {
          let name = IndexView(path: folder)?.name ?? Folder.title(fromName: folder)
          mailbox.post {
            $0.logged += problems
            $0.messages.append("No audio files in '\(name)'" + leftOut)
          }
        } else {
          let n = files.count
          let tracks = "\(n) track\(n == 1 ? "" : "s")"
          if next {
            request(.action(.insert(files, at: .next)))
          } else {
            request(.action(.add(files, play: false)))
          }
          mailbox.post {
            $0.logged += problems
            $0.messages.append(
              (next ? "\(tracks) play next" : "Added \(tracks) to the queue") + leftOut)
          }
        }
      case .job(.playPlaylist(let playlist)):
        let (files, problems) = expandFolder(playlist)
        let leftOut = Self.leftOut(problems)
        if files.isEmpty {
          mailbox.post {
            $0.logged += problems
            $0.messages.append("Nothing to play in '\(Folder.title(fromName: playlist))'" + leftOut)
          }
        } else {
          // Said now (an empty queue replaced says nothing more), and again with what replaced
          // what when the player says so.
          if !problems.isEmpty {
            mailbox.post {
              $0.logged += problems
              $0.messages.append("Playing '\(Folder.title(fromName: playlist))'" + leftOut)
              $0.leftOut = String(leftOut.dropFirst(2))
            }
          }
          request(.replaceQueue(files, start: 0))
        }
      case .job(.save(let paths, let name)):
        let line: String
        switch Playlists.save(paths, as: name) {
        case .success(let saved):
          let n = paths.count
          line =
            (saved.replaced
              ? "Replaced the playlist '\(saved.path)' with the queue"
              : "Saved the queue as '\(saved.path)'")
            + " (\(n) track\(n == 1 ? "" : "s"))"
        case .failure(let error):
          line = error.message.capitalisedFirst
        }
        mailbox.post {
          $0.messages.append(line)
          $0.playlistSaved = true
        }
      case .job(.findPlaylists(let root)):
        let found = Playlists.found(under: root)
        mailbox.post { $0.playlistsFound = found }
      case .job(.cover(let path, let columns, let rows, let colors, let pixels)):
        guard let readCover else { break }
        let outcome = readCover(path, columns, rows, colors, pixels)
        mailbox.post { $0.covers.append((path, outcome)) }
      case .job(.lyrics(let path)):
        let found = readLyrics?(path) ?? LyricsFound(lyrics: nil, problem: nil)
        mailbox.post { $0.lyrics.append((path, found)) }
      case .job(.ahead(let work)):
        work()
      case .job(.tags):
        break  // tags arrive as batches, never as urgent jobs
      }
    }
  }
}
