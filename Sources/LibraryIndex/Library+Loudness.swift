import Glibc
import Loudness
import MediaFiles
import Platform

/// What measuring one track gave.
public enum Measured: Sendable {
  case loudness(TrackLoudness)
  /// It could not be measured: why, in words. Not tried again until the file changes.
  case failed(String)
}

/// Where a measurement pass is, for a progress line.
public struct MeasureProgress: Sendable, Equatable {
  /// Tracks measured in this pass, and how many were to measure when it started.
  public var measured: Int
  public var toMeasure: Int
  /// Seconds of sound measured, and of time taken.
  public var soundSeconds: Double
  public var elapsed: Double

  /// "Measuring loudness: 120 of 5000 tracks, 40× real time, about 2:01:30 left".
  public var summary: String {
    var line = "\(measured) of \(toMeasure) tracks"
    guard elapsed > 1, measured > 0 else { return line }
    let speed = soundSeconds / elapsed
    line += ", \(Int(speed.rounded()))× real time"
    if measured < toMeasure {
      let left = Int((Double(toMeasure - measured) * elapsed / Double(measured)).rounded(.up))
      line += ", about \(clockTime(seconds: left)) left"
    }
    return line
  }
}

/// How a measurement pass went.
public struct MeasureReport: Sendable, Equatable {
  public var measured = 0
  public var failed = 0
  /// Albums whose loudness was gated (again).
  public var albums = 0
  /// Stopped before its end (asked to, or the index changed under it).
  public var stopped = false
}

extension Library {
  /// How many tracks wait to be measured: those without a ReplayGain track gain in their tags,
  /// whose tags could be read, not measured yet. Under `root`, or all.
  public func tracksToMeasure(under root: String? = nil) throws(SQLiteError) -> Int {
    var sql = "SELECT count(*) FROM tracks INDEXED BY tracks_to_measure WHERE \(Self.toMeasure)"
    var values: [Statement.Value?] = []
    if let root {
      sql += " AND \(Self.under)"
      values = Self.underValues(root)
    }
    let s = try database.prepare(sql)
    try s.bind(values)
    _ = try s.step()
    return s.integer(0) ?? 0
  }

  static let toMeasure = "measured = 0 AND track_gain IS NULL AND problem IS NULL"

  /// Measures every track still to be measured (under `root`, or all), album by album, each
  /// through `measure` (which decodes it; nil: stop now), and gates each album whose tracks are
  /// all measured. Each result is written as it comes, so an interrupted pass keeps what it
  /// measured; a file that changed while it was measured (its size or time) is left for the
  /// next pass. `progress` is called after each track. With `parallel` above 1, that many
  /// threads measure a batch's tracks at once (they inherit the caller's priority); the index
  /// is written by the caller's thread alone, in album order.
  public func measureLoudness(
    under root: String? = nil, parallel: Int = 1,
    measure: @escaping @Sendable (String) -> Measured?,
    progress: (MeasureProgress) -> Void = { _ in }
  ) throws(SQLiteError) -> MeasureReport {
    var report = MeasureReport()
    let started = monotonicNanoseconds()
    var state = MeasureProgress(
      measured: 0, toMeasure: try tracksToMeasure(under: root), soundSeconds: 0, elapsed: 0)
    var sql =
      "SELECT path, size, mtime, coalesce(album_artist, artist), album FROM tracks"
      + " INDEXED BY tracks_to_measure WHERE \(Self.toMeasure)"
    var values: [Statement.Value?] = []
    if let root {
      sql += " AND \(Self.under)"
      values = Self.underValues(root)
    }
    // A batch at a time, so that no read stays open while the writes go on.
    let next = try database.prepare(
      sql + " ORDER BY coalesce(album_artist, artist), album, disc, track, path LIMIT 64")
    let write = try database.prepare(
      """
      UPDATE tracks SET measured = ?4, loudness = ?5, true_peak = ?6, loudness_blocks = ?7,
        measure_problem = ?8
      WHERE path = ?1 AND size = ?2 AND mtime = ?3 AND measured = 0
      """)
    var lastAlbum: (String?, String?)?
    var tried: Set<String> = []
    while true {
      try next.bind(values)
      var batch: [(path: String, size: Int, mtime: Int, artist: String?, album: String?)] = []
      while try next.step() {
        guard let path = next.text(0), !tried.contains(path) else { continue }
        batch.append(
          (path, next.integer(1) ?? -1, next.integer(2) ?? -1, next.text(3), next.text(4)))
      }
      if batch.isEmpty { break }
      let results = Self.measureAll(batch.map(\.path), parallel: parallel, measure: measure)
      for (track, measured) in zip(batch, results) {
        // An album done: gated now, so that its gain is there before the whole pass ends.
        if let last = lastAlbum, last != (track.artist, track.album) {
          report.albums += try gateAlbum(artist: last.0, album: last.1) ? 1 : 0
        }
        lastAlbum = (track.artist, track.album)
        tried.insert(track.path)
        guard let result = measured else {
          report.stopped = true
          return report
        }
        var row: [Statement.Value?] = [
          .text(track.path), .integer(track.size), .integer(track.mtime),
        ]
        switch result {
        case .loudness(let l):
          row += [
            .integer(1), l.integrated.map { .real($0) }, .real(l.truePeak),
            .blob(l.blocks.encoded), nil,
          ]
          report.measured += 1
          state.soundSeconds += l.seconds
        case .failed(let why):
          row += [.integer(2), nil, nil, nil, .text(why)]
          report.failed += 1
        }
        try write.run(row)
        state.measured += 1
        state.elapsed = Double(monotonicNanoseconds() - started) / 1e9
        progress(state)
      }
    }
    if let last = lastAlbum {
      report.albums += try gateAlbum(artist: last.0, album: last.1) ? 1 : 0
    }
    report.albums += try gateChangedAlbums()
    return report
  }

  /// `measure` of each path, in order: on `parallel` threads (each taking the next path left)
  /// when more than one; a nil (stop) makes the threads take no more, and is in the results.
  static func measureAll(
    _ paths: [String], parallel: Int, measure: @escaping @Sendable (String) -> Measured?
  ) -> [Measured?] {
    guard parallel > 1, paths.count > 1 else {
      var out: [Measured?] = []
      for p in paths {
        let m = measure(p)
        out.append(m)
        if m == nil { break }
      }
      return out + Array(repeating: nil, count: paths.count - out.count)
    }
    let shared = Locked<(next: Int, stop: Bool, results: [Measured?])>(
      (0, false, Array(repeating: nil, count: paths.count)))
    var threads: [JoinableThread] = []
    for _ in 0..<min(parallel, paths.count) {
      let worker = try? JoinableThread(named: "hark-measure") {
        while true {
          let i = shared.withLock { s -> Int? in
            guard !s.stop, s.next < paths.count else { return nil }
            defer { s.next += 1 }
            return s.next
          }
          guard let i else { return }
          let m = measure(paths[i])
          shared.withLock { s in
            s.results[i] = m
            if m == nil { s.stop = true }
          }
        }
      }
      if let worker { threads.append(worker) }
    }
    for t in threads { t.join() }
    // No thread could be made: here, in order.
    if threads.isEmpty { return measureAll(paths, parallel: 1, measure: measure) }
    return shared.withLock { $0.results }
  }

  /// Gates the album's tracks' blocks as one programme when all its tracks are measured and
  /// its loudness is not already theirs; clears an album loudness that no longer holds (a
  /// track of it tagged, or not measurable). True when it wrote.
  @discardableResult
  func gateAlbum(artist: String?, album: String?) throws(SQLiteError) -> Bool {
    guard let album else { return false }
    let s = try database.prepare(
      """
      SELECT measured, track_gain, problem, true_peak, loudness_blocks, album_loudness,
        album_tracks
      FROM tracks INDEXED BY tracks_in_order
      WHERE coalesce(album_artist, artist) IS ?1 AND album = ?2
      """)
    try s.bind([artist.map { .text($0) }, .text(album)])
    var blocks = LoudnessBlocks()
    var peak = 0.0
    var count = 0
    var complete = true
    var waiting = false
    var stored: Set<Double?> = []
    var storedCounts: Set<Int?> = []
    while try s.step() {
      count += 1
      let measured = s.integer(0) ?? 0
      if measured == 0 && s.real(1) == nil && s.text(2) == nil { waiting = true }
      if measured != 1 || s.real(1) != nil {
        complete = false
      } else {
        peak = max(peak, s.real(3) ?? 0)
        if let bytes = s.blob(4), let b = LoudnessBlocks(encoded: bytes) { blocks.merge(b) }
      }
      stored.insert(s.real(5))
      storedCounts.insert(s.integer(6))
    }
    if waiting || count == 0 { return false }
    let update = try database.prepare(
      """
      UPDATE tracks SET album_loudness = ?3, album_peak = ?4, album_tracks = ?5
      WHERE coalesce(album_artist, artist) IS ?1 AND album = ?2
      """)
    let key: [Statement.Value?] = [artist.map { .text($0) }, .text(album)]
    guard complete else {
      if stored == [nil] && storedCounts == [nil] { return false }
      try update.run(key + [nil, nil, nil])
      return true
    }
    let loudness = blocks.integratedLoudness
    if storedCounts == [count], stored.count == 1, stored.first == loudness { return false }
    try update.run(key + [loudness.map { .real($0) }, .real(peak), .integer(count)])
    return true
  }

  /// Gates again every album whose tracks changed since it was gated (a track added, removed,
  /// rescanned): those whose tracks disagree on their album's loudness or on how many they
  /// were. After a scan and at the end of a pass. Returns how many it wrote.
  public func gateChangedAlbums() throws(SQLiteError) -> Int {
    let s = try database.prepare(
      """
      SELECT coalesce(album_artist, artist) AS a, album FROM tracks WHERE album IS NOT NULL
      GROUP BY a, album
      HAVING (sum(measured = 1 AND track_gain IS NULL) = count(*)
          AND (min(album_tracks) IS NOT count(*) OR max(album_tracks) IS NOT count(*)
            OR count(DISTINCT album_loudness) > 1
            OR (sum(album_loudness IS NULL) > 0 AND sum(album_loudness IS NULL) < count(*))))
        OR (sum(measured = 1 AND track_gain IS NULL) < count(*)
          AND sum(measured = 0 AND track_gain IS NULL AND problem IS NULL) = 0
          AND (max(album_tracks) IS NOT NULL OR max(album_loudness) IS NOT NULL))
      """)
    var albums: [(String?, String?)] = []
    while try s.step() { albums.append((s.text(0), s.text(1))) }
    var written = 0
    for (artist, album) in albums where try gateAlbum(artist: artist, album: album) {
      written += 1
    }
    return written
  }

  /// The gains measured for `path`, as its tags would give them (ReplayGain 2.0: −18 LUFS
  /// less the loudness; the true peak), when it was measured; nil otherwise. The album's when
  /// every track of its album was measured.
  public func measuredGains(of path: String) throws(SQLiteError) -> ReplayGainTags? {
    let s = try database.prepare(
      "SELECT loudness, true_peak, album_loudness, album_peak FROM tracks"
        + " WHERE path = ?1 AND measured = 1")
    try s.bind([.text(path)])
    guard try s.step() else { return nil }
    let tags = ReplayGainTags(
      trackGain: s.real(0).map(TrackLoudness.gain(forLoudness:)), trackPeak: s.real(1),
      albumGain: s.real(2).map(TrackLoudness.gain(forLoudness:)), albumPeak: s.real(3))
    return tags.isEmpty ? nil : tags
  }

  /// A track's measurement as the index keeps it, for `hark library loudness` and the tests.
  public struct Measurement: Sendable, Equatable {
    public var path: String
    /// 0: not yet; 1: measured; 2: could not be (`problem` says why).
    public var state: Int
    public var loudness: Double?
    public var truePeak: Double?
    public var albumLoudness: Double?
    public var albumPeak: Double?
    public var problem: String?
    /// Its tags' own ReplayGain track gain, when it has one (it is then not measured).
    public var taggedGain: Double?
  }

  /// The measurements of the tracks under `root` (a folder or a file), in the library's order.
  public func measurements(under root: String) throws(SQLiteError) -> [Measurement] {
    let s = try database.prepare(
      """
      SELECT path, measured, loudness, true_peak, album_loudness, album_peak, measure_problem,
        track_gain
      FROM tracks WHERE path = ?3 OR \(Self.under) ORDER BY \(Self.searchOrder)
      """)
    try s.bind(Self.underValues(root) + [.text(root)])
    var out: [Measurement] = []
    while try s.step() {
      out.append(
        Measurement(
          path: s.text(0) ?? "", state: s.integer(1) ?? 0, loudness: s.real(2),
          truePeak: s.real(3), albumLoudness: s.real(4), albumPeak: s.real(5),
          problem: s.text(6), taggedGain: s.real(7)))
    }
    return out
  }
}

/// The player's way to the gains the index measured, for a track whose file has no ReplayGain
/// tags: one read-only connection to the index, opened (with SQLite itself) at the first such
/// track, never for a library whose files are all tagged. Any thread; one read at a time.
public final class MeasuredGains: @unchecked Sendable {
  private let path: String
  private let lock = Locked<Database?>(nil)

  /// The index at `path` (default: its usual place).
  public init(indexAt path: String? = Library.defaultPath()) {
    self.path = path ?? ""
  }

  /// The gains measured for `track`; nil when it was not measured, or there is no index (or
  /// one of an older schema, before loudness was measured).
  public func gains(of track: String) -> ReplayGainTags? {
    lock.withLock { database -> ReplayGainTags? in
      if database == nil {
        guard !path.isEmpty, access(FileName.c(path), R_OK) == 0 else { return nil }
        database = try? Database(path: path, create: false)
      }
      guard let db = database else { return nil }
      do {
        let s = try db.prepare(
          "SELECT loudness, true_peak, album_loudness, album_peak FROM tracks"
            + " WHERE path = ?1 AND measured = 1")
        try s.bind([.text(track)])
        guard try s.step() else { return nil }
        let tags = ReplayGainTags(
          trackGain: s.real(0).map(TrackLoudness.gain(forLoudness:)), trackPeak: s.real(1),
          albumGain: s.real(2).map(TrackLoudness.gain(forLoudness:)), albumPeak: s.real(3))
        return tags.isEmpty ? nil : tags
      } catch {
        // Gone, damaged, or of an older schema: opened afresh next time.
        database = nil
        return nil
      }
    }
  }
}

/// Writes measured loudness into files as ReplayGain 2.0 tags, through hark-tags
/// (`--write-gains`: TagLib writes a copy beside the file, checks its other tags are the
/// file's, and renames it over the file; nothing else in it changes).
public enum GainTagWriter {
  /// What to write into one file.
  public struct Item: Sendable, Equatable {
    public var path: String
    public var trackGain: Double
    public var trackPeak: Double
    public var albumGain: Double?
    public var albumPeak: Double?

    public init(
      path: String, trackGain: Double, trackPeak: Double, albumGain: Double?, albumPeak: Double?
    ) {
      self.path = path
      self.trackGain = trackGain
      self.trackPeak = trackPeak
      self.albumGain = albumGain
      self.albumPeak = albumPeak
    }

    /// The item for a measurement, when it has a loudness to write (not silence, not a cue
    /// sheet's track: the file is the whole concert's).
    public init?(_ m: Library.Measurement) {
      guard m.state == 1, m.taggedGain == nil, let loudness = m.loudness, let peak = m.truePeak,
        CueSheet.Reference(m.path) == nil
      else { return nil }
      self.init(
        path: m.path, trackGain: TrackLoudness.gain(forLoudness: loudness), trackPeak: peak,
        albumGain: m.albumLoudness.map(TrackLoudness.gain(forLoudness:)), albumPeak: m.albumPeak)
    }
  }

  /// Writes each item, in order; `done` is told each file's outcome (nil: written; else why
  /// not) as it comes.
  public static func write(
    _ items: [Item], tagHelper: String? = nil, done: (Item, String?) -> Void
  ) {
    signal(SIGPIPE, SIG_IGN)
    let helper = TagHelper(
      executable: tagHelper ?? TagHelper.installed() ?? "hark-tags", arguments: ["--write-gains"])
    defer { helper.stop() }
    for item in items {
      let record = helper.read(fields: [
        item.path, String(item.trackGain), String(item.trackPeak),
        item.albumGain.map { String($0) } ?? "", item.albumPeak.map { String($0) } ?? "",
      ])
      done(item, record.problem)
    }
  }
}
