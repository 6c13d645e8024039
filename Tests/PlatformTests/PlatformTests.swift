import Glibc
import Platform
import Testing

@Suite struct WakePipeTests {
  @Test func wakeMakesTheReadEndReadableAndDrainEmptiesIt() throws {
    let pipe = try WakePipe()
    var slot = pollfd(fd: pipe.readFD, events: Int16(POLLIN), revents: 0)
    #expect(poll(&slot, 1, 0) == 0)
    pipe.wake()
    #expect(poll(&slot, 1, 0) == 1)
    pipe.drain()
    slot.revents = 0
    #expect(poll(&slot, 1, 0) == 0)
  }

  @Test func drainBytesReturnsWhatWasWrittenInOrder() throws {
    let pipe = try WakePipe()
    for byte: UInt8 in [2, 28, 255] { pipe.wake(byte) }
    #expect(pipe.drainBytes() == [2, 28, 255])
    #expect(pipe.drainBytes() == [])
  }

  @Test func bothEndsAreNonBlockingAndCloseOnExec() throws {
    let pipe = try WakePipe()
    for fd in [pipe.readFD, pipe.writeFD] {
      #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
      #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
    }
  }

  @Test func aFullPipeNeverBlocksTheWaker() throws {
    let pipe = try WakePipe()
    for _ in 0..<200_000 { pipe.wake() }  // more than any pipe buffer holds
    pipe.drain()
  }
}

@Suite struct ThreadTests {
  @Test func aJoinableThreadRunsItsBodyBeforeJoinReturns() throws {
    let done = Platform.Semaphore()
    let thread = try JoinableThread(named: "platform-test") { done.signal() }
    #expect(!thread.isCurrent)
    thread.join()
    #expect(done.wait(microseconds: 0))
  }

  @Test func aNamedThreadShowsItsNameInProc() throws {
    let seen = Platform.Semaphore()
    nonisolated(unsafe) var name = ""
    startThread(named: "hark-test-name") {
      let fd = open("/proc/thread-self/comm", O_RDONLY)
      var buffer = [UInt8](repeating: 0, count: 32)
      let n = read(fd, &buffer, buffer.count)
      close(fd)
      name = String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
      seen.signal()
    }
    #expect(seen.wait(microseconds: 5_000_000))
    #expect(name == "hark-test-name\n")
  }

  /// The session server's priority (G5: the loss of an output is heard of at once on a busy
  /// machine): every thread of the process, one that waits included, and the threads started
  /// afterwards. Without the privilege, nothing changes and the refusal says why. Each thread
  /// goes back to its own value after (raising a nice value needs no privilege).
  @Test func raisingThePriorityReachesEveryThreadOrSaysWhy() throws {
    @Sendable func nice(_ tid: pid_t) -> Int32 {
      getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(tid))
    }
    let started = Platform.Semaphore()
    let release = Platform.Semaphore()
    nonisolated(unsafe) var waiting: pid_t = 0
    let thread = try JoinableThread(named: "nice-probe") {
      waiting = currentThreadID()
      started.signal()
      release.wait()
    }
    #expect(started.wait(microseconds: 5_000_000))
    let me = currentThreadID()
    let before = (nice(me), nice(waiting))
    let target = min(before.0, before.1) - 3
    let refusal = raiseProcessPriority(to: target)
    let after = (nice(me), nice(waiting))
    nonisolated(unsafe) var inherited: Int32 = 99
    let later = try JoinableThread { inherited = nice(currentThreadID()) }
    later.join()
    for (tid, value) in [(me, before.0), (waiting, before.1)] {
      _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(tid), value)
    }
    release.signal()
    thread.join()
    if let refusal {
      #expect(refusal.code == EACCES || refusal.code == EPERM)
      #expect(after == before)
      #expect(inherited == before.0)
    } else {
      #expect(after == (target, target))
      #expect(inherited == target)
    }
  }

  @Test func aSemaphoreTimesOutWhenNotSignalled() {
    let semaphore = Platform.Semaphore()
    let start = monotonicNanoseconds()
    #expect(!semaphore.wait(microseconds: 20_000))
    #expect(monotonicNanoseconds() - start >= 15_000_000)
    semaphore.signal()
    #expect(semaphore.wait(microseconds: 20_000))
  }
}

@Suite struct ClockTests {
  @Test func durationsConvertToNanosecondsAndSeconds() {
    #expect(nanoseconds(.milliseconds(1_500)) == 1_500_000_000)
    #expect(nanoseconds(.seconds(-2)) == 0)
    #expect(seconds(.milliseconds(250)) == 0.25)
  }

  @Test func theMonotonicClockNeverGoesBack() {
    let a = monotonicNanoseconds()
    let b = monotonicNanoseconds()
    #expect(b >= a)
  }
}

/// The environment: a variable of the test's own name in the process's, and the XDG rules on an
/// environment of the test's own (the process's HOME and XDG_* are read by tests running
/// beside this one).
@Suite struct EnvironmentTests {
  @Test func anUnsetVariableIsNil() {
    unsetenv("HARK_PLATFORM_TEST")
    #expect(environment("HARK_PLATFORM_TEST") == nil)
    setenv("HARK_PLATFORM_TEST", "x y", 1)
    #expect(environment("HARK_PLATFORM_TEST") == "x y")
    unsetenv("HARK_PLATFORM_TEST")
  }

  @Test func xdgDirectoriesUseTheVariableWhenAbsoluteElseHome() {
    for directory in XDGDirectory.allCases {
      var env = ["HOME": "/home/u", directory.variable: "/x/\(directory.variable)"]
      #expect(directory.path(in: { env[$0] }) == "/x/\(directory.variable)")
      env[directory.variable] = "relative"  // ignored, as the specification says
      #expect(directory.path(in: { env[$0] }) == "/home/u" + directory.defaultUnderHome)
      env[directory.variable] = nil
      #expect(directory.path(in: { env[$0] }) == "/home/u" + directory.defaultUnderHome)
    }
    let home = ["HOME": "/home/u"]
    #expect(XDGDirectory.state.path(in: { home[$0] }) == "/home/u/.local/state")
    #expect(XDGDirectory.config.path(in: { home[$0] }) == "/home/u/.config")
    #expect(XDGDirectory.cache.path(in: { home[$0] }) == "/home/u/.cache")
    #expect(XDGDirectory.data.path(in: { home[$0] }) == "/home/u/.local/share")
    #expect(XDGDirectory.state.path(in: { $0 == "HOME" ? "" : nil }) == nil)
  }
}

@Suite struct RotatingLogFileTests {
  private func temporaryFolder() -> String { Scratch.folder() }

  private func size(_ path: String) -> Int? {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : nil
  }

  @Test func appendCreatesTheFolderAndTheLog() {
    let folder = temporaryFolder() + "/a/b"
    let log = RotatingLogFile(path: folder + "/x.log")
    log.append("one\n")
    log.append("two\n")
    #expect(size(folder + "/x.log") == 8)
    var st = stat()
    #expect(stat(folder + "/x.log", &st) == 0 && st.st_mode & 0o777 == 0o600)
  }

  @Test func pastTheLimitTheLogMovesAsideAndStartsAfresh() {
    let path = temporaryFolder() + "/x.log"
    let log = RotatingLogFile(path: path, limit: 10)
    log.append("0123456789\n")  // 11 bytes: over the limit only after this write
    #expect(size(path + ".1") == nil)
    log.append("new\n")
    #expect(size(path + ".1") == 11)
    #expect(size(path) == 4)
    log.append("0123456789\n")
    log.append("newer\n")
    #expect(size(path + ".1") == 15)  // the one before is replaced
    #expect(size(path) == 6)
  }

  @Test func rotateIfFullLeavesASmallLogAlone() {
    let path = temporaryFolder() + "/x.log"
    let log = RotatingLogFile(path: path, limit: 100)
    log.rotateIfFull()  // no log at all
    log.append("small\n")
    log.rotateIfFull()
    #expect(size(path) == 6)
    #expect(size(path + ".1") == nil)
  }
}

/// File names are bytes (a Latin-1 folder from an old rip is as much the user's as any): a name
/// that is not UTF-8 is kept whole in a String and turns back into the very bytes, for every
/// sequence of bytes.
@Suite struct FileNameTests {
  @Test func aLatin1NameKeepsItsBytes() {
    let latin1: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".flac".utf8)
    let name = FileName.string(latin1)
    #expect(name.unicodeScalars.map(\.value).contains(0xEFE9))
    #expect(FileName.bytes(name) == latin1)
    #expect(FileName.c(name) == latin1.map { CChar(bitPattern: $0) } + [0])
    #expect(FileName.hasRawBytes(name))
    #expect(name.hasSuffix(".flac"), "the valid part reads as text")
  }

  @Test func aPathIsJoinedWithOneSlash() {
    let latin1 = FileName.string(Array("caf".utf8) + [0xE9])
    let table: [(String, String, String)] = [
      ("/music", "a.flac", "/music/a.flac"), ("/music/", "a.flac", "/music/a.flac"),
      ("/", "x", "/x"), ("/Zoë", latin1, "/Zoë/" + latin1), ("a", "", "a/"),
    ]
    for (folder, name, path) in table {
      #expect(FileName.join(folder, name) == path)
      #expect(FileName.bytes(FileName.join(folder, name)) == FileName.bytes(path))
    }
  }

  @Test func validUTF8IsPlainText() {
    let name = "Sigur Rós – Hoppípolla 🎵.flac"
    #expect(FileName.string(Array(name.utf8)) == name)
    #expect(FileName.bytes(name) == Array(name.utf8))
    #expect(FileName.c(name) == Array(name.utf8CString))
    #expect(!FileName.hasRawBytes(name))
  }

  /// A valid name that itself holds a scalar of the escape block is escaped byte by byte, so
  /// that no two names give one String.
  @Test func aNameHoldingTheEscapeBlockItselfStaysExact() {
    let bytes = Array("x\u{EFE9}y".utf8)  // EE BF A9
    let name = FileName.string(bytes)
    #expect(name.unicodeScalars.count == 5)
    #expect(FileName.bytes(name) == bytes)
    #expect(FileName.string([0xE9]) != FileName.string(bytes))
  }

  @Test func overlongSurrogateAndCutSequencesAreEscapedNotDecoded() {
    for bad: [UInt8] in [
      [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80],
      [0xFF, 0xFE],
    ] {
      let name = FileName.string(bad)
      #expect(name.unicodeScalars.count == bad.count, "\(bad)")
      #expect(FileName.bytes(name) == bad)
    }
  }

  @Test func everyByteSequenceRoundTrips() {
    var rng = SystemRandomNumberGenerator()
    for _ in 0..<5_000 {
      let count = Int.random(in: 0...24, using: &rng)
      // Bytes 1–255 (a name holds no NUL), biased towards the high half.
      let bytes = (0..<count).map { _ in
        UInt8.random(in: 1...255, using: &rng) | (Bool.random(using: &rng) ? 0x80 : 0)
      }
      let name = FileName.string(bytes)
      #expect(FileName.bytes(name) == bytes, "\(bytes)")
      // Through UTF-8 and back, as the queue, the saved state and the wire carry it.
      let carried = String(decoding: Array(name.utf8), as: UTF8.self)
      #expect(FileName.bytes(carried) == bytes)
    }
  }
}

/// runHelper, which the interface runs hark-cover through: what a helper writes and how it
/// ended, and one that hangs killed at its time.
@Suite(.timeLimit(.minutes(2))) struct RunHelperTests {
  @Test func itsOutputStatusAndLastErrorLineComeBack() throws {
    let run = try runHelper(
      "/bin/sh", ["-c", "echo out; echo one >&2; echo two >&2; exit 4"], timeout: .seconds(10))
    #expect(run.status == 4)
    #expect(run.output == Array("out\n".utf8))
    #expect(run.errorLine == "two")
    #expect(!run.timedOut)
  }

  @Test func aHelperThatHangsIsKilledAtItsTime() throws {
    let started = monotonicNanoseconds()
    let run = try runHelper(
      "/bin/sh", ["-c", "echo partial; exec sleep 30"], timeout: .milliseconds(300))
    #expect(run.timedOut)
    #expect(run.status == nil)
    #expect(run.output.isEmpty, "what a killed helper wrote is not to be trusted")
    #expect(monotonicNanoseconds() - started < 10_000_000_000)
  }

  @Test func moreThanTheLimitIsKilledToo() throws {
    let run = try runHelper("/bin/sh", ["-c", "exec yes"], timeout: .seconds(20), limit: 100_000)
    #expect(run.wroteTooMuch && !run.timedOut && run.status == nil)
    // All at once and gone: still too much.
    let quick = try runHelper(
      "/bin/sh", ["-c", "head -c 200000 /dev/zero"], timeout: .seconds(20), limit: 100_000)
    #expect(quick.wroteTooMuch && quick.output.isEmpty)
  }

  @Test func aMissingExecutableIsAnError() {
    #expect(throws: SystemError.self) {
      try runHelper("/nonexistent/helper", [], timeout: .seconds(1))
    }
  }
}

/// Platform.Locked, hark's one lock (a POSIX mutex, so that ThreadSanitizer sees it).
@Suite(.timeLimit(.minutes(2))) struct LockedTests {
  /// Four threads add to one count and check that no other thread is inside the lock with
  /// them: every increment is kept, and no two threads ever held it at once.
  @Test func oneThreadAtATimeAndNoIncrementLost() throws {
    struct Count {
      var total = 0
      var inside = 0
      var overlaps = 0
    }
    let count = Locked(Count())
    let threads = try (0..<4).map { _ in
      try JoinableThread {
        for _ in 0..<20_000 {
          count.withLock { c in
            c.inside += 1
            if c.inside != 1 { c.overlaps += 1 }
            c.total += 1
            c.inside -= 1
          }
        }
      }
    }
    for thread in threads { thread.join() }
    let result = count.withLock { $0 }
    #expect(result.total == 80_000)
    #expect(result.overlaps == 0)
  }

  /// withLockIfAvailable answers nil at once while another thread holds the lock, and runs
  /// once it is given back.
  @Test func ifAvailableDoesNotWaitForAHeldLock() throws {
    let value = Locked(1)
    let held = Platform.Semaphore()
    let release = Platform.Semaphore()
    let holder = try JoinableThread {
      value.withLock { v in
        v = 2
        held.signal()
        release.wait()
      }
    }
    held.wait()
    #expect(value.withLockIfAvailable { $0 } == nil)
    release.signal()
    holder.join()
    #expect(value.withLockIfAvailable { $0 } == 2)
  }

  /// The value goes with the lock (nothing of it is kept after the last reference).
  @Test func theValueIsReleasedWithTheLock() {
    final class Box: Sendable {}
    weak var weakBox: Box?
    do {
      let box = Box()
      weakBox = box
      let locked = Locked(box)
      locked.withLock { _ in }
    }
    #expect(weakBox == nil)
  }

  /// A thread taking the lock it holds stops the process with a message, as a Mutex does,
  /// rather than waiting for itself for ever.
  @Test func takingTheLockAgainOnItsOwnThreadStopsTheProcess() async {
    await #expect(processExitsWith: .failure) {
      let value = Locked(0)
      value.withLock { _ in value.withLock { $0 += 1 } }
    }
  }

  /// What the body throws comes out of withLock, and the lock is free after it.
  @Test func aThrowingBodyGivesTheLockBack() {
    struct Refused: Error {}
    let value = Locked(0)
    #expect(throws: Refused.self) { try value.withLock { _ throws(Refused) in throw Refused() } }
    #expect(value.withLockIfAvailable { $0 } == 0)
  }
}

@Suite struct TextTests {
  /// A message's first character in capitals, the rest untouched, as the status line shows it.
  @Test(arguments: [
    ("cannot open 'a.flac': no such file", "Cannot open 'a.flac': no such file"),
    ("écoute: 3 tracks", "Écoute: 3 tracks"),
    ("already Capitalised — keep 'x'", "Already Capitalised — keep 'x'"),
    ("'quoted' first", "'quoted' first"),
    ("", ""),
  ])
  func capitalisedFirst(line: String, shown: String) {
    #expect(line.capitalisedFirst == shown)
  }

  /// A duration as a clock shows it: minutes and seconds, hours when there are some.
  @Test(arguments: [
    (0, "0:00"), (5, "0:05"), (83, "1:23"), (599, "9:59"), (3_599, "59:59"), (3_600, "1:00:00"),
    (3_725, "1:02:05"), (-4, "0:00"),
  ])
  func clockTimes(seconds: Int, shown: String) {
    #expect(clockTime(seconds: seconds) == shown)
  }
}
