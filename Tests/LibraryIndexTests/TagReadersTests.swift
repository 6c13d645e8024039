import Glibc
import Platform
import Testing

@testable import LibraryIndex

/// `TagReaders` with real helper processes (fake hark-tags in bash): every path gets its own
/// record or a per-file error exactly once, in order, and nothing waits for a record no helper
/// will write. A read that does not end in time fails the test, and its helpers are killed so
/// that it ends: no test here can hang the suite.
@Suite(.timeLimit(.minutes(1))) final class TagReadersTests {
  let folder: String = {
    var template = Array("/tmp/hark-tag-readers-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()
  var pids: String { folder + "/pids" }

  init() {
    // As a scan does: a write to a helper that has died is an error, not the end of the tests.
    signal(SIGPIPE, SIG_IGN)
  }

  deinit { _ = system("rm -rf '\(folder)'") }

  /// A fake hark-tags at `path`: it writes its pid to `pids`, then answers each path with its
  /// file name as the title, and dies (SIGSEGV) on one whose name holds "crash".
  func writeHelper(_ path: String) {
    writeScript(
      path,
      """
      #!/bin/bash
      echo $$ >> '\(pids)'
      while IFS= read -r -d '' p; do
        case "$p" in *crash*) kill -SEGV $$ ;; esac
        printf 'ok\\ntitle\\t%s\\n\\n' "${p##*/}"
      done
      """)
  }

  /// What `read` gave each path, and whether it ended in time.
  struct Outcome {
    var delivered: [(index: Int, record: TagRecord)] = []
    var inTime = true
  }

  /// Runs `readers.read(paths)` on a thread of its own, calling `delivered` there after each
  /// record. Not done within `limit`: the helpers whose pids are in `pids` are killed (each
  /// kill an end of file for whoever waits on it) until it is, and the outcome says so.
  func read(
    _ readers: TagReaders, _ paths: [String], within limit: Duration = .seconds(20),
    delivered: @escaping @Sendable (Int) -> Void = { _ in }
  ) -> Outcome {
    let box = Shared(readers: readers)
    startThread(named: "tag-readers") {
      var outcome: [(Int, TagRecord)] = []
      box.readers.read(paths) { i, record in
        outcome.append((i, record))
        delivered(i)
      }
      box.state.withLock { $0 = outcome }
    }
    var result = Outcome()
    let deadline = monotonicNanoseconds() + nanoseconds(limit)
    while true {
      if let done = box.state.withLock({ $0 }) {
        result.delivered = done.map { (index: $0.0, record: $0.1) }
        return result
      }
      if monotonicNanoseconds() > deadline {
        result.inTime = false
        for line in (contents(pids) ?? "").split(separator: "\n") {
          if let pid = pid_t(line) { kill(pid, SIGKILL) }
        }
      }
      usleep(20_000)
    }
  }

  /// A helper that cannot be started for some paths (here it is not there yet, as when its
  /// executable is busy being written, ETXTBSY) costs only those paths: the helper started for
  /// a later one is never waited on for the record of one it was not sent. (It was: a scan hung
  /// in read(2) on a helper waiting for its next path.)
  @Test(arguments: [1, 2, 3])
  func aHelperThatCannotBeStartedCostsOnlyThePathsItWasNotStartedFor(helpers: Int) throws {
    let executable = folder + "/late-tags"
    writeHelper(folder + "/late-tags.ready")
    let paths = (0..<(TagReaders.depth * helpers + 8)).map { "\(folder)/music/p\($0).flac" }
    let readers = TagReaders(executable: executable, count: helpers)
    defer { readers.stop() }
    let ready = folder + "/late-tags.ready"
    let outcome = read(readers, paths) { i in
      // The helper appears once the first path has its record.
      if i == 0 { rename(ready, executable) }
    }
    #expect(outcome.inTime, "a helper was waited on for a record it would never write")
    #expect(outcome.delivered.map(\.index) == Array(paths.indices))
    for (i, record) in outcome.delivered {
      let own = "p\(i).flac"
      #expect(
        record == TagHelper.notStarted || record.fields["title"] == own,
        "\(own) got \(record.fields["title"] ?? record.problem ?? "nothing")")
    }
    #expect(outcome.delivered.last?.record.fields["title"] == "p\(paths.count - 1).flac")
  }

  /// Helpers reading ahead, one of them dying on a path: that path alone is lost, every other
  /// gets its own record, and the helpers of the read hold no end of one another's pipes (a
  /// helper holding another's stdout would keep its reader from ever seeing it end).
  @Test(arguments: [1, 2, 3])
  func aHelperDyingWhileOthersReadCostsOnlyItsPath(helpers: Int) throws {
    let executable = folder + "/fake-tags"
    writeHelper(executable)
    var names = (0..<40).map { "f\($0).flac" }
    names[5] = "crash-5.flac"
    names[22] = "crash-22.flac"
    let paths = names.map { "\(folder)/music/\($0)" }
    let readers = TagReaders(executable: executable, count: helpers)
    defer { readers.stop() }
    let pidsFile = pids
    let held = Locked<(examined: Int, wrong: [String])>((0, []))
    let outcome = read(readers, paths) { i in
      guard i == 30 else { return }
      held.withLock { $0 = pipesHeldByOtherHelpers(listedIn: pidsFile) }
    }
    #expect(outcome.inTime)
    #expect(outcome.delivered.map(\.index) == Array(paths.indices))
    for (i, record) in outcome.delivered {
      if names[i].hasPrefix("crash") {
        #expect(record == TagHelper.crashed, "\(names[i])")
      } else {
        #expect(record.fields["title"] == names[i], "\(names[i]) got \(record)")
      }
    }
    let (examined, wrong) = held.withLock { $0 }
    #expect(examined == helpers, "helpers running")
    #expect(wrong.isEmpty, "\(wrong)")
  }

  /// The check above sees what it looks for: a helper holding a pipe beyond its stdin and
  /// stdout, and this process holding the write end of a helper's stdout.
  @Test func thePipeCheckSeesAHelperHoldingAnotherPipeAndAWriteEndKept() throws {
    let input = try makePipe()
    let output = try makePipe()
    let other = try makePipe()
    let cat = try spawn(
      "cat", [],
      descriptors: [0: .parent(input.read), 1: .parent(output.write), 3: .parent(other.write)])
    close(input.read)
    writeFile(pids, "\(cat)\n")
    let wrong = pipesHeldByOtherHelpers(listedIn: pids).wrong
    close(input.write)
    _ = waitForChild(cat, killingAfter: .seconds(5))
    for fd in [output.read, output.write, other.read, other.write] { close(fd) }
    #expect(wrong.count == 2, "\(wrong)")
    #expect(wrong.contains { $0.contains("descriptor 3") }, "\(wrong)")
    #expect(wrong.contains { $0.contains("write end") }, "\(wrong)")
  }
}

/// A `TagReaders` handed to the thread that reads with it, and what that thread read.
private final class Shared: @unchecked Sendable {
  let readers: TagReaders
  let state = Locked<[(Int, TagRecord)]?>(nil)
  init(readers: TagReaders) { self.readers = readers }
}

/// The file at `path`, whole.
private func contents(_ path: String) -> String? {
  let fd = open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { return nil }
  defer { close(fd) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 4096)
  while true {
    let n = read(fd, &chunk, chunk.count)
    if n <= 0 { break }
    bytes += chunk[..<n]
  }
  return String(decoding: bytes, as: UTF8.self)
}

/// The pipes (as /proc shows them, "pipe:[INODE]") a process holds, by its descriptor.
private func pipes(of pid: pid_t) -> [Int32: String] {
  var held: [Int32: String] = [:]
  guard let dir = opendir("/proc/\(pid)/fd") else { return held }
  defer { closedir(dir) }
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) {
      String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
    }
    guard let fd = Int32(name) else { continue }
    var target = [CChar](repeating: 0, count: 256)
    let n = readlink("/proc/\(pid)/fd/\(name)", &target, target.count - 1)
    guard n > 0 else { continue }
    let link = String(decoding: target[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if link.hasPrefix("pipe:") { held[fd] = link }
  }
  return held
}

/// What is wrong with the pipes of the live helpers whose pids `file` lists: a helper holding a
/// pipe other than its own stdin and stdout, or this process holding the write end of a
/// helper's stdout (either keeps a reader of that stdout from seeing the helper end).
/// Also how many live helpers it looked at.
private func pipesHeldByOtherHelpers(listedIn file: String) -> (examined: Int, wrong: [String]) {
  var wrong: [String] = []
  let live = (contents(file) ?? "").split(separator: "\n").compactMap { pid_t($0) }
    .filter { kill($0, 0) == 0 }
  var stdouts: Set<String> = []
  var examined = 0
  for pid in live {
    let held = pipes(of: pid)
    // A helper reaped and not yet gone from /proc, or a zombie, holds nothing.
    guard !held.isEmpty else { continue }
    examined += 1
    if let out = held[1] { stdouts.insert(out) }
    for (fd, pipe) in held where fd > 1 {
      wrong.append("helper \(pid) holds \(pipe) as its descriptor \(fd)")
    }
  }
  for (fd, pipe) in pipes(of: getpid()) where stdouts.contains(pipe) {
    // /proc/self/fdinfo/N: "flags:\t0NNNNNN", in octal; O_ACCMODE 3, O_WRONLY 1.
    let info = contents("/proc/self/fdinfo/\(fd)") ?? ""
    let flags = info.split(separator: "\n").first { $0.hasPrefix("flags:") }
      .flatMap { $0.split(whereSeparator: { $0 == "\t" || $0 == " " }).last }
      .flatMap { Int($0, radix: 8) }
    if let flags, flags & 3 != O_RDONLY {
      wrong.append("this process holds the write end of a helper's stdout, \(pipe)")
    }
  }
  return (examined, wrong)
}
