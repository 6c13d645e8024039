import AudioCore
import SessionCore
import Testing

@testable import PlayerCore

/// Speed, rule by rule: a podcast's or book's own speed, music's, what the engine is told and
/// what the views are shown, in the model world of `CoreRig`.
@Suite struct SpeedTests {
  /// Two episodes of a podcast (spoken word by their folder), then two songs.
  func podcastThenMusic() -> CoreRig {
    var settings = PlayerCore.Settings()
    settings.spokenFolders = ["/pods"]
    var rig = CoreRig(
      tracks: ["/pods/show/one.mp3", "/pods/show/two.mp3", "/music/a.flac", "/music/b.flac"],
      seconds: 10, settings: settings)
    rig.engine.lengths["/pods/show/one.mp3"] = 20
    return rig
  }

  @Test func aPodcastKeepsItsOwnSpeedAndTheIndexIsToldByFolder() {
    var rig = podcastThenMusic()
    rig.playing()
    #expect(rig.send(.changePlaybackRate(2)) == .success)
    #expect(rig.engine.rate == 2)
    #expect(rig.ratesKept == ["/pods/show": 2])
    #expect(rig.messages.last == "playing at 2× (kept for 'show')")
    // The next episode, gaplessly: the podcast's speed. The songs after it: 1×, as music is
    // unless asked.
    rig.pass(10.5)
    #expect(rig.snapshot.current?.path == "/pods/show/two.mp3")
    #expect(rig.engine.rate == 2)
    rig.pass(5.5)
    #expect(rig.snapshot.current?.path == "/music/a.flac")
    #expect(rig.engine.rate == 1)
  }

  /// A book in one file (.m4b) keeps its own speed, not its folder's: two books side by side
  /// in the music folder, and a podcast episode beside them, each at its own.
  @Test func anAudiobookFileKeepsItsOwnSpeedNotItsFolders() {
    var settings = PlayerCore.Settings()
    settings.spokenFolders = ["/lib"]
    var rig = CoreRig(
      tracks: ["/lib/Dune.m4b", "/lib/Emma.M4B", "/lib/episode.mp3"], seconds: 10,
      settings: settings)
    rig.playing()
    #expect(rig.send(.changePlaybackRate(1.5)) == .success)
    #expect(rig.ratesKept == ["/lib/Dune.m4b": 1.5])
    #expect(rig.messages.last == "playing at 1.5× (kept for 'Dune.m4b')")
    rig.pass(10.5)
    #expect(rig.snapshot.current?.path == "/lib/Emma.M4B")
    #expect(rig.engine.rate == 1)
    #expect(rig.send(.changePlaybackRate(2)) == .success)
    #expect(rig.ratesKept == ["/lib/Dune.m4b": 1.5, "/lib/Emma.M4B": 2])
    rig.pass(10.5)
    #expect(rig.snapshot.current?.path == "/lib/episode.mp3")
    #expect(rig.engine.rate == 1)
    #expect(RatePlan.collection(of: "/lib/episode.mp3") == "/lib")
  }

  @Test func musicAskedToPlayFasterStaysSoForMusicButNotForSpokenWord() {
    var rig = podcastThenMusic()
    rig.perform(.playEntry(rig.core.queue.entries[2].id))
    rig.playing()
    #expect(rig.snapshot.current?.path == "/music/a.flac")
    rig.send(.changePlaybackRate(1.25))
    #expect(rig.ratesKept.isEmpty, "music's speed is not kept in the index")
    #expect(rig.messages.last == "playing at 1.25× (music plays at this speed until changed)")
    rig.pass(10.5)
    #expect(rig.snapshot.current?.path == "/music/b.flac")
    #expect(rig.engine.rate == 1.25)
    // A podcast with no speed of its own plays at 1×, whatever music's is.
    rig.perform(.playEntry(rig.core.queue.entries[0].id))
    rig.settle()
    #expect(rig.engine.rate == 1)
  }

  @Test func theSpeedKeptInTheIndexComesWithThePlaceAndTheUsersChoiceInThisRunWins() {
    var rig = podcastThenMusic()
    rig.ratesKept["/pods/show"] = 1.5
    rig.holdAnswers = true
    rig.playing()
    #expect(rig.engine.rate == 1, "not known before the index answers")
    rig.holdAnswers = false
    rig.settle()
    #expect(rig.engine.rate == 1.5)
    #expect(rig.snapshot.rate == 1.5)
    // Chosen again: the index's older word (a look-up answered late) does not undo it.
    rig.send(.changePlaybackRate(1.75))
    rig.input(.placeFound(rig.core.queue.entries[0], nil, rate: 1.5))
    #expect(rig.engine.rate == 1.75)
  }

  @Test func stepsGoThroughTheListAndStopAtItsEnds() {
    var rig = podcastThenMusic()
    rig.playing()
    rig.perform(.stepRate(faster: true))
    #expect(rig.engine.rate == 1.1)
    for _ in 0..<20 { rig.perform(.stepRate(faster: true)) }
    #expect(rig.engine.rate == PlaybackRate.fastest.value)
    for _ in 0..<30 { rig.perform(.stepRate(faster: false)) }
    #expect(rig.engine.rate == PlaybackRate.slowest.value)
  }

  @Test func aSpeedOutOfRangeIsBroughtIntoIt() {
    var rig = podcastThenMusic()
    rig.playing()
    #expect(rig.send(.changePlaybackRate(4)) == .success)
    #expect(rig.engine.rate == 3)
    #expect(rig.send(.changePlaybackRate(0.1)) == .success)
    #expect(rig.engine.rate == 0.5)
  }

  @Test func G19_aLiveStreamHasNoSpeedToChange() {
    var rig = CoreRig(tracks: ["http://radio/x"])
    rig.playing()
    #expect(!rig.snapshot.enabledCommands.contains(.changePlaybackRate))
    let before = rig.engineCommands.count
    #expect(rig.send(.changePlaybackRate(2)) == .commandDisabled)
    #expect(rig.engineCommands.count == before)
    #expect(rig.engine.rate == 1)
  }

  @Test func thePositionMovesInTheFilesTimeAndTheServerIsToldTheSpeed() {
    var rig = podcastThenMusic()
    rig.playing()
    rig.send(.changePlaybackRate(2))
    rig.pass(2)
    #expect(abs(rig.engine.position - 4) < 1e-9, "two seconds heard at 2× are four of the file")
    let snap = rig.snapshot
    #expect(abs(snap.position(at: snap.positionTime + 500_000_000) - snap.position - 1) < 1e-9)
    #expect(rig.published.last?.0.rate == 2)
    rig.send(.pause)
    #expect(rig.published.last?.0.rate == 0, "paused, the position stands still")
    #expect(rig.snapshot.rate == 2, "the speed it will play at")
  }

  @Test func makingTheTrackMusicOrSpokenWordPlaysItAtThatOnesSpeed() {
    var rig = podcastThenMusic()
    rig.playing()
    rig.send(.changePlaybackRate(1.5))
    rig.perform(.toggleSpoken)  // this episode is music, says the user
    #expect(rig.engine.rate == 1)
    rig.perform(.toggleSpoken)
    #expect(rig.engine.rate == 1.5)
  }
}
