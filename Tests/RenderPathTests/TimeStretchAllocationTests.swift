import AudioCore
import CMallocCounter
import Glibc
import Testing

@testable import PlayerEngine

/// The speed control's stretcher runs on the decode thread with the rest of decoding, which
/// allocates nothing per chunk: it allocates when made (its buffers, and SoundTouch's grown
/// there), not per call, nor at a change of speed, a seek or the end of a stream. In the
/// serialized suite, so that no other test moves the counter to its own thread meanwhile.
extension RenderPathAllocationTests {
  @Test func theStretcherAllocatesOnlyWhenMade() throws {
    let input = UnsafeMutableBufferPointer<Float>.allocate(capacity: 8_192 * 2)
    defer { input.deallocate() }
    for i in input.indices { input[i] = Float(sin(Double(i / 2) * 0.05)) * 0.3 }
    let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1_024 * 2)
    defer { output.deallocate() }
    let speeds = [150, 50, 300, 200, 75, 100, 250].map(PlaybackRate.init(clampingHundredths:))
    var heard = 0

    /// The largest input it is sized for, as the decode thread puts it, what is ready received
    /// both ways, at every speed, a seek, and the end of a stream.
    func play(_ stretcher: TimeStretcher) {
      // By index: a for-in over an array allocates in a debug build.
      for i in 0..<speeds.count {
        stretcher.rate = speeds[i]
        for _ in 0..<20 {
          stretcher.put(UnsafeBufferPointer(input))
          while true {
            let n = stretcher.receive(into: output)
            if n == 0 { break }
            heard += n
          }
          stretcher.process(UnsafeBufferPointer(rebasing: input[0..<4_096])) { heard += $0.count }
        }
        if speeds[i].hundredths == 300 { stretcher.reset() }
      }
      stretcher.finish { heard += $0.count / 2 }
    }

    // Once unwatched with another stretcher: a first call may instantiate metadata. The
    // watched one is fresh, so that its buffers are only those it grew when made.
    let rate = PlaybackRate(clampingHundredths: 150)
    play(try TimeStretcher(channels: 2, sampleRate: 44_100, rate: rate))
    let stretcher = try TimeStretcher(channels: 2, sampleRate: 44_100, rate: rate)
    let before = heard
    cmc_watch(pthread_self())
    play(stretcher)
    let count = cmc_count()
    cmc_unwatch()
    #expect(heard > before)
    #expect(count == 0, "the stretcher allocated \(count) times")
  }
}
