import FoundationEssentials
import Platform

/// A listening service listens are sent to.
public enum Service: String, Hashable, Sendable, Codable, CaseIterable {
  case listenBrainz = "listenbrainz"
  case lastFM = "lastfm"

  /// As the user reads it.
  public var name: String {
    switch self {
    case .listenBrainz: return "ListenBrainz"
    case .lastFM: return "Last.fm"
    }
  }

  /// Listens in one request at most: ListenBrainz takes up to 1,000, Last.fm's track.scrobble
  /// 50.
  public var batchLimit: Int {
    switch self {
    case .listenBrainz: return 100
    case .lastFM: return 50
    }
  }
}

/// An HTTP request, as the transport sends it.
public struct HTTPRequest: Hashable, Sendable {
  public var method: String
  public var url: String
  public var headers: [String]
  public var body: [UInt8]

  public init(method: String, url: String, headers: [String] = [], body: [UInt8] = []) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
  }
}

/// What came back: an answer, or no answer (no connection, a timeout), with why in words.
public enum HTTPOutcome: Hashable, Sendable {
  case response(status: Int, body: [UInt8], retryAfter: Double?)
  case failed(String)
}

/// What an answer means for the listens it carried.
public enum Verdict: Hashable, Sendable {
  /// Taken (or knowingly ignored by the service, which will never take them): done with.
  case accepted(ignored: Int)
  /// The service will never take these as they are (a listen it finds invalid): dropped,
  /// with why.
  case rejected(String)
  /// Not now (the service is down, slow, unreachable, or asks to wait): kept, and tried again
  /// after `after` seconds when it says, else after the backoff.
  case retry(after: Double?, String)
  /// The credentials were refused (a token revoked, a session key expired): kept, and not
  /// tried again until the settings change or the user logs in again.
  case refused(String)
}

// MARK: ListenBrainz

/// ListenBrainz's JSON API (api.listenbrainz.org/1/submit-listens): a user token in the
/// Authorization header; "playing_now" with no time, "single" for a listen just made, "import"
/// for listens made earlier (sent from the queue).
public enum ListenBrainz {
  public enum Kind: String, Sendable { case playingNow = "playing_now", single, `import` }

  /// The request that submits `listens` (none for playing now: `track` instead).
  public static func submit(
    _ kind: Kind, listens: [Listen] = [], playing track: ListenedTrack? = nil, token: String,
    base: String
  ) -> HTTPRequest {
    var payload: [[String: JSONValue]] = []
    if kind == .playingNow, let track {
      payload.append(["track_metadata": .object(metadata(track))])
    }
    for l in listens {
      payload.append([
        "listened_at": .int(l.startedAt), "track_metadata": .object(metadata(l.track)),
      ])
    }
    let body: JSONValue = .object([
      "listen_type": .string(kind.rawValue), "payload": .array(payload.map { .object($0) }),
    ])
    return HTTPRequest(
      method: "POST", url: trimmedBase(base) + "/1/submit-listens",
      headers: ["Authorization: Token " + token, "Content-Type: application/json"],
      body: body.encoded)
  }

  static func metadata(_ t: ListenedTrack) -> [String: JSONValue] {
    var info: [String: JSONValue] = [
      "media_player": .string("hark"), "submission_client": .string("hark"),
      "submission_client_version": .string(version),
    ]
    if let d = t.duration, d > 0 { info["duration_ms"] = .int(Int((d * 1000).rounded())) }
    if let n = t.trackNumber { info["tracknumber"] = .int(n) }
    var m: [String: JSONValue] = [
      "artist_name": .string(t.artist ?? ""), "track_name": .string(t.title ?? ""),
      "additional_info": .object(info),
    ]
    if let album = t.album, !album.isEmpty { m["release_name"] = .string(album) }
    return m
  }

  /// The token checked: GET /1/validate-token answers {"valid": true, "user_name": …}.
  public static func validate(token: String, base: String) -> HTTPRequest {
    HTTPRequest(
      method: "GET", url: trimmedBase(base) + "/1/validate-token",
      headers: ["Authorization: Token " + token])
  }

  public static func verdict(_ outcome: HTTPOutcome) -> Verdict {
    switch outcome {
    case .failed(let why):
      return .retry(after: nil, why)
    case .response(let status, let body, let retryAfter):
      let message = (try? JSONDecoder().decode(ErrorBody.self, from: Data(body)))?.error
      switch status {
      case 200..<300: return .accepted(ignored: 0)
      case 401, 403:
        return .refused("ListenBrainz refused the token" + (message.map { " (\($0))" } ?? ""))
      case 429:
        return .retry(after: retryAfter ?? 10, "ListenBrainz asks to wait (too many requests)")
      case 400..<500:
        return .rejected("ListenBrainz refused it: " + (message ?? "HTTP \(status)"))
      default:
        return .retry(after: retryAfter, "ListenBrainz answered HTTP \(status)")
      }
    }
  }

  struct ErrorBody: Decodable { var error: String? }
}

/// hark's version as the services are told it.
let version = "1"

func trimmedBase(_ base: String) -> String {
  var b = Substring(base)
  while b.hasSuffix("/") { b = b.dropLast() }
  return String(b)
}

// MARK: Last.fm

/// Last.fm's 2.0 API (and Libre.fm's, which speaks it): form-encoded POSTs signed with api_sig,
/// the MD5 of every parameter but format and callback, sorted by name, each name followed by
/// its value, then the shared secret. The desktop auth flow: auth.getToken, the user allows hark
/// at the auth page, auth.getSession gives the session key for track.updateNowPlaying and
/// track.scrobble.
public enum LastFM {
  public struct Credentials: Hashable, Sendable {
    public var apiKey: String
    public var secret: String
    public var base: String
    public init(apiKey: String, secret: String, base: String) {
      self.apiKey = apiKey
      self.secret = secret
      self.base = base
    }
  }

  /// api_sig for `parameters`.
  public static func signature(_ parameters: [String: String], secret: String) -> String {
    let text =
      parameters.filter { $0.key != "format" && $0.key != "callback" }
      .sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
      .map { $0.key + $0.value }.joined() + secret
    return MD5.hex(text)
  }

  /// A signed POST of `method` with `parameters`, asking for JSON.
  static func call(_ method: String, _ parameters: [String: String], _ c: Credentials)
    -> HTTPRequest
  {
    var p = parameters
    p["method"] = method
    p["api_key"] = c.apiKey
    p["api_sig"] = signature(p, secret: c.secret)
    p["format"] = "json"
    let body = p.sorted { $0.key < $1.key }.map {
      percentEncoded($0.key) + "=" + percentEncoded($0.value)
    }
    .joined(separator: "&")
    return HTTPRequest(
      method: "POST", url: c.base,
      headers: ["Content-Type: application/x-www-form-urlencoded"], body: Array(body.utf8))
  }

  public static func getToken(_ c: Credentials) -> HTTPRequest { call("auth.getToken", [:], c) }

  public static func getSession(token: String, _ c: Credentials) -> HTTPRequest {
    call("auth.getSession", ["token": token], c)
  }

  /// The page where the user allows hark: AUTH_URL?api_key=…&token=….
  public static func authPage(token: String, authURL: String, apiKey: String) -> String {
    authURL + (authURL.contains("?") ? "&" : "?") + "api_key=" + percentEncoded(apiKey)
      + "&token=" + percentEncoded(token)
  }

  public static func nowPlaying(_ t: ListenedTrack, sessionKey: String, _ c: Credentials)
    -> HTTPRequest
  {
    var p = ["artist": t.artist ?? "", "track": t.title ?? "", "sk": sessionKey]
    if let album = t.album, !album.isEmpty { p["album"] = album }
    if let d = t.duration, d > 0 { p["duration"] = String(Int(d.rounded())) }
    if let n = t.trackNumber { p["trackNumber"] = String(n) }
    return call("track.updateNowPlaying", p, c)
  }

  /// track.scrobble of up to 50 listens, in array notation (artist[0], track[0], …).
  public static func scrobble(_ listens: [Listen], sessionKey: String, _ c: Credentials)
    -> HTTPRequest
  {
    var p = ["sk": sessionKey]
    for (i, l) in listens.enumerated() {
      p["artist[\(i)]"] = l.track.artist ?? ""
      p["track[\(i)]"] = l.track.title ?? ""
      p["timestamp[\(i)]"] = String(l.startedAt)
      if let album = l.track.album, !album.isEmpty { p["album[\(i)]"] = album }
      if let d = l.track.duration, d > 0 { p["duration[\(i)]"] = String(Int(d.rounded())) }
      if let n = l.track.trackNumber { p["trackNumber[\(i)]"] = String(n) }
    }
    return call("track.scrobble", p, c)
  }

  /// RFC 3986's unreserved characters as they are, every other byte as %XX.
  static func percentEncoded(_ s: String) -> String {
    var out = ""
    for b in s.utf8 {
      if (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
        || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
      {
        out.unicodeScalars.append(Unicode.Scalar(b))
      } else {
        out += "%" + (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true)
      }
    }
    return out
  }

  struct Answer: Decodable {
    var error: Int?
    var message: String?
    var token: String?
    var session: Session?
    var scrobbles: Scrobbles?
    struct Session: Decodable {
      var name: String?
      var key: String?
    }
    struct Scrobbles: Decodable {
      var attr: Attr?
      enum CodingKeys: String, CodingKey { case attr = "@attr" }
      struct Attr: Decodable {
        var accepted: LenientInt?
        var ignored: LenientInt?
      }
    }
  }

  static func answer(_ body: [UInt8]) -> Answer? {
    try? JSONDecoder().decode(Answer.self, from: Data(body))
  }

  /// What an answer to track.scrobble or track.updateNowPlaying means. Last.fm's error codes:
  /// 9 (session key invalid), 4 (authentication failed), 10 (API key invalid), 13 (signature
  /// invalid), 26 (API key suspended) refuse the credentials; 11 and 16 (service offline,
  /// temporarily unavailable), 8 (operation failed) and 29 (rate limit) are for later; 6 and 7
  /// (invalid parameters or resource) reject the listens.
  public static func verdict(_ outcome: HTTPOutcome) -> Verdict {
    switch outcome {
    case .failed(let why):
      return .retry(after: nil, why)
    case .response(let status, let body, let retryAfter):
      let a = answer(body)
      if let code = a?.error {
        let said = a?.message.map { ": \($0)" } ?? ""
        switch code {
        case 4, 9, 10, 13, 26:
          return .refused("Last.fm refused the credentials (error \(code)\(said))")
        case 8, 11, 16:
          return .retry(after: retryAfter, "Last.fm is unavailable (error \(code)\(said))")
        case 29:
          return .retry(after: retryAfter ?? 60, "Last.fm asks to wait (error 29\(said))")
        default:
          return .rejected("Last.fm refused it (error \(code)\(said))")
        }
      }
      switch status {
      case 200..<300:
        return .accepted(ignored: a?.scrobbles?.attr?.ignored?.value ?? 0)
      case 429:
        return .retry(after: retryAfter ?? 60, "Last.fm asks to wait (too many requests)")
      case 400..<500:
        return .rejected("Last.fm refused it (HTTP \(status))")
      default:
        return .retry(after: retryAfter, "Last.fm answered HTTP \(status)")
      }
    }
  }
}

/// A number Last.fm writes as a number or as a string of one.
struct LenientInt: Decodable {
  var value: Int
  init(from decoder: Decoder) throws {
    let c = try decoder.singleValueContainer()
    if let i = try? c.decode(Int.self) {
      value = i
    } else {
      value = Int(try c.decode(String.self)) ?? 0
    }
  }
}

/// JSON written without JSONSerialization (not in FoundationEssentials), keys sorted.
indirect enum JSONValue: Hashable, Sendable {
  case string(String)
  case int(Int)
  case array([JSONValue])
  case object([String: JSONValue])

  var encoded: [UInt8] { Array(text.utf8) }

  var text: String {
    switch self {
    case .string(let s): return Self.quoted(s)
    case .int(let i): return String(i)
    case .array(let a): return "[" + a.map(\.text).joined(separator: ",") + "]"
    case .object(let o):
      return "{"
        + o.sorted { $0.key < $1.key }.map { Self.quoted($0.key) + ":" + $0.value.text }
        .joined(separator: ",") + "}"
    }
  }

  static func quoted(_ s: String) -> String {
    var out = "\""
    for c in s.unicodeScalars {
      switch c {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        if c.value < 0x20 {
          out += "\\u00" + (c.value < 16 ? "0" : "") + String(c.value, radix: 16)
        } else {
          out.unicodeScalars.append(c)
        }
      }
    }
    return out + "\""
  }
}

/// The Last.fm session `hark scrobble login lastfm` got: the user's name and the session key
/// (which does not expire until the user revokes it), for the service at `base`. Kept in
/// `$XDG_STATE_HOME/hark/lastfm-session.json`, readable by the user only.
public struct LastFMSession: Codable, Hashable, Sendable {
  public var name: String
  public var key: String
  public var base: String

  public init(name: String, key: String, base: String) {
    self.name = name
    self.key = key
    self.base = base
  }

  public static func standardPath() -> String? {
    XDGDirectory.state.path.map { $0 + "/hark/lastfm-session.json" }
  }

  public static func load(from path: String? = standardPath()) -> LastFMSession? {
    guard let path, case .bytes(let b) = readWholeFile(path, limit: 1 << 16) else { return nil }
    return try? JSONDecoder().decode(LastFMSession.self, from: Data(b))
  }

  public func save(to path: String) throws(SystemError) {
    let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    makeDirectories(folder)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let data = try? encoder.encode(self) else { return }
    try replaceFile(path, with: [UInt8](data) + [0x0A], mode: 0o600)
  }

  /// The token's session, from auth.getSession's answer: nil with why when it has none yet.
  public static func from(_ outcome: HTTPOutcome, base: String) -> Result<LastFMSession, Refusal> {
    switch outcome {
    case .failed(let why): return .failure(Refusal(code: nil, message: why))
    case .response(let status, let body, _):
      let a = LastFM.answer(body)
      if let key = a?.session?.key, !key.isEmpty {
        return .success(LastFMSession(name: a?.session?.name ?? "?", key: key, base: base))
      }
      return .failure(Refusal(code: a?.error, message: a?.message ?? "HTTP \(status)"))
    }
  }

  /// Why Last.fm gave no session (error 14: the user has not allowed hark yet).
  public struct Refusal: Error, Hashable, Sendable {
    public var code: Int?
    public var message: String
  }
}

extension LastFM {
  /// The token auth.getToken gave; nil with the answer's words.
  public static func token(from outcome: HTTPOutcome) -> Result<String, LastFMSession.Refusal> {
    switch outcome {
    case .failed(let why): return .failure(LastFMSession.Refusal(code: nil, message: why))
    case .response(let status, let body, _):
      let a = answer(body)
      if let t = a?.token, !t.isEmpty { return .success(t) }
      return .failure(
        LastFMSession.Refusal(code: a?.error, message: a?.message ?? "HTTP \(status)"))
    }
  }
}
