import Glibc
import Platform
import Testing

@Suite(.timeLimit(.minutes(2))) struct ReplaceFileTests {
  @Test func aNewFileIsWrittenWithItsModeAndNothingElseIsLeft() throws {
    let folder = Scratch.folder()
    try replaceFile(folder + "/a/b/new.json", with: Array("first\n".utf8))
    #expect(Scratch.contents(folder + "/a/b/new.json") == "first\n")
    #expect(Scratch.mode(folder + "/a/b/new.json") == 0o600)
    #expect(Scratch.mode(folder + "/a") == 0o700)
    try replaceFile(folder + "/a/b/new.json", with: "second\n".utf8, mode: 0o640)
    #expect(Scratch.contents(folder + "/a/b/new.json") == "second\n")
    #expect(Scratch.mode(folder + "/a/b/new.json") == 0o640)
    #expect(Scratch.names(in: folder + "/a/b") == ["new.json"])
  }

  /// The temporary cannot be made (a folder stands in its place): the old file stays.
  @Test func whenTheTemporaryCannotBeMadeTheOldFileStays() throws {
    let folder = Scratch.folder()
    let path = folder + "/state.json"
    try replaceFile(path, with: "old\n".utf8)
    mkdir(path + ".tmp.\(getpid())", 0o700)
    #expect(throws: SystemError(code: EISDIR, operation: "creating '\(path).tmp.\(getpid())'")) {
      try replaceFile(path, with: "new\n".utf8)
    }
    #expect(Scratch.contents(path) == "old\n")
  }

  /// The rename fails (a folder is in the way): the temporary is removed.
  @Test func whenTheRenameFailsTheTemporaryIsRemoved() throws {
    let folder = Scratch.folder()
    mkdir(folder + "/taken", 0o700)
    mkdir(folder + "/taken/inside", 0o700)
    #expect(throws: SystemError(code: EISDIR, operation: "replacing '\(folder)/taken'")) {
      try replaceFile(folder + "/taken", with: "new\n".utf8)
    }
    #expect(Scratch.names(in: folder) == ["taken"])
  }

  /// A disk that fills up midway: a process whose files may not grow past 4 KiB
  /// (RLIMIT_FSIZE, as a full disk's ENOSPC, the write fails with EFBIG) replaces a file with
  /// 64 KiB. The old file is whole and no temporary is left. The process is this test bundle
  /// again, running `fullDiskWorker` alone, so that the limit touches no other test.
  @Test func aDiskThatFillsUpMidwayLeavesTheOldFileWhole() throws {
    let folder = Scratch.folder()
    let path = folder + "/state.json"
    let old = String(repeating: "old state\n", count: 100)
    try replaceFile(path, with: old.utf8)
    var variables: [String] = []
    var entry = environ
    while let text = entry.pointee {
      variables.append(String(cString: text))
      entry += 1
    }
    let report = try makePipe()
    let pid: pid_t
    do {
      pid = try spawn(
        try #require(executablePath()),
        ["--testing-library", "swift-testing", "--filter", "fullDiskWorker"],
        descriptors: [1: .parent(report.write), 2: .sameAs(1)],
        environment: variables + ["HARK_FULL_DISK_WORKER=\(path)"])
    } catch {
      close(report.read)
      close(report.write)
      throw error
    }
    close(report.write)
    let output = String(decoding: Scratch.readAll(report.read), as: UTF8.self)
    close(report.read)
    #expect(waitForChild(pid) == .exited(0), "\(output)")
    #expect(output.contains("worker: refused with EFBIG"), "\(output)")
    #expect(Scratch.contents(path) == old)
    #expect(Scratch.names(in: folder) == ["state.json"])
  }

  /// A whole file comes back byte for byte: empty, larger than a read of 64 KiB, with no size
  /// to go by (a file of /proc, read on until its end); over the limit, refused.
  @Test func aWholeFileIsReadWhateverItsSizeSays() throws {
    let folder = Scratch.folder()
    let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    try replaceFile(folder + "/large", with: large)
    #expect(readWholeFile(folder + "/large") == .bytes(large))
    #expect(readWholeFile(folder + "/large", limit: 299_999) == .tooLarge)
    #expect(readWholeFile(folder + "/large", limit: 300_000) == .bytes(large))
    try replaceFile(folder + "/empty", with: [UInt8]())
    #expect(readWholeFile(folder + "/empty") == .bytes([]))
    #expect(readWholeFile(folder + "/none") == .missing)
    guard case .bytes(let status) = readWholeFile("/proc/self/status") else {
      Issue.record("/proc/self/status not read")
      return
    }
    #expect(String(decoding: status, as: UTF8.self).hasPrefix("Name:"))
    #expect(status.last == 0x0A)
  }

  /// The worker of the test above; does nothing unless it is that test's process.
  @Test func fullDiskWorker() throws {
    guard let path = environment("HARK_FULL_DISK_WORKER") else { return }
    signal(SIGXFSZ, SIG_IGN)
    var limit = rlimit(rlim_cur: 4_096, rlim_max: 4_096)
    try #require(setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0)
    do {
      try replaceFile(path, with: [UInt8](repeating: 0x2A, count: 65_536))
      Issue.record("64 KiB written past a 4 KiB limit")
    } catch {
      #expect(error.code == EFBIG && error.operation == "writing '\(path).tmp.\(getpid())'")
      if error.code == EFBIG { print("worker: refused with EFBIG") }
    }
  }
}
