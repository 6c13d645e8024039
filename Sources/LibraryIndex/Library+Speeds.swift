/// The speed a podcast or a book plays at, as the player keeps it.
public struct KeptSpeed: Equatable, Sendable {
  /// The folder its files are in.
  public var folder: String
  /// 1: as recorded; 1.5: half as fast again, the pitch kept.
  public var rate: Double
  /// When it was chosen: seconds since 1970 (UTC).
  public var updated: Double

  public init(folder: String, rate: Double, updated: Double) {
    self.folder = folder
    self.rate = rate
    self.updated = updated
  }
}

extension Library {
  /// The speed kept for the podcast or book in `folder`; nil when none is.
  public func speed(ofFolder folder: String) throws(SQLiteError) -> Double? {
    let s = try database.prepare("SELECT rate FROM speeds WHERE folder = ?1")
    try s.bind([.text(folder)])
    guard try s.step() else { return nil }
    return s.real(0)
  }

  /// Keeps the speed of the podcast or book in `folder`.
  public func keepSpeed(_ rate: Double, ofFolder folder: String, time: Double) throws(SQLiteError) {
    let s = try database.prepare(
      """
      INSERT INTO speeds (folder, rate, updated) VALUES (?1, ?2, ?3)
      ON CONFLICT (folder) DO UPDATE SET rate = excluded.rate, updated = excluded.updated
      """)
    try s.run([.text(folder), .real(rate), .real(time)])
  }

  /// The speeds kept, the latest first.
  public func speeds() throws(SQLiteError) -> [KeptSpeed] {
    let s = try database.prepare("SELECT folder, rate, updated FROM speeds ORDER BY updated DESC")
    var out: [KeptSpeed] = []
    while try s.step() {
      out.append(KeptSpeed(folder: s.text(0) ?? "", rate: s.real(1) ?? 1, updated: s.real(2) ?? 0))
    }
    return out
  }

  /// The speeds kept in the index at `path` (one about to be set aside), as far as they can be
  /// read: the user chose them, and nothing else holds them.
  static func speedsToSalvage(at path: String) -> [KeptSpeed] {
    guard let old = try? Database(path: path, create: false),
      let s = try? old.prepare("SELECT folder, rate, updated FROM speeds")
    else { return [] }
    var found: [KeptSpeed] = []
    while (try? s.step()) == true {
      if let folder = s.text(0), let rate = s.real(1), rate.isFinite, rate > 0 {
        found.append(KeptSpeed(folder: folder, rate: rate, updated: s.real(2) ?? 0))
      }
    }
    return found
  }
}
