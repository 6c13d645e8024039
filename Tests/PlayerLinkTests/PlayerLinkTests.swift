import AudioCore
import Dispatch
import Glibc
import Platform
import SessionCore
import Testing

@testable import PlayerLink
import PlayerCore

/// A player that records what it is asked and publishes what the test tells it to.
final class FakeConnection: PlayerConnection, Sendable {
  private struct State {
    var snapshot: PlayerSnapshot
    var observers: [@Sendable (PlayerSnapshot, [PlayerNotice]) -> Void] = []
    var done: [String] = []
  }
  private let state: Locked<State>
  let answer: CommandStatus

  init(_ snapshot: PlayerSnapshot, answer: CommandStatus = .success) {
    state = Locked(State(snapshot: snapshot))
    self.answer = answer
  }

  var snapshot: PlayerSnapshot { state.withLock { $0.snapshot } }
  var done: [String] { state.withLock { $0.done } }
  func observe(_ handler: @escaping @Sendable (PlayerSnapshot, [PlayerNotice]) -> Void) {
    state.withLock { $0.observers.append(handler) }
  }
  func observeEnd(_ handler: @escaping @Sendable (String) -> Void) {}
  func send(_ command: RemoteCommand) async -> CommandStatus {
    state.withLock { $0.done.append("command \(command)") }
    return answer
  }
  func perform(_ action: PlayerAction) async {
    state.withLock { $0.done.append("action \(action)") }
  }
  func publish(_ snapshot: PlayerSnapshot, _ notices: [PlayerNotice] = []) {
    let observers = state.withLock { s in
      s.snapshot = snapshot
      return s.observers
    }
    for o in observers { o(snapshot, notices) }
  }
}

/// Collects what a remote player's observer is given.
final class Seen: Sendable {
  let updates = Locked<[(PlayerSnapshot, [PlayerNotice])]>([])
  let ends = Locked<[String]>([])
  func watch(_ player: RemotePlayer) {
    player.observe { s, n in self.updates.withLock { $0.append((s, n)) } }
    player.observeEnd { why in self.ends.withLock { $0.append(why) } }
  }
  var last: PlayerSnapshot? { updates.withLock { $0.last?.0 } }
}

/// Polls `condition` for up to 5 s (the link's threads answer in milliseconds).
func eventually(_ condition: () -> Bool) async -> Bool {
  for _ in 0..<500 {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(10))
  }
  return condition()
}

/// A private folder for sockets, removed at the end.
final class Folder: Sendable {
  let path: String
  init() {
    var template = Array("/tmp/hark-link-test-XXXXXX".utf8CString)
    path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
  }
  deinit {
    for name in ["player.sock", "player.lock"] { unlink(path + "/" + name) }
    rmdir(path)
  }
  var socket: String { path + "/player.sock" }
  var lock: String { path + "/player.lock" }
}

func sampleSnapshot(queueSize: Int = 3) -> PlayerSnapshot {
  var s = PlayerSnapshot()
  s.queue = (0..<queueSize).map {
    QueuedTrack(id: $0 + 1, path: "/music/Artist/Album/\($0 + 1) Söng.flac")
  }
  s.playOrder = s.queue
  s.current = s.queue.first
  s.state = .playing
  s.title = "Söng \"one\"\n"
  s.metadata = TrackMetadata(
    title: "Söng", artist: "Zoë", album: "Album", trackNumber: 1, genre: "Podcast", year: 1999)
  s.metadata.replayGain = -6.5
  s.position = 12.25
  s.positionTime = 123_456_789_012
  s.isAdvancing = true
  s.duration = 200
  s.isSeekable = true
  s.format = PCMFormat(sampleRate: 44100, channels: 2)
  s.failed = [3: "not an audio file"]
  s.enabledCommands = [.play, .pause, .nextTrack]
  s.volume = .level(percent: 40, muted: false)
  s.route = Route(name: "Headphones", kind: .headphones)
  s.interruption = InterruptionCause(kind: .call, by: "call")
  s.willResume = true
  s.problem = .skipped(file: "x.mp3", reason: "damaged", moreBefore: 2)
  s.isNowPlaying = true
  return s
}

@Suite(.timeLimit(.minutes(2))) struct LinkCodecTests {
  /// Everything an interface shows crosses the link unchanged, whatever the names hold.
  @Test func snapshotsNoticesAndRequestsRoundTrip() throws {
    let snap = sampleSnapshot()
    let notices: [PlayerNotice] = [
      .nowPlaying(QueuedTrack(id: 2, path: "/a/b.flac")), .seeked(3.5),
      .message(.interrupted(InterruptionCause(kind: .call, by: "call"), willResume: true)),
      .message(.queueReplaced(count: 2, was: 242)),
      .message(.handedOver(count: 1, first: "x", placement: .next)),
      .couldNotPlay(QueuedTrack(id: 3, path: "/c"), line: "no"), .queueEnded(nothingPlayed: false),
      .outputFailed(line: "gone"),
    ]
    var bare = snap
    bare.queue = []
    bare.playOrder = []
    let event = LinkEvent.update(bare, notices: notices)
    let line = try LinkCodec.encode(event)
    #expect(line.last == UInt8(ascii: "\n"))
    #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false)
    #expect(try LinkCodec.decode(LinkEvent.self, from: line.dropLast()) == event)

    let requests: [LinkRequest] = [
      .command(id: 1, .skipForward(seconds: 10)), .command(id: 2, .volumeUp(percent: 5)),
      .action(id: 3, .add(["/a", "/b"], play: true)), .action(id: 4, .move(entry: 2, to: 0)),
      .action(
        id: 5, .restore(paths: ["/a"], current: 0, position: 4.5, shuffle: true, repeatMode: .all)),
      .action(id: 6, .insert(["/n"], at: .next)), .quit,
    ]
    for r in requests {
      #expect(try LinkCodec.decode(LinkRequest.self, from: try LinkCodec.encode(r).dropLast()) == r)
    }
  }

  /// A queue crosses as it is: names with line breaks, quotes, NULs' neighbours and every
  /// script, ids in runs and out of order, a shuffled play order, and the empty queue.
  @Test func queuesRoundTrip() throws {
    let names = [
      "/m/a.flac", "/m/Zoë/Ágætis byrjun.flac", "/m/line\nbreak \"q\" \\.mp3", "/m/夜行列車.flac",
      "", "/m/\u{1F3B5}.ogg", "/m/tab\there.wav",
    ]
    var tracks: [QueuedTrack] = []
    for (i, id) in [5, 6, 7, 1, 2, 40, 41].enumerated() {
      tracks.append(QueuedTrack(id: id, path: names[i]))
    }
    let shuffled = [tracks[3], tracks[0], tracks[6], tracks[2]]
    for list in [
      QueueList(queue: tracks, playOrder: tracks), QueueList(queue: tracks, playOrder: shuffled),
      QueueList(queue: [], playOrder: []),
    ] {
      let line = try LinkCodec.encode(LinkEvent.queue(list))
      #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false)
      #expect(try LinkCodec.decode(LinkEvent.self, from: line.dropLast()) == .queue(list))
      // The player's own writer: the same line for the decoder, every byte escaped as JSON
      // wants (a path with a quote, a backslash, a line break, a control character).
      let written = LinkCodec.encodeQueue(list)
      #expect(written.last == UInt8(ascii: "\n"))
      #expect(written.dropLast().contains(UInt8(ascii: "\n")) == false)
      #expect(try LinkCodec.decode(LinkEvent.self, from: written.dropLast()) == .queue(list))
    }
    let odd = [QueuedTrack(id: 1, path: "/m/\u{1}bell\u{7}\u{1F}.flac")]
    let oddLine = LinkCodec.encodeQueue(QueueList(queue: odd, playOrder: odd))
    #expect(
      try LinkCodec.decode(LinkEvent.self, from: oddLine.dropLast())
        == .queue(QueueList(queue: odd, playOrder: odd)))
    // Runs: 50,000 tracks numbered 1… are one run, not 50,000 numbers.
    let long = (1...50_000).map { QueuedTrack(id: $0, path: "/m/\($0).flac") }
    let text = String(
      decoding: try LinkCodec.encode(QueueList(queue: long, playOrder: long)), as: UTF8.self)
    #expect(text.contains(#""ids":[1,50000]"#))
    #expect(!text.contains("order"))
  }

  /// A queue line that does not add up is refused, not half read.
  @Test func aDamagedQueueIsRefused() {
    for bad in [
      #"{"paths":"/a/b","lengths":[2,3],"ids":[1,1]}"#,  // the ids number one path of two
      #"{"paths":"/a/b","lengths":[2,3],"ids":[1,2]}"#,  // 5 bytes cut from 4
      #"{"paths":"/a/b","lengths":[2,2],"ids":[1,2],"order":[2]}"#,  // no third entry
      #"{"paths":"\u00e9","lengths":[1,1],"ids":[1,2]}"#,  // cuts inside a character
      #"{"paths":"","lengths":[],"ids":[1,-1,3,1]}"#,
    ] {
      #expect(throws: (any Error).self) {
        try LinkCodec.decode(QueueList.self, from: Array(bad.utf8)[...])
      }
    }
  }

  /// A format with no channels is refused as it is decoded, not trusted (it sizes buffers).
  @Test func aFormatWithoutChannelsIsRefused() {
    let bad = Array(#"{"sampleRate":44100,"channels":0}"#.utf8)
    #expect(throws: (any Error).self) { try LinkCodec.decode(PCMFormat.self, from: bad[...]) }
  }
}

@Suite(.timeLimit(.minutes(2))) struct PlayerLinkTests {
  func serve(
    _ fake: FakeConnection, _ folder: Folder, lines: [String] = [],
    onQuit: @escaping @Sendable () -> Void = {}
  ) throws -> PlayerService {
    let endpoint = try PlayerService.bind(socketPath: folder.socket, lockPath: folder.lock)
    let service = try PlayerService(
      player: fake, at: endpoint, lines: lines, log: { _ in }, onQuit: onQuit)
    service.start()
    return service
  }

  /// Attaching shows the player exactly as it is, and every change after, in order.
  @Test func attachingShowsThePlayerAndFollowsIt() async throws {
    let folder = Folder()
    let fake = FakeConnection(sampleSnapshot())
    let service = try serve(fake, folder, lines: ["No session server"])
    defer { service.end(why: "was quit from another interface") }
    let remote = try RemotePlayer.attach(to: folder.socket)
    #expect(remote.pid == getpid())
    #expect(remote.lines == ["No session server"])
    // The player as it is at once; its queue just after.
    var shownFirst = fake.snapshot
    shownFirst.queue = []
    shownFirst.playOrder = []
    let attached = remote.snapshot
    #expect(attached == shownFirst || attached == fake.snapshot)
    #expect(await eventually { remote.snapshot == fake.snapshot })
    let seen = Seen()
    seen.watch(remote)
    for i in 1...20 {
      var s = fake.snapshot
      s.position = Double(i)
      fake.publish(s, [.seeked(Double(i))])
    }
    // Snapshots may be sent coalesced (the latest one); every notice comes, in order.
    #expect(await eventually { seen.last?.position == 20 })
    let positions = seen.updates.withLock { $0.map(\.0.position) }
    #expect(positions == positions.sorted())
    #expect(
      seen.updates.withLock { $0.flatMap(\.1) } == (1...20).map { PlayerNotice.seeked(Double($0)) })
    #expect(remote.snapshot == fake.snapshot)
    remote.detach()
  }

  /// The queue goes over the link when it changed, not with every tick; the interface keeps it.
  @Test func theQueueIsSentOnlyWhenItChanged() async throws {
    let folder = Folder()
    let fake = FakeConnection(sampleSnapshot(queueSize: 5000))
    let service = try serve(fake, folder)
    defer { service.end(why: "was quit from another interface") }
    // A raw connection, to see the lines themselves.
    let fd = try UnixSocketTestClient.connect(folder.socket)
    defer { close(fd) }
    let reader = LineReader(fd: fd)
    let hello = try #require(reader.next())
    guard case .hello = try LinkCodec.decode(LinkEvent.self, from: hello[...]) else {
      Issue.record("no hello first")
      return
    }
    // On attaching: the snapshot first, small, so that the interface draws; then the queue.
    let first = try #require(reader.next())
    #expect(first.count < 5_000)
    guard case .update(let shown, _) = try LinkCodec.decode(LinkEvent.self, from: first[...]) else {
      Issue.record("no update after the hello")
      return
    }
    #expect(shown.queue.isEmpty && shown.position == fake.snapshot.position)
    let queued = try #require(reader.next())
    #expect(queued.count > 100_000)  // 5,000 paths
    guard case .queue(let list) = try LinkCodec.decode(LinkEvent.self, from: queued[...]) else {
      Issue.record("no queue after the first update")
      return
    }
    #expect(list.queue == fake.snapshot.queue && list.playOrder == fake.snapshot.playOrder)
    var s = fake.snapshot
    s.position = 99
    fake.publish(s)
    let tick = try #require(reader.next())
    #expect(tick.count < 5_000)
    guard case .update(let bare, _) = try LinkCodec.decode(LinkEvent.self, from: tick[...]) else {
      Issue.record("a tick is not an update")
      return
    }
    #expect(bare.queue.isEmpty && bare.position == 99)
    // A change: the queue first, then the update that goes with it.
    s.queue.removeLast()
    s.playOrder = s.queue
    fake.publish(s)
    let changed = try #require(reader.next())
    guard case .queue(let shorter) = try LinkCodec.decode(LinkEvent.self, from: changed[...])
    else {
      Issue.record("a changed queue was left out")
      return
    }
    #expect(shorter.queue.count == 4999)
    let after = try #require(reader.next())
    guard case .update = try LinkCodec.decode(LinkEvent.self, from: after[...]) else {
      Issue.record("no update after the changed queue")
      return
    }

    // The remote player fills the queue in where it was left out.
    let remote = try RemotePlayer.attach(to: folder.socket)
    let seen = Seen()
    seen.watch(remote)
    s.position = 100
    fake.publish(s)
    #expect(await eventually { seen.last?.position == 100 })
    #expect(seen.last?.queue.count == 4999)
    #expect(remote.snapshot == s)
    remote.detach()
  }

  /// Commands are answered with the player's own status (G19's refusals included); actions are
  /// carried out in the order sent.
  @Test func commandsAndActionsReachThePlayerInOrder() async throws {
    let folder = Folder()
    let fake = FakeConnection(sampleSnapshot(), answer: .commandDisabled)
    let service = try serve(fake, folder)
    defer { service.end(why: "was quit from another interface") }
    let remote = try RemotePlayer.attach(to: folder.socket)
    #expect(await remote.send(.nextTrack) == .commandDisabled)
    for i in 0..<10 { await remote.perform(.playEntry(i)) }
    await remote.perform(.clear)
    #expect(
      fake.done == ["command nextTrack"] + (0..<10).map { "action playEntry(\($0))" } + [
        "action clear"
      ])
    // Posted edits (the saved queue at start) are not waited for, and still come first.
    remote.post(.restore(paths: ["/a"], current: 0, position: 1, shuffle: false, repeatMode: .off))
    remote.post(.setShuffle(true))
    #expect(await remote.send(.play) == .commandDisabled)
    #expect(
      fake.done.suffix(3) == [
        "action restore(paths: [\"/a\"], current: Optional(0), position: 1.0, shuffle: false, "
          + "repeatMode: PlayerCore.RepeatMode.off)",
        "action setShuffle(true)", "command play",
      ])
    remote.detach()
  }

  /// q: the player is told to end, ends, and the interface hears why the queue was not saved.
  @Test func quitEndsThePlayerAndBringsItsProblem() async throws {
    let folder = Folder()
    let fake = FakeConnection(sampleSnapshot())
    let box = ServiceBox()
    let service = try serve(fake, folder) { [box] in
      // As the background player does: stop, save, then end the service.
      startThread {
        box.service.withLock { $0 }?.end(
          why: "was quit", problem: "cannot save the queue: disk full")
      }
    }
    box.service.withLock { $0 = service }
    let remote = try RemotePlayer.attach(to: folder.socket)
    let seen = Seen()
    seen.watch(remote)
    let (ended, problem) = remote.quit()
    #expect(ended)
    #expect(problem == "cannot save the queue: disk full")
    #expect(seen.ends.withLock { $0 }.isEmpty)  // it asked: no news of a player gone
    #expect(access(folder.socket, F_OK) != 0)  // the socket went with it
    #expect(await remote.send(.play) == .commandFailed)
  }

  /// Another interface's q, or the player's process ending: the interface is told why, and
  /// requests after it fail at once instead of waiting for ever.
  @Test func aPlayerThatEndsIsSaidToHaveEnded() async throws {
    let folder = Folder()
    let fake = FakeConnection(sampleSnapshot())
    let service = try serve(fake, folder)
    let remote = try RemotePlayer.attach(to: folder.socket)
    let seen = Seen()
    seen.watch(remote)
    service.end(why: "was quit from another interface")
    #expect(await eventually { !seen.ends.withLock { $0 }.isEmpty })
    #expect(
      seen.ends.withLock { $0 } == [
        "the hark player (pid \(getpid())) was quit from another interface"
      ])
    #expect(await remote.send(.pause) == .commandFailed)
  }

  /// A player that serves while it restores its queue: an interface attaches and sees it at
  /// once, but what it asks (q among it) waits until the player takes requests, in order.
  @Test func requestsWaitUntilThePlayerTakesThem() async throws {
    let folder = Folder()
    let fake = FakeConnection(sampleSnapshot())
    let endpoint = try PlayerService.bind(socketPath: folder.socket, lockPath: folder.lock)
    let quits = Locked(0)
    let service = try PlayerService(
      player: fake, at: endpoint, lines: [], log: { _ in },
      onQuit: { quits.withLock { $0 += 1 } })
    service.start(holdingRequests: true)
    defer { service.end(why: "was quit from another interface") }
    let remote = try RemotePlayer.attach(to: folder.socket)
    #expect(remote.snapshot.position == fake.snapshot.position)
    remote.post(.clear)
    let answered = Task { await remote.send(.play) }
    // Given time to be carried out, they are not: they are held.
    try await Task.sleep(for: .milliseconds(300))
    #expect(fake.done.isEmpty)
    service.takeRequests()
    #expect(await answered.value == .success)
    #expect(fake.done == ["action clear", "command play"])
    #expect(quits.withLock { $0 } == 0)
    remote.detach()
  }

  /// Detaching leaves the player serving: another interface attaches at once.
  @Test func detachingLeavesThePlayerServing() async throws {
    let folder = Folder()
    let fake = FakeConnection(sampleSnapshot())
    let service = try serve(fake, folder)
    defer { service.end(why: "was quit from another interface") }
    for _ in 0..<5 {
      let remote = try RemotePlayer.attach(to: folder.socket)
      #expect(await eventually { remote.snapshot == fake.snapshot })
      remote.detach()
    }
    let last = try RemotePlayer.attach(to: folder.socket)
    #expect(await last.send(.play) == .success)
    last.detach()
  }

  /// A line that is no request closes that connection only; the player goes on serving.
  @Test func garbageClosesOnlyItsOwnConnection() async throws {
    let folder = Folder()
    let fake = FakeConnection(sampleSnapshot())
    let service = try serve(fake, folder)
    defer { service.end(why: "was quit from another interface") }
    let good = try RemotePlayer.attach(to: folder.socket)
    let fd = try UnixSocketTestClient.connect(folder.socket)
    defer { close(fd) }
    var junk = Array("{\"nonsense\": [1, 2\n".utf8)
    _ = send(fd, &junk, junk.count, Int32(MSG_NOSIGNAL))
    let reader = LineReader(fd: fd)
    var lines = 0
    while reader.next() != nil { lines += 1 }
    // Closed by the player (not a read that timed out), after at most its greeting (hello,
    // the snapshot, the queue).
    #expect(reader.closedByPeer)
    #expect(lines <= 3)
    #expect(await good.send(.play) == .success)
    good.detach()
  }

  /// An interface that stops reading for a while (Ctrl-Z) while the queue changes and the clock
  /// ticks is sent, when it reads again, whole lines only, and the player as it is now: the
  /// latest snapshot with its queue, not a queue it missed.
  @Test func anInterfaceThatStoppedReadingGetsThePlayerAsItIsNow() async throws {
    let folder = Folder()
    let fake = FakeConnection(sampleSnapshot(queueSize: 2000))
    let service = try serve(fake, folder)
    defer { service.end(why: "was quit from another interface") }
    let fd = try UnixSocketTestClient.connect(folder.socket)
    defer { close(fd) }
    // The socket full before the clock ticks, so that the player's writes block from the first
    // tick on: a queue line far longer than the socket holds. (A Unix socket's buffer is the
    // writer's, some 200 KB, whatever the reader asks for: with only the queues below to fill
    // it, a player whose writes kept up with the ticks, as on a loaded machine, had sent 50
    // lines of ticks before it blocked.)
    var s = fake.snapshot
    s.queue = (0..<20_000).map {
      QueuedTrack(id: $0, path: "/music/a folder with a long name/an album/\($0) a song.flac")
    }
    s.playOrder = s.queue
    fake.publish(s)
    for round in 0..<3 {
      for tick in 0..<50 {
        s.position = Double(round * 100 + tick)
        fake.publish(s, [.seeked(s.position)])
      }
      // The queue changes (2,000 long paths each time: far more than the socket holds).
      s.queue = (0..<(2000 + round * 100)).map {
        QueuedTrack(id: $0, path: "/m/\(round)/\($0).flac")
      }
      s.playOrder = s.queue
      fake.publish(s)
      try await Task.sleep(for: .milliseconds(700))  // not reading meanwhile
    }
    s.position = 999
    fake.publish(s)
    let reader = LineReader(fd: fd)
    var last: PlayerSnapshot?
    var queue: [QueuedTrack] = []
    var lines = 0
    while last?.position != 999, let line = reader.next() {
      lines += 1
      let event = try LinkCodec.decode(LinkEvent.self, from: line[...])  // every line whole
      if case .queue(let list) = event { queue = list.queue }
      if case .update(var snapshot, _) = event {
        snapshot.queue = queue
        last = snapshot
      }
    }
    #expect(last?.position == 999)
    #expect(queue.count == 2200 && queue.last?.path == "/m/2/2199.flac")
    #expect(lines < 40)  // the latest snapshot, not 150 ticks
  }

  /// One player holds the lock: a second is refused, naming the first's pid.
  @Test func aSecondPlayerCannotTakeTheLock() throws {
    let folder = Folder()
    let first = try PlayerService.bind(socketPath: folder.socket, lockPath: folder.lock)
    _ = first
    #expect {
      _ = try PlayerService.bind(socketPath: folder.path + "/other.sock", lockPath: folder.lock)
    } throws: { error in
      if case PlayerServiceError.taken(let pid) = error { return pid == getpid() }
      return false
    }
  }

  /// A notice that comes with the first update (the player announced it as the interface
  /// attached, so it is in no hello) is not lost: it is among the lines said at start.
  @Test func aNoticeWithTheFirstUpdateIsSaidAtStart() throws {
    let folder = Folder()
    let listener = try #require(listeningAsAPlayer(at: folder.socket))
    defer { close(listener) }
    let damaged = PlayerMessage.savedQueueDamaged(file: "state.json", reason: "cut short")
    let snapshot = queuelessSnapshot()
    var lines = try LinkCodec.encode(LinkEvent.hello(pid: 42, lines: ["No session server"]))
    lines += try LinkCodec.encode(LinkEvent.update(snapshot, notices: [.message(damaged)]))
    let written = lines
    let player = try JoinableThread {
      let fd = accept(listener, nil, nil)
      guard fd >= 0 else { return }
      // Both in one write, as a player's sender coalesces them.
      _ = written.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
      var byte: UInt8 = 0
      _ = recv(fd, &byte, 1, 0)  // until the interface lets go
      close(fd)
    }
    let remote = try RemotePlayer.attach(to: folder.socket)
    #expect(remote.lines.first == "No session server")
    #expect(remote.lines.count == 2)
    #expect(
      remote.lines.last?.hasPrefix("The saved queue 'state.json' is damaged (cut short)") == true)
    remote.detach()
    player.join()
  }

  /// A notice that comes after the first update but before the interface observes (the player
  /// read its damaged saved queue while the interface was still starting) is not lost: the
  /// first observer is told it. It was dropped, and the interface never said the file was
  /// damaged (ui.sh, beside a busy core).
  @Test func aNoticeBeforeAnyoneObservesReachesTheFirstObserver() throws {
    let folder = Folder()
    let listener = try #require(listeningAsAPlayer(at: folder.socket))
    defer { close(listener) }
    let damaged = PlayerMessage.savedQueueDamaged(file: "state.json", reason: "cut short")
    let snapshot = queuelessSnapshot()
    let greeting =
      try LinkCodec.encode(LinkEvent.hello(pid: 42, lines: []))
      + LinkCodec.encode(LinkEvent.update(snapshot, notices: []))
    var later = snapshot
    later.position = 99
    let news = try LinkCodec.encode(LinkEvent.update(later, notices: [.message(damaged)]))
    let attached = DispatchSemaphore(value: 0)
    let player = try JoinableThread {
      let fd = accept(listener, nil, nil)
      guard fd >= 0 else { return }
      _ = greeting.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
      attached.wait()
      _ = news.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
      var byte: UInt8 = 0
      _ = recv(fd, &byte, 1, 0)  // until the interface lets go
      close(fd)
    }
    let remote = try RemotePlayer.attach(to: folder.socket)
    #expect(remote.lines.isEmpty)
    attached.signal()
    // The reading thread has applied the news once the snapshot says so.
    let deadline = ContinuousClock.now + .seconds(10)
    while remote.snapshot.position != 99 && ContinuousClock.now < deadline {
      usleep(1_000)
    }
    #expect(remote.snapshot.position == 99)
    let heard = Locked<[PlayerNotice]>([])
    remote.observe { _, notices in heard.withLock { $0 += notices } }
    let messages = heard.withLock { $0 }.compactMap { notice -> PlayerMessage? in
      if case .message(let m) = notice { return m }
      return nil
    }
    #expect(messages == [damaged])
    // Told once: a second observer is not told it again.
    let second = Locked(0)
    remote.observe { _, notices in second.withLock { $0 += notices.count } }
    #expect(second.withLock { $0 } == 0)
    remote.detach()
    player.join()
  }

  /// Nothing at the socket, or a stale socket file: there is no player to attach to.
  @Test func nothingServingIsNoPlayer() throws {
    let folder = Folder()
    #expect(throws: AttachError.self) { try RemotePlayer.attach(to: folder.socket) }
    // A socket file nothing listens on any more.
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var (addr, length) = UnixSocketTestClient.address(folder.socket)
    _ = withUnsafePointer(to: &addr) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    close(fd)
    do {
      _ = try RemotePlayer.attach(to: folder.socket)
      Issue.record("attached to a dead socket")
    } catch {
      guard case .noPlayer = error else {
        Issue.record("not 'no player': \(error)")
        return
      }
    }
  }
}

/// A socket listening at `path` where a player would, for a test to speak as one; nil if it
/// could not be bound.
func listeningAsAPlayer(at path: String) -> Int32? {
  let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
  var (addr, length) = UnixSocketTestClient.address(path)
  let bound = withUnsafePointer(to: &addr) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
  }
  guard bound == 0, listen(listener, 1) == 0 else {
    close(listener)
    return nil
  }
  return listener
}

/// The sample snapshot as an update carries it: its queue goes in a line of its own.
func queuelessSnapshot() -> PlayerSnapshot {
  var snapshot = sampleSnapshot()
  snapshot.queue = []
  snapshot.playOrder = []
  return snapshot
}

final class ServiceBox: Sendable {
  let service = Locked<PlayerService?>(nil)
}

/// A plain blocking connection, for looking at the lines themselves.
enum UnixSocketTestClient {
  static func address(_ path: String) -> (sockaddr_un, socklen_t) {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &addr.sun_path) { raw in
      for i in 0..<bytes.count { raw[i] = bytes[i] }
      raw[bytes.count] = 0
    }
    return (addr, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1))
  }

  static func connect(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var (addr, length) = address(path)
    let rc = withUnsafePointer(to: &addr) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
    }
    try #require(rc == 0)
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    return fd
  }
}

/// Whole lines from a socket; nil at its end (or after 5 s of nothing).
final class LineReader {
  let fd: Int32
  var pending: [UInt8] = []
  /// The last read found the end of the connection (rather than 5 s of nothing).
  var closedByPeer = false

  init(fd: Int32) { self.fd = fd }

  func next() -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      if let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = Array(pending[..<nl])
        pending.removeFirst(nl + 1)
        return line
      }
      let n = recv(fd, &buffer, buffer.count, 0)
      if n < 0 && errno == EINTR { continue }
      closedByPeer = n == 0 || (n < 0 && errno == ECONNRESET)
      guard n > 0 else { return nil }
      pending += buffer[0..<n]
    }
  }
}
