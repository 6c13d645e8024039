import ArgumentParser
import FoundationEssentials
import Glibc
import LibraryIndex
import Platform
import Scrobbling
import Settings
import StateFile

/// `hark scrobble`: the listens hark counts and sends to ListenBrainz and Last.fm: where they
/// go and what waits, the Last.fm login, and sending what waits now.
struct ScrobbleCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "scrobble",
    abstract: "Listens counted and sent to ListenBrainz and Last.fm: status, login, send.",
    discussion: """
      A track counts as listened to once heard for half its length or for 4 minutes (tracks \
      over 30 s), as Last.fm says. Every listen is counted in the library's plays (Most played, \
      Recently played) and written to $XDG_STATE_HOME/hark/listens.log; with ListenBrainz \
      ([listenbrainz] token in the config) or Last.fm ([lastfm] api_key and api_secret, then \
      'hark scrobble login lastfm') it is sent too, kept on disk until the service has it.
      """,
    subcommands: [Status.self, Login.self, Send.self])

  struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "Where listens go, how many wait, and why, when a service fails.")

    func run() async throws {
      let settings = loadSettings()
      let destinations = listeningDestinations(settings)
      guard let queue = ListenQueue.standard() else { die("no home folder for the listens") }
      let waiting = queue.counts()
      let status = StatePaths.directory().flatMap { dir -> Scrobbler.Status? in
        guard case .bytes(let b) = readWholeFile(dir + "/listens-status.json") else { return nil }
        return try? JSONDecoder().decode(Scrobbler.Status.self, from: Data(b))
      }
      for service in Service.allCases {
        var line = service.name + ": "
        switch service {
        case .listenBrainz:
          line +=
            destinations.listenBrainz.map { "sending to \($0.base)" }
            ?? "off (no [listenbrainz] token in the config)"
        case .lastFM:
          if let fm = destinations.lastFM {
            line += "sending to \(fm.credentials.base) as \(LastFMSession.load()?.name ?? "?")"
          } else if settings.lastFMAPIKey == nil || settings.lastFMAPISecret == nil {
            line += "off (no [lastfm] api_key and api_secret in the config)"
          } else {
            line += "not logged in ('hark scrobble login lastfm')"
          }
        }
        let n = waiting[service] ?? 0
        line += "; \(n) listen\(n == 1 ? "" : "s") waiting"
        if let entry = status?.services.first(where: { $0.service == service }),
          kill(status?.pid ?? 0, 0) == 0, n > 0 || entry.problem != nil
        {
          if let problem = entry.problem { line += "; last try: \(problem)" }
          if entry.refused {
            line += " (not tried again until the config or the login changes)"
          } else if let next = entry.nextTry {
            let wait = Int(max(0, next - Double(time(nil))).rounded())
            line += "; next try in \(clockTime(seconds: wait))"
          }
        }
        print(line.escapingControlCharacters)
      }
      if let problem = queue.problem { FileHandleStderr.write("hark: \(problem)\n") }
      if let path = Library.defaultPath(), access(FileName.c(path), F_OK) == 0,
        let library = try? Library(path: path, checked: false),
        let total = try? library.playCount()
      {
        print("plays counted in the library: \(total)")
      }
    }
  }

  struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "login",
      abstract: "Allow hark to scrobble to your Last.fm account (Last.fm's desktop auth).",
      discussion: """
        Asks Last.fm for a token, prints the page where you allow hark, and waits until you \
        have: the session key is kept in $XDG_STATE_HOME/hark/lastfm-session.json (yours only). \
        Needs [lastfm] api_key and api_secret in the config (an API account of your own, from \
        last.fm/api/account/create).
        """)
    @Argument(help: "The service: lastfm.")
    var service: String
    @Option(help: "Seconds to wait for you to allow hark (default 300).")
    var wait: Int = 300

    func validate() throws {
      guard service == "lastfm" else {
        throw ValidationError(
          "only Last.fm needs a login ('lastfm'); ListenBrainz takes the token from your "
            + "settings page as [listenbrainz] token in the config")
      }
      guard wait >= 0 else { throw ValidationError("--wait must be 0 or more seconds") }
    }

    func run() async throws {
      let settings = loadSettings()
      guard let key = settings.lastFMAPIKey, let secret = settings.lastFMAPISecret else {
        die(
          "no Last.fm API key: put [lastfm] api_key and api_secret in '\(Settings.defaultPath() ?? "the config")' "
            + "(from https://www.last.fm/api/account/create)")
      }
      let c = LastFM.Credentials(apiKey: key, secret: secret, base: settings.lastFMURL)
      let transport = CurlTransport()
      let token: String
      switch LastFM.token(from: transport.send(LastFM.getToken(c), timeout: scrobbleTimeout())) {
      case .success(let t): token = t
      case .failure(let why):
        die("Last.fm gave no token at '\(settings.lastFMURL)': \(why.message)")
      }
      print("open this page and allow hark:")
      print(LastFM.authPage(token: token, authURL: settings.lastFMAuthURL, apiKey: key))
      let deadline = Double(monotonicNanoseconds()) / 1e9 + Double(wait)
      while true {
        let outcome = transport.send(LastFM.getSession(token: token, c), timeout: scrobbleTimeout())
        switch LastFMSession.from(outcome, base: settings.lastFMURL) {
        case .success(let session):
          guard let path = LastFMSession.standardPath() else { die("no home folder to keep it") }
          do { try session.save(to: path) } catch { die("cannot keep the session key: \(error)") }
          print("logged in to Last.fm as \(session.name.escapingControlCharacters)")
          return
        case .failure(let why):
          // 14: not allowed yet; anything else is the answer.
          guard why.code == 14 || why.code == nil else {
            die("Last.fm refused the login: \(why.message)")
          }
          if Double(monotonicNanoseconds()) / 1e9 >= deadline {
            die("not allowed within \(wait) s; run 'hark scrobble login lastfm' again")
          }
          usleep(2_000_000)
        }
      }
    }
  }

  struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "send",
      abstract: "Send the listens that wait now, and say how it went.",
      discussion: """
        A running player sends them by itself (after each listen, and after a failure again \
        15 s later, doubling to 30 minutes); this does it at once. Exits 1 when some could not \
        be sent.
        """)

    func run() async throws {
      let settings = loadSettings()
      guard let queue = ListenQueue.standard() else { die("no home folder for the listens") }
      let destinations = listeningDestinations(settings)
      var sender = Sender(queue: queue, transport: CurlTransport(), destinations: destinations)
      sender.timeout = scrobbleTimeout()
      var failed = false
      let waiting = queue.counts()
      for service in Service.allCases where (waiting[service] ?? 0) > 0 {
        guard destinations.services.contains(service) else {
          print("\(service.name): \(waiting[service] ?? 0) waiting, not configured")
          failed = true
          continue
        }
        switch sender.sendPending(to: service) {
        case .done(let sent, let dropped, let why):
          var line = "\(service.name): \(sent) sent"
          if dropped > 0 { line += ", \(dropped) refused for good (\(why ?? ""))" }
          print(line.escapingControlCharacters)
        case .later(let sent, let verdict):
          failed = true
          let why: String
          switch verdict {
          case .retry(_, let w), .refused(let w), .rejected(let w): why = w
          case .accepted: why = "?"
          }
          let left = queue.counts()[service] ?? 0
          print("\(service.name): \(sent) sent, \(left) kept: \(why)".escapingControlCharacters)
        }
      }
      if waiting.isEmpty { print("no listens waiting") }
      if failed { throw ExitCode(1) }
    }
  }
}
