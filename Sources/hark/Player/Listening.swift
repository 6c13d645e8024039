import LibraryIndex
import Platform
import PlayerCore
import Scrobbling
import Settings
import StateFile

/// Starts counting the listens of `player`: each listen (Last.fm's rule, `ListenRules`) is
/// written to the listens' log, counted in the library index's plays, and, when ListenBrainz
/// or Last.fm is configured (the config's [listenbrainz] and [lastfm] tables, and
/// `hark scrobble login lastfm`), queued on disk and sent. One call in each player host, once
/// its player exists (`settings`: the host's, else the config file's, read quietly: the host
/// said its problems already). What it returns runs for as long as the process does (its two
/// threads hold it). Nil without a home folder for the queue. Costs nothing at start: SQLite
/// is opened at the first listen, libcurl at the first send.
@discardableResult
func startListening(for player: any PlayerConnection, settings: Settings? = nil) -> Scrobbler? {
  let settings = settings ?? Settings.load(from: Settings.defaultPath()).0
  guard let queue = ListenQueue.standard() else { return nil }
  let log = ListenLog.standard()
  var configuration = Scrobbler.Configuration(
    destinations: listeningDestinations(settings), queue: queue, log: log,
    transport: CurlTransport())
  configuration.sendSpokenWord = settings.scrobbleSpokenWord
  configuration.timeout = scrobbleTimeout()
  let plays = PlayCounter(log: log)
  configuration.countPlay = { plays.count($0) }
  configuration.report = { HarkLog.write("listens: " + $0) }
  configuration.statusPath = StatePaths.directory().map { $0 + "/listens-status.json" }
  let scrobbler = Scrobbler(configuration)
  scrobbler.start(observing: player)
  if let problem = queue.problem { HarkLog.write("listens: " + problem) }
  return scrobbler
}

/// How long a request to a service may take: 20 s, or $HARK_SCROBBLE_TIMEOUT (seconds, for a
/// slow network, and for the tests' unanswering server).
func scrobbleTimeout() -> Double {
  environment("HARK_SCROBBLE_TIMEOUT").flatMap(Double.init).map { max(1, $0) } ?? 20
}

/// Where the settings and the Last.fm login say listens go.
func listeningDestinations(_ settings: Settings) -> Destinations {
  var d = Destinations()
  if let token = settings.listenBrainzToken {
    d.listenBrainz = (token, settings.listenBrainzURL)
  }
  if let key = settings.lastFMAPIKey, let secret = settings.lastFMAPISecret,
    let session = LastFMSession.load(), session.base == settings.lastFMURL
  {
    d.lastFM = (
      LastFM.Credentials(apiKey: key, secret: secret, base: settings.lastFMURL), session.key
    )
  }
  return d
}

/// The library index's play counts, kept by the counting thread: the index catches up with
/// the listens' log (the record; the index is a cache) at each listen, from where it last
/// counted to the log's end, in one transaction with how far it read: a listen is counted
/// once, whether a crash falls before the index counted it (it is counted with the next) or
/// the index is rebuilt (every listen in the log is counted again). Opened at the first listen.
final class PlayCounter: @unchecked Sendable {
  private let log: ListenLog?
  private var library: Library?

  init(log: ListenLog?) { self.log = log }

  /// Counting thread only. `listen` is in the log already (written first).
  func count(_ listen: Listen) {
    if library == nil, let path = Library.defaultPath() {
      library = try? Library(path: path, checked: false)
    }
    guard let library else { return }
    do {
      guard let log else {
        try library.recordPlay(of: listen.track.path, at: Double(listen.startedAt))
        return
      }
      let offset = try library.playsLogOffset()
      if let (listens, end) = log.listens(from: offset) {
        try library.recordPlays(
          listens.map { ($0.track.path, Double($0.startedAt)) }, logOffset: end)
      } else if let (listens, end) = log.listens(from: 0) {
        // Another log than the one counted (replaced, or cut): counted afresh from it.
        try library.recordPlays(
          listens.map { ($0.track.path, Double($0.startedAt)) }, logOffset: end, restart: true)
      }
    } catch {
      HarkLog.write("listens: cannot count the play in the library index: \(error)")
      self.library = nil
    }
  }
}
