import Glibc
import Platform
import SessionCore
import SessionWire
import Testing

@testable import SessionClient
@testable import SessionServer

/// The desktop's players as the sleep timer reaches them, faked: what a survey finds, and what
/// was asked of them. Answers at once, as a quick bus would.
final class FakeDesktop: DesktopPlayerControl, @unchecked Sendable {
  let players: Locked<[SleepTimer.DesktopPlayer]>
  /// "survey", "fade NAME…", "stop", in order.
  let log = Locked<[String]>([])
  private let post = Locked<(@Sendable (ExternalEvent) -> Void)?>(nil)

  init(_ players: [SleepTimer.DesktopPlayer] = []) { self.players = Locked(players) }

  func start(answering post: @escaping @Sendable (ExternalEvent) -> Void) {
    self.post.withLock { $0 = post }
  }

  func survey() {
    log.withLock { $0.append("survey") }
    answer(.desktopSurveyed(players.withLock { $0 }))
  }

  func fadeAndPause(_ faded: [SleepTimer.DesktopPlayer], fade: Double) {
    log.withLock { $0.append("fade " + faded.map(\.name).joined(separator: " ") + " \(fade)") }
    players.withLock { all in
      for i in all.indices where faded.contains(where: { $0.busName == all[i].busName }) {
        all[i].state = .paused
      }
    }
    answer(.desktopPaused)
  }

  func stopFades() { log.withLock { $0.append("stop") } }
  func close() {}

  var asked: [String] { log.withLock { $0 } }

  private func answer(_ event: ExternalEvent) {
    let post = post.withLock { $0 }
    post?(event)
  }
}

/// The sleep timer through the real server: `setTimer` over the socket, the now-playing app told
/// to fade out and pause, the desktop's other players faded and paused, everyone told.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SleepTimerServerTests {
  static let mpv = SleepTimer.DesktopPlayer(
    busName: "org.mpris.MediaPlayer2.mpv", name: "mpv", pid: 1, state: .playing, position: 3,
    length: 60)

  /// A session playing, the now-playing app.
  private func playingMusic(_ server: TestServer) async throws -> (AudioSession, EventRecorder) {
    let music = try await server.client("music")
    let events = EventRecorder(music)
    try await music.setCategory(.playback)
    try await music.setActive(true)
    try await music.publish(
      PlaybackInfo(state: .playing, title: "Song", duration: 200, position: 10, rate: 1),
      commands: [.play, .pause])
    return (music, events)
  }

  @Test func whenItEndsTheNowPlayingAppAndTheDesktopsPlayersFadeOutAndPause() async throws {
    // hark's own player on MPRIS too (this process has sessions): never paused that way.
    let harkOnMPRIS = SleepTimer.DesktopPlayer(
      busName: "org.mpris.MediaPlayer2.hark", name: "hark", pid: getpid(), state: .playing)
    let desktop = FakeDesktop([Self.mpv, harkOnMPRIS])
    let server = TestServer(desktop: desktop)
    defer { server.cleanUp() }
    try await server.start()
    let (music, events) = try await playingMusic(server)
    let control = try await server.client("hark timer")
    try await control.setTimer(SleepTimerSetting(.duration(seconds: 0.3), fade: 1))
    let running = await events.wait(for: "running") {
      if case .sleepTimer(let s) = $0 { s?.state == .running } else { false }
    }
    #expect(running != nil)
    let status = try await control.status()
    #expect(status.timer?.state == .running)
    #expect(status.timer?.mode == .duration(seconds: 0.3))
    #expect(status.timer?.fade == 1)

    let ended = await events.wait(for: "sleepTimerEnded") { $0 == .sleepTimerEnded(fade: 1) }
    #expect(ended != nil)
    // The app fades itself out and pauses, saying why; then the timer has ended.
    try await music.publish(
      PlaybackInfo(
        state: .paused, title: "Song", duration: 200, position: 11.3, rate: 0, pausedBy: .timer,
        reason: .timer),
      commands: [.play, .pause])
    let over = await events.wait(for: "ended") {
      if case .sleepTimer(let s) = $0 { s?.state == .ended } else { false }
    }
    #expect(
      over
        == .sleepTimer(
          SleepTimerStatus(
            state: .ended, mode: .duration(seconds: 0.3), fade: 1, apps: ["music", "mpv"])))
    #expect(desktop.asked == ["survey", "fade mpv 1.0"])
    let after = try await control.status()
    #expect(after.timer?.state == .ended)
    #expect(after.timer?.apps == ["music", "mpv"])
    #expect(after.sessions.first { $0.name == "music" }?.playback?.reason == .timer)
    control.close()
    music.close()
    try await server.stop()
  }

  @Test func anAppThatComesWhileItRunsIsToldOfIt() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let control = try await server.client("hark timer")
    try await control.setTimer(SleepTimerSetting(.endOfTrack))
    let (music, events) = try await playingMusic(server)
    let told = await events.wait(for: "the timer") {
      if case .sleepTimer(let s) = $0 { s?.mode == .endOfTrack } else { false }
    }
    #expect(told != nil)
    // The end of its track, less the fade and half a second: 190 s after it said 10 of 200.
    let remaining = try await control.status().timer?.remaining ?? 0
    #expect(remaining > 180 && remaining <= 185)
    control.close()
    music.close()
    try await server.stop()
  }

  @Test func cancelTellsEveryoneAndLeavesNothingBehind() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let (music, events) = try await playingMusic(server)
    let control = try await server.client("hark timer")
    try await control.setTimer(SleepTimerSetting(.duration(seconds: 600)))
    _ = await events.wait(for: "running") {
      if case .sleepTimer(let s) = $0 { s?.state == .running } else { false }
    }
    try await control.setTimer(nil)
    let off = await events.wait(for: "off") { $0 == .sleepTimer(nil) }
    #expect(off != nil)
    #expect(try await control.status().timer == nil)
    control.close()
    music.close()
    try await server.stop()
  }

  /// Without a desktop to reach (no session bus), hark's app is still paused.
  @Test func withoutTheDesktopItPausesHarksApp() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let (music, events) = try await playingMusic(server)
    let control = try await server.client("hark timer")
    try await control.setTimer(SleepTimerSetting(.duration(seconds: 0.2), fade: 0))
    #expect(await events.wait(for: "sleepTimerEnded") { $0 == .sleepTimerEnded(fade: 0) } != nil)
    music.close()  // gone: it plays no more
    var status = try await control.status()
    for _ in 0..<200 where status.timer?.state != .ended {
      try await Task.sleep(for: .milliseconds(10))
      status = try await control.status()
    }
    #expect(status.timer?.state == .ended)
    #expect(status.timer?.apps == ["music"])
    control.close()
    try await server.stop()
  }

  @Test func aTimerOutOfRangeIsRefusedByName() async throws {
    let server = TestServer()
    defer { server.cleanUp() }
    try await server.start()
    let raw = try server.rawConnection()
    raw.send(#"{"type":"hello","version":1,"name":"raw"}"# + "\n")
    raw.send(#"{"type":"setTimer","id":1,"mode":"duration","seconds":0}"# + "\n")
    let lines = raw.readLines(2).lines
    #expect(lines.count == 2)
    #expect(lines.last?.contains(#""code":"badRequest""#) == true)
    #expect(lines.last?.contains("not 0") == true)
    close(raw.fd)
    try await server.stop()
  }
}
