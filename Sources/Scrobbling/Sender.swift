import Glibc
import Platform

/// Sends HTTP requests: libcurl's (`CurlTransport`), or a test's.
public protocol Transport: Sendable {
  /// Sends `request` and waits for the answer, at most `timeout` seconds.
  func send(_ request: HTTPRequest, timeout: Double) -> HTTPOutcome
}

/// Where listens go, as the settings and the Last.fm login say.
public struct Destinations: Hashable, Sendable {
  public var listenBrainz: (token: String, base: String)?
  public var lastFM: (credentials: LastFM.Credentials, sessionKey: String)?

  public init(
    listenBrainz: (token: String, base: String)? = nil,
    lastFM: (credentials: LastFM.Credentials, sessionKey: String)? = nil
  ) {
    self.listenBrainz = listenBrainz
    self.lastFM = lastFM
  }

  public var services: [Service] {
    (listenBrainz == nil ? [] : [.listenBrainz]) + (lastFM == nil ? [] : [.lastFM])
  }

  public static func == (a: Destinations, b: Destinations) -> Bool {
    a.listenBrainz?.token == b.listenBrainz?.token && a.listenBrainz?.base == b.listenBrainz?.base
      && a.lastFM?.credentials == b.lastFM?.credentials
      && a.lastFM?.sessionKey == b.lastFM?.sessionKey
  }

  public func hash(into h: inout Hasher) {
    h.combine(listenBrainz?.token)
    h.combine(lastFM?.sessionKey)
  }
}

/// When to try a service again after a failure: 15 s, then twice as long each time up to 30
/// minutes, or when the service said (a rate limit's wait); at once after a success. Pure.
public struct Backoff: Hashable, Sendable {
  public private(set) var failures = 0
  /// Monotonic seconds before which nothing is sent; nil: at once.
  public private(set) var notBefore: Double?

  public init() {}

  public static let first = 15.0
  public static let longest = 1800.0

  public mutating func failed(at now: Double, serverSaid: Double?) {
    failures += 1
    let doubling = Self.first * pow(2, Double(min(failures - 1, 16)))
    notBefore = now + max(serverSaid ?? 0, min(doubling, Self.longest))
  }

  public mutating func succeeded() {
    failures = 0
    notBefore = nil
  }

  public func mayTry(at now: Double) -> Bool { notBefore.map { now >= $0 } ?? true }
}

/// How one service's round of sending went.
public enum SendResult: Hashable, Sendable {
  /// Everything that waited was sent (or refused for good: `dropped`, with the last reason).
  case done(sent: Int, dropped: Int, why: String?)
  /// Some were sent, then the service failed: the rest wait, tried again later.
  case later(sent: Int, Verdict)
}

/// Sends the queue's listens to the services, oldest first, in batches, holding the queue's
/// lock for the round so that no other hark process sends them too. A batch the service finds
/// invalid is sent again one listen at a time, so that one bad listen does not cost the others.
public struct Sender: Sendable {
  public var queue: ListenQueue
  public var transport: any Transport
  public var destinations: Destinations
  /// How long a request may take.
  public var timeout = 20.0

  public init(queue: ListenQueue, transport: any Transport, destinations: Destinations) {
    self.queue = queue
    self.transport = transport
    self.destinations = destinations
  }

  /// The request that sends `listens` to `service`; nil when it is not configured.
  func request(_ listens: [Listen], to service: Service) -> HTTPRequest? {
    switch service {
    case .listenBrainz:
      guard let lb = destinations.listenBrainz else { return nil }
      return ListenBrainz.submit(
        listens.count == 1 ? .single : .import, listens: listens, token: lb.token, base: lb.base)
    case .lastFM:
      guard let fm = destinations.lastFM else { return nil }
      return LastFM.scrobble(listens, sessionKey: fm.sessionKey, fm.credentials)
    }
  }

  func verdict(_ outcome: HTTPOutcome, from service: Service) -> Verdict {
    switch service {
    case .listenBrainz: return ListenBrainz.verdict(outcome)
    case .lastFM: return LastFM.verdict(outcome)
    }
  }

  /// Sends what waits for `service`.
  public func sendPending(to service: Service) -> SendResult {
    queue.withLock {
      var sent = 0
      var dropped = 0
      var lastWhy: String?
      var batchSize = service.batchLimit
      while true {
        let batch = queue.pendingHoldingLock(for: service, limit: batchSize)
        if batch.isEmpty { return .done(sent: sent, dropped: dropped, why: lastWhy) }
        guard let request = request(batch.map(\.listen), to: service) else {
          return .later(sent: sent, .refused("\(service.name) is not configured"))
        }
        let v = verdict(transport.send(request, timeout: timeout), from: service)
        switch v {
        case .accepted:
          do { try queue.done(Set(batch.map(\.id)), for: service) } catch {
            return .later(sent: sent, .retry(after: nil, "\(error)"))
          }
          sent += batch.count
        case .rejected(let why):
          if batch.count > 1 {
            // One of them, perhaps: each alone.
            batchSize = 1
            continue
          }
          do { try queue.done(Set(batch.map(\.id)), for: service) } catch {
            return .later(sent: sent, .retry(after: nil, "\(error)"))
          }
          dropped += 1
          lastWhy = why
        case .retry, .refused:
          return .later(sent: sent, v)
        }
      }
    }
  }

  /// Tells `service` that `track` plays now; not kept or tried again when it fails (it would
  /// be old news).
  public func sendNowPlaying(_ track: ListenedTrack, to service: Service) -> Verdict {
    let request: HTTPRequest
    switch service {
    case .listenBrainz:
      guard let lb = destinations.listenBrainz else { return .refused("not configured") }
      request = ListenBrainz.submit(.playingNow, playing: track, token: lb.token, base: lb.base)
    case .lastFM:
      guard let fm = destinations.lastFM else { return .refused("not configured") }
      request = LastFM.nowPlaying(track, sessionKey: fm.sessionKey, fm.credentials)
    }
    return verdict(transport.send(request, timeout: timeout), from: service)
  }
}
