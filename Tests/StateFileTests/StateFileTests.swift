import AudioTestSupport
import Glibc
import Platform
import PlayerCore
import Testing

@testable import StateFile

@Suite(.timeLimit(.minutes(2))) struct StateFileTests {
  private func temporaryFolder() -> String { ScratchFolders.make("state") }

  private func write(_ text: String, to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    var bytes = Array(text.utf8)
    _ = Glibc.write(fd, &bytes, bytes.count)
    close(fd)
  }

  private func contents(_ path: String) -> String? {
    guard let f = fopen(path, "r") else { return nil }
    defer { fclose(f) }
    var out: [UInt8] = []
    var c = fgetc(f)
    while c != EOF {
      out.append(UInt8(c))
      c = fgetc(f)
    }
    return String(decoding: out, as: UTF8.self)
  }

  private func files(in folder: String) -> [String] { (folderEntries(folder) ?? []).sorted() }

  let sample = SavedState(
    queue: ["/music/a b.flac", "/music/夜行列車.mp3", "/music/c.ogg"], current: 1, position: 83.25,
    shuffle: true, repeatMode: .one)

  @Test func roundTrip() throws {
    let folder = temporaryFolder()
    let file = StateFile(path: folder + "/hark/state.json")
    #expect(file.load() == .missing)
    try file.save(sample)
    #expect(file.load() == .restored(sample))
    // Saved again over itself, and nothing else left in the folder (no temporary file).
    var changed = sample
    changed.position = 1
    try file.save(changed)
    #expect(file.load() == .restored(changed))
    #expect(files(in: folder + "/hark") == ["state.json"])
  }

  /// A queue of a whole library (read into a buffer of the file's size, larger than a read
  /// brings at once) comes back whole; a file over 16 MiB is refused unread, and left.
  @Test func aLargeQueueIsReadWholeAndAHugeFileRefused() throws {
    let folder = temporaryFolder()
    let file = StateFile(path: folder + "/state.json")
    var large = sample
    large.queue = (0..<20_000).map { "/music/Artist \($0 / 100)/Album/\($0) Track Zoë.flac" }
    try file.save(large)
    #expect(file.load() == .restored(large))
    write(String(repeating: " ", count: (16 << 20) + 1), to: file.path)
    #expect(file.load() == .damaged("it is larger than 16 MiB"))
    #expect(files(in: folder) == ["state.json"])
  }

  /// The file is written a part at a time by hark's own writer: random queues of names with
  /// quotes, backslashes, control characters, slashes and any script come back as they were,
  /// however small the parts, and each part but the last is at least as long as asked.
  @Test(arguments: 0..<8) func anyQueueWrittenInPartsComesBackAsItWas(seed: Int) throws {
    var random = SeededRandom(seed: UInt64(seed) &+ 0x57A7E)
    let pieces = [
      "\"", "\\", "/", "\n", "\t", "\r", "\u{1}", "\u{1F}", "\u{7F}", "é", "夜", "🎵",
      "a b", "\u{2028}", "\\u0041", "{", "]", ",",
    ]
    var state = sample
    state.queue = (0..<Int.random(in: 0...300, using: &random)).map { _ in
      "/"
        + (0..<Int.random(in: 1...12, using: &random)).map { _ in
          pieces[Int.random(in: 0..<pieces.count, using: &random)]
        }.joined()
    }
    state.current =
      state.queue.isEmpty ? nil : Int.random(in: 0..<state.queue.count, using: &random)
    state.position = [0, 12, 0.1, 1e-7, 3599.999, 86_400.5][Int.random(in: 0..<6, using: &random)]
    state.shuffle = Bool.random(using: &random)
    state.repeatMode = RepeatMode.allCases[Int.random(in: 0..<3, using: &random)]
    let chunk = [1, 7, 100, 1 << 16][seed % 4]
    var parts: [[UInt8]] = []
    try state.json(chunk: chunk) { parts.append($0) }
    #expect(parts.dropLast().allSatisfy { $0.count >= chunk })
    let folder = temporaryFolder()
    let file = StateFile(path: folder + "/state.json")
    write(String(decoding: parts.joined(), as: UTF8.self), to: file.path)
    #expect(file.load() == .restored(state))
    try file.save(state)
    #expect(file.load() == .restored(state))
  }

  /// A name that is not UTF-8 (Latin-1 "café") comes back as the very bytes.
  @Test func aNameThatIsNotUTF8RoundTrips() throws {
    let folder = temporaryFolder()
    let file = StateFile(path: folder + "/state.json")
    let latin1 = "/music/" + FileName.string(Array("caf".utf8) + [0xE9] + Array(".flac".utf8))
    var state = sample
    state.queue = [latin1, "/music/x.ogg"]
    try file.save(state)
    guard case .restored(let back) = file.load() else {
      Issue.record("not restored: \(file.load())")
      return
    }
    #expect(back.queue == state.queue)
    #expect(
      FileName.bytes(back.queue[0]) == Array("/music/caf".utf8) + [0xE9] + Array(".flac".utf8))
  }

  /// A kill during a save left `state.json.tmp.<pid>` behind for ever. At start the temporaries of
  /// processes that are gone are removed; a running process's is left.
  @Test func staleTemporariesOfDeadProcessesAreRemovedAtStart() throws {
    let folder = temporaryFolder()
    let file = StateFile(path: folder + "/state.json")
    try file.save(sample)
    // A pid that surely is gone: a child that has exited and been reaped.
    let child = try spawn("/bin/true", [])
    #expect(waitForChild(child) == .exited(0))
    write("half a save", to: folder + "/state.json.tmp.\(child)")
    write("a save under way", to: folder + "/state.json.tmp.1")  // init: always alive
    write("not ours", to: folder + "/state.json.tmp.notapid")
    #expect(file.prepare() == nil)
    #expect(
      files(in: folder) == ["state.json", "state.json.tmp.1", "state.json.tmp.notapid"])
    #expect(file.load() == .restored(sample), "the state file itself is untouched")
  }

  /// A folder where the state cannot be saved is said at start, not only on quit.
  @Test func anUnwritableStateFolderIsSaidAtStart() {
    let file = StateFile(path: "/dev/null/hark/state.json")
    let problem = file.prepare()
    #expect(problem?.contains("'/dev/null/hark' is not writable") == true, "\(problem ?? "nil")")
    #expect(problem?.contains("XDG_STATE_HOME") == true)
  }

  @Test func theFileIsReadableJSON() throws {
    let folder = temporaryFolder()
    let file = StateFile(path: folder + "/state.json")
    try file.save(sample)
    let text = contents(file.path) ?? ""
    #expect(text.contains("\"queue\""))
    #expect(text.contains("\"repeat\" : \"one\""))
    #expect(text.contains("/music/a b.flac"))  // slashes not escaped
  }

  @Test(arguments: [
    ("", "empty"),
    ("{", "not JSON"),
    ("not json at all", "garbage"),
    (#"{"version": 1}"#, "fields missing"),
    (#"{"version": 2, "queue": [], "position": 0, "shuffle": false, "repeat": "off"}"#, "version"),
    (
      #"{"version": 1, "queue": ["/a"], "current": 5, "position": 0, "shuffle": false, "repeat": "off"}"#,
      "index"
    ),
    (
      #"{"version": 1, "queue": ["/a"], "current": 0, "position": -4, "shuffle": false, "repeat": "off"}"#,
      "position"
    ),
    (
      #"{"version": 1, "queue": ["/a"], "current": 0, "position": 0, "shuffle": false, "repeat": "twice"}"#,
      "repeat"
    ),
  ])
  func damagedFilesAreReportedAndLeftAlone(text: String, what: String) {
    let folder = temporaryFolder()
    let file = StateFile(path: folder + "/state.json")
    write(text, to: file.path)
    guard case .damaged(let why) = file.load() else {
      Issue.record("a \(what) state file was accepted")
      return
    }
    #expect(!why.isEmpty)
    // Reading it changed nothing.
    #expect(contents(file.path) == text)
    #expect(files(in: folder) == ["state.json"])
  }

  @Test func aDamagedFileIsSetAsideNotDeleted() throws {
    let folder = temporaryFolder()
    let file = StateFile(path: folder + "/state.json")
    write("{ broken", to: file.path)
    #expect(file.setAside() == folder + "/state.json.damaged")
    try file.save(sample)
    #expect(contents(folder + "/state.json.damaged") == "{ broken")
    #expect(file.load() == .restored(sample))
  }

  @Test func aFailedSaveLeavesTheOldFile() throws {
    let folder = temporaryFolder()
    let file = StateFile(path: folder + "/state.json")
    try file.save(sample)
    let before = contents(file.path)
    // A folder where the temporary file would go makes creating it fail.
    mkdir(file.path + ".tmp.\(getpid())", 0o700)
    #expect(throws: StateFileError.self) {
      try file.save(
        SavedState(queue: [], current: nil, position: 0, shuffle: false, repeatMode: .off))
    }
    #expect(contents(file.path) == before)
  }
}

/// A state folder that is not a folder (XDG_STATE_HOME pointing into a file): no saved queue,
/// not a damaged one (`prepare` says the queue cannot be saved there).
@Test func aStateFolderThatIsNoFolderHoldsNoSavedQueue() {
  #expect(StateFile(path: "/dev/null/state/hark/state.json").load() == .missing)
}
