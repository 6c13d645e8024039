import CALSA
import Glibc
import JackRoutes
import Platform
import SessionCore

/// Watches the headphone (and line-out, HDMI, ...) jacks of every sound card, and cards coming
/// and going, and reports outputs plugged and unplugged (G4, G5).
///
/// At start it opens each card's control device (`hw:N`, found with snd_card_next) and any
/// `extraControls` named in the ALSA configuration, reads their jack elements and subscribes to
/// their events; then one thread of its own polls them, a wake pipe, and an inotify watch on
/// /dev/snd for new cards. It wakes only when something happens: no timer runs while idle
/// (unless inotify is unavailable; then it looks for new cards every few seconds).
///
/// Thread contract: `events` may be consumed from any task, `outputs` read from any thread;
/// every ALSA call happens on the watcher's thread after `init` returns. Nothing is printed
/// (alsa-lib's own messages are silenced); trouble arrives as `.problem` events.
public final class JackWatcher: Sendable {
  /// Plugged and unplugged outputs and problems, in the order they happened. Finishes on `close`
  /// (or when the watcher is released: a task iterating the stream does not keep it alive).
  public let events: AsyncStream<JackEvent>
  private let continuation: AsyncStream<JackEvent>.Continuation
  /// What the caller's threads and the watcher thread share.
  private let shared = Locked(Shared())

  private struct Shared: Sendable {
    var outputs: [Route] = []
    var thread: JoinableThread?
    var wake: WakePipe?
  }

  /// The watcher thread's name, as `top -H` and /proc show it.
  static let threadName = "hark-jacks"

  /// How often cards are looked for when inotify is unavailable.
  static let rescanMilliseconds: Int32 = 3_000

  /// Starts watching every card, plus the control devices `extraControls` (ALSA names, e.g. a
  /// plugin's "fakejack" from `HARK_JACK_CONTROLS`).
  ///
  /// Returns once the cards present have been read, so `outputs` is already right; what is
  /// plugged in at start makes no events. A control that cannot be opened makes a `.problem`.
  public convenience init(extraControls: [String] = []) {
    self.init(extraControls: extraControls, cardDirectory: "/dev/snd")
  }

  /// Watches cards whose control nodes appear in `cardDirectory` (tests use a directory of
  /// their own to see the inotify path work).
  init(extraControls: [String], cardDirectory: String) {
    silenceALSALibraryErrors()
    (events, continuation) = AsyncStream.makeStream(of: JackEvent.self)

    let wake: WakePipe
    do { wake = try WakePipe() } catch {
      continuation.yield(
        .problem("cannot watch the headphone jacks: no pipe for a thread (\(error.reason))"))
      continuation.finish()
      return
    }

    // Watch /dev/snd before enumerating, so a card that appears in between is not missed.
    let loop = JackLoop(
      wakeReader: wake.readFD, nodes: CardNodes(directory: cardDirectory),
      extraControls: extraControls,
      report: { [continuation, shared] outputs, events in
        shared.withLock { $0.outputs = outputs }
        for event in events { continuation.yield(event) }
      })
    loop.start()

    // The loop goes to the thread, which releases it (closing every control) when it ends.
    let handOver = LoopHandOver(loop)
    let thread: JoinableThread
    do {
      thread = try JoinableThread(named: JackWatcher.threadName) { handOver.take().run() }
    } catch {
      preconditionFailure("cannot start the jack watcher's thread: \(error)")
    }
    shared.withLock {
      $0.thread = thread
      $0.wake = wake
    }
  }

  deinit { close() }

  /// Every output plugged in now, card by card (jacks whose value is on, and USB audio cards).
  /// Built-in speakers are not listed: they are always there and have no jack of their own.
  public var outputs: [Route] { shared.withLock { $0.outputs } }

  /// Stops watching: wakes the thread, waits for it to close every control device, and
  /// finishes `events`. Safe to call more than once, from any thread but the watcher's.
  public func close() {
    let running = shared.withLock { state -> (JoinableThread, WakePipe)? in
      guard let thread = state.thread, let wake = state.wake else { return nil }
      state.thread = nil
      state.wake = nil
      return (thread, wake)
    }
    guard let (thread, wake) = running else { return }
    // Both ends stay open until the thread is joined (`wake` is released after): writing to a
    // pipe nobody reads would raise SIGPIPE if the thread had already stopped.
    wake.wake()
    thread.join()
    continuation.finish()
  }

  /// The extra control devices named in `HARK_JACK_CONTROLS` (comma-separated ALSA control
  /// names, e.g. "fakejack" for the test card); empty when unset.
  public static func extraControlsFromEnvironment() -> [String] {
    guard let value = environment("HARK_JACK_CONTROLS") else { return [] }
    return value.split(separator: ",").map {
      String($0.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }.filter { !$0.isEmpty }
  }
}

/// Carries the loop, which is not Sendable, to the watcher's thread, which takes it once.
private final class LoopHandOver: @unchecked Sendable {
  private var loop: JackLoop?
  init(_ loop: JackLoop) { self.loop = loop }
  func take() -> JackLoop {
    guard let loop else { preconditionFailure("the jack loop was taken twice") }
    self.loop = nil
    return loop
  }
}

/// The watcher thread's state: the open controls, the pure `JackState`, and the poll loop.
/// Created on the caller's thread, which reads the cards present (`start`); from then on
/// touched only by the watcher thread, which releases it, closing every control, when `run`
/// returns. The wake pipe belongs to the `JackWatcher`.
private final class JackLoop {
  private let wakeReader: Int32
  private let nodes: CardNodes?
  private let extraControls: [String]
  private let report: @Sendable ([Route], [JackEvent]) -> Void
  private var controls: [JackControl] = []
  private var state = JackState()
  /// Controls we reported a problem for, so a rescan or a second inotify event says it once.
  private var reported: Set<String> = []

  init(
    wakeReader: Int32, nodes: CardNodes?, extraControls: [String],
    report: @escaping @Sendable ([Route], [JackEvent]) -> Void
  ) {
    self.wakeReader = wakeReader
    self.nodes = nodes
    self.extraControls = extraControls
    self.report = report
  }

  /// Reads every card present and the extra controls: the starting state, without events.
  func start() {
    var problems: [JackEvent] = []
    for name in cardControlNames() + extraControls
    where !controls.contains(where: { $0.name == name }) {
      do throws(ALSAError) {
        controls.append(try JackControl(name: name))
      } catch {
        reported.insert(name)
        problems.append(.problem(problem(name, error)))
      }
    }
    state = JackState(cards: controls.map(\.card))
    report(state.outputs, problems)
  }

  private func problem(_ name: String, _ error: ALSAError) -> String {
    "cannot watch the jacks of '\(name)': \(error.description)"
  }

  /// "hw:N" for every card ALSA knows of now (snd_card_next).
  private func cardControlNames() -> [String] {
    var names: [String] = []
    var card: Int32 = -1
    while snd_card_next(&card) == 0 && card >= 0 { names.append("hw:\(card)") }
    return names
  }

  /// Polls until woken through the pipe. Blocks in poll(2) with no timeout while idle.
  func run() {
    var slots: [pollfd] = []
    while true {
      slots.removeAll(keepingCapacity: true)
      slots.append(pollfd(fd: wakeReader, events: Int16(POLLIN), revents: 0))
      if let nodes { slots.append(pollfd(fd: nodes.fd, events: Int16(POLLIN), revents: 0)) }
      let fixed = slots.count
      var ranges: [Range<Int>] = []
      for control in controls {
        let start = slots.count
        let count = control.pollDescriptorCount
        slots.append(contentsOf: repeatElement(pollfd(), count: count))
        let filled = slots.withUnsafeMutableBufferPointer {
          control.fillPollDescriptors(
            UnsafeMutableBufferPointer(rebasing: $0[start..<start + count]))
        }
        slots.removeLast(count - filled)
        ranges.append(start..<start + filled)
      }
      let timeout: Int32 = nodes == nil ? JackWatcher.rescanMilliseconds : -1
      let ready = poll(&slots, nfds_t(slots.count), timeout)
      if ready < 0 {
        if errno == EINTR { continue }
        let reason = String(cString: strerror(errno))
        report(state.outputs, [.problem("stopped watching the headphone jacks (poll: \(reason))")])
        return
      }
      if slots[0].revents != 0 { return }
      var events: [JackEvent] = []
      // The controls first: `ranges` matches `controls` only until a card is opened or closed.
      var gone: [JackControl] = []
      for (control, range) in zip(controls, ranges) {
        let readiness = slots.withUnsafeMutableBufferPointer {
          control.readiness(UnsafeMutableBufferPointer(rebasing: $0[range]))
        }
        switch readiness {
        case .idle:
          continue
        case .events:
          do throws(ALSAError) {
            for observation in try control.readEvents() { events += state.observe(observation) }
          } catch {
            // ENODEV is a card unplugged, which its unplugged outputs say; anything else is odd.
            if error.code != -ENODEV { events.append(.problem(problem(control.name, error))) }
            gone.append(control)
          }
        case .gone:
          gone.append(control)
        }
      }
      for control in gone { events += vanish(control.name) }
      if fixed > 1, slots[1].revents != 0, let nodes {
        for change in nodes.readChanges() { events += handle(change) }
      }
      if ready == 0 { events += rescan() }
      if !events.isEmpty { report(state.outputs, events) }
    }
  }

  private func handle(_ change: CardNodes.Change) -> [JackEvent] {
    switch change {
    case .created(let card):
      return open("hw:\(card)", quietly: true)
    case .permissionsChanged(let card):
      return open("hw:\(card)", quietly: false)
    case .vanished(let card):
      return vanish("hw:\(card)")
    case .directoryAppeared:
      return rescan()
    }
  }

  /// Opens any card not yet watched.
  private func rescan() -> [JackEvent] {
    cardControlNames().flatMap { open($0, quietly: false) }
  }

  /// Opens a card that appeared. `quietly`: a node just created may not be accessible until
  /// udev sets its permissions (another inotify event follows), so a failure is not yet news.
  private func open(_ name: String, quietly: Bool) -> [JackEvent] {
    guard !controls.contains(where: { $0.name == name }) else { return [] }
    do throws(ALSAError) {
      let control = try JackControl(name: name)
      controls.append(control)
      reported.remove(name)
      return state.observe(.cardAppeared(control.card))
    } catch {
      if quietly || reported.contains(name) { return [] }
      reported.insert(name)
      return [.problem(problem(name, error))]
    }
  }

  /// Closes a control whose card went away and reports its outputs unplugged.
  private func vanish(_ name: String) -> [JackEvent] {
    controls.removeAll { $0.name == name }
    reported.remove(name)
    return state.observe(.cardVanished(control: name))
  }
}
