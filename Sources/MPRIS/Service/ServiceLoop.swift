import CDBus
import Glibc
import Platform

/// The service thread: the only code that touches the connection.
///
/// It polls the bus socket and the wake pipe. On a wake it carries out the owner's events in
/// order (signals, name requests); on bus input it answers calls from a snapshot of the owner's
/// state and yields the requests the calls make, each before its reply goes out, so a client
/// that has its reply knows the owner has the request.
final class ServiceLoop: @unchecked Sendable {
  // Everything below is touched by the service thread only, after init.
  private let connection: BusConnection
  private let mailbox: Mailbox
  private let wake: WakePipe
  private let object: MediaPlayerObject
  private let requests: AsyncStream<MPRISRequest>.Continuation
  /// The well-known name this connection owns, if any.
  private var ownedName: String?
  /// Senders asked about already: whether each is the sound server's session manager.
  private var policySenders: [String: Bool] = [:]
  /// The state the last PropertiesChanged described (or the one current when the name was
  /// taken): what the next state is compared with.
  private var published: MPRISState

  init(
    connection: BusConnection, mailbox: Mailbox, wake: WakePipe, object: MediaPlayerObject,
    requests: AsyncStream<MPRISRequest>.Continuation
  ) {
    self.connection = connection
    self.mailbox = mailbox
    self.wake = wake
    self.object = object
    self.requests = requests
    published = mailbox.contents.withLock { $0.state }
  }

  /// Serves until the owner closes the server or the bus goes away.
  func run() {
    defer { finish() }
    guard let socket = connection.socket else { return }
    while true {
      let events = mailbox.contents.withLock { c in
        defer { c.events = [] }
        return c.events
      }
      for event in events {
        guard apply(event) else { return }
      }
      while let message = connection.popMessage() {
        guard handle(message) else { return }
      }
      connection.flush()

      var fds = [
        pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0),
      ]
      // No timeout: every owner event writes to the pipe after it is queued, so an event posted
      // after the queue was taken above still wakes this poll.
      if poll(&fds, 2, -1) < 0 {
        if errno == EINTR { continue }
        return
      }
      if fds[1].revents != 0 { wake.drain() }
      if fds[0].revents != 0 {
        // False once disconnected; libdbus has then queued a Disconnected signal, but there is
        // nothing left to do.
        guard connection.readWrite() else { return }
      }
    }
  }

  // MARK: Owner events

  /// Carries out one owner event; false to stop.
  private func apply(_ event: OwnerEvent) -> Bool {
    switch event {
    case .stateChanged(let state):
      defer { published = state }
      guard ownedName != nil else { return true }
      let changed = MediaPlayerObject.changedProperties(from: published, to: state)
      guard !changed.isEmpty else { return true }
      let entries = changed.compactMap { name in
        object.value(of: name, in: Names.player, state: state).map {
          BusValue.DictionaryEntry(key: name, value: $0)
        }
      }
      sendSignal(
        interface: Names.properties, member: "PropertiesChanged",
        [.string(Names.player), .dictionary(entries), .stringArray([])])
    case .seeked(let position):
      if ownedName != nil {
        sendSignal(
          interface: Names.player, member: "Seeked", [.int64(max(0, position.mprisMicroseconds))])
      }
    case .eligible(true):
      acquireName()
    case .eligible(false):
      releaseName()
    case .stop:
      return false
    }
    return true
  }

  private func sendSignal(interface: String, member: String, _ values: [BusValue]) {
    guard
      let signal = Message.signal(path: Names.objectPath, interface: interface, member: member),
      signal.append(values)
    else { return }  // out of memory: the signal is lost, as libdbus would lose it
    connection.send(signal)
  }

  /// The names to try in order: MPRIS's own, then per-instance ones (a second hark).
  private var candidateNames: [String] {
    let base = Names.busNamePrefix + object.configuration.playerName
    let instance = base + ".instance\(getpid())"
    // Several servers in one process (tests) share the PID, hence the numbered extras.
    return [base, instance] + (2...9).map { instance + "_\($0)" }
  }

  private func acquireName() {
    guard ownedName == nil else { return }
    for name in candidateNames {
      switch connection.requestName(name) {
      case .owned:
        ownedName = name
        // Clients read everything afresh when a name appears; changes are counted from here.
        published = mailbox.contents.withLock { c in
          c.busName = name
          return c.state
        }
        return
      case .taken:
        continue
      case .failed:
        // The bus refused (a policy, or it is going away); the owner may try again later.
        return
      }
    }
  }

  private func releaseName() {
    guard let name = ownedName else { return }
    connection.releaseName(name)
    ownedName = nil
    mailbox.contents.withLock { $0.busName = nil }
  }

  // MARK: Incoming messages

  /// Handles one message; false when the connection is gone.
  private func handle(_ message: Message) -> Bool {
    if message.isSignal {
      if message.interface == Names.local && message.member == "Disconnected" { return false }
      if message.sender == Names.busDriver, message.member == "NameLost",
        case .string(let name) = message.arguments?.first, name == ownedName
      {
        ownedName = nil
        mailbox.contents.withLock { $0.busName = nil }
      }
      return true
    }
    guard message.isMethodCall, let member = message.member, let path = message.path else {
      return true  // replies and errors: we make no asynchronous calls
    }
    let outcome: CallOutcome
    if let arguments = message.arguments {
      let call = MethodCall(
        path: path, interface: message.interface, member: member,
        signature: message.signature, arguments: arguments)
      let state = mailbox.contents.withLock { $0.state }
      outcome = object.handle(call, state: state)
    } else {
      outcome = .error(ErrorName.invalidArgs, "'\(member)' takes no such arguments")
    }
    if var request = outcome.request {
      if request == .pause || request == .playPause, let sender = message.sender,
        isSoundServerPolicy(sender)
      {
        request = .pauseForLostOutput
      }
      requests.yield(request)
    }
    guard !message.noReplyExpected else { return true }
    let reply: Message?
    switch outcome.reply {
    case .values(let values): reply = message.reply(values)
    case .error(let name, let text): reply = message.errorReply(name: name, text: text)
    }
    if let reply { connection.send(reply) }
    return true
  }

  /// Whether `sender` is the sound server's session manager (WirePlumber), asked of the bus
  /// once per connection: its Pause says that the output went.
  private func isSoundServerPolicy(_ sender: String) -> Bool {
    if let known = policySenders[sender] { return known }
    let name = connection.processID(of: sender).flatMap(processName(of:))
    let isPolicy = name.map(Self.soundServerPolicies.contains) ?? false
    policySenders[sender] = isPolicy
    return isPolicy
  }

  /// The session managers that pause players when their output goes (their process names).
  static let soundServerPolicies: Set<String> = ["wireplumber"]

  private func finish() {
    releaseName()
    connection.flush()
    mailbox.contents.withLock { c in
      c.ended = true
      c.events = []
    }
    requests.finish()
  }
}

/// A process's name (/proc/PID/comm), or nil when it is gone.
private func processName(of pid: Int32) -> String? {
  let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { return nil }
  defer { close(fd) }
  var buffer = [UInt8](repeating: 0, count: 64)
  let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
  guard n > 0 else { return nil }
  return String(decoding: buffer[..<n], as: UTF8.self).trimmingSuffix("\n")
}

extension String {
  fileprivate func trimmingSuffix(_ suffix: String) -> String {
    hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
  }
}
