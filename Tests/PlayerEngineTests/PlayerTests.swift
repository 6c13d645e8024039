import AudioCore
import AudioTestSupport
import Platform
import SessionCore
import Testing

@testable import PlayerEngine
import PlayerCore

/// The player's manners, rule by rule, with a fake session server, fake files (`ToneDecoder`)
/// and fake devices (`FakeOutput`, paced like a sound card).
@Suite(.timeLimit(.minutes(2))) struct PlayerTests {
  @Test func G14_aCallPausesAndItsEndResumesWhereItWas() async throws {
    let rig = PlayerRig()
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.3)
    rig.player.deliver(.interruption(.began(call)))
    try #require(await rig.until { $0.state == .paused })
    let s = rig.player.snapshot
    #expect(s.pausedBy == .interruption)
    #expect(s.reason == "Paused — call in progress (will resume)")
    let pausedAt = s.position
    // Published after the snapshot is taken (the player's step publishes last): wait for it.
    #expect(await eventually { rig.lastPublished?.pausedBy == .interruption })
    try await Task.sleep(for: .milliseconds(300))
    #expect(abs(rig.player.snapshot.position - pausedAt) < 0.01, "the position moved while paused")
    rig.player.deliver(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    try #require(await rig.until { $0.state == .playing })
    #expect(abs(rig.player.snapshot.position - pausedAt) < 0.1)
    #expect(rig.player.snapshot.reason == nil)
    #expect(rig.session.activations.suffix(1) == [true])
  }

  @Test func G4_G6_aNewOrPickedOutputGoesOnWithoutAPause() async throws {
    let rig = PlayerRig()
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.2)
    let before = rig.player.snapshot
    rig.player.deliver(.routeChange(plug))
    rig.player.deliver(
      .routeChange(RouteChange(reason: .override, previous: headphones, current: .speakers)))
    await rig.player.perform(.selectDevice("usb"))
    let s = rig.player.snapshot
    // On from where it was: the same track, not back to its start, not jumped ahead.
    #expect(s.current == before.current)
    #expect(s.position >= before.position - 0.05, "from \(before.position) back to \(s.position)")
    #expect(s.position < before.position + 1, "from \(before.position) on to \(s.position)")
    #expect(s.state == .playing)
    #expect(s.pausedBy == nil)
    #expect(s.deviceName == "usb")
    #expect(rig.devices.opened.last?.deviceName == "usb")
  }

  /// The engine found its device gone (ENODEV): the same as an unplug (G5).
  @Test func G5_aVanishedDevicePausesByRoute() async throws {
    let rig = PlayerRig(
      output: FakeOutput.Options(
        pacing: .realTime(speed: 1), faults: [.unplug(afterFrames: 11_025)]))
    defer { rig.stop() }
    #expect(await rig.player.send(.play) == .success)
    try #require(await rig.until { $0.pausedBy == .route })
    #expect(rig.player.snapshot.reason == "Paused — 'fake' went away")
    #expect(rig.messages.contains { $0.hasPrefix("output 'fake' went away") })
    // Through the session server, like every real output event.
    #expect(rig.session.lostOutputs == [Route(name: "fake", kind: .unknown)])
  }

  @Test func G3_volumeCommandsChangeTheSystemVolume() async throws {
    let volume = FakeVolume(percent: 50)
    let rig = PlayerRig { c in c.makeVolume = { _ in volume } }
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.1)
    #expect(await rig.player.send(.volumeUp(percent: 10)) == .success)
    #expect(volume.volumePercent == 60)
    #expect(await rig.player.send(.volumeDown(percent: 25)) == .success)
    #expect(volume.volumePercent == 35)
    #expect(await rig.player.send(.mute) == .success)
    #expect(volume.isMuted)
    #expect(rig.player.snapshot.volume == .level(percent: 35, muted: true))
  }

  /// A volume command that comes while the output's control is still being looked for (the
  /// player just started; the lookup, on a thread of its own, is held here) is carried out:
  /// the player looks for the control then and there, rather than answer that the output has
  /// none (G3). The lookup that comes in late changes nothing.
  @Test func G3_aVolumeCommandRightAfterTheStartIsCarriedOut() async throws {
    let volume = FakeVolume(percent: 50)
    let lookups = Locked(0)
    let held = Platform.Semaphore()
    let rig = PlayerRig { c in
      c.makeVolume = { _ in
        // The first lookup (the player's own, at its start) is held until the test ends.
        if lookups.withLock({ n in
          n += 1
          return n == 1
        }) {
          held.wait()
        }
        return volume
      }
    }
    defer {
      held.signal()
      rig.stop()
    }
    try await rig.playing(atLeast: 0.1)
    #expect(rig.player.snapshot.volume == .unavailable(device: "fake"), "not found yet")
    #expect(rig.player.snapshot.enabledCommands.isSuperset(of: [.volumeUp, .volumeDown]))
    #expect(await rig.player.send(.volumeUp(percent: 10)) == .success)
    #expect(volume.volumePercent == 60)
    #expect(rig.player.snapshot.volume == .level(percent: 60, muted: false))
    #expect(lookups.withLock { $0 } == 2)
  }

  /// An output with no volume control at all: once looked for, volume commands are refused as
  /// disabled (G19), not taken.
  @Test func G3_anOutputWithNoVolumeControlRefusesVolumeCommands() async throws {
    let rig = PlayerRig { c in c.makeVolume = { _ in nil } }
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.1)
    #expect(await rig.player.send(.volumeUp(percent: 10)) == .commandDisabled)
    #expect(await rig.until { !$0.enabledCommands.contains(.volumeUp) })
  }

  @Test func theQueuePlaysToItsEndAndSaysSo() async throws {
    let rig = PlayerRig(tracks: ["a.wav", "b.wav"], frames: 4_410)
    defer { rig.stop() }
    #expect(await rig.player.send(.play) == .success)
    try #require(await rig.until { _ in rig.notices.contains(.queueEnded(nothingPlayed: false)) })
    #expect(rig.player.snapshot.state == .stopped)
    let heard = rig.notices.compactMap { if case .nowPlaying(let t) = $0 { t.path } else { nil } }
    #expect(heard == ["a.wav", "b.wav"])
  }

  /// Acceptance scenario 8 at the player: a bad file is named with its reason; the next plays.
  @Test func aBadFileIsNamedAndTheNextPlays() async throws {
    let rig = PlayerRig(tracks: ["a.wav", "broken.mp3", "c.wav"], frames: 4_410)
    defer { rig.stop() }
    #expect(await rig.player.send(.play) == .success)
    try #require(await rig.until { _ in rig.notices.contains(.queueEnded(nothingPlayed: false)) })
    #expect(rig.skipped == ["cannot play 'broken.mp3': not an audio file (ToneLibrary)"])
    let heard = rig.notices.compactMap { if case .nowPlaying(let t) = $0 { t.path } else { nil } }
    #expect(heard == ["a.wav", "c.wav"])
    #expect(rig.player.snapshot.failed.values.contains("not an audio file"))
  }

  /// The queue is edited in the last second of a track, when the decoder has already lined up
  /// what followed: what plays next is what the queue now says. Paused there while editing, so
  /// that the test does not race the clock.
  @Test func editingTheQueueNearTheEndOfATrackChangesWhatFollows() async throws {
    let rig = PlayerRig(tracks: ["a.wav", "b.wav"])
    defer { rig.stop() }
    #expect(await rig.player.send(.play) == .success)
    try #require(await rig.until { _ in rig.heard == ["a.wav"] })
    #expect(await rig.player.send(.pause) == .success)
    #expect(await rig.player.send(.changePlaybackPosition(seconds: 29)) == .success)
    // The decoder fills the ring from 29 s: a's last second, then b.
    try await Task.sleep(for: .milliseconds(200))
    await rig.player.perform(.add(["c.wav"], play: false))
    let c = try #require(rig.player.snapshot.queue.last)
    await rig.player.perform(.move(entry: c.id, to: 1))
    #expect(await rig.player.send(.play) == .success)
    try #require(await rig.until { _ in rig.heard.count >= 2 })
    #expect(Array(rig.heard.prefix(2)) == ["a.wav", "c.wav"])
  }

  /// Spoken word: a podcast tells the session it is spokenAudio; a prompt's
  /// interruption pauses it ("Paused for 'nav' (resumes after)"), and its end resumes it two
  /// seconds back, so the sentence cut is heard whole (G14). Music after it is music again.
  @Test func G13_G14_spokenWordPausesForAPromptAndResumesAStepBack() async throws {
    let rig = PlayerRig(tracks: ["episode.mp3", "a.wav"])
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.1)
    try #require(await eventually { rig.session.modes.last == .spokenAudio })
    #expect(await rig.player.send(.changePlaybackPosition(seconds: 10)) == .success)
    try #require(await rig.until { $0.position >= 10 })
    let nav = InterruptionCause(kind: .otherAudio, by: "nav")
    rig.player.deliver(.interruption(.began(nav)))
    try #require(await rig.until { $0.state == .paused })
    #expect(rig.messages.last == "paused for 'nav'; resumes after")
    #expect(rig.player.snapshot.reason == "Paused for 'nav' (resumes after)")
    let pausedAt = rig.player.snapshot.position
    rig.player.deliver(
      .interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    try #require(await rig.until { $0.state == .playing })
    let resumedAt = rig.player.snapshot.position
    #expect(abs(resumedAt - (pausedAt - 2)) < 0.3, "resumed at \(resumedAt), paused at \(pausedAt)")
    // The user says it is music after all, and back.
    await rig.player.perform(.toggleSpoken)
    #expect(rig.session.modes.last == .default)
    #expect(rig.messages.last == "'Episode 12' is music: a prompt ducks it")
    await rig.player.perform(.toggleSpoken)
    #expect(rig.session.modes.last == .spokenAudio)
    #expect(await rig.player.send(.nextTrack) == .success)
    try #require(await eventually { rig.session.modes.last == .default })
  }

  /// At the end of the queue, play (space, a media key) starts it again from the top
  @Test func atTheEndOfTheQueuePlayStartsItAgainFromTheTop() async throws {
    let rig = PlayerRig(
      tracks: ["a.wav", "b.wav"], frames: 22_050,
      output: FakeOutput.Options(pacing: .realTime(speed: 4)))
    defer { rig.stop() }
    #expect(await rig.player.send(.play) == .success)
    try #require(await rig.until { _ in rig.heard == ["a.wav", "b.wav"] })
    try #require(await rig.until { $0.state == .stopped })
    #expect(rig.player.snapshot.current?.path == "a.wav")
    #expect(await rig.player.send(.togglePlayPause) == .success)
    // The whole queue plays again from its top and stops at its end, as the first time: waited
    // for as a whole (between "a.wav" and "b.wav", 0.125 s, a poll of a loaded machine missed
    // the moment once).
    try #require(
      await rig.until {
        $0.state == .stopped && rig.heard == ["a.wav", "b.wav", "a.wav", "b.wav"]
      },
      "heard \(rig.heard), \(rig.player.snapshot.state), \(rig.messages)")
  }

  @Test func publishedInfoFollowsThePlayer() async throws {
    let rig = PlayerRig()
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.1)
    try #require(await rig.until { _ in rig.lastPublished?.state == .playing })
    #expect(rig.lastPublished?.title == "a")
    #expect(rig.lastPublished?.duration == 30)
    #expect(rig.lastPublished?.rate == 1)
    _ = await rig.player.send(.pause)
    #expect(rig.lastPublished?.state == .paused)
    #expect(rig.lastPublished?.pausedBy == .user)
  }

  /// The first play: the first file and the output open while the session server is asked
  /// for the audio, not after its answer; nothing is heard before the grant (G10).
  @Test func G10_theFirstFileOpensWhileTheActivationIsAskedForAndSoundsOnlyOnceGranted()
    async throws
  {
    let rig = PlayerRig(
      tracks: ["a.wav", "b.wav"], autoplay: true, holdingActivations: true)
    defer { rig.stop() }
    try #require(await eventually { rig.session.activationsAsked == 1 })
    let output = try #require(
      await eventually { rig.devices.opened.count == 1 } ? rig.devices.opened.first : nil,
      "the output did not open while the activation was asked for")
    #expect(rig.library.openedPaths == ["a.wav"])
    #expect(rig.session.activations.isEmpty)
    // Given time to, it still writes nothing while the activation is unanswered.
    try await Task.sleep(for: .milliseconds(100))
    #expect(output.framesWritten == 0)
    #expect(rig.player.snapshot.state == .stopped)
    #expect(rig.heard.isEmpty)
    rig.session.hold(false)
    try #require(await rig.until { $0.state == .playing })
    try #require(await eventually { output.framesWritten > 0 })
    #expect(rig.session.activations == [true])
    // The player says what plays through its notices, on their own queue: waited for, not read
    // the moment the output has been written to (under AddressSanitizer it came after).
    #expect(await eventually { rig.heard == ["a.wav"] }, "\(rig.heard)")
    #expect(rig.devices.opened.count == 1)
  }

  /// The queue's repeat reaches the engine's decode thread, which asks it what follows: the
  /// same track again, gaplessly, with repeat one; the first again with repeat all.
  @Test func repeatOnePlaysTheTrackAgainAndRepeatAllWraps() async throws {
    let rig = PlayerRig(tracks: ["a.wav", "b.wav"], frames: 4_410)
    defer { rig.stop() }
    await rig.player.perform(.setRepeat(.one))
    #expect(await rig.player.send(.play) == .success)
    try #require(await rig.until { _ in rig.heard.count >= 3 })
    #expect(Array(rig.heard.prefix(3)) == ["a.wav", "a.wav", "a.wav"])
    // With repeat all, next at the last track wraps to the first.
    await rig.player.perform(.setRepeat(.all))
    #expect(await rig.player.send(.nextTrack) == .success)
    try #require(await rig.until { $0.current?.path == "b.wav" })
    #expect(rig.player.snapshot.enabledCommands.contains(.nextTrack))
  }

  /// Stop forgets the position and gives the audio back; Play starts the same track again,
  /// from its start, through the engine (MPRIS's Stop then Play; cmus, mpv and MPD do the same).
  @Test func playAfterStopStartsTheTrackAgainFromItsStart() async throws {
    let rig = PlayerRig(tracks: ["a.wav", "b.wav"])
    defer { rig.stop() }
    try await rig.playing(atLeast: 0.2)
    #expect(await rig.player.send(.nextTrack) == .success)
    try #require(await rig.until { $0.current?.path == "b.wav" && $0.position >= 0.2 })
    #expect(await rig.player.send(.stop) == .success)
    #expect(rig.player.snapshot.state == .stopped)
    #expect(rig.player.snapshot.position == 0)
    #expect(rig.session.activations.last == false)
    #expect(await rig.player.send(.play) == .success)
    try #require(await rig.until { $0.state == .playing && $0.current?.path == "b.wav" })
    #expect(rig.player.snapshot.position < 0.5, "from \(rig.player.snapshot.position) s")
    #expect(await eventually { rig.heard.suffix(2) == ["b.wav", "b.wav"] }, "\(rig.heard)")
    #expect(rig.session.activations.last == true)
  }

  private let call = InterruptionCause(kind: .call, by: "call")
  private let headphones = Route(name: "Headphones", kind: .headphones)
  private var unplug: RouteChange {
    RouteChange(reason: .oldDeviceUnavailable, previous: headphones, current: .speakers)
  }
  private var plug: RouteChange {
    RouteChange(reason: .newDeviceAvailable, previous: .speakers, current: headphones)
  }
}

// MARK: - Fakes

/// A session server that grants (or refuses) activation and records what it was told.
final class FakeSession: PlayerSession, Sendable {
  private struct State {
    var activations: [Bool] = []
    var modes: [SessionMode] = []
    var published: [(PlaybackInfo?, Set<RemoteCommandKind>)] = []
    var refusal: ActivationRefusal?
    /// Activations wait (as a busy session server's answer does) until this is false again.
    var holding = false
    var asked = 0
    // Weak: the player holds its session; a strong reference back was a cycle that kept every
    // test's player, engine and fake device alive (LeakSanitizer found it).
    weak var player: Player?
    var lostOutputs: [Route] = []
  }
  private let state = Locked(State())

  func setCategory(_ category: Category, mode: SessionMode, options: CategoryOptions)
    async throws
  {
    state.withLock { $0.modes.append(mode) }
  }

  /// The modes the player set, in order.
  var modes: [SessionMode] { state.withLock { $0.modes } }

  func setActive(_ active: Bool) async throws {
    if active {
      state.withLock { $0.asked += 1 }
      while state.withLock({ $0.holding }) { try? await Task.sleep(for: .milliseconds(5)) }
    }
    if active, let r = state.withLock({ $0.refusal }) { throw r }
    state.withLock { $0.activations.append(active) }
  }

  func publish(_ info: PlaybackInfo?, commands: Set<RemoteCommandKind>) async {
    state.withLock { $0.published.append((info, commands)) }
  }

  /// Like the server: an output lost is answered with a route change for this session.
  func outputLost(_ route: Route) async -> Bool {
    guard let player = state.withLock({ $0.player }) else { return false }
    player.deliver(
      .routeChange(RouteChange(reason: .oldDeviceUnavailable, previous: route, current: .speakers)))
    state.withLock { $0.lostOutputs.append(route) }
    return true
  }

  func attach(_ player: Player) { state.withLock { $0.player = player } }
  var lostOutputs: [Route] { state.withLock { $0.lostOutputs } }

  func refuse(_ refusal: ActivationRefusal?) { state.withLock { $0.refusal = refusal } }
  /// Makes activations wait for `hold(false)`.
  func hold(_ holding: Bool) { state.withLock { $0.holding = holding } }
  /// How many activations have been asked for (answered or not).
  var activationsAsked: Int { state.withLock { $0.asked } }
  var activations: [Bool] { state.withLock { $0.activations } }
  var published: [(PlaybackInfo?, Set<RemoteCommandKind>)] { state.withLock { $0.published } }
}

/// A mixer in memory.
final class FakeVolume: SystemVolume, @unchecked Sendable {
  var volumePercent: Double
  var isMuted = false
  let canMute = true
  init(percent: Double) { volumePercent = percent }
  func setVolume(percent: Double) throws { volumePercent = min(100, max(0, percent)) }
  func setMuted(_ muted: Bool) throws { isMuted = muted }
}

extension ToneDecoder.Configuration {
  static func sine(_ frames: Int, hertz: Double) -> Self {
    Self(frames: frames, signal: .sine(hertz: hertz, amplitude: 0.5))
  }
}

/// A `Player` on fakes: 30 s sine tracks (or `frames` long) by name, except names starting
/// with "broken", which will not open, and "http", live streams (named "Radio X"); paced fake outputs; and a record of what it said.
final class PlayerRig: Sendable {
  let player: Player
  let session = FakeSession()
  let devices: FakeDevices
  let library: ToneLibrary
  private let said = Locked<[PlayerNotice]>([])
  /// For each track heard, the status-line problem the snapshot carried as it started.
  private let problems = Locked<[(path: String, problem: String?)]>([])
  private let loop: Task<Void, Never>

  init(
    tracks: [String] = ["a.wav"], frames: Int = 1_323_000,
    output: FakeOutput.Options = FakeOutput.Options(pacing: .realTime(speed: 1)),
    slowOpens: [String: Duration] = [:], autoplay: Bool = false,
    holdingActivations: Bool = false, refusing: ActivationRefusal? = nil,
    configure: (inout Player.Configuration) -> Void = { _ in }
  ) {
    session.hold(holdingActivations)
    session.refuse(refusing)
    var tones: [String: ToneDecoder.Configuration] = [:]
    var unreadable: [String: String] = [:]
    for (i, path) in tracks.enumerated() {
      if path.hasPrefix("broken") {
        unreadable[path] = "not an audio file"
      } else if path.hasPrefix("http") {
        var live = ToneDecoder.Configuration.sine(frames, hertz: 220 + 110 * Double(i))
        live.isLive = true
        live.metadata = TrackMetadata(title: "Radio X")
        tones[path] = live
      } else {
        tones[path] = .sine(frames, hertz: 220 + 110 * Double(i))
      }
    }
    tones["c.wav"] = .sine(frames, hertz: 1_000)
    var episode = ToneDecoder.Configuration.sine(frames, hertz: 300)
    episode.metadata = TrackMetadata(title: "Episode 12", genre: "Podcast")
    tones["episode.mp3"] = episode
    let library = ToneLibrary(tones, unreadable: unreadable, slowOpens: slowOpens)
    let devices = FakeDevices(output)
    self.devices = devices
    self.library = library
    var engine = AudioEngine.Configuration(
      deviceName: "fake",
      openDecoder: { path throws(DecodeError) in try library.open(path) },
      openOutput: { name, format in try devices.open(name, format) })
    engine.fadeIn = .zero
    var configuration = Player.Configuration(engine: engine)
    configuration.shuffleSeed = 42
    configure(&configuration)
    let player = Player(configuration: configuration, session: session)
    self.player = player
    session.attach(player)
    let said = self.said
    let problems = self.problems
    player.observe { snapshot, notices in
      said.withLock { $0 += notices }
      for case .nowPlaying(let track) in notices {
        problems.withLock { $0.append((track.path, snapshot.problem?.description)) }
      }
    }
    loop = Task { await player.run(files: tracks, autoplay: autoplay) }
  }

  func stop() {
    player.quit()
  }

  /// Quits and waits until the player's loop has ended.
  func quitAndWait() async {
    player.quit()
    await loop.value
  }

  var notices: [PlayerNotice] { said.withLock { $0 } }
  var problemsWhenHeard: [(path: String, problem: String?)] { problems.withLock { $0 } }
  var skipped: [String] {
    notices.compactMap { if case .couldNotPlay(_, let line) = $0 { line } else { nil } }
  }
  var messages: [String] {
    notices.compactMap { if case .message(let m) = $0 { m.description } else { nil } }
  }
  var heard: [String] {
    notices.compactMap { if case .nowPlaying(let t) = $0 { t.path } else { nil } }
  }
  var lastPublished: PlaybackInfo? { session.published.last?.0 }
  var lastCommands: Set<RemoteCommandKind>? { session.published.last?.1 }

  /// Plays, and waits until `seconds` have been heard.
  func playing(atLeast seconds: Double) async throws {
    #expect(await player.send(.play) == .success)
    try #require(
      await until { $0.state == .playing && $0.position(at: monotonicNanoseconds()) >= seconds })
    // The snapshot's position is refreshed on the player's clock; ask it for a fresh one.
    _ = await player.perform(.setRepeat(player.snapshot.repeatMode))
  }

  /// Polls the snapshot until `condition` holds (5 s at most).
  func until(_ condition: (PlayerSnapshot) -> Bool) async -> Bool {
    await eventually { condition(player.snapshot) }
  }
}
