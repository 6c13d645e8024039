import Glibc
import Testing

@testable import hark

/// Every hark process has one malloc arena (CHarkMain sets it before main): threads that
/// allocate at once share it, rather than each keeping what it freed in an arena of its own
/// (the interface's peak with the library open: 97 MB with an arena a thread, 77 with one).
@Suite struct MallocArenaTests {
  /// glibc's malloc_info, which the Glibc module does not bring.
  @_silgen_name("malloc_info")
  static func mallocInfo(_ options: Int32, _ stream: UnsafeMutablePointer<FILE>?) -> Int32

  @Test func threadsAllocatingAtOnceShareOneArena() throws {
    let threads = (0..<4).map { _ -> pthread_t? in
      var thread = pthread_t()
      let made = pthread_create(
        &thread, nil,
        { _ in
          for round in 0..<20_000 {
            let p = malloc(64 + round % 512)
            free(p)
          }
          return nil
        }, nil)
      return made == 0 ? thread : nil
    }
    for thread in threads {
      if let thread { pthread_join(thread, nil) }
    }
    #expect(threads.allSatisfy { $0 != nil })
    var buffer: UnsafeMutablePointer<CChar>?
    var size = 0
    let stream = try #require(open_memstream(&buffer, &size))
    _ = Self.mallocInfo(0, stream)
    fclose(stream)
    defer { free(buffer) }
    let info = buffer.map { String(cString: $0) } ?? ""
    // One <heap nr="…"> an arena.
    #expect(info.ranges(of: "<heap nr=").count == 1, "\(info.prefix(400))")
  }
}
