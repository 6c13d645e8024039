import Platform

/// What the owner has told the server, waiting for the service thread.
enum OwnerEvent {
  case stateChanged(MPRISState)
  case seeked(Duration)
  case eligible(Bool)
  case stop
}

/// The state the owner's threads and the service thread share, behind one lock.
final class Mailbox: Sendable {
  struct Contents {
    /// The owner's latest state: what Get and the command checks read.
    var state: MPRISState
    /// In order; the service thread takes them all at once.
    var events: [OwnerEvent] = []
    /// The well-known name owned now.
    var busName: String?
    /// close() was called.
    var closed = false
    /// The service thread has ended (closed, or the bus went away).
    var ended = false
  }

  let contents: Locked<Contents>

  init(state: MPRISState) { contents = Locked(Contents(state: state)) }

  /// Queues an event unless the server is closed or its thread has ended; true if queued.
  func post(_ event: OwnerEvent) -> Bool {
    contents.withLock { c in
      guard !c.closed && !c.ended else { return false }
      c.events.append(event)
      return true
    }
  }
}
