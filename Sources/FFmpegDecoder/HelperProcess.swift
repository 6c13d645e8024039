import AudioCore
import Glibc
import Platform

/// How a helper ended.
enum Termination: Equatable {
  /// It exited with this status.
  case exited(Int32)
  /// A signal killed it.
  case signaled(Int32)
  /// Someone else reaped it (SIGCHLD ignored, or a waitpid(-1) elsewhere): unknown.
  case unknown

  init(_ end: ProcessEnd?) {
    switch end {
    case .exited(let status): self = .exited(status)
    case .signaled(let signal): self = .signaled(signal)
    case nil: self = .unknown
    }
  }
}

/// What one wait for the helper's output brought.
enum Arrival: Equatable {
  /// This many bytes were read.
  case bytes(Int)
  /// Its stdout closed: it has ended, or is ending.
  case end
  /// Nothing came within the answer timeout.
  case silence
}

/// One run of hark-ffmpeg: its pid, our ends of its stdout and stderr, and the write end of its
/// lifeline (its stdin: it exits when that closes, so it never outlives us). Owns the
/// descriptors; kills (SIGKILL) and reaps the process in `deinit` if it is still there.
///
/// Either our child (posix_spawn) or, when started through the helper's server (HelperServer),
/// a request done by one of the server's workers: then the server writes the request's wait
/// status to a pipe of ours (`statusPipe`), which stands in for waitpid, and the pid is the
/// worker's, which goes on to other requests once this one is done.
///
/// Used from one thread at a time (the decoder's).
final class HelperProcess {
  let pid: pid_t
  private var output: Int32
  /// -1 once it has closed.
  private var errors: Int32
  private var lifeline: Int32
  /// Its descriptor 3 (a stream's events), when asked for; -1 once closed or without it.
  private var events: Int32
  /// Event bytes read, up to the last whole line taken.
  private var eventBytes: [UInt8] = []
  /// Set once reaped.
  private(set) var termination: Termination?
  /// The end of what it wrote to stderr: FFmpeg's log if asked for, then its one line.
  private var errorText: [UInt8] = []
  /// For a child of the fork server: the read end of the pipe its wait status comes on. -1 for
  /// our own child (and once the status has come).
  private var statusPipe: Int32

  private init(
    pid: pid_t, output: Int32, errors: Int32, lifeline: Int32, events: Int32,
    statusPipe: Int32 = -1
  ) {
    self.pid = pid
    self.output = output
    self.errors = errors
    self.lifeline = lifeline
    self.events = events
    self.statusPipe = statusPipe
    errorText.reserveCapacity(Self.errorTextLimit)
  }

  deinit {
    kill()
    for fd in [output, errors, lifeline, events, statusPipe] where fd >= 0 { close(fd) }
  }

  private static let errorTextLimit = 4_096

  /// Starts `executable arguments…` with stdin the lifeline pipe, stdout and stderr pipes to
  /// us, in a process group of its own (the terminal's ^C and ^Z are the player's to handle),
  /// with default signal handling and nothing blocked; with `events`, its descriptor 3 is a
  /// fourth pipe to us (`takeEventLines`). Throws the error number when the pipes cannot be
  /// made or posix_spawn fails (ENOENT, EACCES). With `served`, it is started through
  /// `executable`'s fork server (HelperServer) where one can be had, and spawned otherwise.
  static func start(
    _ executable: String, _ arguments: [String], events: Bool = false, served: Bool = false
  ) throws(SpawnFailure) -> HelperProcess {
    if served, let process = startServed(executable, arguments, events: events) {
      return process
    }
    let pipes = try makePipes(events ? 4 : 3)
    let (lifeline, output, errors) = (pipes[0], pipes[1], pipes[2])
    // The helper decodes about three seconds ahead into a 1 MiB pipe (64 KiB by default), so a
    // busy moment on its side is not heard. Refused above /proc/sys/fs/pipe-max-size: then not.
    _ = fcntl(output.read, setPipeSize, Int32(1 << 20))
    // Ours non-blocking: `read` takes what is there without waiting, and polls only when empty.
    _ = fcntl(output.read, F_SETFL, fcntl(output.read, F_GETFL) | O_NONBLOCK)
    var descriptors: [Int32: ChildDescriptor] = [
      0: .parent(lifeline.read), 1: .parent(output.write), 2: .parent(errors.write),
    ]
    if events { descriptors[3] = .parent(pipes[3].write) }
    let spawned = Result { () throws(SystemError) in
      try spawn(executable, arguments, descriptors: descriptors, detachment: .newProcessGroup)
    }
    // The child's ends are its own now (or no one's).
    close(lifeline.read)
    close(output.write)
    close(errors.write)
    if events { close(pipes[3].write) }
    switch spawned {
    case .success(let pid):
      return HelperProcess(
        pid: pid, output: output.read, errors: errors.read, lifeline: lifeline.write,
        events: events ? pipes[3].read : -1)
    case .failure(let error):
      close(lifeline.write)
      close(output.read)
      close(errors.read)
      if events { close(pipes[3].read) }
      throw SpawnFailure(code: error.code)
    }
  }

  /// `count` pipes (`makePipe`); none when one of them cannot be made.
  private static func makePipes(_ count: Int) throws(SpawnFailure) -> [(read: Int32, write: Int32)]
  {
    var pipes: [(read: Int32, write: Int32)] = []
    for _ in 0..<count {
      do { pipes.append(try makePipe()) } catch {
        for p in pipes {
          close(p.read)
          close(p.write)
        }
        throw SpawnFailure(code: error.code)
      }
    }
    return pipes
  }

  /// `start` through the fork server: the same pipes, and one more for its status. Nil when
  /// the server cannot start it (none to be had, or fork failed there).
  private static func startServed(_ executable: String, _ arguments: [String], events: Bool)
    -> HelperProcess?
  {
    guard let pipes = try? makePipes(events ? 5 : 4) else { return nil }
    // Its lifeline is the one it reads; it writes the others.
    let theirs = pipes.indices.map { $0 == 1 ? pipes[$0].read : pipes[$0].write }
    let ours = pipes.indices.map { $0 == 1 ? pipes[$0].write : pipes[$0].read }
    _ = fcntl(ours[2], setPipeSize, Int32(1 << 20))
    _ = fcntl(ours[2], F_SETFL, fcntl(ours[2], F_GETFL) | O_NONBLOCK)
    let pid = HelperServer.spawn(executable, arguments, descriptors: theirs)
    for fd in theirs { close(fd) }
    guard let pid else {
      for fd in ours { close(fd) }
      return nil
    }
    return HelperProcess(
      pid: pid, output: ours[2], errors: ours[3], lifeline: ours[1],
      events: events ? ours[4] : -1, statusPipe: ours[0])
  }

  /// Reads up to `count` bytes of its stdout into `bytes`, waiting for them at most `timeout`
  /// (its stderr and events are collected meanwhile, so that it never blocks on a full pipe).
  func read(into bytes: UnsafeMutableRawPointer, count: Int, timeout: Duration) -> Arrival {
    // What is there already is read without a poll first (stdout is non-blocking): a decode
    // ahead of the player finds its frames waiting, one system call a read.
    let n = Glibc.read(output, bytes, count)
    if n > 0 {
      collectPending()
      return .bytes(n)
    }
    if n == 0 { return .end }
    let deadline = Deadline(after: timeout)
    while true {
      // A closed descriptor is left out (poll skips negative ones).
      var fds = (
        pollfd(fd: output, events: Int16(POLLIN), revents: 0),
        pollfd(fd: errors, events: Int16(POLLIN), revents: 0),
        pollfd(fd: events, events: Int16(POLLIN), revents: 0)
      )
      let ready = withUnsafeMutablePointer(to: &fds) {
        $0.withMemoryRebound(to: pollfd.self, capacity: 3) {
          poll($0, 3, deadline.remainingMilliseconds())
        }
      }
      if ready < 0 {
        if errno == EINTR { continue }
        return .end
      }
      if fds.1.revents != 0 { collectErrors() }
      if fds.2.revents != 0 { collectEvents() }
      if fds.0.revents != 0 {
        let n = Glibc.read(output, bytes, count)
        if n > 0 { return .bytes(n) }
        if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
        return .end
      }
      if ready == 0 && deadline.hasPassed { return .silence }
    }
  }

  /// Takes what its stderr and events pipes hold, without waiting. A reader that always finds
  /// frames waiting (a stream's pipe stays full once the player is ahead) never reaches the
  /// poll in `read`: without this a station's new title was never seen, and a helper that wrote
  /// enough to stderr blocked there.
  private func collectPending() {
    guard errors >= 0 || events >= 0 else { return }
    var fds = (
      pollfd(fd: errors, events: Int16(POLLIN), revents: 0),
      pollfd(fd: events, events: Int16(POLLIN), revents: 0)
    )
    let ready = withUnsafeMutablePointer(to: &fds) {
      $0.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, 0) }
    }
    guard ready > 0 else { return }
    if fds.0.revents != 0 { collectErrors() }
    if fds.1.revents != 0 { collectEvents() }
  }

  /// After its stdout closed: waits (at most `timeout`) for stderr to close and the process to
  /// end, collects its line, and reaps it; killed if it lingers.
  func finish(timeout: Duration) -> Termination {
    if let termination { return termination }
    let deadline = Deadline(after: timeout)
    while errors >= 0 && !deadline.hasPassed {
      var fd = pollfd(fd: errors, events: Int16(POLLIN), revents: 0)
      let ready = poll(&fd, 1, deadline.remainingMilliseconds())
      if ready < 0 && errno != EINTR { break }
      if ready > 0 { collectErrors() }
    }
    if statusPipe >= 0 {
      termination = takeStatus(waitingMilliseconds: deadline.remainingMilliseconds())
      if termination == nil { kill() }
      return termination ?? .unknown
    }
    let end = Termination(
      waitForChild(pid, killingAfter: .milliseconds(deadline.remainingMilliseconds())))
    termination = end
    return end
  }

  /// Closes our end of its lifeline, as the player's death would: it exits on seeing that.
  func closeLifeline() {
    guard lifeline >= 0 else { return }
    close(lifeline)
    lifeline = -1
  }

  /// SIGKILL and reap, unless already reaped.
  func kill() {
    guard termination == nil else { return }
    if statusPipe >= 0 {
      // Done already (the server has said so): nothing to end, and its worker may be doing
      // another request by now.
      if let status = takeStatus(waitingMilliseconds: 0) {
        termination = status
        return
      }
      // Its worker exits when the lifeline closes; by its pid only if it does not (stuck), as
      // then it is still on this request.
      closeLifeline()
      if let status = takeStatus(waitingMilliseconds: 2_000) {
        termination = status
        return
      }
      _ = Glibc.kill(pid, SIGKILL)
      termination = takeStatus(waitingMilliseconds: 5_000) ?? .unknown
      return
    }
    _ = Glibc.kill(pid, SIGKILL)
    termination = Termination(waitForChild(pid))
  }

  /// The last line it wrote to stderr as the error of `path`: plain words, a tab and FFmpeg's
  /// own, a tab and the kind (`DecodeError.Kind`'s name; a line without one, or with a name
  /// this hark does not know, is `.decoderFailed`). Nil when it wrote none.
  func lastLineError(path: String) -> DecodeError? {
    let text = String(decoding: errorText, as: UTF8.self)
    guard let line = text.split(separator: "\n").last(where: { !$0.isEmpty }) else { return nil }
    let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
    let reason = String(parts[0])
    guard !reason.isEmpty else { return nil }
    let detail = parts.count > 1 && !parts[1].isEmpty ? String(parts[1]) : nil
    let kind = parts.count > 2 ? DecodeError.Kind(rawValue: String(parts[2])) : nil
    return DecodeError(kind ?? .decoderFailed, path: path, reason: reason, detail: detail)
  }

  /// The whole event lines it has written since the last call, without their line breaks.
  func takeEventLines() -> [[UInt8]] {
    guard let last = eventBytes.lastIndex(of: 0x0A) else { return [] }
    let lines = eventBytes[..<last].split(separator: 0x0A, omittingEmptySubsequences: true)
      .map { Array($0) }
    eventBytes.removeFirst(last + 1)
    return lines
  }

  /// Reads what its events pipe has; closes it at its end. A line longer than 64 KiB is no
  /// event: what has come of it is dropped.
  private func collectEvents() {
    guard events >= 0 else { return }
    var chunk = [UInt8](repeating: 0, count: 4_096)
    let n = chunk.withUnsafeMutableBytes { Glibc.read(events, $0.baseAddress, $0.count) }
    if n < 0 && errno == EINTR { return }
    guard n > 0 else {
      close(events)
      events = -1
      return
    }
    eventBytes += chunk[..<n]
    if eventBytes.count > 65_536 && !eventBytes.contains(0x0A) { eventBytes = [] }
  }

  /// Reads what stderr has; closes it at its end. Keeps the last 4 KiB.
  private func collectErrors() {
    guard errors >= 0 else { return }
    var chunk = (
      UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0)
    )
    let n = withUnsafeMutableBytes(of: &chunk) { Glibc.read(errors, $0.baseAddress, $0.count) }
    if n < 0 && errno == EINTR { return }
    guard n > 0 else {
      close(errors)
      errors = -1
      return
    }
    if errorText.count + n > Self.errorTextLimit {
      errorText.removeFirst(min(errorText.count, errorText.count + n - Self.errorTextLimit))
    }
    withUnsafeBytes(of: &chunk) { errorText.append(contentsOf: $0.prefix(n)) }
  }

  /// A fork server's child: its status from the status pipe, waiting for it at most
  /// `waitingMilliseconds`; nil when it has not come by then. The pipe closed without one (the
  /// server ended first) is `.unknown`. The pipe is closed once it has answered.
  private func takeStatus(waitingMilliseconds: Int32) -> Termination? {
    var ready = pollfd(fd: statusPipe, events: Int16(POLLIN), revents: 0)
    var polled: Int32
    repeat { polled = poll(&ready, 1, waitingMilliseconds) } while polled < 0 && errno == EINTR
    guard polled > 0 else { return nil }
    var status: Int32 = 0
    var got: Int
    repeat {
      got = Glibc.read(statusPipe, &status, MemoryLayout<Int32>.size)
    } while got < 0
      && errno == EINTR
    close(statusPipe)
    statusPipe = -1
    return Termination(got == MemoryLayout<Int32>.size ? ProcessEnd(waitStatus: status) : nil)
  }
}

/// The helper could not be started (no pipe, or posix_spawn failed) for this error number.
struct SpawnFailure: Error {
  var code: Int32
}

/// F_SETPIPE_SZ (Linux), which Swift's Glibc module hides behind _GNU_SOURCE.
private let setPipeSize: Int32 = 1031

/// A point on the monotonic clock `timeout` from now.
struct Deadline {
  private let nanoseconds: Int64

  init(after timeout: Duration) {
    let (seconds, attoseconds) = timeout.components
    nanoseconds = Self.now() + seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }

  var hasPassed: Bool { Self.now() >= nanoseconds }

  /// For poll: at least 0, rounded up so that a wait does not end just short of it.
  func remainingMilliseconds() -> Int32 {
    let left = nanoseconds - Self.now()
    guard left > 0 else { return 0 }
    return Int32(clamping: (left + 999_999) / 1_000_000)
  }

  private static func now() -> Int64 { Int64(monotonicNanoseconds()) }
}
