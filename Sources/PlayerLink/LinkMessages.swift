import FoundationEssentials
import PlayerEngine
import SessionCore

/// An attached interface's request to the player.
public enum LinkRequest: Sendable, Equatable, Codable {
  /// A remote command, answered by `.answered(id:)`.
  case command(id: Int, RemoteCommand)
  /// An edit of the queue or the output, answered by `.done(id:)` once carried out.
  case action(id: Int, Player.Action)
  /// `q`: stop playing and end the player process, which saves the queue first and says
  /// `.ending` last.
  case quit
}

/// What the player tells an attached interface, in order.
public enum LinkEvent: Sendable, Equatable, Codable {
  /// First, on attaching: the player's process, and lines for the status line (no session
  /// server, say).
  case hello(pid: Int32, lines: [String])
  /// The player's new snapshot and what happened. `queueOmitted`: the snapshot's queue and
  /// play order are left out, being those last sent (50,000 paths are not sent every second).
  case update(PlayerSnapshot, queueOmitted: Bool, notices: [PlayerNotice])
  case answered(id: Int, CommandStatus)
  case done(id: Int)
  /// The player is ending: `why` in words for an interface that did not ask ("was quit from
  /// another interface"); `problem` says why the queue could not be saved, if it could not.
  /// Nothing follows.
  case ending(why: String, problem: String?)
}

/// Messages as single JSON lines, both ways.
public enum LinkCodec {
  /// The longest line an interface accepts: a snapshot with a queue of 100,000 long paths.
  public static let maximumLineBytes = 256 * 1024 * 1024
  /// The longest request a player accepts: 100,000 paths to add.
  public static let maximumRequestBytes = 64 * 1024 * 1024

  public static func encode(_ value: some Encodable) throws -> [UInt8] {
    let encoder = JSONEncoder()
    // A position or a gain is never infinite or NaN, but a line is never refused for one.
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
      positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    var bytes = [UInt8](try encoder.encode(value))
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  public static func decode<T: Decodable>(_ type: T.Type, from line: ArraySlice<UInt8>) throws -> T
  {
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
      positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    return try decoder.decode(type, from: Data(line))
  }
}
