import Glibc
import Platform
import Testing

@Suite(.timeLimit(.minutes(2))) struct WriteAllTests {
  /// 4 MiB through a pipe (64 KiB at a time in the kernel): every write but the last is
  /// partial, and all of it arrives in order.
  @Test func everythingArrivesThroughPartialWrites() throws {
    let pipe = try makePipe()
    let bytes = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
    let received = Locked<[UInt8]>([])
    let reader = try JoinableThread {
      let all = Scratch.readAll(pipe.read)
      received.withLock { $0 = all }
    }
    try writeAll(pipe.write, bytes)
    close(pipe.write)
    reader.join()
    close(pipe.read)
    #expect(received.withLock { $0 } == bytes)
  }

  @Test func aFullNonBlockingPipeIsAnError() throws {
    let pipe = try makePipe()
    defer {
      close(pipe.read)
      close(pipe.write)
    }
    _ = fcntl(pipe.write, F_SETFL, O_NONBLOCK)
    #expect(throws: SystemError(code: EAGAIN, operation: "writing")) {
      try writeAll(pipe.write, [UInt8](repeating: 7, count: 1 << 20))
    }
  }
}
