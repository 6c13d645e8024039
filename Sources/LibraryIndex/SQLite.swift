import CSQLite
import Platform

/// What SQLite said when something failed, with the statement it was about.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
  public var code: Int32
  public var message: String
  public var description: String { message }
}

/// A thin wrapper over one SQLite connection: open, run statements, prepared statements with
/// bound values. Used from one thread at a time.
final class Database {
  private var handle: OpaquePointer?
  let path: String

  /// Opens (creating when `create`) the database at `path`.
  init(path: String, create: Bool = true) throws(SQLiteError) {
    self.path = path
    if let failure = csq_load() {
      throw SQLiteError(
        code: SQLITE_CANTOPEN, message: "cannot load SQLite: \(String(cString: failure))")
    }
    var h: OpaquePointer?
    let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
    let rc = sqlite3_open_v2(FileName.c(path), &h, flags, nil)
    guard rc == SQLITE_OK, let h else {
      let message = h.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
      sqlite3_close(h)
      throw SQLiteError(code: rc, message: message)
    }
    handle = h
    // A busy database (another hark scanning) waits a little rather than failing at once.
    sqlite3_busy_timeout(h, 5_000)
  }

  deinit { sqlite3_close_v2(handle) }

  /// Runs `sql` (one or more statements, no results).
  func execute(_ sql: String) throws(SQLiteError) {
    var error: UnsafeMutablePointer<CChar>?
    let rc = sqlite3_exec(handle, sql, nil, nil, &error)
    guard rc == SQLITE_OK else {
      let message = error.map { String(cString: $0) } ?? "error \(rc)"
      sqlite3_free(error)
      throw SQLiteError(code: rc, message: message)
    }
  }

  func prepare(_ sql: String) throws(SQLiteError) -> Statement {
    var statement: OpaquePointer?
    let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
    guard rc == SQLITE_OK, let statement else { throw lastError(rc) }
    return Statement(statement, database: self)
  }

  /// The first column of the first row of `sql`, as text.
  func scalar(_ sql: String) throws(SQLiteError) -> String? {
    let s = try prepare(sql)
    guard try s.step() else { return nil }
    return s.text(0)
  }

  func lastError(_ rc: Int32) -> SQLiteError {
    SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)))
  }
}

/// A prepared statement; finalized in `deinit`.
final class Statement {
  private let statement: OpaquePointer
  private let database: Database

  init(_ statement: OpaquePointer, database: Database) {
    self.statement = statement
    self.database = database
  }

  deinit { sqlite3_finalize(statement) }

  /// Binds `values` to ?1, ?2… (nil as NULL), after a reset.
  func bind(_ values: [Value?]) throws(SQLiteError) {
    sqlite3_reset(statement)
    sqlite3_clear_bindings(statement)
    for (i, value) in values.enumerated() {
      let at = Int32(i + 1)
      let rc: Int32
      switch value {
      case nil: rc = sqlite3_bind_null(statement, at)
      case .integer(let n): rc = sqlite3_bind_int64(statement, at, Int64(n))
      case .real(let d): rc = sqlite3_bind_double(statement, at, d)
      case .text(let t): rc = csq_bind_text(statement, at, t, -1)
      case .utf8(let bytes):
        // Empty text, not NULL, for no bytes.
        rc = bytes.withUnsafeBufferPointer { buffer in
          buffer.withMemoryRebound(to: CChar.self) {
            guard let base = $0.baseAddress else { return csq_bind_text(statement, at, "", 0) }
            return csq_bind_text(statement, at, base, Int32($0.count))
          }
        }
      case .blob(let b):
        // A zero-length blob, not NULL, for no bytes.
        rc = b.withUnsafeBytes {
          csq_bind_blob(
            statement, at, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(b.count))
        }
      }
      guard rc == SQLITE_OK else { throw database.lastError(rc) }
    }
  }

  /// The next row: true while there is one.
  func step() throws(SQLiteError) -> Bool {
    let rc = sqlite3_step(statement)
    if rc == SQLITE_ROW { return true }
    if rc == SQLITE_DONE { return false }
    throw database.lastError(rc)
  }

  /// Binds and runs a statement that returns no rows.
  func run(_ values: [Value?]) throws(SQLiteError) {
    try bind(values)
    while try step() {}
  }

  func text(_ column: Int32) -> String? {
    guard sqlite3_column_type(statement, column) != SQLITE_NULL,
      let raw = sqlite3_column_text(statement, column)
    else { return nil }
    return String(cString: raw)
  }

  /// A text column's UTF-8 bytes, without a String made of them: valid only until the next
  /// step. Nil for NULL.
  func bytes(_ column: Int32) -> UnsafeRawBufferPointer? {
    guard sqlite3_column_type(statement, column) != SQLITE_NULL,
      let raw = sqlite3_column_text(statement, column)
    else { return nil }
    // After sqlite3_column_text, as SQLite asks: the length of the text it converted to.
    return UnsafeRawBufferPointer(start: raw, count: Int(sqlite3_column_bytes(statement, column)))
  }

  func integer(_ column: Int32) -> Int? {
    sqlite3_column_type(statement, column) == SQLITE_NULL
      ? nil : Int(sqlite3_column_int64(statement, column))
  }

  func real(_ column: Int32) -> Double? {
    sqlite3_column_type(statement, column) == SQLITE_NULL
      ? nil : sqlite3_column_double(statement, column)
  }

  /// A blob column's bytes; nil for NULL.
  func blob(_ column: Int32) -> [UInt8]? {
    guard sqlite3_column_type(statement, column) != SQLITE_NULL else { return nil }
    let raw = sqlite3_column_blob(statement, column)
    let n = Int(sqlite3_column_bytes(statement, column))
    guard let raw, n > 0 else { return [] }
    return Array(UnsafeRawBufferPointer(start: raw, count: n))
  }

  enum Value {
    case integer(Int)
    case real(Double)
    case text(String)
    /// Text given as its UTF-8 bytes.
    case utf8([UInt8])
    case blob([UInt8])
  }
}
