import Glibc
import Loudness
import Platform
import Testing

@testable import LibraryIndex

/// The loudness the index measures (Sound Check for files without ReplayGain tags) and the
/// plays it counts, on files ffmpeg makes, read by the real hark-tags; the measurement itself
/// stands in (LoudnessMeterTests check libebur128's), so that what is measured, when, and how
/// an album is gated again can be seen.
@Suite(.timeLimit(.minutes(2))) final class LibraryLoudnessTests {
  let folder: String = {
    var template = Array("/tmp/hark-loudness-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()
  var music: String { folder + "/music" }
  var index: String { folder + "/cache/hark/library.sqlite3" }

  deinit { _ = system("rm -rf '\(folder)'") }

  func make(_ name: String, _ tags: [String: String]) throws {
    let path = music + "/" + name
    _ = system("mkdir -p \"$(dirname '\(path)')\"")
    var command = "ffmpeg -nostdin -v error -y -f lavfi -i sine=d=1 -c:a flac"
    for (k, v) in tags.sorted(by: { $0.key < $1.key }) { command += " -metadata '\(k)=\(v)'" }
    try #require(system(command + " '\(path)'") == 0, "ffmpeg could not make \(name)")
  }

  /// A stand-in measurement: every block of the track at `level` LUFS, 300 of them (30 s).
  static func measured(_ level: Double, peak: Double = 0.5) -> Measured {
    var blocks = LoudnessBlocks()
    for _ in 0..<300 { blocks.add(blockLoudness: level) }
    return .loudness(
      TrackLoudness(
        integrated: blocks.integratedLoudness, truePeak: peak, blocks: blocks, seconds: 30))
  }

  /// Levels by file name; the paths asked for, in order.
  final class Meter: @unchecked Sendable {
    let levels: [String: Double]
    private let lock = Locked<[String]>([])
    var asked: [String] { lock.withLock { $0 } }
    init(_ levels: [String: Double]) { self.levels = levels }
    func measure(_ path: String) -> Measured? {
      lock.withLock { $0.append(path) }
      let name = String(path.split(separator: "/").last ?? "")
      guard let level = levels[name] else { return .failed("not an audio file") }
      return LibraryLoudnessTests.measured(level)
    }
  }

  func makeAlbum() throws -> Library {
    for (n, name) in ["01 Loud.flac", "02 Quiet.flac", "03 Between.flac"].enumerated() {
      try make("Band/Record/" + name, ["artist": "Band", "album": "Record", "track": "\(n + 1)"])
    }
    try make(
      "Other/Tagged.flac",
      ["artist": "Other", "album": "Tagged", "REPLAYGAIN_TRACK_GAIN": "-3.00 dB"])
    return try Library(path: index)
  }

  @Test func untaggedTracksAreMeasuredAlbumByAlbumAndTheAlbumGatedAsOne() throws {
    let library = try makeAlbum()
    _ = try library.scan(music)
    #expect(try library.tracksToMeasure() == 3, "the tagged track keeps its tags' gain")
    let meter = Meter(["01 Loud.flac": -10, "02 Quiet.flac": -30, "03 Between.flac": -14])
    var lines: [MeasureProgress] = []
    let report = try library.measureLoudness(measure: { meter.measure($0) }) { lines.append($0) }
    #expect(report == MeasureReport(measured: 3, failed: 0, albums: 1, stopped: false))
    #expect(meter.asked.map { $0.hasSuffix(".flac") } == [true, true, true])
    #expect(lines.last?.measured == 3 && lines.last?.toMeasure == 3)

    let loud = try #require(try library.measuredGains(of: music + "/Band/Record/01 Loud.flac"))
    #expect(abs((loud.trackGain ?? 0) - (-8)) < 0.06)
    #expect(loud.trackPeak == 0.5)
    // The album: the -30 track's blocks fall below the album's relative gate.
    var album = LoudnessBlocks()
    for level in [-10.0, -30, -14] {
      for _ in 0..<300 { album.add(blockLoudness: level) }
    }
    let expected = try #require(album.integratedLoudness)
    #expect(abs(expected - (-11.5)) < 0.2)
    #expect(abs((loud.albumGain ?? 0) - (-18 - expected)) < 0.001)
    let quiet = try #require(try library.measuredGains(of: music + "/Band/Record/02 Quiet.flac"))
    #expect(quiet.albumGain == loud.albumGain)
    #expect(try library.measuredGains(of: music + "/Other/Tagged.flac") == nil)

    // A rescan measures nothing that did not change.
    _ = try library.scan(music)
    let again = Meter([:])
    #expect(try library.measureLoudness(measure: { again.measure($0) }).measured == 0)
    #expect(again.asked.isEmpty)
  }

  @Test func aChangedTrackIsMeasuredAloneAndItsAlbumGatedAgain() throws {
    let library = try makeAlbum()
    _ = try library.scan(music)
    let meter = Meter(["01 Loud.flac": -10, "02 Quiet.flac": -30, "03 Between.flac": -14])
    _ = try library.measureLoudness(measure: { meter.measure($0) })
    let before = try #require(try library.measuredGains(of: music + "/Band/Record/01 Loud.flac"))

    // Retagged, so read again: measured again, alone; the album's gain moves with it.
    try make("Band/Record/03 Between.flac", ["artist": "Band", "album": "Record", "title": "B"])
    _ = try library.scan(music)
    let changed = Meter(["03 Between.flac": -8])
    let report = try library.measureLoudness(measure: { changed.measure($0) })
    #expect(changed.asked == [music + "/Band/Record/03 Between.flac"])
    #expect(report.albums == 1)
    let after = try #require(try library.measuredGains(of: music + "/Band/Record/01 Loud.flac"))
    #expect(after.trackGain == before.trackGain)
    #expect((after.albumGain ?? 0) < (before.albumGain ?? 0) - 0.5, "a louder album")

    // A track removed: the album is gated over what is left, with nothing measured.
    unlink(music + "/Band/Record/01 Loud.flac")
    _ = try library.scan(music)
    let none = Meter([:])
    #expect(try library.measureLoudness(measure: { none.measure($0) }).albums == 1)
    #expect(none.asked.isEmpty)
    let two = try #require(try library.measuredGains(of: music + "/Band/Record/02 Quiet.flac"))
    var left = LoudnessBlocks()
    for level in [-30.0, -8] {
      for _ in 0..<300 { left.add(blockLoudness: level) }
    }
    #expect(two.albumGain == left.integratedLoudness.map { -18 - $0 })
  }

  @Test func aTrackThatCannotBeMeasuredIsNotTriedAgainAndItsAlbumHasNoGain() throws {
    let library = try makeAlbum()
    _ = try library.scan(music)
    let meter = Meter(["01 Loud.flac": -10, "03 Between.flac": -14])
    let report = try library.measureLoudness(measure: { meter.measure($0) })
    #expect(report.measured == 2 && report.failed == 1)
    let measurements = try library.measurements(under: music + "/Band")
    #expect(measurements.map(\.state) == [1, 2, 1])
    #expect(measurements[1].problem == "not an audio file")
    let loud = try #require(try library.measuredGains(of: music + "/Band/Record/01 Loud.flac"))
    #expect(loud.albumGain == nil, "an album with a track unmeasured has no album gain")
    let again = Meter([:])
    _ = try library.measureLoudness(measure: { again.measure($0) })
    #expect(again.asked.isEmpty)
  }

  @Test func threadsMeasuringAtOnceWriteWhatOneWouldHave() throws {
    let library = try makeAlbum()
    _ = try library.scan(music)
    let meter = Meter(["01 Loud.flac": -10, "02 Quiet.flac": -30, "03 Between.flac": -14])
    let report = try library.measureLoudness(parallel: 3, measure: { meter.measure($0) })
    #expect(report == MeasureReport(measured: 3, failed: 0, albums: 1, stopped: false))
    #expect(Set(meter.asked).count == 3)
    let loud = try #require(try library.measuredGains(of: music + "/Band/Record/01 Loud.flac"))
    #expect(abs((loud.trackGain ?? 0) - (-8)) < 0.06)
    #expect(loud.albumGain != nil)
  }

  @Test func aPassStoppedKeepsWhatItMeasured() throws {
    let library = try makeAlbum()
    _ = try library.scan(music)
    let calls = Locked(0)
    let report = try library.measureLoudness { _ -> Measured? in
      let n = calls.withLock { c -> Int in
        c += 1
        return c
      }
      return n == 2 ? nil : Self.measured(-12)
    }
    #expect(report.stopped && report.measured == 1)
    #expect(try library.tracksToMeasure() == 2)
  }

  @Test func playsAreCountedAndKeptAcrossARescanOfTheFile() throws {
    let library = try makeAlbum()
    _ = try library.scan(music)
    let loud = music + "/Band/Record/01 Loud.flac"
    let quiet = music + "/Band/Record/02 Quiet.flac"
    try library.recordPlay(of: loud, at: 1_000)
    try library.recordPlay(of: quiet, at: 2_000)
    try library.recordPlay(of: loud, at: 3_000)
    try library.recordPlay(of: "/elsewhere/x.flac", at: 4_000)
    #expect(try library.plays(of: loud)?.count == 2)
    #expect(try library.plays(of: loud)?.last == 3_000)
    #expect(try library.mostPlayed(under: music).map(\.track.path) == [loud, quiet])
    #expect(try library.recentlyPlayed(under: music).map(\.track.path) == [loud, quiet])
    #expect(try library.mostPlayed(under: music).first?.track.title == nil)
    #expect(try library.mostPlayed(under: music).first?.track.artist == "Band")
    // An older listen counted later (from the offline log) does not move the last play back.
    try library.recordPlays([(quiet, 500), (quiet, 5_000)])
    #expect(try library.recentlyPlayed(under: music).map(\.track.path) == [quiet, loud])
    #expect(try library.mostPlayed(under: music).first?.count == 3)
    #expect(try library.playCount() == 6)
    try make("Band/Record/01 Loud.flac", ["artist": "Band", "album": "Record", "title": "L"])
    _ = try library.scan(music)
    #expect(try library.plays(of: loud)?.count == 2)
  }

  @Test func playsCountedFromTheLogGoWithHowFarItWasRead() throws {
    let library = try makeAlbum()
    #expect(try library.playsLogOffset() == 0)
    try library.recordPlays([("/m/a", 1), ("/m/b", 2)], logOffset: 120)
    #expect(try library.playsLogOffset() == 120)
    try library.recordPlays([("/m/a", 3)], logOffset: 180)
    #expect(try library.plays(of: "/m/a")?.count == 2)
    // Another log: counted afresh.
    try library.recordPlays([("/m/c", 4)], logOffset: 60, restart: true)
    #expect(try library.playCount() == 1)
    #expect(try library.plays(of: "/m/a") == nil)
    #expect(try library.playsLogOffset() == 60)
  }

  @Test func anIndexOfSchemaThreeGainsTheLoudnessColumnsInPlace() throws {
    let library = try makeAlbum()
    _ = try library.scan(music)
    let dropped = system(
      """
      sqlite3 '\(index)' "DROP INDEX tracks_to_measure; DROP TABLE plays; DROP TABLE plays_log; \
      ALTER TABLE tracks DROP COLUMN loudness; ALTER TABLE tracks DROP COLUMN true_peak; \
      ALTER TABLE tracks DROP COLUMN loudness_blocks; ALTER TABLE tracks DROP COLUMN measured; \
      ALTER TABLE tracks DROP COLUMN measure_problem; \
      ALTER TABLE tracks DROP COLUMN album_loudness; ALTER TABLE tracks DROP COLUMN album_peak; \
      ALTER TABLE tracks DROP COLUMN album_tracks; PRAGMA user_version = 3;"
      """)
    try #require(dropped == 0, "sqlite3 could not make a schema-3 index")
    let upgraded = try Library(path: index)
    #expect(upgraded.setAside == nil)
    #expect(try upgraded.count() == 4)
    #expect(try upgraded.scan(music).read == 0, "nothing read again")
    #expect(try upgraded.tracksToMeasure() == 3)
    try upgraded.recordPlay(of: music + "/Other/Tagged.flac", at: 1)
    #expect(try upgraded.playCount() == 1)
  }
}
