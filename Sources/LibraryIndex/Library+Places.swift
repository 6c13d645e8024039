import Glibc

/// Where a long recording (an audiobook, a podcast, a lecture) was left, as the player keeps it.
public struct KeptPlace: Equatable, Sendable {
  /// The file (or a cue sheet's track).
  public var path: String
  /// Seconds in where it was left; nil when it was heard to its end (played).
  public var position: Double?
  /// Its length in seconds, when known.
  public var duration: Double?
  /// When it was kept: seconds since 1970 (UTC).
  public var updated: Double

  public init(path: String, position: Double?, duration: Double?, updated: Double) {
    self.path = path
    self.position = position
    self.duration = duration
    self.updated = updated
  }

  /// Heard to its end.
  public var isPlayed: Bool { position == nil }
}

extension Library {
  /// Writes are on disk when they return, for this connection (SQLite's `synchronous = FULL`:
  /// in WAL mode, each commit syncs the log), rather than when the log is next checkpointed. A
  /// kept place is what the user had and nothing else holds: a crash, even of the machine,
  /// must not lose it (the same rule as the state file's).
  public func syncEachWrite() throws(SQLiteError) {
    try database.execute("PRAGMA synchronous = FULL")
  }

  /// Where `path` was left; nil when no place is kept.
  public func place(of path: String) throws(SQLiteError) -> KeptPlace? {
    let s = try database.prepare(
      "SELECT path, position, played, duration, updated FROM places WHERE path = ?1")
    try s.bind([.text(path)])
    guard try s.step() else { return nil }
    return Self.place(ofRow: s)
  }

  /// Keeps where `path` was left: `position` seconds in, or (nil) heard to its end.
  public func keepPlace(
    of path: String, at position: Double?, duration: Double?, time: Double
  ) throws(SQLiteError) {
    let s = try database.prepare(
      """
      INSERT INTO places (path, position, played, duration, updated) VALUES (?1, ?2, ?3, ?4, ?5)
      ON CONFLICT (path) DO UPDATE SET position = excluded.position, played = excluded.played,
        duration = coalesce(excluded.duration, duration), updated = excluded.updated
      """)
    try s.run([
      .text(path), position.map { .real($0) }, .integer(position == nil ? 1 : 0),
      duration.map { .real($0) }, .real(time),
    ])
  }

  /// The places kept, of the files under `root` (every one without it), the latest first.
  public func places(under root: String? = nil) throws(SQLiteError) -> [KeptPlace] {
    let s = try database.prepare(
      "SELECT path, position, played, duration, updated FROM places"
        + (root == nil ? "" : " WHERE path = ?3 OR \(Self.under)") + " ORDER BY updated DESC")
    if let root { try s.bind(Self.underValues(root) + [.text(root)]) }
    var out: [KeptPlace] = []
    while try s.step() { out.append(Self.place(ofRow: s)) }
    return out
  }

  /// Forgets the places of the file `path`, or of every file under the folder `path` (every
  /// one without it); how many were forgotten.
  @discardableResult
  public func clearPlaces(under path: String? = nil) throws(SQLiteError) -> Int {
    let s = try database.prepare(
      "DELETE FROM places" + (path == nil ? "" : " WHERE path = ?3 OR \(Self.under)"))
    if let path { try s.bind(Self.underValues(path) + [.text(path)]) }
    _ = try s.step()
    return Int(try database.scalar("SELECT changes()") ?? "0") ?? 0
  }

  private static func place(ofRow s: Statement) -> KeptPlace {
    KeptPlace(
      path: s.text(0) ?? "", position: s.integer(2) == 1 ? nil : s.real(1) ?? 0,
      duration: s.real(3), updated: s.real(4) ?? 0)
  }

  /// The places kept in the index at `path` (one about to be set aside), as far as they can
  /// be read: they are the user's, and nothing else holds them, so the index built in its
  /// place gets them. Damage that stops the read loses the rest, never the new index.
  static func placesToSalvage(at path: String) -> [KeptPlace] {
    guard let old = try? Database(path: path, create: false),
      let s = try? old.prepare("SELECT path, position, played, duration, updated FROM places")
    else { return [] }
    var found: [KeptPlace] = []
    while (try? s.step()) == true {
      let p = place(ofRow: s)
      if !p.path.isEmpty { found.append(p) }
    }
    return found
  }
}
