import Glibc
import Platform
import Testing

/// `spawn`: each kind of descriptor its map names reaches the child, the child holds nothing
/// else, and no pipe made by `makePipe` leaks into a child that another thread spawns at the
/// same time, through `spawn` or through a plain posix_spawn (as a library would).
@Suite(.timeLimit(.minutes(2))) struct SpawnTests {
  /// Runs `script` under /bin/sh with `descriptors`, its stdout (unless named) to a pipe: what
  /// it wrote there and how it ended.
  private func run(
    _ script: String, _ descriptors: [Int32: ChildDescriptor] = [:], environment: [String]? = nil
  ) throws -> (output: String, end: ProcessEnd?) {
    let out = try makePipe()
    var map = descriptors
    if map[1] == nil { map[1] = .parent(out.write) }
    let pid: pid_t
    do {
      pid = try spawn("/bin/sh", ["-c", script], descriptors: map, environment: environment)
    } catch {
      close(out.read)
      close(out.write)
      throw error
    }
    close(out.write)
    let output = Scratch.readAll(out.read)
    close(out.read)
    return (String(decoding: output, as: UTF8.self), waitForChild(pid))
  }

  @Test func aDescriptorOfOursBecomesTheChildsAndItsExitStatusComesBack() throws {
    let run = try run("echo hello; exit 3")
    #expect(run.output == "hello\n")
    #expect(run.end == .exited(3))
  }

  @Test func stdinAndStderrNotNamedAreDevNull() throws {
    #expect(try run("readlink /proc/self/fd/0 /proc/self/fd/2").output == "/dev/null\n/dev/null\n")
    // Read: at its end at once, so a child reading stdin does not wait for the terminal.
    #expect(try run("cat; echo end").output == "end\n")
  }

  @Test func aFileIsOpenedAsAskedAndAppendedTo() throws {
    let log = Scratch.folder() + "/child.log"
    _ = try run("echo one", [1: .appending(to: log)])
    _ = try run("echo two >&2", [2: .appending(to: log)])
    #expect(Scratch.contents(log) == "one\ntwo\n")
    #expect(Scratch.mode(log) == 0o600)
  }

  @Test func sameAsSharesAnotherOfTheChildsDescriptors() throws {
    #expect(try run("echo out; echo err >&2", [2: .sameAs(1)]).output == "out\nerr\n")
  }

  /// A descriptor of ours whose number is also one of the child's is not overwritten before it
  /// is placed: here our pipe's end `fd` is to become the child's `fd + 1`, while the child's
  /// `fd` is /dev/null, placed first.
  @Test func aDescriptorOfOursWithOneOfTheChildsNumbersStillArrives() throws {
    let pipe = try makePipe()
    defer { close(pipe.read) }
    let fd = pipe.write
    let run = try run("echo moved > /proc/self/fd/\(fd + 1)", [fd: .null, fd + 1: .parent(fd)])
    close(pipe.write)
    #expect(run.end == .exited(0))
    #expect(String(decoding: Scratch.readAll(pipe.read), as: UTF8.self) == "moved\n")
  }

  @Test func theChildHasTheEnvironmentItIsGiven() throws {
    let run = try run(
      "echo \"$HARK_SPAWN_TEST\" \"${HOME:-none}\"", environment: ["HARK_SPAWN_TEST=given"])
    #expect(run.output == "given none\n")
  }

  @Test func whatCannotBeStartedIsAnError() {
    #expect(throws: SystemError(code: ENOENT, operation: "starting '/nonexistent/helper'")) {
      try spawn("/nonexistent/helper", [])
    }
    // A file in the map that cannot be opened: no child.
    #expect(throws: SystemError.self) {
      try spawn("/bin/true", [], descriptors: [1: .appending(to: "/nonexistent/folder/log")])
    }
  }

  /// The child holds its three descriptors and the one named beyond them (5, with 3 and 4
  /// closed between), and nothing of ours.
  @Test func theChildHoldsExactlyTheDescriptorsItIsGiven() throws {
    let extra = try makePipe()
    defer {
      close(extra.read)
      close(extra.write)
    }
    let cat = try Cat.start(extra: [5: .parent(extra.write)])
    let held = heldDescriptors(of: cat.pid)
    #expect(cat.stop() == .exited(0))
    #expect(held.keys.sorted() == [0, 1, 2, 5])
    #expect(held[5] == "pipe:[\(inode(extra.write))]")
    #expect(held[2] == "/dev/null")
  }

  @Test(arguments: [Detachment.newSession, .newProcessGroup, nil])
  func theChildStandsWhereItIsDetachedTo(_ detachment: Detachment?) throws {
    let cat = try Cat.start(detachment: detachment)
    let ids = try #require(processIDs(of: cat.pid))
    #expect(cat.stop() == .exited(0))
    switch detachment {
    case .newSession: #expect(ids.group == cat.pid && ids.session == cat.pid)
    case .newProcessGroup: #expect(ids.group == cat.pid && ids.session == getsid(0))
    case nil: #expect(ids.group == getpgrp() && ids.session == getsid(0))
    }
  }

  /// Signals as a fresh process has them: none blocked (here the spawning thread blocks one),
  /// none ignored.
  @Test func theChildBlocksAndIgnoresNoSignal() throws {
    let started = Locked<Result<Cat, SystemError>?>(nil)
    let thread = try JoinableThread {
      var blocked = sigset_t()
      sigemptyset(&blocked)
      sigaddset(&blocked, SIGUSR2)
      pthread_sigmask(SIG_BLOCK, &blocked, nil)
      let cat = Result { () throws(SystemError) in try Cat.start() }
      pthread_sigmask(SIG_UNBLOCK, &blocked, nil)
      started.withLock { $0 = cat }
    }
    thread.join()
    let cat = try #require(started.withLock { $0 }).get()
    let status = Scratch.contents("/proc/\(cat.pid)/status") ?? ""
    #expect(cat.stop() == .exited(0))
    func signals(_ field: String) -> UInt64? {
      let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":\t") }
      return line.flatMap { UInt64($0.dropFirst(field.count + 2), radix: 16) }
    }
    #expect(signals("SigBlk") == 0, "\(status)")
    // Signals 1 to 31 (bit n-1 for signal n): glibc's posix_spawn leaves its own two, 32 and
    // 33, ignored in every child it starts.
    #expect(signals("SigIgn").map { $0 & 0x7FFF_FFFF } == 0, "\(status)")
  }

  @Test func aChildStillThereAtItsTimeIsKilled() throws {
    let started = monotonicNanoseconds()
    let pid = try spawn("/bin/sleep", ["30"])
    #expect(waitForChild(pid, killingAfter: .milliseconds(200)) == .signaled(SIGKILL))
    #expect(monotonicNanoseconds() - started < 10_000_000_000)
    // One that ends in time is not.
    let quick = try spawn("/bin/sh", ["-c", "exit 7"])
    #expect(waitForChild(quick, killingAfter: .seconds(20)) == .exited(7))
    #expect(waitForChild(quick) == nil, "reaped already")
  }

  /// Three threads spawn cats through `spawn` while a fourth spawns them with a plain
  /// posix_spawn, which closes nothing (as a library's spawn would), each with pipes from
  /// `makePipe`. Every child of `spawn` holds exactly its three descriptors; no child of the
  /// plain one holds a pipe made by another thread (the check itself is checked below:
  /// `theLeakCheckSeesAPipeThatIsNotCloseOnExec`).
  @Test func noPipeLeaksIntoAChildSpawnedMeanwhile() throws {
    let made = Locked(Set<String>())
    let problems = Locked([String]())
    let rounds = 60
    @Sendable func madePipe() throws(SystemError) -> (read: Int32, write: Int32) {
      let pipe = try makePipe()
      made.withLock { _ = $0.insert("pipe:[\(inode(pipe.read))]") }
      return pipe
    }
    var threads: [JoinableThread] = []
    for _ in 0..<3 {
      threads.append(
        try JoinableThread {
          for _ in 0..<rounds where problems.withLock({ $0.isEmpty }) {
            do {
              let cat = try Cat.start(pipes: madePipe)
              let held = heldDescriptors(of: cat.pid)
              let end = cat.stop()
              if held.keys.sorted() != [0, 1, 2] {
                problems.withLock { $0.append("a child of spawn holds \(held)") }
              }
              if end != .exited(0) {
                problems.withLock {
                  $0.append("a child of spawn ended so: \(String(describing: end))")
                }
              }
            } catch {
              problems.withLock { $0.append("\(error)") }
            }
          }
        })
    }
    threads.append(
      try JoinableThread {
        for _ in 0..<rounds where problems.withLock({ $0.isEmpty }) {
          do {
            let cat = try Cat.start(plainly: true, pipes: madePipe)
            let held = heldDescriptors(of: cat.pid)
            if cat.stop() != .exited(0) {
              problems.withLock { $0.append("a plain child did not see the end of its input") }
            }
            let own = Set([held[0], held[1]])
            let ours = made.withLock { $0 }
            let leaked = held.filter { !own.contains($0.value) && ours.contains($0.value) }
            if !leaked.isEmpty {
              problems.withLock { $0.append("a plain child holds pipes of ours: \(leaked)") }
            }
          } catch {
            problems.withLock { $0.append("\(error)") }
          }
        }
      })
    for thread in threads { thread.join() }
    // Each thread goes on until its rounds are done or a problem is seen (then each child
    // waits 5 s for an end of input that a leak keeps from coming).
    #expect(problems.withLock { $0 } == [])
    #expect(made.withLock { $0.count } == 4 * rounds * 2)
  }

  /// The check above sees a leak where there is one: a pipe made with pipe(2), which is not
  /// close-on-exec, is held by the next child of a plain posix_spawn.
  @Test func theLeakCheckSeesAPipeThatIsNotCloseOnExec() throws {
    var ends: [Int32] = [-1, -1]
    try #require(pipe(&ends) == 0)
    defer { for fd in ends { close(fd) } }
    let cat = try Cat.start(plainly: true)
    let held = heldDescriptors(of: cat.pid)
    _ = cat.stop()
    #expect(held.values.contains("pipe:[\(inode(ends[0]))]"))
  }
}

/// /bin/cat between two pipes of ours, started by `spawn` (or `plainly`, by a posix_spawn
/// with no more than its two dup2s). A line goes through it before it is looked at, so that
/// it has done its starting up (the loader's and the locale's files are closed again) and
/// waits in read(2) for the next.
private struct Cat {
  let pid: pid_t
  let input: Int32
  let output: Int32

  static func start(
    extra: [Int32: ChildDescriptor] = [:], detachment: Detachment? = nil, plainly: Bool = false,
    pipes: () throws(SystemError) -> (read: Int32, write: Int32) = { () throws(SystemError) in
      try makePipe()
    }
  ) throws(SystemError) -> Cat {
    let toCat = try pipes()
    let fromCat = try pipes()
    defer {
      close(toCat.read)
      close(fromCat.write)
    }
    let pid: pid_t
    if plainly {
      var actions = posix_spawn_file_actions_t()
      posix_spawn_file_actions_init(&actions)
      defer { posix_spawn_file_actions_destroy(&actions) }
      posix_spawn_file_actions_adddup2(&actions, toCat.read, 0)
      posix_spawn_file_actions_adddup2(&actions, fromCat.write, 1)
      var child: pid_t = 0
      let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/cat"), nil]
      defer { free(argv[0]) }
      let rc = posix_spawn(&child, "/bin/cat", &actions, nil, argv, environ)
      guard rc == 0 else { throw SystemError(code: rc, operation: "starting cat") }
      pid = child
    } else {
      var map = extra
      map[0] = .parent(toCat.read)
      map[1] = .parent(fromCat.write)
      pid = try spawn("/bin/cat", [], descriptors: map, detachment: detachment)
    }
    let cat = Cat(pid: pid, input: toCat.write, output: fromCat.read)
    try writeAll(cat.input, Array("x\n".utf8))
    var got: [UInt8] = []
    var byte: UInt8 = 0
    while got.count < 2, read(cat.output, &byte, 1) == 1 { got.append(byte) }
    return cat
  }

  /// Closes its input, and reaps it once it has seen the end of it; killed (SIGKILL) if it is
  /// still there 5 s later, which is what a leak looks like: another child holds the write end
  /// of its input, and it waits for ever.
  func stop() -> ProcessEnd? {
    close(input)
    let end = waitForChild(pid, killingAfter: .seconds(5))
    close(output)
    return end
  }
}

/// What each descriptor of the process `pid` is (readlink of /proc/PID/fd/N).
private func heldDescriptors(of pid: pid_t) -> [Int32: String] {
  var held: [Int32: String] = [:]
  for name in Scratch.names(in: "/proc/\(pid)/fd") {
    guard let fd = Int32(name) else { continue }
    var target = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/\(pid)/fd/\(name)", &target, target.count - 1)
    held[fd] =
      n > 0 ? String(decoding: target[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
  }
  return held
}

/// The inode of the file `fd` is open on (a pipe's, as /proc shows it: "pipe:[INODE]").
private func inode(_ fd: Int32) -> UInt64 {
  var st = stat()
  return fstat(fd, &st) == 0 ? UInt64(st.st_ino) : 0
}

/// The process group and session of the process `pid` (/proc/PID/stat).
private func processIDs(of pid: pid_t) -> (group: pid_t, session: pid_t)? {
  guard let stat = Scratch.contents("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")")
  else { return nil }
  let fields = stat[stat.index(after: close)...].split(separator: " ")
  guard fields.count > 3, let group = pid_t(fields[2]), let session = pid_t(fields[3]) else {
    return nil
  }
  return (group, session)
}
