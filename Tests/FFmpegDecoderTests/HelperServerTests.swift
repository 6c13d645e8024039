import AudioCore
import Glibc
import Testing

@testable import FFmpegDecoder

/// The installed hark-ffmpeg's helpers come from its fork server (`hark-ffmpeg --serve`): one
/// server a process, each track and seek a fork of it; a server that dies is replaced; a
/// stand-in helper named by the caller is spawned as before. (Issue 12: a track of AAC or ALAC
/// no longer pays for loading FFmpeg.)
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

  @Test func tracksAndSeeksAreForkedByOneServer() throws {
    let first = try files.tone("first.m4a", ["-c:a", "aac"], seconds: 3)
    let second = try files.tone("second.m4a", ["-c:a", "alac"], seconds: 3)
    let helper = try ownHelper()
    let a = try FFmpegFile(path: first, helper: helper, served: true, answerTimeout: .seconds(10))
    let b = try FFmpegFile(path: second, helper: helper, served: true, answerTimeout: .seconds(10))
    let server = try #require(parent(of: a.helperProcessID))
    #expect(server != getpid())
    #expect(parent(of: b.helperProcessID) == server)
    #expect(commandLine(of: server) == helper + "\0--serve\0")
    #expect(parent(of: server) == getpid())
    try a.seek(toFrame: 44_100)
    #expect(parent(of: a.helperProcessID) == server)
    // Forked helpers decode as spawned ones do: all of the file, then a clean end.
    let (samples, error) = readAll(b)
    #expect(error == nil)
    #expect(samples.count == 3 * 44_100 * 2)
    let (rest, restError) = readAll(a)
    #expect(restError == nil)
    #expect(rest.count == 2 * 44_100 * 2)
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
    let a = try FFmpegFile(path: first, helper: helper, served: true, answerTimeout: .seconds(10))
    let server = try #require(parent(of: a.helperProcessID))
    #expect(server != getpid())
    #expect(kill(server, SIGKILL) == 0)
    let started = now()
    let (samples, _) = readAll(a)
    #expect(samples.count == 2 * 44_100 * 2)
    #expect(now() - started < 5)
    let b = try FFmpegFile(path: second, helper: helper, served: true, answerTimeout: .seconds(10))
    let replacement = try #require(parent(of: b.helperProcessID))
    #expect(replacement != server && replacement != getpid())
    #expect(readAll(b).error == nil)
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
  guard let text = contents("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else {
    return nil
  }
  // "pid (comm) state ppid …": the comm may hold spaces and parentheses.
  let fields = text[text.index(after: close)...].split(separator: " ")
  return fields.count > 1 ? pid_t(fields[1]) : nil
}

/// /proc/PID/cmdline: the arguments, each ended by a NUL.
private func commandLine(of pid: pid_t) -> String {
  contents("/proc/\(pid)/cmdline") ?? ""
}

private func contents(_ path: String) -> String? {
  guard let f = fopen(path, "r") else { return nil }
  defer { fclose(f) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 4_096)
  while true {
    let n = fread(&chunk, 1, chunk.count, f)
    if n <= 0 { break }
    bytes += chunk[..<n]
  }
  return String(decoding: bytes, as: UTF8.self)
}
