import FoundationEssentials
import Testing

@testable import Scrobbling

/// MD5 against RFC 1321's suite, Last.fm's signatures and forms, ListenBrainz's JSON, and what
/// each service's answers mean.
@Suite struct ServicesTests {
  @Test func md5MatchesRFC1321() {
    #expect(MD5.hex("") == "d41d8cd98f00b204e9800998ecf8427e")
    #expect(MD5.hex("a") == "0cc175b9c0f1b6a831c399e269772661")
    #expect(MD5.hex("abc") == "900150983cd24fb0d6963f7d28e17f72")
    #expect(MD5.hex("message digest") == "f96b697d7cb7938d525a2f31aaf161d0")
    #expect(MD5.hex("abcdefghijklmnopqrstuvwxyz") == "c3fcd3d76192e4007dfb496cca67e13b")
    #expect(
      MD5.hex("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        == "d174ab98d277d9f5a5611c2c9f419d9f")
    #expect(
      MD5.hex(String(repeating: "1234567890", count: 8)) == "57edf4a22be3c955ac49da2e2107b67a")
    #expect(MD5.hex(String(repeating: "Zoë", count: 30)) == "c8218fd55107a81d497cb0249fd16f5a")
  }

  @Test func lastFMSignsTheSortedParametersWithoutFormat() {
    let sig = LastFM.signature(
      ["token": "yyy", "method": "auth.getSession", "api_key": "xxx", "format": "json"],
      secret: "zzz")
    #expect(sig == "75df1fdb6b738160924a52b1732fdde7")
  }

  @Test func aScrobbleIsAFormInArrayNotation() throws {
    var t = ListenedTrack(path: "/m/a.flac")
    t.artist = "Sigur Rós"
    t.title = "Svefn-g-englar & more"
    t.album = "Ágætis byrjun"
    t.duration = 600.4
    t.trackNumber = 1
    let c = LastFM.Credentials(apiKey: "key", secret: "secret", base: "http://127.0.0.1:1/2.0/")
    let r = LastFM.scrobble([Listen(track: t, startedAt: 1_700_000_000)], sessionKey: "sk", c)
    #expect(r.method == "POST" && r.url == "http://127.0.0.1:1/2.0/")
    let form = String(decoding: r.body, as: UTF8.self)
    let fields = Dictionary(
      uniqueKeysWithValues: form.split(separator: "&").map { pair -> (String, String) in
        let kv = pair.split(separator: "=", maxSplits: 1)
        return (String(kv[0]), kv.count > 1 ? String(kv[1]) : "")
      })
    #expect(fields["artist%5B0%5D"] == "Sigur%20R%C3%B3s")
    #expect(fields["track%5B0%5D"] == "Svefn-g-englar%20%26%20more")
    #expect(fields["timestamp%5B0%5D"] == "1700000000")
    #expect(fields["duration%5B0%5D"] == "600")
    #expect(fields["method"] == "track.scrobble" && fields["format"] == "json")
    let signed: [String: String] = [
      "artist[0]": "Sigur Rós", "track[0]": "Svefn-g-englar & more", "timestamp[0]": "1700000000",
      "album[0]": "Ágætis byrjun", "duration[0]": "600", "trackNumber[0]": "1", "sk": "sk",
      "method": "track.scrobble", "api_key": "key",
    ]
    #expect(fields["api_sig"] == LastFM.signature(signed, secret: "secret"))
    #expect(
      LastFM.authPage(token: "t k", authURL: "https://www.last.fm/api/auth/", apiKey: "key")
        == "https://www.last.fm/api/auth/?api_key=key&token=t%20k")
  }

  @Test func listenBrainzGetsItsJSONWithTheTokenHeader() throws {
    var t = ListenedTrack(path: "/m/a.flac")
    t.artist = "A \"quoted\" artist"
    t.title = "Line\nbreak"
    t.duration = 61.5
    let r = ListenBrainz.submit(
      .import, listens: [Listen(track: t, startedAt: 5)], token: "tok", base: "http://h:1/")
    #expect(r.url == "http://h:1/1/submit-listens")
    #expect(r.headers.contains("Authorization: Token tok"))
    struct Body: Decodable {
      var listen_type: String
      var payload: [Item]
      struct Item: Decodable {
        var listened_at: Int?
        var track_metadata: Meta
      }
      struct Meta: Decodable {
        var artist_name: String
        var track_name: String
        var release_name: String?
        var additional_info: [String: Info]
      }
      enum Info: Decodable {
        case s(String), i(Int)
        init(from d: Decoder) throws {
          let c = try d.singleValueContainer()
          if let i = try? c.decode(Int.self) {
            self = .i(i)
          } else {
            self = .s(try c.decode(String.self))
          }
        }
      }
    }
    let body = try JSONDecoder().decode(Body.self, from: Data(r.body))
    #expect(body.listen_type == "import")
    #expect(body.payload[0].listened_at == 5)
    #expect(body.payload[0].track_metadata.artist_name == "A \"quoted\" artist")
    #expect(body.payload[0].track_metadata.track_name == "Line\nbreak")
    #expect(body.payload[0].track_metadata.release_name == nil)
    if case .i(let ms)? = body.payload[0].track_metadata.additional_info["duration_ms"] {
      #expect(ms == 61_500)
    } else {
      Issue.record("no duration_ms")
    }
    let now = ListenBrainz.submit(.playingNow, playing: t, token: "tok", base: "http://h:1")
    let playing = try JSONDecoder().decode(Body.self, from: Data(now.body))
    #expect(playing.listen_type == "playing_now" && playing.payload[0].listened_at == nil)
  }

  @Test func answersMeanWhatTheServicesSay() {
    func lb(_ status: Int, _ body: String = "", after: Double? = nil) -> Verdict {
      ListenBrainz.verdict(.response(status: status, body: Array(body.utf8), retryAfter: after))
    }
    #expect(lb(200, #"{"status":"ok"}"#) == .accepted(ignored: 0))
    #expect(lb(401, #"{"code":401,"error":"Invalid authorization token."}"#).isRefused)
    #expect(
      lb(400, #"{"code":400,"error":"bad listen"}"#)
        == .rejected("ListenBrainz refused it: bad listen"))
    #expect(lb(429, after: 7) == .retry(after: 7, "ListenBrainz asks to wait (too many requests)"))
    #expect(lb(503).isRetry && lb(500).isRetry)
    #expect(
      ListenBrainz.verdict(.failed("Timeout was reached"))
        == .retry(after: nil, "Timeout was reached"))

    func fm(_ status: Int, _ body: String) -> Verdict {
      LastFM.verdict(.response(status: status, body: Array(body.utf8), retryAfter: nil))
    }
    #expect(
      fm(200, #"{"scrobbles":{"@attr":{"accepted":1,"ignored":1}}}"#) == .accepted(ignored: 1))
    #expect(
      fm(200, #"{"scrobbles":{"@attr":{"accepted":"2","ignored":"0"}}}"#) == .accepted(ignored: 0))
    #expect(fm(403, #"{"error":9,"message":"Invalid session key"}"#).isRefused)
    #expect(fm(403, #"{"error":13,"message":"Invalid method signature supplied"}"#).isRefused)
    #expect(fm(200, #"{"error":11,"message":"Service Offline"}"#).isRetry)
    #expect(fm(200, #"{"error":16,"message":"temporarily unavailable"}"#).isRetry)
    #expect(
      fm(429, #"{"error":29,"message":"Rate limit exceeded"}"#)
        == .retry(after: 60, "Last.fm asks to wait (error 29: Rate limit exceeded)"))
    #expect(
      fm(400, #"{"error":6,"message":"Invalid parameters"}"#)
        == .rejected("Last.fm refused it (error 6: Invalid parameters)"))
    #expect(fm(502, "<html>bad gateway</html>").isRetry)
  }
}

extension Verdict {
  var isRefused: Bool { if case .refused = self { true } else { false } }
  var isRetry: Bool { if case .retry = self { true } else { false } }
}
