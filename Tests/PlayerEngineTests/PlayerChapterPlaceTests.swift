import AudioCore
import Dispatch
import AudioTestSupport
import Glibc
import Platform
import PlayerCore
import SessionCore
import Testing

@testable import PlayerEngine

/// The player's shell carries out the core's chapters and places: found off its loop (a slow
/// reader or disk never holds a command up), answered back into the core, and the place kept
/// as it quits on disk before `run()` returns.
@Suite(.timeLimit(.minutes(1))) struct PlayerChapterPlaceTests {
  @Test func chaptersAndPlacesAreFoundOffTheLoopAndTheLastPlaceIsKeptBeforeItEnds() async throws {
    let places = FakePlaces(["episode.mp3": .at(14)])
    let chaptersRead = Locked(0)
    // A slow helper, held until the pause is answered: the player answers meanwhile. (Held
    // 5 s at most, so that a player that waits for it is not stuck for good: then it is said.)
    let held = DispatchSemaphore(value: 0)
    let gaveUp = Locked(false)
    let rig = PlayerRig(tracks: ["episode.mp3", "a.wav"]) { c in
      c.places = places
      c.readChapters = { path in
        chaptersRead.withLock { $0 += 1 }
        if path == "episode.mp3", held.wait(timeout: .now() + .seconds(5)) == .timedOut {
          gaveUp.withLock { $0 = true }
        }
        return path == "episode.mp3"
          ? [
            Chapter(start: 0, title: "Intro"), Chapter(start: 10, title: "News"),
            Chapter(start: 20, title: "Sport"),
          ] : []
      }
    }
    #expect(await rig.player.send(.play) == .success)
    // The podcast (spoken word: a long recording) goes back to 14 s, 10 s before: 4 s.
    try #require(await rig.until { $0.position >= 4 && $0.position < 5 })
    #expect(await rig.player.send(.pause) == .success)
    #expect(!gaveUp.withLock { $0 }, "a command waited for the reader")
    held.signal()
    try #require(await rig.until { $0.chapters.count == 3 })
    #expect(rig.player.snapshot.enabledCommands.contains(.nextChapter))
    #expect(await rig.player.send(.nextChapter) == .success)
    try #require(await rig.until { abs($0.position - 10) < 0.1 })
    #expect(rig.lastPublished?.chapterEnd == 20)
    await rig.quitAndWait()
    #expect(places.kept.last?.path == "episode.mp3")
    #expect(places.kept.last.map { abs($0.seconds - 10) < 0.2 } == true, "\(places.kept)")
    #expect(chaptersRead.withLock { $0 } == 1)
  }
}

/// A store of places that takes its time, as a disk does, and says what it was given.
final class FakePlaces: PlaceStore, @unchecked Sendable {
  private let state: Locked<(places: [String: ListeningPlace], kept: [(String, Double)])>
  init(_ places: [String: ListeningPlace]) { state = Locked((places, [])) }

  var kept: [(path: String, seconds: Double)] { state.withLock { $0.kept } }

  func place(of path: String) -> ListeningPlace? {
    usleep(20_000)
    return state.withLock { $0.places[path] }
  }

  func keep(_ place: ListeningPlace, of path: String, duration: Double?) {
    usleep(100_000)  // an fsync on a slow disk
    state.withLock {
      $0.places[path] = place
      if case .at(let s) = place { $0.kept.append((path, s)) }
    }
  }

  let rates = Locked<[String: Double]>([:])

  func rate(ofFolder folder: String) -> Double? { rates.withLock { $0[folder] } }

  func keepRate(_ rate: Double, ofFolder folder: String) {
    rates.withLock { $0[folder] = rate }
  }
}
