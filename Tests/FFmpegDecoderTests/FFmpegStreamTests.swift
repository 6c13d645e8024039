import AudioCore
import Glibc
import Platform
import Testing

@testable import FFmpegDecoder

/// What a station says between the audio: parsed as stations write it, not as the spec wishes.
@Suite struct ICYMetadataTests {
  @Test func theTitleIsReadUpToItsClosingQuoteAndSemicolon() {
    let m = ICYMetadata(
      Array("StreamTitle='Guns N' Roses - Don't Cry';StreamUrl='http://x/';".utf8))
    #expect(m.streamTitle == "Guns N' Roses - Don't Cry")
    #expect(m.fields["StreamUrl"] == "http://x/")
  }

  @Test func paddingAnEmptyTitleAndAMissingEndAreTakenInStride() {
    #expect(ICYMetadata(Array("StreamTitle='';".utf8) + [0, 0, 0]).streamTitle == nil)
    #expect(ICYMetadata(Array("StreamTitle='  Live  '".utf8)).streamTitle == "Live")
    #expect(ICYMetadata(Array("StreamTitle='Cut off".utf8)).streamTitle == "Cut off")
    #expect(ICYMetadata(Array("StreamTitle=Bare;Other='x';".utf8)).streamTitle == "Bare")
    #expect(ICYMetadata([]).streamTitle == nil)
    #expect(ICYMetadata(Array("garbage without fields".utf8)).fields.isEmpty)
  }

  @Test func latin1AndWindows1252TitlesAreNotMangled() {
    // "Café – Beyoncé" from an encoder that sends Windows-1252: é is 0xE9, the dash 0x96.
    let bytes =
      Array("StreamTitle='Caf".utf8) + [0xE9, 0x20, 0x96, 0x20] + Array("Beyonc".utf8)
      + [0xE9] + Array("';".utf8)
    #expect(ICYMetadata(bytes).streamTitle == "Café – Beyoncé")
    // Valid UTF-8 stays UTF-8.
    #expect(
      ICYMetadata(Array("StreamTitle='Sigur Rós - Hoppípolla';".utf8)).streamTitle
        == "Sigur Rós - Hoppípolla")
  }

  @Test func artistAndTitleAreSplitAtTheFirstSpacedDash() {
    #expect(ICYMetadata.split("Daft Punk - One More Time") == ("Daft Punk", "One More Time"))
    #expect(ICYMetadata.split("A - B - C") == ("A", "B - C"))
    #expect(ICYMetadata.split("Jay-Z") == (nil, "Jay-Z"))
    #expect(ICYMetadata.split(" - Jingle") == (nil, " - Jingle"))
    #expect(ICYMetadata.split("News at ten") == (nil, "News at ten"))
  }

  @Test func theHelpersHeaderSaysLiveAndTheStation() throws {
    let h = try #require(
      HelperHeader(
        "hark-ffmpeg 1\nrate 44100\nchannels 2\nseekable 0\nlive 1\ncodec mp3\n"
          + "station Radio Paradise\ngenre Eclectic\n\n"))
    #expect(h.isLive)
    #expect(h.station == "Radio Paradise")
    #expect(h.tags["genre"] == "Eclectic")
    #expect(h.frames == nil && !h.isSeekable)
    let file = try #require(HelperHeader("hark-ffmpeg 1\nrate 8000\nchannels 1\nframes 9\n\n"))
    #expect(!file.isLive && file.station == nil)
  }
}

/// FFmpegStream through the real helper against a real http server (ffmpeg's own, which serves
/// one listener an endless Ogg Vorbis sine, paced in real time): it plays, cannot seek, says
/// when its connection drops, connects again when the server is back, and gives up with the
/// reason when the server stays away.
@Suite(.timeLimit(.minutes(2))) final class FFmpegStreamTests {
  var servers: [pid_t] = []

  deinit {
    for pid in servers {
      kill(pid, SIGKILL)
      _ = waitForChild(pid)
    }
  }

  /// Starts ffmpeg serving a live Ogg stream on `port`.
  func serve(on port: Int) throws {
    let arguments = [
      "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i",
      "sine=f=500:r=44100", "-ac", "2", "-c:a", "libvorbis", "-f", "ogg", "-listen", "1",
      "http://127.0.0.1:\(port)/live.ogg",
    ]
    // Its errors where ours go.
    let pid = try spawn("ffmpeg", arguments, descriptors: [2: .parent(2)])
    servers.append(pid)
    // A stream's first connection is not retried (its failure is the open's): wait until ffmpeg
    // listens, seen in /proc/net/tcp rather than by connecting (it takes one client only).
    let hex = String(port, radix: 16, uppercase: true)
    let local = "0100007F:" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    let deadline = now() + 10
    while now() < deadline {
      var status: Int32 = 0
      if waitpid(pid, &status, WNOHANG) == pid {
        servers.removeAll { $0 == pid }
        Issue.record("ffmpeg ended before it listened on port \(port) (status \(status))")
        return
      }
      let table = fileText("/proc/net/tcp") ?? ""
      let listening = table.split(separator: "\n").contains { line in
        let fields = line.split(separator: " ")
        return fields.count > 3 && fields[1] == local && fields[3] == "0A"
      }
      if listening { return }
      usleep(10_000)
    }
    Issue.record("ffmpeg did not listen on port \(port) within 10 s")
  }

  func stopServers() {
    for pid in servers {
      kill(pid, SIGKILL)
      _ = waitForChild(pid)
    }
    servers = []
  }

  /// Reads until `frames` have come or `condition` holds, at most `seconds`; the frames read.
  @discardableResult
  func read(
    _ stream: FFmpegStream, frames wanted: Int = .max, seconds: Double = 20,
    until condition: (FFmpegStream) -> Bool = { _ in false }
  ) throws -> Int {
    var buffer = [Float](repeating: 0, count: 4_096 * 2)
    var got = 0
    let end = monotonicNanoseconds() + UInt64(seconds * 1e9)
    while got < wanted && !condition(stream) && monotonicNanoseconds() < end {
      got += try buffer.withUnsafeMutableBufferPointer { b throws(DecodeError) in
        try stream.read(into: b)
      }
    }
    return got
  }

  /// Opens the stream, waiting for the server to listen (it starts in the background).
  func open(_ url: String, timing: FFmpegStream.Timing = FFmpegStream.Timing()) throws
    -> FFmpegStream
  {
    var lastError: DecodeError?
    for _ in 0..<100 {
      do throws(DecodeError) {
        return try FFmpegStream(url: url, timing: timing)
      } catch {
        lastError = error
        usleep(50_000)
      }
    }
    throw lastError ?? DecodeError(.connection, path: url, reason: "never opened")
  }

  @Test func aLiveStreamPlaysCannotSeekAndReconnectsWhenItsServerComesBack() throws {
    let port = freePort()
    let url = "http://127.0.0.1:\(port)/live.ogg"
    try serve(on: port)
    var timing = FFmpegStream.Timing()
    timing.firstRetry = .milliseconds(200)
    timing.maxRetry = .milliseconds(400)
    let stream = try open(url, timing: timing)
    #expect(stream.format == PCMFormat(sampleRate: 44_100, channels: 2))
    #expect(stream.frameCount == nil)
    #expect(!stream.isSeekable)
    #expect(stream.live?.reconnecting == nil)
    #expect(throws: DecodeError.self) { try stream.seek(toFrame: 100) }
    // Real time, paced by the server: half a second of it.
    #expect(try read(stream, frames: 22_050) >= 22_050)

    stopServers()
    try read(stream, seconds: 15) { $0.live?.reconnecting != nil }
    let why = try #require(stream.live?.reconnecting, "a dropped connection was not noticed")
    #expect(!why.isEmpty)
    #expect(stream.live?.ended == false)

    try serve(on: port)
    try read(stream, seconds: 20) { $0.live?.reconnecting == nil }
    #expect(stream.live?.reconnecting == nil, "it did not reconnect")
    #expect(try read(stream, frames: 22_050) >= 22_050, "no sound after reconnecting")
  }

  @Test func aStreamThatStaysAwayFailsWithTheReasonAfterTheGiveUpTime() throws {
    let port = freePort()
    let url = "http://127.0.0.1:\(port)/live.ogg"
    try serve(on: port)
    var timing = FFmpegStream.Timing()
    timing.firstRetry = .milliseconds(100)
    timing.maxRetry = .milliseconds(300)
    timing.giveUp = .seconds(2)
    let stream = try open(url, timing: timing)
    try read(stream, frames: 4_410)
    stopServers()
    let started = monotonicNanoseconds()
    let error = try #require(throws: DecodeError.self) { try self.read(stream, seconds: 15) }
    let waited = Double(monotonicNanoseconds() - started) / 1e9
    #expect(error.reason.hasPrefix("the stream has been gone for 2 s"), "\(error)")
    #expect(waited >= 1.5 && waited < 10, "gave up after \(waited) s")
    #expect(stream.live?.ended == true)
  }

  @Test func aServerThatIsNotThereIsSaidAtOnce() throws {
    let url = "http://127.0.0.1:\(freePort())/nothing.mp3"
    let error = try #require(throws: DecodeError.self) { try FFmpegStream(url: url) }
    #expect(error.reason == "cannot open the stream", "\(error)")
    #expect(error.detail?.lowercased().contains("refused") == true, "\(error)")
  }

  /// A host that does not resolve is named as such: FFmpeg answers EIO ("Input/output error")
  /// and says why only in its log. ("a..b" is refused by the resolver itself, with no query.)
  @Test func aHostThatDoesNotResolveIsSaidSo() throws {
    let error = try #require(throws: DecodeError.self) {
      try FFmpegStream(url: "http://a..b/nothing.mp3")
    }
    #expect(error.reason == "cannot open the stream", "\(error)")
    #expect(error.detail?.hasPrefix("Failed to resolve hostname a..b") == true, "\(error)")
  }
}

/// A TCP port nothing listens on now, below the kernel's range of ephemeral ports. The kernel
/// never gives such a port to a connection of its own accord, so the test's server can still
/// bind it a moment later, and again after it was stopped. A port the kernel picks comes from
/// that range, and could meanwhile become the local end of another test's connection (CI, with
/// a busy core: ffmpeg said "Address already in use", and the test waited for it in vain).
func freePort() -> Int {
  let ephemeral =
    fileText("/proc/sys/net/ipv4/ip_local_port_range")?
    .split(whereSeparator: \.isWhitespace).compactMap { Int($0) }.first ?? 32_768
  let below = max(10_001, min(ephemeral, 65_536))
  for _ in 0..<1_000 {
    let port = Int.random(in: 10_000..<below)
    if canListen(on: port) { return port }
  }
  Issue.record("no free TCP port below \(below)")
  return below - 1
}

/// Whether a listening socket on 127.0.0.1:`port` can be made now.
private func canListen(on port: Int) -> Bool {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { return false }
  defer { close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  address.sin_port = UInt16(port).bigEndian
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
    }
  }
  return bound && listen(fd, 1) == 0
}
