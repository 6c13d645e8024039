import FoundationEssentials
import Glibc
import Platform

/// A listen waiting to be sent, and to which services.
public struct QueuedListen: Hashable, Sendable, Codable {
  /// In the order listens were made: sent in that order.
  public var id: Int
  public var listen: Listen
  /// The services it has not reached yet.
  public var services: [Service]
}

/// The listens not yet sent, on disk (`$XDG_STATE_HOME/hark/listens-queue.json`), so that
/// listens made offline, or while a service fails, are sent later, in order, and none is lost
/// to a crash: every change is a whole new file written beside it, synced and renamed over it
/// (`replaceFile`), under a lock (`flock` on `listens-queue.lock`) that every hark
/// process takes for its read-change-write, and the sender for as long as it sends, so that two
/// players never send the same listen. A listen leaves the queue for a service once that
/// service took it (or refused it for good); a crash between its answer and that write, a few
/// milliseconds, would send it once more, which both services take as the same listen (same
/// track, same time) and do not count twice.
public final class ListenQueue: @unchecked Sendable {
  public let path: String
  private let lockPath: String

  public init(path: String) {
    self.path = path
    lockPath = (path.hasSuffix(".json") ? String(path.dropLast(5)) : path) + ".lock"
  }

  /// The queue in `$XDG_STATE_HOME/hark`; nil without a home.
  public static func standard() -> ListenQueue? {
    XDGDirectory.state.path.map { ListenQueue(path: $0 + "/hark/listens-queue.json") }
  }

  struct File: Codable {
    var version = 1
    var next = 1
    var listens: [QueuedListen] = []
  }

  /// Runs `body` holding the queue's lock: other processes wait for it.
  public func withLock<T>(_ body: () throws -> T) rethrows -> T {
    let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    makeDirectories(folder)
    let fd = open(FileName.c(lockPath), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    if fd >= 0 { _ = retryingEINTR { flock(fd, LOCK_EX) } }
    defer {
      if fd >= 0 {
        flock(fd, LOCK_UN)
        close(fd)
      }
    }
    return try body()
  }

  /// Why the queue file could not be read, when it could not (it is then set aside as
  /// `listens-queue.json.damaged-TIME` and a new one begun: said, never silently dropped).
  public private(set) var problem: String?

  private func load() -> File {
    switch readWholeFile(path, limit: 64 << 20) {
    case .missing: return File()
    case .bytes(let b):
      if let f = try? JSONDecoder().decode(File.self, from: Data(b)) { return f }
      let aside = path + ".damaged-\(time(nil))"
      rename(FileName.c(path), FileName.c(aside))
      problem = "the queue of listens '\(path)' could not be read; it was set aside as '\(aside)'"
      return File()
    case .tooLarge:
      problem = "the queue of listens '\(path)' is larger than 64 MiB; it was left as it is"
      return File()
    case .failed(let e):
      problem = "the queue of listens cannot be read: \(e)"
      return File()
    }
  }

  private func save(_ f: File) throws(SystemError) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let data = try? encoder.encode(f) else { return }
    try replaceFile(path, with: [UInt8](data) + [0x0A])
  }

  /// Adds `listen` for `services`, after every listen there.
  public func add(_ listen: Listen, for services: [Service]) throws(SystemError) {
    guard !services.isEmpty else { return }
    var failure: SystemError?
    withLock {
      var f = load()
      f.listens.append(QueuedListen(id: f.next, listen: listen, services: services))
      f.next += 1
      do throws(SystemError) { try save(f) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// The oldest listens not yet sent to `service`, at most `limit`, in order.
  public func pending(for service: Service, limit: Int = .max) -> [QueuedListen] {
    withLock { Array(load().listens.filter { $0.services.contains(service) }.prefix(limit)) }
  }

  /// How many listens wait for each service.
  public func counts() -> [Service: Int] {
    withLock {
      var out: [Service: Int] = [:]
      for l in load().listens { for s in l.services { out[s, default: 0] += 1 } }
      return out
    }
  }

  /// The listens `ids` reached `service` (or it refused them for good): no longer waiting for
  /// it; a listen no service waits for leaves the file. Call it holding the lock
  /// (`withLock`) across the send, as `Sender` does, or alone.
  public func done(_ ids: Set<Int>, for service: Service) throws(SystemError) {
    var f = load()
    for i in f.listens.indices where ids.contains(f.listens[i].id) {
      f.listens[i].services.removeAll { $0 == service }
    }
    f.listens.removeAll { $0.services.isEmpty }
    try save(f)
  }

  /// The same, unlocked: for a caller that holds the lock already.
  func pendingHoldingLock(for service: Service, limit: Int) -> [QueuedListen] {
    Array(load().listens.filter { $0.services.contains(service) }.prefix(limit))
  }
}

/// Every listen counted, one JSON object a line (`$XDG_STATE_HOME/hark/listens.log`), appended
/// and synced as it is counted: the record the library's play counts are made from again when
/// the index is rebuilt (the index is a cache), and a history the user owns. A line torn by a
/// crash is skipped when read.
public struct ListenLog: Sendable {
  public let path: String
  public init(path: String) { self.path = path }

  public static func standard() -> ListenLog? {
    XDGDirectory.state.path.map { ListenLog(path: $0 + "/hark/listens.log") }
  }

  public func append(_ listen: Listen) throws(SystemError) {
    let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    makeDirectories(folder)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let data = try? encoder.encode(listen) else { return }
    var line = [UInt8](data) + [0x0A]
    let fd = open(FileName.c(path), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw .last("opening '\(path)'") }
    defer { close(fd) }
    // A line a crash tore ends here, so that this one is whole.
    var st = stat()
    if fstat(fd, &st) == 0, st.st_size > 0 {
      var last: UInt8 = 0
      if pread(fd, &last, 1, st.st_size - 1) == 1, last != 0x0A { line.insert(0x0A, at: 0) }
    }
    let n = line.withUnsafeBytes { raw in retryingEINTR { write(fd, raw.baseAddress, raw.count) } }
    guard n == line.count else { throw .last("writing '\(path)'") }
    guard fsync(fd) == 0 else { throw .last("writing '\(path)'") }
  }

  /// The whole listens from byte `offset` on, and where the last whole line ends (a line a
  /// crash is writing is left for later; a torn one is skipped). Nil when the log is shorter
  /// than `offset`: not the log that was read before.
  public func listens(from offset: Int) -> (listens: [Listen], end: Int)? {
    let fd = open(FileName.c(path), O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return offset == 0 ? ([], 0) : nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0 else { return nil }
    let size = Int(st.st_size)
    guard size >= offset else { return nil }
    var bytes = [UInt8](repeating: 0, count: size - offset)
    var got = 0
    while got < bytes.count {
      let n = bytes.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return retryingEINTR { pread(fd, base + got, raw.count - got, off_t(offset + got)) }
      }
      if n <= 0 { break }
      got += n
    }
    guard let lastNewline = bytes[..<got].lastIndex(of: 0x0A) else { return ([], offset) }
    let decoder = JSONDecoder()
    let listens = bytes[...lastNewline].split(separator: 0x0A).compactMap {
      try? decoder.decode(Listen.self, from: Data($0))
    }
    return (listens, offset + lastNewline + 1)
  }

  /// Every listen the log holds, in the order counted.
  public func all() -> [Listen] {
    guard case .bytes(let bytes) = readWholeFile(path, limit: 1 << 30) else { return [] }
    let decoder = JSONDecoder()
    return bytes.split(separator: 0x0A).compactMap {
      try? decoder.decode(Listen.self, from: Data($0))
    }
  }
}
