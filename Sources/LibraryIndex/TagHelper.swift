import Glibc
import Platform

/// What hark-tags said about one file.
struct TagRecord: Equatable {
  /// Tags by the helper's keys (title, artist, albumartist, album, track, disc, year, genre,
  /// seconds, trackgain, albumgain, cover).
  var fields: [String: String] = [:]
  /// Why it could not be read, when it could not.
  var problem: String?
}

/// The hark-tags helper (Sources/hark-tags/main.swift): TagLib in a process of its own. One
/// runs for a whole scan; a path is written to it and its record read back. When it dies on a
/// file (TagLib crashing on a hostile one), that file gets the reason and a new helper goes
/// on with the rest.
final class TagHelper {
  private let executable: String
  private var pid: pid_t = 0
  private var input: Int32 = -1
  private var output: Int32 = -1
  private var buffer: [UInt8] = []

  init(executable: String) { self.executable = executable }

  deinit { stop() }

  /// hark-tags as the player would run it: $HARK_TAGS_HELPER, else next to the running
  /// executable (or the test bundle), else on PATH.
  static func installed() -> String? {
    installedHelper("hark-tags", variable: "HARK_TAGS_HELPER")
  }

  /// The record for `path`.
  func read(_ path: String) -> TagRecord {
    for attempt in 0..<2 {
      if pid == 0 && !start() {
        return TagRecord(problem: "the tag reader (hark-tags) could not be started")
      }
      if let record = ask(path) { return record }
      // It died on this file: the next attempt is a fresh helper, and if it dies again the
      // file is the cause.
      stop()
      if attempt == 1 { break }
    }
    return TagRecord(problem: "the tag reader crashed on it")
  }

  private func ask(_ path: String) -> TagRecord? {
    var bytes = FileName.bytes(path)
    bytes.append(0)
    guard writeAll(bytes) else { return nil }
    // Until the empty line that ends the record.
    while true {
      if let end = recordEnd() {
        let text = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 2)
        return parse(text)
      }
      var chunk = [UInt8](repeating: 0, count: 16_384)
      let n = chunk.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return nil }
      buffer += chunk[..<n]
    }
  }

  /// Where "\n\n" starts in the buffer.
  private func recordEnd() -> Int? {
    guard buffer.count >= 2 else { return nil }
    var i = 0
    while i + 1 < buffer.count {
      if buffer[i] == 0x0A && buffer[i + 1] == 0x0A { return i }
      i += 1
    }
    return nil
  }

  private func parse(_ text: String) -> TagRecord {
    var record = TagRecord()
    for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
      let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
      if i == 0 {
        if parts[0] == "error" {
          record.problem = parts.count > 1 ? String(parts[1]) : "cannot read its tags"
        }
        continue
      }
      if parts.count == 2 { record.fields[String(parts[0])] = String(parts[1]) }
    }
    return record
  }

  private func writeAll(_ bytes: [UInt8]) -> Bool {
    var at = 0
    while at < bytes.count {
      let n = bytes.withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Glibc.write(input, base + at, bytes.count - at)
      }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return false }
      at += n
    }
    return true
  }

  private func start() -> Bool {
    var toChild: (Int32, Int32) = (-1, -1)
    var fromChild: (Int32, Int32) = (-1, -1)
    func makePipe(_ fds: inout (Int32, Int32)) -> Bool {
      withUnsafeMutablePointer(to: &fds) {
        $0.withMemoryRebound(to: Int32.self, capacity: 2) { pipe($0) }
      } == 0
    }
    guard makePipe(&toChild) else { return false }
    guard makePipe(&fromChild) else {
      close(toChild.0)
      close(toChild.1)
      return false
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, toChild.0, 0)
    posix_spawn_file_actions_adddup2(&actions, fromChild.1, 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    for fd in [toChild.0, toChild.1, fromChild.0, fromChild.1] {
      posix_spawn_file_actions_addclose(&actions, fd)
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for s in [SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, s) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup(FileName.c(executable)), nil]
    defer { for p in argv { free(p) } }
    var child: pid_t = 0
    let rc = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
    close(toChild.0)
    close(fromChild.1)
    guard rc == 0 else {
      close(toChild.1)
      close(fromChild.0)
      return false
    }
    // Ours, and no other child's: close on exec.
    _ = fcntl(toChild.1, F_SETFD, FD_CLOEXEC)
    _ = fcntl(fromChild.0, F_SETFD, FD_CLOEXEC)
    pid = child
    input = toChild.1
    output = fromChild.0
    buffer = []
    return true
  }

  /// Closes its stdin (it ends), and reaps it; killed if it lingers.
  func stop() {
    guard pid != 0 else { return }
    close(input)
    close(output)
    var status: Int32 = 0
    var waited = 0
    while waitpid(pid, &status, WNOHANG) == 0 {
      if waited == 200 { kill(pid, SIGKILL) }
      usleep(5_000)
      waited += 1
    }
    pid = 0
    input = -1
    output = -1
  }
}
