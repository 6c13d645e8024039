import Glibc

/// A track and how often, and when last, it was listened to.
public struct PlayedTrack: Equatable, Sendable {
  public var track: IndexedTrack
  public var count: Int
  /// Seconds since 1970 (UTC).
  public var lastPlayed: Double
}

extension Library {
  /// Counts a listen of `path` at `time` (seconds since 1970): its count goes up by one, its
  /// last play becomes `time` when later. Counted whether or not the track is indexed (a file
  /// played from outside the music folder keeps its count for when it is).
  public func recordPlay(of path: String, at time: Double) throws(SQLiteError) {
    let s = try database.prepare(
      """
      INSERT INTO plays (path, count, last) VALUES (?1, 1, ?2)
      ON CONFLICT (path) DO UPDATE SET count = count + 1, last = max(last, excluded.last)
      """)
    try s.run([.text(path), .real(time)])
  }

  /// How far into the listens' log (bytes) the plays are counted.
  public func playsLogOffset() throws(SQLiteError) -> Int {
    Int(try database.scalar("SELECT offset FROM plays_log WHERE id = 1") ?? "0") ?? 0
  }

  /// Counts `plays`, read from the listens' log up to `logOffset`, in one transaction with
  /// that offset: each is counted once, whatever falls between. `restart`: the log is not the
  /// one counted before (shorter than the offset): the plays are counted afresh from it.
  public func recordPlays(
    _ plays: [(path: String, time: Double)], logOffset: Int, restart: Bool = false
  ) throws(SQLiteError) {
    try database.execute("BEGIN IMMEDIATE")
    do throws(SQLiteError) {
      if restart { try database.execute("DELETE FROM plays") }
      for p in plays { try recordPlay(of: p.path, at: p.time) }
      try database.prepare(
        "INSERT INTO plays_log (id, offset) VALUES (1, ?1)"
          + " ON CONFLICT (id) DO UPDATE SET offset = excluded.offset"
      ).run([.integer(logOffset)])
      try database.execute("COMMIT")
    } catch {
      try? database.execute("ROLLBACK")
      throw error
    }
  }

  /// Counts many listens at once, in one transaction (no log).
  public func recordPlays(_ plays: [(path: String, time: Double)]) throws(SQLiteError) {
    try database.execute("BEGIN")
    do throws(SQLiteError) {
      for p in plays { try recordPlay(of: p.path, at: p.time) }
      try database.execute("COMMIT")
    } catch {
      try? database.execute("ROLLBACK")
      throw error
    }
  }

  /// How many listens the index has counted in all (0 for a new or rebuilt index).
  public func playCount() throws(SQLiteError) -> Int {
    Int(try database.scalar("SELECT coalesce(sum(count), 0) FROM plays") ?? "0") ?? 0
  }

  /// The play count and last play of `path`; nil when it was never counted.
  public func plays(of path: String) throws(SQLiteError) -> (count: Int, last: Double)? {
    let s = try database.prepare("SELECT count, last FROM plays WHERE path = ?1")
    try s.bind([.text(path)])
    guard try s.step() else { return nil }
    return (s.integer(0) ?? 0, s.real(1) ?? 0)
  }

  /// The indexed tracks under `root` played most, the most first (then the latest played); at
  /// most `limit`.
  public func mostPlayed(under root: String, limit: Int = 100) throws(SQLiteError)
    -> [PlayedTrack]
  {
    try played(under: root, order: "plays.count DESC, plays.last DESC", limit: limit)
  }

  /// The indexed tracks under `root` played last, the latest first; at most `limit`.
  public func recentlyPlayed(under root: String, limit: Int = 100) throws(SQLiteError)
    -> [PlayedTrack]
  {
    try played(under: root, order: "plays.last DESC", limit: limit)
  }

  private func played(under root: String, order: String, limit: Int) throws(SQLiteError)
    -> [PlayedTrack]
  {
    let s = try database.prepare(
      "SELECT tracks.*, plays.count, plays.last FROM plays JOIN tracks USING (path)"
        + " WHERE substr(tracks.path, 1, ?1) = ?2 ORDER BY \(order) LIMIT \(max(0, limit))")
    try s.bind(Self.underValues(root))
    var out: [PlayedTrack] = []
    // The two columns after every column of `tracks`.
    let countColumn = Int32(17 + Self.loudnessColumns.count)
    while try s.step() {
      guard let t = try tracks(ofRow: s) else { continue }
      out.append(
        PlayedTrack(
          track: t, count: s.integer(countColumn) ?? 0, lastPlayed: s.real(countColumn + 1) ?? 0))
    }
    return out
  }
}
