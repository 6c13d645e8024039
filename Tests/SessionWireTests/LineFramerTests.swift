import Testing

@testable import SessionWire

@Suite(.timeLimit(.minutes(2))) struct LineFramerTests {
  @Test func splitsLinesAcrossReads() throws {
    var f = LineFramer(limit: 100)
    f.append(Array("ab".utf8))
    #expect(try f.nextLine() == nil)
    f.append(Array("c\nde\r\nf".utf8))
    #expect(try f.nextLine().map { Array($0) } == Array("abc".utf8))
    #expect(try f.nextLine().map { Array($0) } == Array("de".utf8), "CRLF is accepted")
    #expect(try f.nextLine() == nil)
    #expect(f.pendingByteCount == 1)
    f.append(Array("\n".utf8))
    #expect(try f.nextLine().map { Array($0) } == Array("f".utf8))
  }

  /// A line of megabytes (the whole library queued, sent to the interface) does not keep its
  /// room for the life of the connection once it is read; what follows it is kept whole.
  @Test func aHugeLinesRoomGoesOnceItIsRead() throws {
    var f = LineFramer(limit: 1 << 24)
    let huge = [UInt8](repeating: UInt8(ascii: "x"), count: 6 << 20)
    for at in stride(from: 0, to: huge.count, by: 65536) {
      f.append(huge[at..<min(huge.count, at + 65536)])
      #expect(try f.nextLine() == nil)
    }
    f.append(Array("\nnext li".utf8))
    #expect(try f.nextLine()?.count == huge.count)
    #expect(f.capacity > LineFramer.keptCapacity)
    #expect(try f.nextLine() == nil)
    #expect(f.capacity <= LineFramer.keptCapacity, "\(f.capacity) bytes kept")
    f.append(Array("ne\n".utf8))
    #expect(try f.nextLine().map { Array($0) } == Array("next line".utf8))
  }

  /// However the bytes are split into reads (and lines are taken between them or not), the
  /// same lines come out: the framer's memory of where it stopped looking never skips a newline.
  @Test func anySplitGivesTheSameLines() throws {
    var rng = SystemRandomNumberGenerator()
    for _ in 0..<300 {
      let lines = (0..<Int.random(in: 1...12, using: &rng)).map { _ in
        String(repeating: "x", count: Int.random(in: 0...300, using: &rng))
          + (Bool.random(using: &rng) ? "\r" : "")
      }
      let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
      var f = LineFramer(limit: 1000)
      var got: [String] = []
      var at = 0
      while at < bytes.count {
        let n = Int.random(in: 1...200, using: &rng)
        f.append(bytes[at..<min(bytes.count, at + n)])
        at += n
        while Bool.random(using: &rng), let line = try f.nextLine() {
          got.append(String(decoding: line, as: UTF8.self))
        }
      }
      while let line = try f.nextLine() { got.append(String(decoding: line, as: UTF8.self)) }
      #expect(got == lines.map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 })
    }
  }

  @Test func anUnfinishedLineAtTheLimitOverflows() {
    var f = LineFramer(limit: 8)
    f.append([UInt8](repeating: 0x61, count: 8))
    #expect(throws: LineFramer.Overflow.self) { try f.nextLine() }
  }

  @Test func aCompleteLineOverTheLimitOverflows() {
    var f = LineFramer(limit: 8)
    f.append([UInt8](repeating: 0x61, count: 12) + [0x0A])
    #expect(throws: LineFramer.Overflow.self) { try f.nextLine() }
  }

  @Test func memoryStaysBoundedOverManyLines() throws {
    var f = LineFramer(limit: 64)
    for i in 0..<10_000 {
      f.append(Array("line \(i)\n".utf8))
      #expect(try f.nextLine() != nil)
    }
    #expect(f.pendingByteCount == 0)
  }
}
