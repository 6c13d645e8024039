import Glibc
import SessionCore
import Testing

@testable import SessionWire

/// docs/PROTOCOL.md is the wire protocol's one home, so its examples are golden lines (a document
/// nothing checks drifts from the code): every JSON message it shows, in its transcript (`>>`,
/// `<<`) or in its tables, decodes with the codec as the message it says it is, encodes back to a
/// line that decodes to the same message, and every kind of message the server sends has an example
/// there (each event but the one the server never sends). A message added to the codec without its
/// example, or an example that drifted from the codec, fails here.
@Suite(.timeLimit(.minutes(2))) struct ProtocolDocumentTests {
  /// The examples, in the order they appear: (line number, JSON text, the direction if the
  /// transcript says it: true for client to server).
  private static let examples: [(line: Int, json: String, fromClient: Bool?)] = {
    var root = "\(#filePath)"
    for _ in 0..<3 { root = String(root[..<(root.lastIndex(of: "/") ?? root.startIndex)]) }
    guard let f = fopen(root + "/docs/PROTOCOL.md", "r") else { return [] }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var c = fgetc(f)
    while c != EOF {
      bytes.append(UInt8(c))
      c = fgetc(f)
    }
    var out: [(Int, String, Bool?)] = []
    for (n, line) in String(decoding: bytes, as: UTF8.self).split(
      separator: "\n", omittingEmptySubsequences: false
    ).enumerated() {
      if line.hasPrefix(">> {") || line.hasPrefix("<< {") {
        out.append((n + 1, String(line.dropFirst(3)), line.hasPrefix(">>")))
      } else if line.hasPrefix("{\"") {
        out.append((n + 1, String(line), nil))
      } else {
        // In a table or the text: `{"type":...}` in backticks.
        var rest = line[...]
        while let open = rest.firstRange(of: "`{\"") {
          guard let close = rest[open.upperBound...].firstIndex(of: "`") else { break }
          let json = "{\"" + rest[open.upperBound..<close]
          if json.contains("\"type\"") { out.append((n + 1, String(json), nil)) }
          rest = rest[rest.index(after: close)...]
        }
      }
    }
    return out
  }()

  /// What a server message is, for the coverage check.
  private static func kind(_ m: ServerMessage) -> String {
    switch m {
    case .welcome: return "welcome"
    case .reply(_, .success): return "reply"
    case .reply(_, .failure): return "reply with an error"
    case .command: return "command"
    case .handOver: return "handOver"
    case .error: return "error"
    case .event(let e):
      switch e {
      case .interruption(.began): return "event interruptionBegan"
      case .interruption(.ended): return "event interruptionEnded"
      case .routeChange: return "event routeChange"
      case .silenceSecondaryAudioHint: return "event silenceSecondaryAudioHint"
      case .ducking: return "event ducking"
      case .silentMode: return "event silentMode"
      case .nowPlaying: return "event nowPlaying"
      case .mediaServicesWereReset: return "event mediaServicesWereReset"
      case .sleepTimer: return "event sleepTimer"
      case .sleepTimerEnded: return "event sleepTimerEnded"
      }
    }
  }

  @Test func everyExampleDecodesAndEncodesBackToItself() throws {
    try #require(Self.examples.count >= 20, "found only \(Self.examples.count) examples")
    for (i, (line, json, fromClient)) in Self.examples.enumerated() {
      // Schematic ones ("id":N, …payload) show a shape, not a message.
      if json.contains("…") || json.contains(":N") { continue }
      let bytes = Array(json.utf8)
      let client = try? WireCodec.decodeClient(bytes)
      let server = try? WireCodec.decodeServer(bytes)
      // A request the transcript shows refused as malformed (the reply after it is an error
      // about the request itself): it must not decode.
      let next = i + 1 < Self.examples.count ? Self.examples[i + 1].json : ""
      if fromClient == true,
        ["unknownMessage", "badRequest", "malformed"].contains(where: { next.contains("\"\($0)\"") }
        )
      {
        #expect(client == nil, "line \(line): a request shown as refused decoded: \(json)")
        continue
      }
      if fromClient != false, let client {
        let again = try WireCodec.encode(client)
        #expect(
          try WireCodec.decodeClient(again.dropLast()) == client, "line \(line): \(json)")
      } else if fromClient != true, let server {
        let again = try WireCodec.encode(server)
        #expect(
          try WireCodec.decodeServer(again.dropLast()) == server, "line \(line): \(json)")
      } else {
        var why = ""
        do { _ = try WireCodec.decodeServer(bytes) } catch { why = "\(error)" }
        if fromClient != false {
          do { _ = try WireCodec.decodeClient(bytes) } catch { why += " / \(error)" }
        }
        let direction = fromClient == true ? "client " : fromClient == false ? "server " : ""
        Issue.record(
          "docs/PROTOCOL.md line \(line) does not decode as a \(direction)message (\(why)): \(json)"
        )
      }
    }
  }

  @Test func everyKindOfServerMessageHasAnExample() {
    let shown = Set(
      Self.examples.filter { $0.fromClient != true }.compactMap {
        (try? WireCodec.decodeServer(Array($0.json.utf8))).map(Self.kind)
      })
    let sent = [
      "welcome", "reply", "reply with an error", "command", "handOver", "error",
      "event interruptionBegan", "event interruptionEnded", "event routeChange",
      "event silenceSecondaryAudioHint", "event ducking", "event silentMode", "event nowPlaying",
      "event sleepTimer", "event sleepTimerEnded",
    ]
    for kind in sent {
      #expect(shown.contains(kind), "docs/PROTOCOL.md shows no '\(kind)' message")
    }
    // Never sent by the server (the client library makes it up after a reconnection).
    #expect(!shown.contains("event mediaServicesWereReset"))
  }
}
