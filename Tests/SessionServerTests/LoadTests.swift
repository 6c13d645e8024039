import Glibc
import SessionCore
import SessionWire
import Testing

@testable import SessionClient
@testable import SessionServer

/// The server under hostile load: more connections than it serves. (A flood of valid requests is
/// Tests/EndToEnd/server-load.sh's: it stops the server process while the requests queue up, which
/// a server on a thread of this process cannot be.)
@Suite(.serialized, .timeLimit(.minutes(5))) struct LoadTests {
  /// More connections than the server serves: the oldest that never said hello gives way to a
  /// new one, so the player and `hark ctl` get in; when every connection has said hello, the
  /// new one is closed at once, and the server goes on.
  @Test(.timeLimit(.minutes(2)))
  func pastTheMostConnectionsSilentOnesGiveWayFirst() async throws {
    let server = TestServer(maximumClients: 4)
    defer { server.cleanUp() }
    try await server.start()
    let silent = try (0..<4).map { _ in try server.rawConnection() }
    defer { silent.forEach { $0.close() } }
    // The server accepts connections in the order they were made: the player's comes after them.
    let app = try await server.client("player")
    try await app.setCategory(.playback)
    #expect(silent[0].isClosedByPeer(), "the oldest silent connection made room")
    let talking = try (0..<3).map { _ in try server.rawConnection() }
    defer { talking.forEach { $0.close() } }
    for t in talking {
      t.send(#"{"type":"hello","version":1,"name":"talker"}"# + "\n")
      #expect(t.readLines(1).lines.count == 1, "a connection with room was served")
    }
    // Full of clients that said hello: a new one is refused, and the others are still served.
    let extra = try server.rawConnection()
    defer { extra.close() }
    #expect(extra.isClosedByPeer(), "a connection past the most served is closed at once")
    let report = try await app.status()
    #expect(report.sessions.map(\.name) == ["player"])
    // Through the player: a new client would be refused until the server sees one go.
    try await server.stop(through: app)
  }
}
