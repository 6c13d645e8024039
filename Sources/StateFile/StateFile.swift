import FoundationEssentials
import Glibc
import Platform
import PlayerCore

/// What the interface remembers between runs: the queue, where it was, shuffle and repeat.
public struct SavedState: Codable, Hashable, Sendable {
  /// The format's version; a file with another is not ours to read.
  public var version = 1
  /// The queue's files, absolute paths, in the user's order.
  public var queue: [String]
  /// The current entry's index in `queue`.
  public var current: Int?
  /// Seconds into the current entry.
  public var position: Double
  public var shuffle: Bool
  public var repeatMode: RepeatMode

  enum CodingKeys: String, CodingKey {
    case version, queue, current, position, shuffle
    case repeatMode = "repeat"
  }

  public init(
    queue: [String], current: Int?, position: Double, shuffle: Bool, repeatMode: RepeatMode
  ) {
    self.queue = queue
    self.current = current
    self.position = position
    self.shuffle = shuffle
    self.repeatMode = repeatMode
  }

  /// What `snapshot` has to keep: the queue, the current entry and its position `now`.
  public static func of(_ snapshot: PlayerSnapshot, now: UInt64) -> SavedState {
    let current = snapshot.current.flatMap { c in snapshot.queue.firstIndex { $0.id == c.id } }
    let position = snapshot.current != nil ? snapshot.position(at: now) : 0
    return SavedState(
      queue: snapshot.queue.map(\.path), current: current, position: position,
      shuffle: snapshot.shuffle, repeatMode: snapshot.repeatMode)
  }

  /// Why this state cannot be used as it is, or nil when it can.
  func problem() -> String? {
    if version != 1 { return "it is version \(version), not 1" }
    if queue.contains(where: { $0.isEmpty }) { return "the queue has an empty path" }
    if let c = current, !queue.indices.contains(c) {
      return "the current entry \(c) is not in the queue of \(queue.count)"
    }
    if !position.isFinite || position < 0 { return "the position \(position) is not a time" }
    return nil
  }
}

/// What reading the state file found.
public enum StateLoad: Hashable, Sendable {
  /// No file: a first run.
  case missing
  case restored(SavedState)
  /// The file is there but cannot be used; why, in plain words. It is left as it is.
  case damaged(String)
}

/// A problem writing the state file.
public struct StateFileError: Error, Hashable, Sendable, CustomStringConvertible {
  public var operation: String
  public var code: Int32
  public var description: String {
    "\(operation): \(String(cString: strerror(code)).lowercased())"
  }
}

/// `$XDG_STATE_HOME/hark/state.json`: read at start, written while the player runs
/// (`SaveSchedule`) and on quit, atomically (`replaceFile`: a temporary file, fsync, rename,
/// fsync of the folder), so a crash or a full disk leaves the old file.
public struct StateFile: Sendable {
  public let path: String

  public init(path: String) { self.path = path }

  /// The state file in `StatePaths.directory()`.
  public static var standard: StateFile? {
    StatePaths.directory().map { StateFile(path: $0 + "/state.json") }
  }

  /// Reads the file. Anything wrong with it is `.damaged` with the reason; the file is left.
  /// No file there (nor a folder for it: a state folder that is not one, which `prepare` says)
  /// is `.missing`.
  public func load() -> StateLoad {
    let bytes: [UInt8]
    switch readWholeFile(path, limit: 16 << 20) {
    case .bytes(let b): bytes = b
    case .missing: return .missing
    case .failed(let error) where error.code == ENOTDIR: return .missing
    case .failed(let error):
      return .damaged("cannot read it (\(String(cString: strerror(error.code)).lowercased()))")
    case .tooLarge: return .damaged("it is larger than 16 MiB")
    }
    if bytes.isEmpty { return .damaged("it is empty") }
    let state: SavedState
    do {
      // Decoded where the bytes lie: a copy into a Data was 5 MB more at the player's peak, as
      // it restored a queue of 50,000 paths.
      state = try bytes.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else {
          throw DecodingError.valueNotFound(
            SavedState.self, .init(codingPath: [], debugDescription: "no bytes"))
        }
        return try JSONDecoder().decode(
          SavedState.self,
          from: Data(
            bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: raw.count,
            deallocator: .none))
      }
    } catch {
      return .damaged("it is not a hark state file (\(error))")
    }
    if let problem = state.problem() { return .damaged(problem) }
    return .restored(state)
  }

  /// Writes `state` so that a reader sees the old file or the new one, never a torn one.
  /// Written a part at a time (`SavedState.json`): the player saves while it runs, and
  /// JSONEncoder held a queue of 50,000 paths whole, twice over (its tree and its 5 MB of
  /// output), which stayed in the player's memory after the save.
  public func save(_ state: SavedState) throws(StateFileError) {
    do {
      try replaceFile(path) { fd throws(SystemError) in
        try state.json { part throws(SystemError) in try writeAll(fd, part) }
      }
    } catch {
      throw StateFileError(operation: error.operation, code: error.code)
    }
  }

  /// Gets the folder ready before anything is played, so that a kill or a folder that cannot be
  /// written loses nothing unsaid: removes the temporaries of saves that a kill interrupted
  /// (`state.json.tmp.<pid>` of a process that is gone; a running hark's is left alone), and says
  /// at once, not only on quit, when the queue cannot be saved there. Returns the problem in words,
  /// or nil.
  public func prepare() -> String? {
    let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    makeDirectories(folder)
    if let dir = opendir(folder) {
      defer { closedir(dir) }
      let prefix = name + ".tmp."
      while let entry = readdir(dir) {
        let file = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard file.hasPrefix(prefix), let pid = Int32(file.dropFirst(prefix.count)), pid > 0
        else { continue }
        if pid == getpid() || kill(pid, 0) == 0 || errno == EPERM { continue }
        unlink(folder + "/" + file)
      }
    }
    // A probe with the name of the temporary a save makes (`replaceFile`'s), so that what would
    // stop a save is seen now.
    let probe = path + ".tmp.\(getpid())"
    let fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      return "the queue cannot be saved on quit: '\(folder)' is not writable "
        + "(\(String(cString: strerror(errno)).lowercased())); fix that folder or set "
        + "XDG_STATE_HOME to one that is"
    }
    close(fd)
    unlink(probe)
    return nil
  }

  /// Moves a damaged file out of the way (to `state.json.damaged`) so that saving does not
  /// destroy it; returns the new path.
  public func setAside() -> String? {
    let aside = path + ".damaged"
    return rename(path, aside) == 0 ? aside : nil
  }
}

/// Where the interface keeps its state and its log.
public enum StatePaths {
  /// `$XDG_STATE_HOME/hark`, else `~/.local/state/hark`; nil without a home.
  public static func directory() -> String? { XDGDirectory.state.path.map { $0 + "/hark" } }

  /// `hark.log` in `directory()`: where stderr goes while the interface owns the terminal.
  public static func log() -> String? { directory().map { $0 + "/hark.log" } }
}

extension SavedState {
  /// The state as JSON, laid out as JSONEncoder lays it out (pretty-printed, keys sorted, slashes
  /// as they are), handed to `emit` in parts of about `chunk` bytes.
  func json(chunk: Int = 1 << 16, _ emit: ([UInt8]) throws(SystemError) -> Void)
    throws(SystemError)
  {
    var out: [UInt8] = []
    out.reserveCapacity(chunk + 4096)
    out += "{\n".utf8
    if let current { out += "  \"current\" : \(current),\n".utf8 }
    out += "  \"position\" : \(position.isFinite ? position : 0),\n  \"queue\" : [".utf8
    for (i, path) in queue.enumerated() {
      out += (i == 0 ? "\n    " : ",\n    ").utf8
      Self.append(string: path, to: &out)
      if out.count >= chunk {
        try emit(out)
        out.removeAll(keepingCapacity: true)
      }
    }
    out += (queue.isEmpty ? "\n\n  ],\n" : "\n  ],\n").utf8
    out += "  \"repeat\" : \"\(repeatMode.rawValue)\",\n  \"shuffle\" : \(shuffle),\n".utf8
    out += "  \"version\" : \(version)\n}\n".utf8
    try emit(out)
  }

  /// `text` as a JSON string: quoted, its quotes, backslashes and control characters escaped.
  static func append(string text: String, to out: inout [UInt8]) {
    out.append(0x22)
    // A path is almost always plain: its bytes are copied as a run, not one at a time.
    let plain = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
      guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return false }
      out.append(contentsOf: bytes)
      return true
    }
    if plain != true { appendEscaped(text, to: &out) }
    out.append(0x22)
  }

  private static func appendEscaped(_ text: String, to out: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    for byte in text.utf8 {
      switch byte {
      case 0x22, 0x5C: out += [0x5C, byte]
      case 0x0A: out += [0x5C, UInt8(ascii: "n")]
      case 0x0D: out += [0x5C, UInt8(ascii: "r")]
      case 0x09: out += [0x5C, UInt8(ascii: "t")]
      case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
      default: out.append(byte)
      }
    }
  }
}
