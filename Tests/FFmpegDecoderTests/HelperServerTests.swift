import AudioCore
import Glibc
import Testing

@testable import FFmpegDecoder

/// The installed hark-ffmpeg's runs are done by its server's workers (`hark-ffmpeg --serve`): one
/// server a process, its workers reused from track to track; a worker that fails a file goes on,
/// one dropped or killed is replaced, a server that dies is replaced; a stand-in helper named by
/// the caller is spawned as before. (So a track of AAC or ALAC pays neither for loading FFmpeg,
/// about 30 ms, nor for a fork, 5–7 ms of CPU.)
@Suite(.timeLimit(.minutes(2))) final class HelperServerTests {
  let files = TestFiles()

  /// A copy of the installed hark-ffmpeg, served: a server of this test's own (the suites
  /// run side by side, and share the installed helper's).
  func ownHelper() throws -> String {
    let installed = try #require(FFmpegFile.installedHelper())
    let copy = files.folder + "/hark-ffmpeg"
    try #require(system("cp '\(installed)' '\(copy)'") == 0)
    return copy
  }

  @Test func tracksAndSeeksAreDoneByOneServersWorkers() throws {
    // Longer than the 1 MiB pipe holds (3 s of float frames nearly fit): a's worker is still
    // writing when b is asked for, so b cannot be given a's worker.
    let first = try files.tone("first.m4a", ["-c:a", "aac"], seconds: 10)
    let second = try files.tone("second.m4a", ["-c:a", "alac"], seconds: 3)
    let helper = try ownHelper()
    let a = try served(first, helper)
    let b = try served(second, helper)
    let server = try #require(parent(of: a.helperProcessID))
    #expect(server != getpid())
    #expect(b.helperProcessID != a.helperProcessID)
    #expect(parent(of: b.helperProcessID) == server)
    #expect(commandLine(of: server) == helper + "\0--serve\0")
    #expect(parent(of: server) == getpid())
    try a.seek(toFrame: 44_100)
    #expect(parent(of: a.helperProcessID) == server)
    // Workers decode as spawned helpers do: all of the file, then a clean end.
    let (samples, error) = readAll(b)
    #expect(error == nil)
    #expect(samples.count == 3 * 44_100 * 2)
    let (rest, restError) = readAll(a)
    #expect(restError == nil)
    #expect(rest.count == 9 * 44_100 * 2)
    // Done, b's worker takes the next file: no new process.
    let workerOfB = b.helperProcessID
    let c = try served(first, helper)
    #expect([workerOfB, a.helperProcessID].contains(c.helperProcessID))
    #expect(readAll(c).samples.count == 10 * 44_100 * 2)
  }

  /// A file a worker cannot read fails with its reason, and the worker goes on to the next.
  @Test func aWorkerSaysWhyAFileFailsAndGoesOn() throws {
    let good = try files.tone("good.m4a", ["-c:a", "aac"], seconds: 1)
    let bad = files.folder + "/bad.m4a"
    // Words, not random bytes: now and then FFmpeg found some format in 20 kB of random bytes
    // (a stream with no audio in it), and the reason was another.
    #expect(system("yes 'this is not audio, just words' | head -c 20000 > '\(bad)'") == 0)
    let helper = try ownHelper()
    let first = try served(good, helper)
    #expect(readAll(first).error == nil)
    let worker = first.helperProcessID
    let error = #expect(throws: DecodeError.self) { _ = try self.served(bad, helper) }
    #expect(error?.reason == "not an audio file FFmpeg can read")
    #expect(error?.kind == .unknownFormat, "the kind crosses the helper's pipe")
    let again = try served(good, helper)
    #expect(again.helperProcessID == worker)
    #expect(readAll(again).error == nil)
  }

  /// A run dropped midway (the player moved on) ends its worker through its lifeline, and a
  /// worker killed while idle is replaced: the next files play either way.
  @Test func droppedRunsAndKilledIdleWorkersDoNotStopTheNextFile() throws {
    let long = try files.tone("long.m4a", ["-c:a", "alac"], seconds: 30)
    let short = try files.tone("short.m4a", ["-c:a", "aac"], seconds: 1)
    let helper = try ownHelper()
    var dropped: FFmpegFile? = try served(long, helper)
    #expect(readAll(dropped!, reads: 2).error == nil)
    let droppedWorker = dropped!.helperProcessID
    dropped = nil
    #expect(kill(droppedWorker, 0) != 0 && errno == ESRCH)
    let next = try served(short, helper)
    #expect(readAll(next).error == nil)
    let idle = next.helperProcessID
    #expect(kill(idle, SIGKILL) == 0)
    let after = try served(short, helper)
    #expect(after.helperProcessID != idle)
    #expect(readAll(after).samples.count == 44_100 * 2)
  }

  private func served(_ path: String, _ helper: String) throws(DecodeError) -> FFmpegFile {
    try FFmpegFile(path: path, helper: helper, served: true, answerTimeout: .seconds(10))
  }

  /// The installed helper's (shared with the other suites; not killed here). A helper killed
  /// midway is reaped by the server, which reports how it ended: the read says
  /// which signal, and nothing of it is left (no zombie of the server's either).
  @Test func aForkedHelperKilledMidwaySaysWhichSignalAndIsGone() throws {
    let path = try files.tone("long.m4a", ["-c:a", "alac"], seconds: 60)
    let file = try FFmpegFile(path: path)
    #expect(readAll(file, reads: 2).error == nil)
    let pid = file.helperProcessID
    #expect(parent(of: pid) != getpid())
    #expect(kill(pid, SIGKILL) == 0)
    #expect(readAll(file).error?.reason == "FFmpeg crashed on it (signal 9)")
    #expect(kill(pid, 0) != 0 && errno == ESRCH)
  }

  /// The server killed (with a helper of it still running): that helper finishes its track;
  /// the next file starts a new server.
  @Test func aServerThatDiesIsReplaced() throws {
    let first = try files.tone("before.m4a", ["-c:a", "aac"], seconds: 2)
    let second = try files.tone("after.m4a", ["-c:a", "aac"], seconds: 2)
    let helper = try ownHelper()
    let a = try served(first, helper)
    let server = try #require(parent(of: a.helperProcessID))
    #expect(server != getpid())
    #expect(kill(server, SIGKILL) == 0)
    let started = now()
    let (samples, _) = readAll(a)
    #expect(samples.count == 2 * 44_100 * 2)
    #expect(now() - started < 5)
    let b = try served(second, helper)
    let replacement = try #require(parent(of: b.helperProcessID))
    #expect(replacement != server && replacement != getpid())
    #expect(readAll(b).error == nil)
  }

  /// Started ahead (a player whose first file needs FFmpeg), the server is there before any
  /// file is opened, and the first file is done by it.
  @Test func aServerStartedAheadDoesTheFirstFile() throws {
    let path = try files.tone("ahead.m4a", ["-c:a", "aac"], seconds: 1)
    let helper = try ownHelper()
    HelperServer.prestart(helper)
    let started = now()
    var server: pid_t?
    while server == nil && now() - started < 10 {
      server = children(of: getpid()).first { commandLine(of: $0) == helper + "\0--serve\0" }
      if server == nil { usleep(10_000) }
    }
    let ahead = try #require(server, "no server started ahead")
    let file = try served(path, helper)
    #expect(parent(of: file.helperProcessID) == ahead)
    #expect(readAll(file).error == nil)
  }

  /// A helper named by the caller (a stand-in) is this process's own child, as before.
  @Test func aNamedHelperIsSpawnedDirectly() throws {
    let path = try files.tone("named.m4a", ["-c:a", "aac"], seconds: 1)
    let helper = files.script(
      "stopper", "printf 'hark-ffmpeg 1\\nrate 8000\\nchannels 1\\n\\n'; exec sleep 60")
    let file = try FFmpegFile(path: path, helper: helper)
    #expect(parent(of: file.helperProcessID) == getpid())
  }
}

/// The parent of `pid`, from /proc/PID/stat; nil when it is gone.
private func parent(of pid: pid_t) -> pid_t? {
  guard let text = fileText("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else {
    return nil
  }
  // "pid (comm) state ppid …": the comm may hold spaces and parentheses.
  let fields = text[text.index(after: close)...].split(separator: " ")
  return fields.count > 1 ? pid_t(fields[1]) : nil
}

/// /proc/PID/cmdline: the arguments, each ended by a NUL.
private func commandLine(of pid: pid_t) -> String {
  fileText("/proc/\(pid)/cmdline") ?? ""
}

/// The processes whose parent is `pid`, from /proc.
private func children(of pid: pid_t) -> [pid_t] {
  guard let dir = opendir("/proc") else { return [] }
  defer { closedir(dir) }
  var found: [pid_t] = []
  while let entry = readdir(dir) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) {
      String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
    }
    if let child = pid_t(name), parent(of: child) == pid { found.append(child) }
  }
  return found
}
