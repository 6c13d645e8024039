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
