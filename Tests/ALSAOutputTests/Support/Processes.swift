import Glibc
import Platform
import Testing

/// A fresh directory under /tmp; `removeDirectory` takes it away with everything in it.
func makeTemporaryDirectory(_ prefix: String) -> String {
  var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
  let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
  precondition(made != nil, "mkdtemp failed")
  let bytes = template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
  return String(decoding: bytes, as: UTF8.self)
}

/// The names in directory `path` but "." and ".."; empty if it cannot be read.
func entryNames(of path: String) -> [String] {
  guard let directory = opendir(path) else { return [] }
  defer { closedir(directory) }
  var names: [String] = []
  while let entry = readdir(directory) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) {
      String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self)
    }
    if name != "." && name != ".." { names.append(name) }
  }
  return names
}

/// Removes `path` and what is under it, without following links.
func removeDirectory(_ path: String) {
  for name in entryNames(of: path) {
    let item = path + "/" + name
    var info = stat()
    if lstat(item, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
      removeDirectory(item)
    } else {
      unlink(item)
    }
  }
  rmdir(path)
}

/// Writes `text` to `path` the way an atomic update should: a temporary beside it, renamed over.
func writeFile(_ path: String, _ text: String) {
  let temporary = path + ".new"
  let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
  precondition(fd >= 0, "cannot write '\(temporary)'")
  var bytes = Array(text.utf8)
  precondition(write(fd, &bytes, bytes.count) == bytes.count)
  close(fd)
  precondition(rename(temporary, path) == 0)
}

/// The directory the test binary is in, where SwiftPM also puts the package's executables.
func binaryDirectory() -> String {
  var buffer = [CChar](repeating: 0, count: 4096)
  let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
  precondition(n > 0, "readlink /proc/self/exe failed")
  var path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  // On Linux the tests run from <bin>/<package>PackageTests.xctest, a file in <bin>.
  while !path.isEmpty && !path.hasSuffix("/") { path.removeLast() }
  return String(path.dropLast())
}

/// Whether `name` is an executable file in one of PATH's directories.
func isOnPath(_ name: String) -> Bool {
  let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
  return path.split(separator: ":").contains { access("\($0)/\(name)", X_OK) == 0 }
}

/// A child process with pipes on its standard input, output and error. Its output is read line
/// by line without blocking a thread; closing its input asks it to finish.
final class Child {
  let pid: pid_t
  private var input: Int32
  private let output: Int32
  private let errors: Int32
  private var pending: [UInt8] = []
  private var errorBytes: [UInt8] = []
  /// Every line read so far, for failure messages.
  private(set) var transcript: [String] = []

  /// Starts `arguments[0]` (a path) with exactly `environment`.
  init(_ arguments: [String], environment: [String: String]) {
    guard let toChild = try? makePipe(), let fromChild = try? makePipe(nonBlockingRead: true),
      let errorsFromChild = try? makePipe(nonBlockingRead: true)
    else { preconditionFailure("no pipes for '\(arguments[0])'") }
    do {
      pid = try spawn(
        arguments[0], Array(arguments.dropFirst()),
        descriptors: [
          0: .parent(toChild.read), 1: .parent(fromChild.write), 2: .parent(errorsFromChild.write),
        ], environment: environment.map { "\($0.key)=\($0.value)" })
    } catch {
      preconditionFailure("cannot start '\(arguments[0])': \(error.reason)")
    }
    close(toChild.read)
    close(fromChild.write)
    close(errorsFromChild.write)
    input = toChild.write
    output = fromChild.read
    errors = errorsFromChild.read
  }

  deinit {
    if input >= 0 { close(input) }
    close(output)
    close(errors)
  }

  /// The next line the child prints, or nil if none comes within `timeout` or it exits first.
  func nextLine(within timeout: Duration = .seconds(5)) async -> String? {
    let deadline = ContinuousClock.now + timeout
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: pending[..<newline], as: UTF8.self)
        pending.removeSubrange(...newline)
        transcript.append(line)
        return line
      }
      let n = read(output, &buffer, buffer.count)
      if n > 0 {
        pending += buffer[0..<n]
        continue
      }
      if n == 0 || ContinuousClock.now >= deadline { return nil }
      try? await Task.sleep(for: .milliseconds(10))
    }
  }

  /// Lines printed within `duration`, waiting all of it: for "and nothing else happened".
  func linesDuring(_ duration: Duration) async -> [String] {
    var lines: [String] = []
    let deadline = ContinuousClock.now + duration
    while ContinuousClock.now < deadline {
      if let line = await nextLine(within: deadline - ContinuousClock.now) { lines.append(line) }
    }
    return lines
  }

  /// Closes the child's input (the probe's signal to stop) and waits up to `timeout` for it to
  /// exit, killing it after that. Returns its exit status (128 + signal if killed) and what it
  /// wrote to standard error.
  func finish(within timeout: Duration = .seconds(5)) async -> (status: Int32, errors: String) {
    if input >= 0 { close(input) }
    input = -1
    let deadline = ContinuousClock.now + timeout
    var status: Int32 = 0
    var reaped = waitpid(pid, &status, WNOHANG) == pid
    while !reaped && ContinuousClock.now < deadline {
      try? await Task.sleep(for: .milliseconds(10))
      reaped = waitpid(pid, &status, WNOHANG) == pid
    }
    if !reaped {
      kill(pid, SIGKILL)
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = read(errors, &buffer, buffer.count)
      if n <= 0 { break }
      errorBytes += buffer[0..<n]
    }
    let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (code, String(decoding: errorBytes, as: UTF8.self))
  }
}

/// CPU time (clock ticks) of every thread of process `pid`, and context switches of its threads
/// named `thread` (every thread if nil), from /proc.
func activity(of pid: pid_t, thread: String? = nil) -> (ticks: Int, switches: Int) {
  var ticks = 0
  var switches = 0
  for task in entryNames(of: "/proc/\(pid)/task") {
    let stat = readSmallFile("/proc/\(pid)/task/\(task)/stat")
    // Fields after the ")" that ends the command name: state is 3rd, utime 14th, stime 15th.
    if let close = stat.lastIndex(of: ")") {
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      if fields.count > 13 { ticks += (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) }
    }
    let status = readSmallFile("/proc/\(pid)/task/\(task)/status").split(separator: "\n")
    if let thread, !status.contains(where: { $0 == "Name:\t\(thread)" }) { continue }
    for line in status where line.contains("ctxt_switches:") {
      switches += Int(line.split(separator: "\t").last ?? "") ?? 0
    }
  }
  return (ticks, switches)
}

/// How much process `pid` ran (every thread) and how often its thread `thread` woke during
/// `duration`. A watcher that spins shows ticks; one that polls on a timer, even once a second,
/// shows switches. (The Swift runtime's own dispatch thread wakes about once a second; it is
/// not ours to judge, so only the named thread's wakes count.)
func idleActivity(of pid: pid_t, thread: String, during duration: Duration = .seconds(2)) async
  -> (ticks: Int, switches: Int)
{
  // Let start-up finish, even on a busy machine: the tick count must be still for 300 ms.
  let deadline = ContinuousClock.now + .seconds(5)
  var last = activity(of: pid, thread: thread)
  while ContinuousClock.now < deadline {
    try? await Task.sleep(for: .milliseconds(300))
    let now = activity(of: pid, thread: thread)
    if now == last { break }
    last = now
  }
  let before = activity(of: pid, thread: thread)
  try? await Task.sleep(for: duration)
  let after = activity(of: pid, thread: thread)
  return (after.ticks - before.ticks, after.switches - before.switches)
}

private func readSmallFile(_ path: String) -> String {
  let fd = open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { return "" }
  defer { close(fd) }
  var buffer = [UInt8](repeating: 0, count: 8192)
  let n = read(fd, &buffer, buffer.count)
  return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
}
