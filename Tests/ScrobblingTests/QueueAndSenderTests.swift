import FoundationEssentials
import Glibc
import Platform
import Testing

@testable import Scrobbling

/// The queue on disk and the sender against a service played by a fake transport: listens
/// kept through an outage and sent in order when it comes back, never twice, a bad listen
/// dropped without the others, refused credentials keeping everything.
@Suite(.timeLimit(.minutes(1))) final class QueueAndSenderTests {
  let folder: String = {
    var template = Array("/tmp/hark-listens-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()

  deinit { _ = system("rm -rf '\(folder)'") }

  func listen(_ n: Int) -> Listen { Self.listen(n) }

  static func listen(_ n: Int) -> Listen {
    var t = ListenedTrack(path: "/m/\(n).flac")
    t.artist = "Artist"
    t.title = "Song \(n)"
    t.duration = 200
    return Listen(track: t, startedAt: 1_700_000_000 + n * 300)
  }

  /// A service: answers in turn from `script` (the last one again once it runs out), and keeps
  /// the timestamps of every listen it took.
  final class FakeService: Transport, @unchecked Sendable {
    let lock = Locked<(script: [HTTPOutcome], taken: [Int], requests: [HTTPRequest])>(([], [], []))
    init(_ script: [HTTPOutcome]) { lock.withLock { $0.script = script } }

    func send(_ request: HTTPRequest, timeout: Double) -> HTTPOutcome {
      lock.withLock { state in
        state.requests.append(request)
        let answer = state.script.count > 1 ? state.script.removeFirst() : state.script[0]
        if case .response(200, _, _) = answer {
          struct Body: Decodable {
            var payload: [Item]
            struct Item: Decodable { var listened_at: Int? }
          }
          if let b = try? JSONDecoder().decode(Body.self, from: Data(request.body)) {
            state.taken += b.payload.compactMap(\.listened_at)
          }
        }
        return answer
      }
    }
    var taken: [Int] { lock.withLock { $0.taken } }
    var requests: Int { lock.withLock { $0.requests.count } }
  }

  static let ok = HTTPOutcome.response(
    status: 200, body: Array(#"{"status":"ok"}"#.utf8), retryAfter: nil)
  static let down = HTTPOutcome.response(status: 503, body: [], retryAfter: nil)
  static let timeout = HTTPOutcome.failed("Timeout was reached")
  static let bad = HTTPOutcome.response(
    status: 400, body: Array(#"{"code":400,"error":"bad"}"#.utf8), retryAfter: nil)
  static let refused = HTTPOutcome.response(
    status: 401, body: Array(#"{"code":401,"error":"Invalid authorization token."}"#.utf8),
    retryAfter: nil)

  func sender(_ service: FakeService, queue: ListenQueue) -> Sender {
    Sender(
      queue: queue, transport: service,
      destinations: Destinations(listenBrainz: (token: "t", base: "http://127.0.0.1:1")))
  }

  @Test func listensOutlastAnOutageAndGoInOrderOnceEach() throws {
    let queue = ListenQueue(path: folder + "/listens-queue.json")
    for n in 1...5 { try queue.add(listen(n), for: [.listenBrainz]) }
    let service = FakeService([Self.down, Self.timeout, Self.ok])
    let s = sender(service, queue: queue)
    #expect(
      s.sendPending(to: .listenBrainz)
        == .later(sent: 0, .retry(after: nil, "ListenBrainz answered HTTP 503")))
    #expect(
      s.sendPending(to: .listenBrainz) == .later(sent: 0, .retry(after: nil, "Timeout was reached"))
    )
    // A process that starts now finds them on disk.
    #expect(ListenQueue(path: queue.path).pending(for: .listenBrainz).count == 5)
    try queue.add(listen(6), for: [.listenBrainz])
    #expect(s.sendPending(to: .listenBrainz) == .done(sent: 6, dropped: 0, why: nil))
    #expect(service.taken == (1...6).map { 1_700_000_000 + $0 * 300 })
    #expect(s.sendPending(to: .listenBrainz) == .done(sent: 0, dropped: 0, why: nil))
    #expect(service.taken.count == 6, "never twice")
    #expect(access(queue.path, F_OK) == 0)
    #expect(queue.counts().isEmpty)
  }

  @Test func aListenTheServiceRefusesIsDroppedAloneAndTheOthersGo() throws {
    let queue = ListenQueue(path: folder + "/q.json")
    for n in 1...3 { try queue.add(listen(n), for: [.listenBrainz]) }
    // The batch is refused; then each alone: the first is the bad one.
    let service = FakeService([Self.bad, Self.bad, Self.ok, Self.ok])
    let result = sender(service, queue: queue).sendPending(to: .listenBrainz)
    #expect(result == .done(sent: 2, dropped: 1, why: "ListenBrainz refused it: bad"))
    #expect(service.taken == [1_700_000_600, 1_700_000_900])
    #expect(queue.counts().isEmpty)
  }

  @Test func refusedCredentialsKeepEveryListen() throws {
    let queue = ListenQueue(path: folder + "/q.json")
    for n in 1...3 { try queue.add(listen(n), for: [.listenBrainz, .lastFM]) }
    let service = FakeService([Self.refused])
    let result = sender(service, queue: queue).sendPending(to: .listenBrainz)
    guard case .later(0, .refused) = result else {
      Issue.record("\(result)")
      return
    }
    #expect(queue.counts() == [.listenBrainz: 3, .lastFM: 3])
    // Sent to one service, a listen still waits for the other.
    let fine = FakeService([Self.ok])
    _ = sender(fine, queue: queue).sendPending(to: .listenBrainz)
    #expect(queue.counts() == [.lastFM: 3])
    #expect(queue.pending(for: .lastFM).map(\.id) == [1, 2, 3])
  }

  @Test func twoProcessesAddingAtOnceLoseNothing() async throws {
    let path = folder + "/q.json"
    await withTaskGroup(of: Void.self) { group in
      for writer in 0..<4 {
        group.addTask {
          let queue = ListenQueue(path: path)
          for n in 0..<25 { try? queue.add(Self.listen(writer * 100 + n), for: [.listenBrainz]) }
        }
      }
    }
    let all = ListenQueue(path: path).pending(for: .listenBrainz)
    #expect(all.count == 100)
    #expect(Set(all.map(\.id)).count == 100)
  }

  @Test func aDamagedQueueIsSetAsideAndSaid() throws {
    let path = folder + "/q.json"
    try replaceFile(path, with: Array("{not json".utf8))
    let queue = ListenQueue(path: path)
    #expect(queue.pending(for: .listenBrainz).isEmpty)
    #expect(queue.problem?.contains("set aside") == true)
    try queue.add(listen(1), for: [.listenBrainz])
    #expect(queue.pending(for: .listenBrainz).count == 1)
  }

  @Test func theLogKeepsEveryListenAndSkipsATornLine() throws {
    let log = ListenLog(path: folder + "/listens.log")
    try log.append(listen(1))
    try log.append(listen(2))
    // A crash mid-line.
    let fd = open(log.path, O_WRONLY | O_APPEND)
    _ = write(fd, "{\"startedAt\":17", 15)
    close(fd)
    try log.append(listen(3))
    #expect(log.all().map(\.startedAt) == [1, 2, 3].map { 1_700_000_000 + $0 * 300 })
    // Read on from where a reader stopped: the whole lines only.
    let first = try #require(log.listens(from: 0))
    #expect(first.listens.count == 3)
    try log.append(listen(4))
    let next = try #require(log.listens(from: first.end))
    #expect(next.listens.map(\.startedAt) == [1_700_001_200])
    #expect(log.listens(from: next.end + 1) == nil, "a log shorter than where it was read")
    let fd2 = open(log.path, O_WRONLY | O_APPEND)
    _ = write(fd2, "{\"half", 6)
    close(fd2)
    #expect(log.listens(from: next.end)?.listens.isEmpty == true)
    #expect(log.listens(from: next.end)?.end == next.end, "a line being written waits")
  }

  @Test func backoffDoublesUpToHalfAnHourAndHonoursTheServer() {
    var b = Backoff()
    #expect(b.mayTry(at: 0))
    var waits: [Double] = []
    for _ in 0..<10 {
      b.failed(at: 1000, serverSaid: nil)
      waits.append((b.notBefore ?? 0) - 1000)
    }
    #expect(waits == [15, 30, 60, 120, 240, 480, 960, 1800, 1800, 1800])
    b.succeeded()
    #expect(b.mayTry(at: 0))
    b.failed(at: 0, serverSaid: 120)
    #expect(b.notBefore == 120)
  }
}
