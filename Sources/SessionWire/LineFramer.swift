/// Splits a byte stream into newline-terminated lines, holding at most `limit` bytes of an
/// unfinished line, so a peer that never sends a newline cannot grow our memory.
public struct LineFramer: Sendable {
  /// The unfinished line would exceed the limit; the connection should be closed.
  public struct Overflow: Error, Sendable, Hashable {}

  private var buffer: [UInt8] = []
  private var start = 0
  /// Bytes from `start` up to here hold no newline.
  private var scanned = 0
  public let limit: Int

  public init(limit: Int = maximumMessageBytes) {
    self.limit = limit
    buffer.reserveCapacity(min(limit, 4096))
  }

  /// Adds bytes just read.
  public mutating func append(_ bytes: some Collection<UInt8>) {
    buffer.append(contentsOf: bytes)
  }

  /// The next complete line without its newline (a trailing carriage return is kept out too),
  /// nil when no complete line is buffered, or `Overflow` when the unfinished line is too long.
  public mutating func nextLine() throws(Overflow) -> ArraySlice<UInt8>? {
    // Where the last look stopped: a line of megabytes read 64 KiB at a time is scanned once,
    // not once per read.
    guard let newline = buffer[max(start, scanned)...].firstIndex(of: UInt8(ascii: "\n")) else {
      if buffer.count - start >= limit { throw Overflow() }
      compact()
      scanned = buffer.count
      return nil
    }
    if newline - start >= limit { throw Overflow() }
    var end = newline
    if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
    let line = buffer[start..<end]
    start = newline + 1
    scanned = start
    return line
  }

  /// How many bytes wait for their newline.
  public var pendingByteCount: Int { buffer.count - start }

  private mutating func compact() {
    guard start > 0 else { return }
    scanned = max(0, scanned - start)
    if buffer.capacity > Self.keptCapacity, buffer.count - start < Self.keptCapacity / 4 {
      // A line of megabytes (a whole library queued) is done with: its room goes back, not
      // kept for the life of the connection.
      var rest: [UInt8] = []
      rest.reserveCapacity(Swift.max(4096, 2 * (buffer.count - start)))
      rest.append(contentsOf: buffer[start...])
      buffer = rest
    } else {
      buffer.removeFirst(start)
    }
    start = 0
  }

  /// Room kept once the lines that needed more are read.
  static let keptCapacity = 1 << 20

  /// The room the buffer holds now (for tests).
  var capacity: Int { buffer.capacity }
}
