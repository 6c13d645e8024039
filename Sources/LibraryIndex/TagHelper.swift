import Glibc
import Platform

/// What hark-tags said about one file.
struct TagRecord: Equatable {
  /// Tags by the helper's keys (title, artist, albumartist, album, track, disc, year, genre,
  /// seconds, trackgain, albumgain, cover).
  var fields: [String: String] = [:]
  /// Why it could not be read, when it could not.
  var problem: String?
  /// Every line after the first, split at its first tab, in order (a key may come again, as
  /// the lyrics' do).
  var lines: [(key: String, value: String)] = []

  static func == (a: TagRecord, b: TagRecord) -> Bool {
    a.fields == b.fields && a.problem == b.problem
      && a.lines.map(\.key) == b.lines.map(\.key) && a.lines.map(\.value) == b.lines.map(\.value)
  }
}

/// The hark-tags helper (Sources/hark-tags/main.swift): TagLib in a process of its own. One
/// runs for a whole scan; a path is written to it and its record read back. When it dies on a
/// file (TagLib crashing on a hostile one), that file gets the reason and a new helper goes
/// on with the rest.
final class TagHelper {
  private let executable: String
  private let arguments: [String]
  private var pid: pid_t = 0
  private var input: Int32 = -1
  private var output: Int32 = -1
  private var buffer: [UInt8] = []

  /// `arguments`: the helper's mode (`--lyrics`); none for tags.
  init(executable: String, arguments: [String] = []) {
    self.executable = executable
    self.arguments = arguments
  }

  deinit { stop() }

  /// hark-tags as the player would run it: $HARK_TAGS_HELPER, else next to the running
  /// executable (or the test bundle), else on PATH.
  static func installed() -> String? {
    installedHelper("hark-tags", variable: "HARK_TAGS_HELPER")
  }

  /// The record for `path`.
  func read(_ path: String) -> TagRecord { read(fields: [path]) }

  /// The record for a request of several fields (`--write-gains` takes five).
  func read(fields: [String]) -> TagRecord {
    for attempt in 0..<2 {
      if pid == 0 && !start() {
        return TagRecord(problem: "the tag reader (hark-tags) could not be started")
      }
      if send(fields) == .written, let record = receive() { return record }
      // It died on this file: the next attempt is a fresh helper, and if it dies again the
      // file is the cause.
      stop()
      if attempt == 1 { break }
    }
    return Self.crashed
  }

  /// What a file the helper died on twice gets.
  static let crashed = TagRecord(problem: "the tag reader crashed on it")

  /// What a file gets when no helper can be started.
  static let notStarted = TagRecord(problem: "the tag reader (hark-tags) could not be started")

  /// Writes a request (its fields, each ended by a NUL byte) without waiting for its record,
  /// starting a helper first when none runs: `notStarted` when none could be, `gone` when the
  /// one running has ended (what it answered before is still to be received, then its end).
  /// Its record comes from `receive`, after those of the requests sent before it.
  func send(_ fields: [String]) -> TagReadAhead.Sent {
    if pid == 0 && !start() { return .notStarted }
    var bytes: [UInt8] = []
    for field in fields {
      bytes += FileName.bytes(field)
      bytes.append(0)
    }
    return (try? writeAll(input, bytes)) != nil ? .written : .gone
  }

  /// The record of the oldest request sent and not yet answered; nil when the helper died
  /// before it had written it all (or none runs).
  func receive() -> TagRecord? {
    guard pid != 0 else { return nil }
    // Until the empty line that ends the record.
    while true {
      if let end = recordEnd() {
        let record = Self.parse(buffer[head..<end])
        head = end + 2
        searched = head
        // The records read are dropped once they are most of the buffer, not one by one.
        if head > 4096 && head * 2 > buffer.count {
          buffer.removeFirst(head)
          head = 0
          searched = 0
        }
        return record
      }
      searched = max(head, buffer.count - 1)
      var chunk = [UInt8](repeating: 0, count: 16_384)
      let n = chunk.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return nil }
      buffer += chunk[..<n]
    }
  }

  /// Where the next record starts in the buffer (those before it have been received).
  private var head = 0
  /// How much of the buffer is known to hold no record's end: a record that comes in several
  /// reads is not searched from its start again at each.
  private var searched = 0

  /// Where "\n\n" starts in the buffer.
  private func recordEnd() -> Int? {
    guard buffer.count >= 2 else { return nil }
    var i = searched
    while i + 1 < buffer.count {
      if buffer[i] == 0x0A && buffer[i + 1] == 0x0A { return i }
      i += 1
    }
    return nil
  }

  /// A record's lines (its bytes, without the empty line that ends it): the first "ok" or
  /// "error<TAB>reason", then "key<TAB>value" lines.
  static func parse(_ bytes: ArraySlice<UInt8>) -> TagRecord {
    var record = TagRecord()
    var first = true
    for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
      let tab = line.firstIndex(of: 0x09)
      let key = String(decoding: line[..<(tab ?? line.endIndex)], as: UTF8.self)
      if first {
        first = false
        if key == "error" {
          record.problem =
            tab.map { String(decoding: line[($0 + 1)...], as: UTF8.self) } ?? "cannot read its tags"
        }
        continue
      }
      guard let tab else { continue }
      let value = String(decoding: line[(tab + 1)...], as: UTF8.self)
      record.fields[key] = value
      record.lines.append((key, value))
    }
    return record
  }

  /// Starts a helper, its stdin and stdout pipes of ours (`makePipe`: close-on-exec from the
  /// start, so that no child another thread spawns meanwhile holds the helper's stdout open),
  /// its stderr /dev/null.
  private func start() -> Bool {
    guard let toChild = try? makePipe() else { return false }
    guard let fromChild = try? makePipe() else {
      close(toChild.read)
      close(toChild.write)
      return false
    }
    let child = try? spawn(
      executable, arguments,
      descriptors: [0: .parent(toChild.read), 1: .parent(fromChild.write)])
    close(toChild.read)
    close(fromChild.write)
    guard let child else {
      close(toChild.write)
      close(fromChild.read)
      return false
    }
    pid = child
    input = toChild.write
    output = fromChild.read
    buffer = []
    head = 0
    searched = 0
    return true
  }

  /// Closes its stdin (it ends), and reaps it; killed if it lingers. What was sent and not
  /// received is dropped.
  func stop() {
    guard pid != 0 else { return }
    close(input)
    close(output)
    _ = waitForChild(pid, killingAfter: .seconds(1))
    pid = 0
    input = -1
    output = -1
  }
}

/// Several hark-tags helpers reading ahead of a scan, one a processor: the paths are handed out
/// in turn, each helper a few ahead of the record the scan waits for, so that the helpers read
/// files (on every core) while the scan writes the index, and no file waits for a round trip
/// through a pipe. The records come back in the paths' order.
///
/// What is written where, what is awaited, and what a helper that dies (TagLib crashing on a
/// hostile file) or cannot be started costs are `TagReadAhead`'s decisions; this carries them
/// out.
final class TagReaders {
  private let helpers: [TagHelper]

  /// How many paths each helper is sent ahead of the record awaited.
  static let depth = 16
  /// How many bytes of paths a helper is sent ahead at most: far less than a pipe holds
  /// (64 KiB), so that writing a path never waits on a helper that is itself waiting for its
  /// records to be read.
  static let bytesAhead = 16_384

  /// `count` helpers (at least one) of `executable`, started when first sent a path.
  init(executable: String, count: Int) {
    helpers = (0..<max(1, count)).map { _ in TagHelper(executable: executable) }
  }

  deinit { stop() }

  /// Reads every path of `paths`, giving `body` each one's index and record (or the reason it
  /// has none), once each, in order.
  func read<E: Error>(_ paths: [String], _ body: (Int, TagRecord) throws(E) -> Void) throws(E) {
    var plan = TagReadAhead(
      sizes: paths.map { $0.utf8.count + 1 }, helpers: helpers.count, depth: Self.depth,
      bytesAhead: Self.bytesAhead)
    while let step = plan.next() {
      switch step {
      case .send(let path, let h):
        plan.sent(to: h, helpers[h].send([paths[path]]))
      case .receive(let path, let h):
        guard let record = helpers[h].receive() else {
          helpers[h].stop()
          plan.ended(h)
          continue
        }
        plan.answered(by: h)
        try body(path, record)
      case .stop(let h):
        helpers[h].stop()
        plan.ended(h)
      case .fail(let path, .crashed):
        try body(path, TagHelper.crashed)
      case .fail(let path, .notStarted):
        try body(path, TagHelper.notStarted)
      }
    }
  }

  /// Stops every helper.
  func stop() {
    for helper in helpers { helper.stop() }
  }
}
