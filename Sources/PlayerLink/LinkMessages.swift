import AudioCore
import FoundationEssentials
import PlayerCore
import SessionCore

/// An attached interface's request to the player.
public enum LinkRequest: Sendable, Equatable, Codable {
  /// A remote command, answered by `.answered(id:)`.
  case command(id: Int, RemoteCommand)
  /// An edit of the queue or the output, answered by `.done(id:)` once carried out.
  case action(id: Int, PlayerAction)
  /// `q`: stop playing and end the player process, which saves the queue first and says
  /// `.ending` last.
  case quit
}

/// What the player tells an attached interface, in order.
public enum LinkEvent: Sendable, Equatable, Codable {
  /// First, on attaching: the player's process, and lines for the status line (no session
  /// server, say).
  case hello(pid: Int32, lines: [String])
  /// The player's new snapshot and what happened. Its queue and play order are always left
  /// out (50,000 paths are not sent every second): they come in `.queue`.
  case update(PlayerSnapshot, notices: [PlayerNotice])
  /// The queue and the play order, each time they changed: before the update that goes with
  /// them, but after the first update on attaching (the interface draws while it reads them).
  case queue(QueueList)
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

  /// `.queue(list)`'s line, as `encode` writes it, but written straight into one buffer: for
  /// 50,000 paths the encoder built a tree of them, then the text, then copied it twice, and
  /// the player's peak resident size grew by some 10 MB each time the queue changed.
  public static func encodeQueue(_ list: QueueList) -> [UInt8] {
    let queue = list.queue
    var out: [UInt8] = []
    out.reserveCapacity(queue.reduce(0) { $0 + $1.path.utf8.count } + queue.count * 8 + 64)
    out += #"{"queue":{"_0":{"paths":""#.utf8
    var lengths: [Int] = []
    lengths.reserveCapacity(queue.count)
    for track in queue {
      lengths.append(track.path.utf8.count)
      appendEscaped(track.path, to: &out)
    }
    out += #"","lengths":"#.utf8
    appendNumbers(lengths, to: &out)
    out += #","ids":"#.utf8
    appendNumbers(QueueList.idRuns(queue), to: &out)
    if let order = list.orderPositions() {
      out += #","order":"#.utf8
      appendNumbers(order, to: &out)
    }
    out += "}}}\n".utf8
    return out
  }

  /// A JSON string's content: quotes, backslashes and control characters escaped; everything
  /// else as its UTF-8 bytes.
  private static func appendEscaped(_ text: String, to out: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
      case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
      case 0..<0x20:
        out += Array("\\u00".utf8)
        out += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
      default: out.append(byte)
      }
    }
  }

  private static func appendNumbers(_ numbers: [Int], to out: inout [UInt8]) {
    out.append(UInt8(ascii: "["))
    for (i, n) in numbers.enumerated() {
      if i > 0 { out.append(UInt8(ascii: ",")) }
      out += String(n).utf8
    }
    out.append(UInt8(ascii: "]"))
  }

  public static func decode<T: Decodable>(_ type: T.Type, from line: ArraySlice<UInt8>) throws -> T
  {
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
      positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    return try decoder.decode(type, from: Data(line))
  }
}

/// A queue and its play order as they cross the link: every path in one string, each one's
/// length in UTF-8 bytes, the ids as runs of consecutive numbers, and the play order as
/// positions in the queue (none when it is the queue's own order). Read in a few milliseconds
/// where 50,000 `{"id":…,"path":…}` objects, twice, took the interface half a second.
public struct QueueList: Sendable, Equatable {
  public var queue: [QueuedTrack]
  public var playOrder: [QueuedTrack]

  public init(queue: [QueuedTrack], playOrder: [QueuedTrack]) {
    self.queue = queue
    self.playOrder = playOrder
  }
}

extension QueueList: Codable {
  private enum Keys: String, CodingKey { case paths, lengths, ids, order }

  /// The ids as runs of consecutive numbers: [first, count, first, count, …].
  static func idRuns(_ queue: [QueuedTrack]) -> [Int] {
    var runs: [Int] = []
    for track in queue {
      if let n = runs.last, let first = runs.dropLast().last, first + n == track.id {
        runs[runs.count - 1] += 1
      } else {
        runs += [track.id, 1]
      }
    }
    return runs
  }

  /// The play order as positions in the queue; nil when it is the queue's own order.
  func orderPositions() -> [Int]? {
    guard playOrder != queue else { return nil }
    var at: [Int: Int] = [:]
    at.reserveCapacity(queue.count)
    for (i, track) in queue.enumerated() { at[track.id] = i }
    return playOrder.compactMap { at[$0.id] }
  }

  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: Keys.self)
    try c.encode(queue.map(\.path).joined(), forKey: .paths)
    try c.encode(queue.map(\.path.utf8.count), forKey: .lengths)
    try c.encode(Self.idRuns(queue), forKey: .ids)
    if let order = orderPositions() { try c.encode(order, forKey: .order) }
  }

  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: Keys.self)
    let text = try c.decode(String.self, forKey: .paths)
    let lengths = try c.decode([Int].self, forKey: .lengths)
    let runs = try c.decode([Int].self, forKey: .ids)
    func damaged(_ why: String) -> DecodingError {
      .dataCorrupted(.init(codingPath: c.codingPath, debugDescription: why))
    }
    guard runs.count % 2 == 0, stride(from: 1, to: runs.count, by: 2).allSatisfy({ runs[$0] > 0 }),
      stride(from: 1, to: runs.count, by: 2).reduce(0, { $0 + runs[$1] }) == lengths.count
    else { throw damaged("the ids do not number the paths") }
    var ids: [Int] = []
    ids.reserveCapacity(lengths.count)
    for r in stride(from: 0, to: runs.count, by: 2) {
      for k in 0..<runs[r + 1] { ids.append(runs[r] + k) }
    }
    var queue: [QueuedTrack] = []
    queue.reserveCapacity(lengths.count)
    let utf8 = text.utf8
    var start = utf8.startIndex
    for (i, length) in lengths.enumerated() {
      guard length >= 0,
        let end = utf8.index(start, offsetBy: length, limitedBy: utf8.endIndex),
        let path = String(utf8[start..<end])
      else { throw damaged("the lengths do not cut the paths") }
      queue.append(QueuedTrack(id: ids[i], path: path))
      start = end
    }
    guard start == utf8.endIndex else { throw damaged("the lengths do not cut the paths") }
    self.queue = queue
    if let order = try c.decodeIfPresent([Int].self, forKey: .order) {
      guard order.allSatisfy(queue.indices.contains) else {
        throw damaged("the play order names no entry of the queue")
      }
      playOrder = order.map { queue[$0] }
    } else {
      playOrder = queue
    }
  }
}
