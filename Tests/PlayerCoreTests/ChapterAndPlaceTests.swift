import AudioCore
import SessionCore
import Testing

@testable import PlayerCore

/// Chapters and kept places, rule by rule: what the core asks for, when, and what it does with
/// the answers, in the model world of `CoreRig`.
@Suite struct ChapterAndPlaceTests {
  /// Three chapters of ten seconds, as an M4B made by ffmpeg has them.
  static let three = [
    Chapter(start: 0, end: 10, title: "One"), Chapter(start: 10, end: 20, title: "Two"),
    Chapter(start: 20, end: 30, title: "Three"),
  ]

  /// A rig with `book.m4b` (spoken word: an audiobook) of `seconds`, then `b.flac`.
  func book(seconds: Double = 30, chapters: [Chapter] = Self.three) -> CoreRig {
    var rig = CoreRig(tracks: ["book.m4b", "b.flac"], seconds: 30)
    rig.engine.lengths["book.m4b"] = seconds
    rig.chapterFiles["book.m4b"] = chapters
    return rig
  }

  func seeks(_ rig: CoreRig) -> [Double] {
    rig.engineCommands.compactMap { if case .seek(let s) = $0 { s } else { nil } }
  }

  // MARK: Chapters

  @Test func aFileIsAskedForItsChaptersOnceAsItArrivesAndTheyAreShown() {
    var rig = book()
    rig.playing()
    #expect(rig.chaptersAsked == ["book.m4b"])
    #expect(rig.snapshot.chapters == Self.three)
    #expect(rig.snapshot.chapterIndex(at: rig.snapshot.position) == 0)
    rig.send(.skipForward(seconds: 12))
    rig.send(.pause)
    rig.send(.play)
    #expect(rig.chaptersAsked == ["book.m4b"], "the same file is not asked again")
  }

  @Test func G19_nextChapterGoesToTheNextChapterNeverToTheNextTrack() {
    var rig = book()
    rig.playing()
    #expect(rig.snapshot.enabledCommands.contains(.nextChapter))
    #expect(!rig.snapshot.enabledCommands.contains(.previousChapter), "at the first's start")
    #expect(rig.send(.nextChapter) == .success)
    #expect(rig.engine.position == 10)
    #expect(rig.snapshot.current?.path == "book.m4b")
    #expect(rig.send(.nextChapter) == .success)
    #expect(rig.engine.position == 20)
    // The last chapter: nothing to go to, and nothing else is done instead.
    #expect(!rig.snapshot.enabledCommands.contains(.nextChapter))
    let before = rig.engineCommands.count
    #expect(rig.send(.nextChapter) == .commandDisabled)
    #expect(rig.engineCommands.count == before)
    #expect(rig.snapshot.current?.path == "book.m4b")
    // Next is still the next track.
    #expect(rig.send(.nextTrack) == .success)
    #expect(rig.snapshot.current?.path == "b.flac")
  }

  @Test func previousChapterRestartsThisOneAfterThreeSecondsElseGoesBackOne() {
    var rig = book()
    rig.playing()
    rig.send(.changePlaybackPosition(seconds: 14))
    #expect(rig.send(.previousChapter) == .success)
    #expect(rig.engine.position == 10, "more than 3 s in: the start of this chapter")
    rig.pass(1)
    #expect(rig.send(.previousChapter) == .success)
    #expect(rig.engine.position == 0, "less: the chapter before")
    #expect(!rig.snapshot.enabledCommands.contains(.previousChapter))
    #expect(rig.send(.previousChapter) == .commandDisabled)
  }

  @Test func aTrackWithoutChaptersHasNoChapterCommands() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav"])
    rig.playing()
    #expect(rig.snapshot.chapters.isEmpty)
    #expect(rig.snapshot.enabledCommands.isDisjoint(with: [.nextChapter, .previousChapter]))
    #expect(rig.send(.nextChapter) == .commandDisabled)
    #expect(rig.published.last?.0.chapterEnd == nil)
  }

  @Test func aStreamIsNotAskedForChapters() {
    var rig = CoreRig(tracks: ["http://radio/x"])
    rig.playing()
    #expect(rig.chaptersAsked.isEmpty)
  }

  @Test func theEndOfTheChapterPlayingIsPublished() {
    var rig = book()
    rig.playing()
    #expect(rig.published.last?.0.chapterEnd == 10)
    rig.send(.nextChapter)
    #expect(rig.published.last?.0.chapterEnd == 20)
    rig.send(.nextChapter)
    #expect(rig.published.last?.0.chapterEnd == 30, "the last ends with the track")
  }

  @Test func theChapterEndIsPublishedAsPlayCrossesIntoTheNext() {
    var rig = book()
    rig.playing()
    rig.pass(11)
    #expect(rig.published.last?.0.chapterEnd == 20)
    #expect(rig.snapshot.enabledCommands.contains(.previousChapter))
  }

  @Test func chaptersFoundForATrackNoLongerHeldAreNotShown() {
    var rig = book()
    rig.holdAnswers = true
    rig.playing()
    rig.send(.nextTrack)
    rig.holdAnswers = false
    rig.settle()
    #expect(rig.snapshot.current?.path == "b.flac")
    #expect(rig.snapshot.chapters.isEmpty)
    #expect(!rig.snapshot.enabledCommands.contains(.nextChapter))
  }

  @Test func chaptersWithoutEndsEndWhereTheNextStartsAndTheLastWithTheTrack() {
    let starts = Chapter.ordered([
      Chapter(start: 20, title: "c"), Chapter(start: 0, title: "a"), Chapter(start: 10),
    ])
    #expect(starts.map(\.start) == [0, 10, 20])
    #expect(Chapter.end(of: 0, in: starts, duration: 30) == 10)
    #expect(Chapter.end(of: 2, in: starts, duration: 30) == 30)
    #expect(Chapter.index(in: starts, at: 9.9) == 0)
    #expect(Chapter.index(in: starts, at: 9.99) == 1, "a seek to a start may land just short")
    #expect(Chapter.index(in: starts, at: 10) == 1)
    #expect(Chapter.index(in: [Chapter(start: 5)], at: 1) == nil)
  }

  // MARK: Places kept

  @Test func aLongRecordingGoesBackToWhereItWasLeftALittleEarlier() {
    var rig = book(seconds: 1_800)
    rig.places["book.m4b"] = .at(600)
    rig.playing()
    #expect(rig.placesLookedUp == ["book.m4b"])
    #expect(seeks(rig) == [590])
    #expect(rig.engine.position == 590)
    #expect(rig.messages.last == "'book' goes on from 9:50, a little before where it was left")
  }

  @Test func musicShorterThanTheSettingKeepsNoPlace() {
    var rig = CoreRig(tracks: ["a.wav"], seconds: 600)
    rig.places["a.wav"] = .at(100)
    rig.playing()
    rig.pass(12)
    rig.send(.pause)
    rig.send(.stop)
    #expect(rig.placesLookedUp.isEmpty)
    #expect(rig.placesKept.isEmpty)
    #expect(rig.engineCommands.allSatisfy { if case .seek = $0 { false } else { true } })
  }

  @Test(arguments: [(1_199.0, false), (1_200.0, true)])
  func anythingLongerThanTheSettingKeepsItsPlace(seconds: Double, keeps: Bool) {
    var rig = CoreRig(tracks: ["mix.flac"], seconds: seconds)
    rig.playing()
    rig.pass(2)
    rig.send(.pause)
    #expect(!rig.placesLookedUp.isEmpty == keeps)
    #expect(!rig.placesKept.isEmpty == keeps)
  }

  @Test func thePlaceIsKeptEveryFewSecondsOfPlayAndAtOnceOnAPause() {
    var rig = book(seconds: 1_800)
    rig.playing()
    rig.pass(12)
    let kept = rig.placesKept.map { kept -> Double in
      if case .at(let s) = kept.place { s } else { -1 }
    }
    #expect(kept.count == 2)
    #expect(kept.allSatisfy { $0 >= 5 && $0 <= 12 })
    rig.send(.pause)
    #expect(rig.places["book.m4b"] == .at(rig.engine.position))
    #expect(rig.snapshot.places["book.m4b"] == .at(rig.engine.position), "the lists mark it")
    let count = rig.placesKept.count
    rig.pass(30)
    #expect(rig.placesKept.count == count, "nothing moves while paused, nothing is written")
  }

  @Test func playingSomethingElseKeepsThePlaceAndComingBackFindsIt() {
    var rig = book(seconds: 1_800)
    rig.playing()
    rig.pass(20)
    rig.perform(.playEntry(rig.snapshot.queue[1].id))
    #expect(rig.places["book.m4b"] == .at(20))
    rig.pass(3)
    rig.perform(.playEntry(rig.snapshot.queue[0].id))
    rig.settle()
    #expect(rig.engine.position == 10)
  }

  @Test func aRecordingHeardToItsEndIsPlayedAndStartsFromItsStart() {
    var rig = book(seconds: 40)
    rig.perform(.remove(entry: rig.snapshot.queue[1].id))
    rig.playing()
    rig.pass(42)
    #expect(rig.snapshot.state == .stopped)
    #expect(rig.places["book.m4b"] == .finished)
    let before = seeks(rig).count
    rig.send(.play)
    rig.settle()
    #expect(seeks(rig).count == before, "from its start")
    #expect(rig.engine.position < 1)
    rig.pass(2)
    rig.send(.stop)
    #expect(rig.places["book.m4b"] == .finished, "started again and left at once: still played")
  }

  @Test func aRecordingLeftInItsLastSecondsIsPlayed() {
    var rig = book(seconds: 1_800)
    rig.places["book.m4b"] = .at(1_785)
    rig.playing()
    rig.pass(2)
    rig.send(.nextTrack)
    #expect(rig.places["book.m4b"] == .finished)
  }

  @Test func nothingIsKeptBeforeThePlaceHasBeenFound() {
    var rig = book(seconds: 1_800)
    rig.places["book.m4b"] = .at(600)
    rig.holdAnswers = true
    rig.playing()
    rig.pass(12)
    rig.send(.nextTrack)
    #expect(rig.placesKept.isEmpty)
    #expect(rig.places["book.m4b"] == .at(600))
  }

  @Test func theUsersOwnMoveBeforeThePlaceIsFoundWins() {
    var rig = book(seconds: 1_800)
    rig.places["book.m4b"] = .at(600)
    rig.holdAnswers = true
    rig.playing()
    rig.send(.changePlaybackPosition(seconds: 100))
    rig.holdAnswers = false
    rig.settle()
    #expect(seeks(rig) == [100])
    rig.send(.pause)
    #expect(rig.places["book.m4b"] == .at(100))
  }

  /// The player killed mid-play (the index keeps what was written): played again, it starts
  /// before where it was heard, and not far before.
  @Test func aKeptPlaceSurvivesACrash() {
    var first = book(seconds: 1_800)
    first.playing()
    first.pass(23)
    let heard = first.engine.position
    var second = book(seconds: 1_800)
    second.places = first.places  // what the index holds after kill -9
    second.playing()
    let settings = PlayerCore.Settings()
    #expect(second.engine.position <= heard)
    #expect(heard - second.engine.position <= settings.placeInterval + settings.placeStepBack)
  }

  /// The engine mid-seek says no track for a moment: nothing has left, nothing has arrived.
  @Test func aMomentWithoutATrackMidSeekIsNoChangeOfTrack() {
    var rig = book(seconds: 1_800)
    rig.places["book.m4b"] = .at(600)
    rig.playing()
    rig.engine.betweenStretches = true
    rig.input(.tick)
    rig.engine.betweenStretches = false
    rig.pass(1)
    #expect(rig.placesLookedUp == ["book.m4b"])
    #expect(rig.chaptersAsked == ["book.m4b"])
    #expect(seeks(rig) == [590])
  }

  @Test func quitKeepsThePlace() {
    var rig = book(seconds: 1_800)
    rig.playing()
    rig.pass(7)
    rig.input(.quit)
    #expect(rig.places["book.m4b"] == .at(7))
  }

  @Test func goingBackToThePlaceAndQuittingAtOnceDoesNotMoveItBackAgain() {
    var rig = book(seconds: 1_800)
    rig.places["book.m4b"] = .at(600)
    rig.playing()
    rig.send(.pause)
    rig.input(.quit)
    #expect(rig.places["book.m4b"] == .at(600))
    #expect(rig.placesKept.isEmpty)
  }

  @Test func aSavedQueueRestoredPausedGoesBackALittleToo() {
    var rig = book(seconds: 1_800)
    rig.places["book.m4b"] = .at(600)
    rig.perform(
      .restore(paths: ["book.m4b"], current: 0, position: 600, shuffle: false, repeatMode: .off))
    rig.settle()
    #expect(rig.snapshot.state == .paused)
    #expect(rig.engine.position == 590)
    #expect(rig.engine.state == .paused, "nothing is heard (G1)")
  }

  @Test func stopKeepsThePlaceAndPlayGoesBackToIt() {
    var rig = book(seconds: 1_800)
    rig.playing()
    rig.pass(30)
    rig.send(.stop)
    #expect(rig.places["book.m4b"] == .at(30))
    rig.send(.play)
    rig.settle()
    #expect(rig.engine.position == 20)
  }

  @Test func theUserMakingATrackSpokenWordMakesItKeepItsPlace() {
    var rig = CoreRig(tracks: ["talk.mp3"], seconds: 600)
    rig.playing()
    #expect(rig.placesLookedUp.isEmpty)
    rig.perform(.toggleSpoken)
    #expect(rig.placesLookedUp == ["talk.mp3"])
    rig.pass(8)
    rig.send(.pause)
    #expect(rig.places["talk.mp3"] != nil)
  }
}
