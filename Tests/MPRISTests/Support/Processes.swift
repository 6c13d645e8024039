import Glibc
import Platform
import Testing

/// What a finished command printed and how it ended.
struct CommandOutput: Sendable, CustomStringConvertible {
  var status: Int32
  var stdout: String
  var stderr: String

  /// stdout without its trailing newline.
  var text: String {
    var s = stdout
    while s.hasSuffix("\n") { s.removeLast() }
    return s
  }

  var description: String { "exit \(status), stdout '\(stdout)', stderr '\(stderr)'" }
}

/// A child process started with Platform's spawn, with stdin from /dev/null.
struct ChildProcess: Sendable {
  let pid: pid_t

  /// Starts `arguments[0]` (looked up on PATH) with exactly `environment`; `stdout` and `stderr`
  /// are descriptors to give the child (nil: /dev/null).
  static func spawn(
    _ arguments: [String], environment: [String: String], stdout: Int32?, stderr: Int32?
  ) -> ChildProcess? {
    var descriptors: [Int32: ChildDescriptor] = [:]
    if let stdout { descriptors[1] = .parent(stdout) }
    if let stderr { descriptors[2] = .parent(stderr) }
    do {
      let pid = try Platform.spawn(
        arguments[0], Array(arguments.dropFirst()), descriptors: descriptors,
        environment: environment.map { "\($0.key)=\($0.value)" })
      return ChildProcess(pid: pid)
    } catch {
      Issue.record("cannot start '\(arguments[0])': \(error.reason)")
      return nil
    }
  }

  /// Sends SIGTERM, and SIGKILL if the child is still there a second later; reaps it.
  func terminate() {
    kill(pid, SIGTERM)
    _ = waitForChild(pid, killingAfter: .seconds(1))
  }

  /// Waits for the child to exit; its exit code (128 + signal if killed).
  func wait() -> Int32 {
    switch waitForChild(pid) {
    case .exited(let status): status
    case .signaled(let signal): 128 + signal
    case nil: -1
    }
  }
}

/// A pipe whose read end this process keeps (`makePipe`: close-on-exec from the start).
struct Pipe {
  let readEnd: Int32
  let writeEnd: Int32

  init() {
    guard let ends = try? makePipe() else { preconditionFailure("pipe failed") }
    (readEnd, writeEnd) = ends
  }
}

/// Runs a command to completion (killed after `timeout`) and collects what it printed.
func runCommand(
  _ arguments: [String], environment: [String: String], timeout: Duration = .seconds(10)
) -> CommandOutput {
  let out = Pipe()
  let err = Pipe()
  guard
    let child = ChildProcess.spawn(
      arguments, environment: environment, stdout: out.writeEnd, stderr: err.writeEnd)
  else {
    close(out.readEnd)
    close(err.readEnd)
    close(out.writeEnd)
    close(err.writeEnd)
    return CommandOutput(status: -1, stdout: "", stderr: "not started")
  }
  close(out.writeEnd)
  close(err.writeEnd)
  defer {
    close(out.readEnd)
    close(err.readEnd)
  }
  var collected: [Int32: [UInt8]] = [out.readEnd: [], err.readEnd: []]
  var open: Set<Int32> = [out.readEnd, err.readEnd]
  let deadline = ContinuousClock.now + timeout
  var buffer = [UInt8](repeating: 0, count: 4096)
  while !open.isEmpty {
    let left = deadline - ContinuousClock.now
    if left <= .zero {
      kill(child.pid, SIGKILL)
      Issue.record("'\(arguments.joined(separator: " "))' did not finish within \(timeout)")
      break
    }
    var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    let ms = Int32(min(left.components.seconds * 1000 + 1, 1000))
    guard poll(&fds, nfds_t(fds.count), ms) > 0 else { continue }
    for p in fds where p.revents != 0 {
      let n = read(p.fd, &buffer, buffer.count)
      if n > 0 {
        collected[p.fd, default: []] += buffer[0..<n]
      } else {
        open.remove(p.fd)
      }
    }
  }
  let status = child.wait()
  return CommandOutput(
    status: status,
    stdout: String(decoding: collected[out.readEnd] ?? [], as: UTF8.self),
    stderr: String(decoding: collected[err.readEnd] ?? [], as: UTF8.self))
}

/// Polls `condition` every 20 ms until it holds or `timeout` passes; records an issue on
/// timeout, describing the last state with `describe`.
@discardableResult
func waitUntil(
  _ what: String, timeout: Duration = .seconds(5), describe: () -> String = { "" },
  _ condition: () -> Bool
) async -> Bool {
  let deadline = ContinuousClock.now + timeout
  while ContinuousClock.now < deadline {
    if condition() { return true }
    try? await Task.sleep(for: .milliseconds(20))
  }
  if condition() { return true }
  Issue.record("\(what) did not happen within \(timeout). \(describe())")
  return false
}

/// A fresh directory under /tmp, removed with `removeDirectory`.
func makeTemporaryDirectory(_ prefix: String) -> String {
  var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
  let made = template.withUnsafeMutableBufferPointer {
    mkdtemp($0.baseAddress!).map { String(cString: $0) }
  }
  guard let made else { preconditionFailure("mkdtemp failed") }
  return made
}

func removeDirectory(_ path: String) {
  _ = runCommand(["rm", "-rf", path], environment: ["PATH": "/usr/bin:/bin"])
}

/// The whole content of a file, or "" if it cannot be read.
func readFile(_ path: String) -> String {
  let fd = open(path, O_RDONLY)
  guard fd >= 0 else { return "" }
  defer { close(fd) }
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 4096)
  while true {
    let n = read(fd, &buffer, buffer.count)
    if n <= 0 { break }
    bytes += buffer[0..<n]
  }
  return String(decoding: bytes, as: UTF8.self)
}
