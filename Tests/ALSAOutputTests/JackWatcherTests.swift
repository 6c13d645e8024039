import Glibc
import JackRoutes
import Platform
import SessionCore
import Testing

@testable import ALSAOutput

/// Whether this machine has sound cards (/dev/snd/controlC*): tests that expect none skip then.
let machineHasCards = entryNames(of: "/dev/snd").contains { $0.hasPrefix("controlC") }

/// Collects a watcher's events on a task of its own.
final class EventLog: Sendable {
  private final class Seen: Sendable {
    let list = Locked<[JackEvent]>([])
    let ended = Locked(false)
  }
  private let seen = Seen()
  private let task: Task<Void, Never>

  /// Holds the stream, not the watcher, so the watcher's deinit still closes it.
  init(_ watcher: JackWatcher) {
    let seen = self.seen
    let events = watcher.events
    task = Task {
      for await event in events { seen.list.withLock { $0.append(event) } }
      seen.ended.withLock { $0 = true }
    }
  }

  /// Whether the stream ends within `limit` (polled: a stream that never ends fails, not hangs).
  func ends(within limit: Duration) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
      if seen.ended.withLock({ $0 }) { return true }
      try? await Task.sleep(for: .milliseconds(5))
    }
    return seen.ended.withLock { $0 }
  }

  var events: [JackEvent] { seen.list.withLock { $0 } }

  /// Waits until the stream has finished (the watcher was closed).
  func finished() async { await task.value }
}

@Suite(.timeLimit(.minutes(2))) struct JackWatcherTests {
  @Test(.disabled(if: machineHasCards, "this machine has sound cards"))
  func withNoCardsItReportsNothing() async {
    let watcher = JackWatcher(extraControls: [])
    #expect(watcher.outputs == [])
    let log = EventLog(watcher)
    try? await Task.sleep(for: .milliseconds(300))
    watcher.close()
    await log.finished()
    #expect(log.events == [])
  }

  @Test func aControlThatCannotBeOpenedIsAProblem() async {
    let watcher = JackWatcher(extraControls: ["hark-no-such-control"])
    let log = EventLog(watcher)
    watcher.close()
    await log.finished()
    let problems = log.events.filter {
      if case .problem(let text) = $0 { return text.contains("'hark-no-such-control'") }
      return false
    }
    #expect(problems.count == 1, "\(log.events)")
  }

  @Test func closeIsIdempotentAndDeinitCloses() async throws {
    let watcher = JackWatcher()
    let log = EventLog(watcher)
    watcher.close()
    watcher.close()
    // Each stream ends (closed twice, or its watcher gone), within a second, with no problem.
    #expect(await log.ends(within: .seconds(1)), "close did not end the events")
    #expect(!log.events.contains { if case .problem = $0 { true } else { false } }, "\(log.events)")
    var other: JackWatcher? = JackWatcher()
    let otherLog = try #require(other.map(EventLog.init))
    other = nil
    #expect(await otherLog.ends(within: .seconds(1)), "deinit did not close")
  }

  @Test func aControlNodeAppearingIsOpened() async {
    // A node in a directory of our own cannot be opened as hw:7 (ALSA looks in /dev/snd), which
    // shows the watcher tried: quietly when the node is created (udev may not have granted
    // access yet), then with a problem when its permissions change and it still fails.
    let root = makeTemporaryDirectory("hark-jacks-snd")
    defer { removeDirectory(root) }
    let watcher = JackWatcher(extraControls: [], cardDirectory: root)
    let log = EventLog(watcher)
    writeFile(root + "/controlC7", "")
    try? await Task.sleep(for: .milliseconds(200))
    #expect(log.events == [])
    chmod(root + "/controlC7", 0o600)
    let deadline = ContinuousClock.now + .seconds(5)
    while log.events.isEmpty && ContinuousClock.now < deadline {
      try? await Task.sleep(for: .milliseconds(10))
    }
    watcher.close()
    await log.finished()
    #expect(log.events.count == 1)
    guard case .problem(let text) = log.events.first else {
      Issue.record("expected a problem, got \(log.events)")
      return
    }
    #expect(text.hasPrefix("cannot watch the jacks of 'hw:7': "))
  }

  @Test func extraControlsComeFromTheEnvironment() {
    // Read only in this test; other tests do not use the variable.
    setenv("HARK_JACK_CONTROLS", " fakejack, hw:9 ,,", 1)
    defer { unsetenv("HARK_JACK_CONTROLS") }
    #expect(JackWatcher.extraControlsFromEnvironment() == ["fakejack", "hw:9"])
  }
}

/// The probe in a process of its own with no cards: nothing is reported, nothing runs.
@Suite(.timeLimit(.minutes(2))) struct IdleProbeTests {
  @Test(.disabled(if: machineHasCards, "this machine has sound cards"))
  func withNoCardsTheProbeReportsNothingAndSleeps() async {
    let home = makeTemporaryDirectory("hark-jacks-home")
    defer { removeDirectory(home) }
    let probe = Child(
      [binaryDirectory() + "/JackProbe"], environment: ["HOME": home, "PATH": "/usr/bin:/bin"])
    #expect(await probe.nextLine() == "outputs: ")
    let idle = await idleActivity(of: probe.pid, thread: JackWatcher.threadName)
    #expect(idle.ticks <= 1, "the idle watcher used CPU")
    #expect(idle.switches <= 1, "the idle watcher woke up")
    #expect(await probe.linesDuring(.milliseconds(100)) == [])
    let end = await probe.finish()
    #expect(end.status == 0)
    #expect(end.errors == "")
  }
}
