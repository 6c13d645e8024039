import AudioCore
import SessionCore
import Testing

@testable import PlayerCore

/// The player's manners, rule by rule, as the core decides them: inputs in, effects out, in a
/// model world whose clock moves only when told (`CoreRig`).
@Suite struct PlayerCoreTests {
  let call = InterruptionCause(kind: .call, by: "call")
  let headphones = Route(name: "Headphones", kind: .headphones)
  var unplug: RouteChange {
    RouteChange(reason: .oldDeviceUnavailable, previous: headphones, current: .speakers)
  }
  var plug: RouteChange {
    RouteChange(reason: .newDeviceAvailable, previous: .speakers, current: headphones)
  }

  // MARK: G1: the user decides

  @Test func G1_playAsksForTheAudioAndTheEngineStartsOnlyOnceGranted() {
    var rig = CoreRig()
    #expect(rig.snapshot.state == .stopped)
    #expect(rig.send(.play) == .success)
    let kinds = rig.lastEffects.compactMap { e -> String? in
      switch e {
      case .activate: "activate"
      case .engine(.load(_, _, true, _)): "load playing"
      default: nil
      }
    }
    #expect(kinds == ["activate", "load playing"])
    #expect(rig.snapshot.state == .playing)
    #expect(rig.server.active)
  }

  // MARK: G14: interruptions

  @Test func G14_aCallPausesAndItsEndResumesWhereItWas() {
    var rig = CoreRig()
    rig.playing()
    rig.pass(3)
    rig.deliver(.interruption(.began(call)))
    #expect(rig.snapshot.state == .paused)
    #expect(rig.snapshot.pausedBy == .interruption)
    #expect(rig.snapshot.reason == "Paused — call in progress (will resume)")
    #expect(rig.engine.state == .paused)
    let at = rig.engine.position
    rig.pass(5)
    #expect(rig.engine.position == at, "the position moved while paused")
    rig.deliver(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    #expect(rig.snapshot.state == .playing)
    #expect(rig.engine.state == .playing)
    #expect(rig.engine.position == at, "resumed from where it was")
    #expect(rig.snapshot.reason == nil)
    #expect(rig.messages.last == "resumed: 'call' ended")
    #expect(rig.published.last?.0.pausedBy == nil)
  }

  @Test func G14_aPlayerPausedByTheUserStaysPausedAfterACall() {
    var rig = CoreRig()
    rig.playing()
    #expect(rig.send(.pause) == .success)
    rig.deliver(.interruption(.began(call)))
    #expect(rig.snapshot.reason == "Paused — call in progress")
    rig.deliver(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    #expect(rig.snapshot.state == .paused)
    #expect(rig.snapshot.pausedBy == .user)
    #expect(rig.server.activationsAsked == 1)
  }

  @Test func G14_pausingDuringACallMeansNoResume() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.interruption(.began(call)))
    #expect(rig.send(.pause) == .success)
    rig.deliver(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    #expect(rig.snapshot.state == .paused)
    #expect(rig.snapshot.pausedBy == .user)
  }

  /// G13/G18: another music app took over and let go without shouldResume: paused, and out of
  /// its audio context once another app is the now-playing app; the user's play still works.
  @Test func G13_aTakeoverLeavesItPausedAndGivesUpTheMediaKeys() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.nowPlaying(isNowPlaying: true))
    let music = InterruptionCause(kind: .otherAudio, by: "music")
    rig.deliver(.interruption(.began(music)))
    #expect(rig.snapshot.isInAudioContext)
    #expect(rig.snapshot.reason == "Paused — 'music' is playing")
    rig.deliver(.interruption(.ended(shouldResume: false, reason: .interrupterDeactivated)))
    rig.deliver(.nowPlaying(isNowPlaying: false))
    #expect(rig.snapshot.pausedBy == .interruption)
    #expect(!rig.snapshot.isInAudioContext)
    #expect(rig.messages.last == "'music' took over; staying paused")
    #expect(rig.send(.play) == .success)
    #expect(rig.snapshot.state == .playing)
  }

  /// A call killed mid-call (ended without shouldResume, interrupterExited) with no other app
  /// taking the listener: the server keeps it the now-playing app, so it stays reachable.
  @Test func G18_aDeadInterrupterLeavesThePlayerReachableWhileTheServerSaysSo() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.nowPlaying(isNowPlaying: true))
    rig.deliver(.interruption(.began(call)))
    rig.deliver(.interruption(.ended(shouldResume: false, reason: .interrupterExited)))
    #expect(rig.snapshot.pausedBy == .interruption)
    #expect(rig.snapshot.isInAudioContext)
    #expect(rig.messages.last == "'call' ended without finishing; press play to resume")
    rig.deliver(.nowPlaying(isNowPlaying: false))
    #expect(!rig.snapshot.isInAudioContext)
  }

  // MARK: G10: refusal

  @Test func G10_aRefusedPlayStaysWhereItWasAndSaysWhy() {
    var rig = CoreRig()
    rig.server.answer = .refused("a call is in progress")
    #expect(rig.send(.play) == .commandDisabled)
    #expect(rig.send(.togglePlayPause) == .commandDisabled)
    #expect(rig.snapshot.state == .stopped)
    #expect(rig.snapshot.pausedBy == nil)
    #expect(rig.snapshot.current == rig.snapshot.queue.first)
    #expect(rig.snapshot.problem?.description == "Cannot play — a call is in progress")
    #expect(!rig.engineCommands.contains { if case .load = $0 { true } else { false } })
    rig.server.answer = .granted
    #expect(rig.send(.play) == .success)
    #expect(rig.snapshot.state == .playing)
    #expect(rig.snapshot.problem == nil)
  }

  @Test func G10_anActivationThatCouldNotBeAskedFailsAndSaysWhy() {
    var rig = CoreRig()
    rig.server.answer = .failed("the session server went away")
    #expect(rig.send(.play) == .commandFailed)
    #expect(rig.snapshot.state == .stopped)
    #expect(rig.messages.last == "cannot play: the session server went away")
  }

  // MARK: G4, G5, G6: routes

  @Test func G5_unpluggingPausesByRouteAndPluggingBackDoesNotResume() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.routeChange(unplug))
    #expect(rig.snapshot.state == .paused)
    #expect(rig.engine.state == .paused)
    // Without the ramp: it would be heard on the speakers the stream was moved to.
    #expect(rig.lastEffects.contains(.engine(.pauseAtOnce)))
    #expect(!rig.lastEffects.contains(.engine(.pause)))
    #expect(!rig.server.active)
    #expect(rig.snapshot.pausedBy == .route)
    #expect(rig.snapshot.reason == "Paused — headphones unplugged")
    rig.deliver(.routeChange(plug))
    #expect(rig.snapshot.state == .paused)
  }

  @Test func G5_theOptInResumesWhenTheSameOutputComesBack() {
    var settings = PlayerCore.Settings()
    settings.resumeOnReconnect = true
    var rig = CoreRig(settings: settings)
    rig.playing()
    rig.deliver(.routeChange(unplug))
    rig.deliver(.routeChange(plug))
    #expect(rig.snapshot.state == .playing)
    #expect(rig.lastEffects.contains(.engine(.reopenOutput)))
  }

  /// WirePlumber 0.5.11+ pauses over MPRIS the players whose sink went (linking.pause-playback),
  /// and its Pause can reach hark before the session server's news: the pause is the route's.
  @Test func G5_aPauseJustBeforeTheOutputWentIsAPauseByTheRoute() {
    var settings = PlayerCore.Settings()
    settings.resumeOnReconnect = true
    var rig = CoreRig(settings: settings)
    rig.playing()
    #expect(rig.send(.pause) == .success)
    // The user's pause ramps: its output was still there.
    #expect(rig.lastEffects.contains(.engine(.pause)))
    rig.now += 30_000_000
    rig.deliver(.routeChange(unplug))
    #expect(rig.snapshot.pausedBy == .route)
    #expect(rig.snapshot.reason == "Paused — headphones unplugged")
    #expect(rig.messages.last == "paused: 'Headphones' went away")
    // And resume_on_reconnect works, as for any pause by the route.
    rig.deliver(.routeChange(plug))
    #expect(rig.snapshot.state == .playing)
  }

  /// WirePlumber's Pause, told apart by its sender: playing, a pause by the route, whichever
  /// word comes first; the session server's news a moment later only names the output.
  @Test func G5_theSoundServersPauseForALostOutputIsAPauseByTheRoute() {
    var settings = PlayerCore.Settings()
    settings.resumeOnReconnect = true
    var rig = CoreRig(settings: settings)
    rig.deliver(.routeChange(plug))
    rig.playing()
    rig.perform(.pauseForLostOutput)
    #expect(rig.snapshot.state == .paused)
    #expect(rig.engine.state == .paused)
    #expect(rig.lastEffects.contains(.engine(.pauseAtOnce)))
    #expect(!rig.server.active)
    #expect(rig.snapshot.pausedBy == .route)
    #expect(rig.messages.last == "paused: 'Headphones' went away")
    rig.now += 2_000_000_000
    rig.deliver(.routeChange(unplug))
    #expect(rig.snapshot.pausedBy == .route)
    #expect(rig.snapshot.reason == "Paused — headphones unplugged")
    #expect(rig.messages.filter { $0.contains("went away") }.count == 1, "said once")
    rig.deliver(.routeChange(plug))
    #expect(rig.snapshot.state == .playing, "resume_on_reconnect works, as for any route pause")
  }

  /// A Bluetooth headset switching to its call profile: the call interrupts hark, and
  /// WirePlumber pauses it as its music sink goes, and again as the call sink goes. Neither is the
  /// user's "do not resume": the music comes back after the call (G14).
  @Test func G14_theSoundServersPausesDuringACallDoNotStopTheResume() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.interruption(.began(call)))
    rig.perform(.pauseForLostOutput)
    let profile = InterruptionCause(kind: .call, by: "Headset (call profile)")
    rig.deliver(.interruption(.began(profile)))
    rig.perform(.pauseForLostOutput)
    #expect(rig.snapshot.willResume)
    rig.deliver(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    #expect(rig.snapshot.state == .playing)
  }

  /// A pause by the policy that comes after the news changes nothing: paused by the route.
  @Test func G5_aPauseJustAfterTheOutputWentKeepsTheRoutesReason() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.routeChange(unplug))
    #expect(rig.send(.pause) == .success)
    #expect(rig.snapshot.pausedBy == .route)
  }

  /// The user's own pause, well before an unrelated loss, stays the user's.
  @Test func G1_G5_aUsersPauseLongBeforeALossStaysTheUsers() {
    var rig = CoreRig()
    rig.playing()
    #expect(rig.send(.pause) == .success)
    rig.pass(2)
    rig.deliver(.routeChange(unplug))
    #expect(rig.snapshot.pausedBy == .user)
  }

  @Test func G4_G6_aNewOrPickedOutputGoesOnWithoutAPause() {
    var rig = CoreRig()
    rig.playing()
    rig.pass(2)
    let before = rig.engine.position
    rig.deliver(.routeChange(plug))
    rig.deliver(
      .routeChange(RouteChange(reason: .override, previous: headphones, current: .speakers)))
    rig.perform(.selectDevice("usb"))
    #expect(rig.snapshot.state == .playing)
    #expect(rig.snapshot.pausedBy == nil)
    #expect(rig.snapshot.deviceName == "usb")
    #expect(rig.engine.position == before)
    #expect(rig.messages.last == "playing on 'usb'")
    rig.perform(.selectDevice("bad"))
    #expect(rig.messages.last == "cannot play on 'bad': no such device; staying on 'usb'")
  }

  /// The engine found its device gone (ENODEV): told to the session server, which answers with
  /// the route change, as for every real output event.
  @Test func G5_aVanishedDevicePausesByRoute() {
    var rig = CoreRig()
    rig.playing()
    rig.pendingEngineEvents += rig.engine.loseDevice()
    rig.settle()
    #expect(rig.snapshot.pausedBy == .route)
    #expect(rig.snapshot.reason == "Paused — 'fake' went away")
    #expect(rig.messages.contains { $0.hasPrefix("output 'fake' went away") })
  }

  @Test func G5_withoutASessionServerAVanishedDevicePausesByRouteAllTheSame() {
    var rig = CoreRig()
    rig.server.takesLostOutputs = false
    rig.playing()
    rig.pendingEngineEvents += rig.engine.loseDevice()
    rig.settle()
    #expect(rig.snapshot.pausedBy == .route)
    #expect(!rig.server.active)
  }

  @Test func G5_theMachinesSleepPausesAndWakingDoesNotResume() {
    var rig = CoreRig()
    rig.playing()
    #expect(rig.sleepHeld)
    rig.input(.sleep(true))
    #expect(rig.snapshot.pausedBy == .sleep)
    #expect(rig.snapshot.reason == "Paused — the computer slept")
    #expect(!rig.sleepHeld, "the sleep is let go once paused")
    rig.input(.sleep(false))
    #expect(rig.messages.last == "the computer woke up; still paused (play resumes)")
    #expect(rig.snapshot.state == .paused)
    #expect(rig.send(.play) == .success)
    #expect(rig.sleepHeld)
    // Paused by the user, sleep changes nothing and says nothing.
    #expect(rig.send(.pause) == .success)
    let said = rig.messages.count
    rig.input(.sleep(true))
    rig.input(.sleep(false))
    #expect(rig.messages.count == said)
    #expect(rig.snapshot.pausedBy == .user)
  }

  // MARK: G9, G2

  @Test func G9_duckingIsShownAndLifted() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.ducking(isDucked: true))
    #expect(rig.engine.ducked)
    #expect(rig.snapshot.reason == "Quieter — another app is speaking")
    rig.deliver(.ducking(isDucked: false))
    #expect(!rig.engine.ducked)
    #expect(rig.snapshot.reason == nil)
  }

  @Test func G2_silentModeNeverStopsTheMusic() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.silentMode(isOn: true, mutesThisSession: false))
    #expect(rig.snapshot.state == .playing)
    #expect(rig.snapshot.reason == "Silent mode is on (music still plays)")
  }

  // MARK: G17–G19: remote commands

  @Test func G19_nextAtTheLastTrackIsDisabledAndChangesNothing() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav"])
    rig.playing()
    #expect(rig.snapshot.enabledCommands.contains(.nextTrack))
    #expect(rig.send(.nextTrack) == .success)
    rig.settle()
    #expect(rig.snapshot.current?.path == "b.wav")
    #expect(!rig.snapshot.enabledCommands.contains(.nextTrack))
    #expect(rig.published.last?.1.contains(.nextTrack) == false)
    let effects = rig.engineCommands.count
    #expect(rig.send(.nextTrack) == .commandDisabled)
    #expect(rig.engineCommands.count == effects)
    #expect(rig.snapshot.current?.path == "b.wav")
  }

  @Test func G19_volumeIsDisabledWithoutAMixer() {
    var rig = CoreRig()
    rig.playing()
    #expect(rig.snapshot.volume == .unavailable(device: "fake"))
    #expect(!rig.snapshot.enabledCommands.contains(.volumeUp))
    #expect(rig.send(.volumeUp(percent: 5)) == .commandDisabled)
    #expect(rig.send(.mute) == .commandDisabled)
  }

  @Test func G3_volumeCommandsChangeTheSystemVolume() {
    var rig = CoreRig(volume: VolumeState(percent: 50, muted: false, canMute: true))
    rig.playing()
    #expect(rig.send(.volumeUp(percent: 10)) == .success)
    #expect(rig.volume?.percent == 60)
    #expect(rig.send(.volumeDown(percent: 25)) == .success)
    #expect(rig.volume?.percent == 35)
    #expect(rig.send(.mute) == .success)
    #expect(rig.snapshot.volume == .level(percent: 35, muted: true))
    rig.volumeFails = true
    #expect(rig.send(.volumeUp(percent: 5)) == .commandFailed)
    #expect(rig.messages.last == "cannot change the volume: the mixer said no")
  }

  @Test func G19_previousRestartsTheTrackAfterThreeSecondsElseGoesBack() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav"])
    rig.playing()
    rig.pass(1)
    #expect(!rig.snapshot.enabledCommands.contains(.previousTrack))
    #expect(rig.send(.previousTrack) == .commandDisabled)
    #expect(rig.send(.nextTrack) == .success)
    rig.settle()
    rig.pass(5)
    #expect(rig.send(.previousTrack) == .success)
    #expect(rig.engine.position == 0)
    #expect(rig.snapshot.current?.path == "b.wav")
    #expect(rig.send(.previousTrack) == .success)
    rig.settle()
    #expect(rig.snapshot.current?.path == "a.wav")
  }

  @Test func seekingMovesThePositionClampedAndIsAnnounced() {
    var rig = CoreRig()
    rig.playing()
    #expect(rig.send(.skipForward(seconds: 12)) == .success)
    #expect(rig.snapshot.position == 12)
    #expect(rig.notices.contains(.seeked(12)))
    #expect(rig.send(.skipBackward(seconds: 100)) == .success)
    #expect(rig.snapshot.position == 0)
    #expect(rig.send(.changePlaybackPosition(seconds: 99)) == .success)
    #expect(abs(rig.snapshot.position - 29.95) < 1e-9, "short of the end")
  }

  // MARK: Stop, and Play after it

  /// MPRIS: Play after Stop starts the track again; the player that played stays the
  /// now-playing app (the server says so), so every source of Play reaches it (G18).
  @Test func G18_playAfterStopStartsTheTrackAgainAndTheAppStaysReachable() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav"])
    rig.playing()
    rig.deliver(.nowPlaying(isNowPlaying: true))
    #expect(rig.send(.nextTrack) == .success)
    rig.settle()
    rig.pass(4)
    #expect(rig.send(.stop) == .success)
    let s = rig.snapshot
    #expect(s.state == .stopped)
    #expect(s.pausedBy == .user)
    #expect(s.position == 0)
    #expect(s.current?.path == "b.wav")
    // What was known of the track stays, the engine's hold on it gone: its tags and length.
    #expect(rig.engine.track == nil)
    #expect(s.metadata.artist == "the artist of b.wav")
    #expect(s.duration == 30)
    #expect(rig.published.last?.0.artist == "the artist of b.wav")
    #expect(!rig.server.active)
    #expect(s.isInAudioContext, "still the now-playing app")
    #expect(s.enabledCommands.isSuperset(of: [.play, .togglePlayPause]))
    #expect(!s.enabledCommands.contains(.pause), "nothing to pause")
    #expect(rig.published.last?.0.state == .stopped)
    #expect(rig.send(.play) == .success)
    #expect(rig.snapshot.state == .playing)
    #expect(rig.snapshot.current?.path == "b.wav")
    #expect(rig.engineCommands.last == .load(s.current!, at: 0, playing: true, continuing: false))
  }

  // MARK: The queue

  @Test func theQueuePlaysToItsEndAndSaysSo() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav"], seconds: 2)
    rig.playing()
    rig.pass(5)
    #expect(rig.heard == ["a.wav", "b.wav"])
    #expect(rig.notices.contains(.queueEnded(nothingPlayed: false)))
    #expect(rig.snapshot.state == .stopped)
    #expect(rig.snapshot.pausedBy == .endOfQueue)
    #expect(rig.snapshot.current?.path == "a.wav")
    #expect(!rig.server.active)
    // Play starts it again from the top.
    #expect(rig.send(.togglePlayPause) == .success)
    rig.settle()
    rig.pass(5)
    #expect(rig.heard == ["a.wav", "b.wav", "a.wav", "b.wav"])
  }

  @Test func aBadFileIsNamedAndTheNextPlaysWithTheLineOutlivingTheSkipByOneTrack() {
    var rig = CoreRig(
      tracks: ["a.wav", "broken1.mp3", "broken2.mp3", "c.wav", "d.wav"], seconds: 2)
    rig.playing()
    var problems: [String?] = []
    for _ in 0..<4 {
      rig.pass(2)
      problems.append(rig.snapshot.problem?.description)
    }
    #expect(rig.heard == ["a.wav", "c.wav", "d.wav"])
    #expect(
      problems.first
        == "Could not play broken2.mp3: not an audio file (1 more skipped before it: marked ✗ in the queue)"
    )
    #expect(problems[1] == nil)
    #expect(rig.snapshot.failed.values.allSatisfy { $0 == "not an audio file" })
  }

  @Test func nothingPlayableEndsWithNothingPlayed() {
    var rig = CoreRig(tracks: ["broken.mp3"])
    rig.playing()
    #expect(rig.notices.contains(.queueEnded(nothingPlayed: true)))
    #expect(rig.snapshot.state == .stopped)
  }

  @Test func filesHandedOverPlayNowOrNextAndTheQueueStays() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav"])
    rig.playing()
    rig.perform(.insert(["c.wav"], at: .next))
    #expect(rig.messages.last == "'c.wav' to play next")
    rig.perform(.insert(["a.wav", "b.wav"], at: .end))
    #expect(rig.messages.last == "2 files added to the queue")
    #expect(rig.snapshot.current?.path == "a.wav", "playback left alone")
    #expect(
      rig.snapshot.playOrder.map(\.path) == ["a.wav", "c.wav", "b.wav", "a.wav", "b.wav"])
    rig.perform(.insert(["b.wav"], at: .now))
    rig.settle()
    #expect(rig.heard.last == "b.wav")
    #expect(
      rig.snapshot.playOrder.map(\.path) == ["a.wav", "b.wav", "c.wav", "b.wav", "a.wav", "b.wav"])
  }

  /// Handed over to a paused player, "now" plays: the user asked for it (as a play does).
  @Test func filesHandedOverToPlayNowStartAPausedPlayer() {
    var rig = CoreRig()
    rig.playing()
    #expect(rig.send(.pause) == .success)
    rig.perform(.insert(["c.wav"], at: .now))
    rig.settle()
    #expect(rig.snapshot.state == .playing)
    #expect(rig.snapshot.current?.path == "c.wav")
    #expect(rig.server.active)
  }

  @Test func replacingTheQueueIsSaidAndUndoBringsItBackWhereItWasHeard() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav", "c.wav"])
    rig.playing()
    #expect(rig.send(.changePlaybackPosition(seconds: 12)) == .success)
    let before = rig.snapshot.queue
    rig.perform(.replace(["b.wav", "c.wav"], start: 1))
    rig.settle()
    #expect(rig.heard.last == "c.wav")
    #expect(
      rig.messages.last == "the queue is now 2 tracks (it had 3 tracks; undo brings them back)")
    rig.perform(.undo)
    rig.settle()
    #expect(rig.messages.contains("the queue is back as it was: 3 tracks"))
    #expect(rig.snapshot.queue == before, "the same entries, ids and all")
    #expect(rig.snapshot.current?.path == "a.wav")
    #expect(rig.engine.position == 12)
    #expect(rig.snapshot.state == .playing)
    rig.perform(.undo)
    #expect(rig.messages.last == "nothing to undo")
  }

  @Test func everyQueueEditCanBeUndoneInTurn() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav", "c.wav"])
    var queues = [rig.snapshot.queue]
    rig.perform(.add(["d.wav"], play: false))
    queues.append(rig.snapshot.queue)
    rig.perform(.move(entry: rig.snapshot.queue[3].id, to: 0))
    queues.append(rig.snapshot.queue)
    rig.perform(.remove(entry: rig.snapshot.queue[1].id))
    queues.append(rig.snapshot.queue)
    rig.perform(.shuffleOnce)
    queues.append(rig.snapshot.queue)
    rig.perform(.clear)
    #expect(rig.messages.last == "cleared the queue of 3 tracks (undo brings them back)")
    for expected in queues.reversed() {
      rig.perform(.undo)
      #expect(rig.snapshot.queue == expected)
    }
  }

  /// `hark PATH`: added ready to play. Paused (or stopped), the first added becomes current at
  /// its start, so that play plays it; playing, the music goes on.
  @Test func filesAddedReadyToPlayBecomeCurrentOnlyWhenNothingPlays() {
    var rig = CoreRig(tracks: ["a.wav"])
    rig.playing()
    rig.perform(.addReady(["b.wav", "c.wav"]))
    #expect(rig.snapshot.current?.path == "a.wav", "playing: left alone")
    #expect(rig.snapshot.state == .playing)
    #expect(rig.send(.pause) == .success)
    rig.perform(.addReady(["d.wav"]))
    rig.settle()
    #expect(rig.snapshot.current?.path == "d.wav")
    #expect(rig.snapshot.state == .paused)
    #expect(rig.snapshot.position == 0)
    #expect(rig.send(.play) == .success)
    #expect(rig.engine.track?.path == "d.wav")
    #expect(rig.snapshot.queue.map(\.path) == ["a.wav", "b.wav", "c.wav", "d.wav"])
  }

  @Test func removingTheCurrentTrackWhilePlayingGoesOnWithTheNext() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav"])
    rig.playing()
    rig.perform(.remove(entry: rig.snapshot.current!.id))
    rig.settle()
    #expect(rig.snapshot.current?.path == "b.wav")
    #expect(rig.snapshot.state == .playing)
    #expect(rig.heard.last == "b.wav")
  }

  @Test func clearingTheQueueStopsAndDisablesEverything() {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.nowPlaying(isNowPlaying: true))
    rig.perform(.clear)
    #expect(rig.snapshot.state == .stopped)
    #expect(rig.snapshot.enabledCommands.isEmpty)
    #expect(!rig.snapshot.isInAudioContext)
    #expect(rig.send(.play) == .noSuchContent)
  }

  /// An edit after the decoder has lined up what followed: the engine is told to line up what
  /// the queue now says, the track heard going on from where it is.
  @Test func editingTheQueueNearTheEndOfATrackLinesUpWhatNowFollows() {
    var rig = CoreRig(tracks: ["a.wav", "b.wav"])
    rig.playing()
    #expect(rig.send(.changePlaybackPosition(seconds: 29)) == .success)
    rig.perform(.add(["c.wav"], play: false))
    let c = rig.snapshot.queue.last!
    rig.perform(.move(entry: c.id, to: 1))
    #expect(
      rig.lastEffects.contains(
        .engine(.load(rig.snapshot.current!, at: 29, playing: true, continuing: true))))
    rig.pass(2)
    #expect(rig.heard == ["a.wav", "c.wav"])
  }

  @Test func aRestoredQueueIsPausedAtItsPositionAndPlaysFromThere() {
    var rig = CoreRig(tracks: ["a.wav"])
    rig.perform(
      .restore(
        paths: ["c.wav", "b.wav", "a.wav"], current: 1, position: 12.5, shuffle: false,
        repeatMode: .all))
    let s = rig.snapshot
    #expect(s.queue.map(\.path) == ["c.wav", "b.wav", "a.wav"])
    #expect(s.current?.path == "b.wav")
    #expect(s.state == .paused)
    #expect(s.pausedBy == .user)
    #expect(s.position == 12.5)
    #expect(s.repeatMode == .all)
    #expect(s.isInAudioContext, "paused with a queue: the media keys reach it (G18)")
    #expect(rig.server.activationsAsked == 0, "nothing was heard (G1)")
    #expect(rig.send(.play) == .success)
    #expect(rig.snapshot.state == .playing)
    #expect(rig.engine.position == 12.5)
  }

  // MARK: Spoken word

  @Test func G13_G14_spokenWordPausesForAPromptAndResumesAStepBack() {
    var rig = CoreRig(
      tracks: ["talk/episode.mp3"],
      settings: {
        var s = PlayerCore.Settings()
        s.spokenFolders = ["talk"]
        return s
      }())
    rig.playing()
    #expect(rig.snapshot.isSpoken)
    #expect(rig.server.modes.last == .spokenAudio)
    rig.pass(10)
    let nav = InterruptionCause(kind: .otherAudio, by: "nav")
    rig.deliver(.interruption(.began(nav)))
    #expect(rig.messages.last == "paused for 'nav'; resumes after")
    #expect(rig.snapshot.reason == "Paused for 'nav' (resumes after)")
    let at = rig.engine.position
    rig.deliver(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    #expect(rig.snapshot.state == .playing)
    #expect(abs(rig.engine.position - (at - 2)) < 1e-9)
  }

  @Test func spokenWordIsKnownByGenreFileTypeAndFolder() {
    #expect(SpokenWord.isSpoken(path: "/m/a.mp3", genre: "Podcast", folders: []))
    #expect(SpokenWord.isSpoken(path: "/m/a.flac", genre: "Audiobook; Fantasy", folders: []))
    #expect(SpokenWord.isSpoken(path: "/books/Dune.m4b", genre: nil, folders: []))
    #expect(SpokenWord.isSpoken(path: "/talks/x.ogg", genre: "Jazz", folders: ["/talks"]))
    #expect(!SpokenWord.isSpoken(path: "/talksmore/x.ogg", genre: nil, folders: ["/talks"]))
    #expect(!SpokenWord.isSpoken(path: "/m/a.flac", genre: "Rock", folders: []))
  }

  // MARK: The first play

  /// The first file opens while the activation is asked for; nothing is heard before the grant
  /// (G10), and the grant plays what the engine holds without loading it again.
  @Test func G10_theFirstFileOpensBeforeTheActivationAndPlaysOnceGranted() {
    var rig = CoreRig(tracks: [])
    rig.input(.start(files: ["a.wav", "b.wav"], autoplay: true))
    let loads = rig.engineCommands.filter { if case .load = $0 { true } else { false } }
    #expect(loads.count == 1)
    #expect(
      loads.first
        == .load(QueuedTrack(id: 0, path: "a.wav"), at: 0, playing: false, continuing: false))
    #expect(rig.engineCommands.last == .play)
    rig.settle()
    #expect(rig.heard == ["a.wav"], "said once, when it plays")
    #expect(rig.snapshot.state == .playing)
  }

  @Test func G10_aRefusedFirstPlaySaysNothingPlaysUntilTheUsersPlay() {
    var rig = CoreRig(tracks: [])
    rig.server.answer = .refused("a call is in progress")
    rig.input(.start(files: ["a.wav", "b.wav"], autoplay: true))
    rig.settle()
    #expect(rig.messages.contains("cannot play now: a call is in progress"))
    #expect(rig.heard.isEmpty, "the engine holds it; it is not heard")
    #expect(rig.snapshot.state != .playing)
    rig.server.answer = .granted
    #expect(rig.send(.play) == .success)
    rig.settle()
    #expect(rig.heard == ["a.wav"])
  }

  @Test func aFirstFileThatWillNotOpenIsSaidOnceAndTheNextPlays() {
    var rig = CoreRig(tracks: [])
    rig.input(.start(files: ["broken.mp3", "a.wav"], autoplay: true))
    rig.settle()
    #expect(rig.heard == ["a.wav"])
    #expect(rig.notices.filter { if case .couldNotPlay = $0 { true } else { false } }.count == 1)
    #expect(rig.snapshot.state == .playing)
  }

  // MARK: What is published and shown

  @Test func publishedInfoFollowsThePlayerAndSaysWhyItPaused() {
    var rig = CoreRig()
    rig.playing()
    #expect(rig.published.last?.0.state == .playing)
    #expect(rig.published.last?.0.title == "a")
    #expect(rig.published.last?.0.duration == 30)
    #expect(rig.published.last?.0.rate == 1)
    rig.send(.pause)
    #expect(rig.published.last?.0.state == .paused)
    #expect(rig.published.last?.0.pausedBy == .user)
  }

  /// A sound server that buffers deeper as it goes reports less heard than the clock says:
  /// what is shown waits rather than going back, and goes on once what is heard caught up.
  @Test func thePositionShownNeverGoesBackBetweenSeeks() {
    var rig = CoreRig()
    rig.playing()
    rig.pass(5)
    let shownBefore = rig.snapshot.position(at: rig.now + 500_000_000)
    rig.engine.lag = 0.8
    rig.now += 500_000_000
    rig.input(.tick)
    #expect(rig.snapshot.position >= shownBefore - 1e-9)
    #expect(!rig.snapshot.isAdvancing, "held while behind")
    #expect(rig.published.last?.0.rate == 0)
    rig.engine.lag = 0
    rig.pass(1)
    #expect(rig.snapshot.isAdvancing)
    // A seek may go back.
    rig.send(.changePlaybackPosition(seconds: 1))
    #expect(rig.snapshot.position == 1)
  }

  /// Paused, the position is where the sound stopped (where playing resumes), not where the
  /// clock carried what was shown while the engine faded out: held to that, it ran ahead of
  /// what was heard by 45 ms at each pause on PulseAudio, and a pause right after a resume
  /// seemed not to move it. Never behind what was last shown, though.
  @Test func aPauseShowsWhereTheSoundStopped() {
    var rig = CoreRig()
    rig.playing()
    rig.pass(5)
    let shown = rig.snapshot.position
    // The pause is asked 60 ms after the last snapshot; 15 ms later the sound has stopped.
    rig.now += 60_000_000
    rig.engine.position += 0.015
    rig.send(.pause)
    #expect(rig.snapshot.state == .paused)
    #expect(abs(rig.snapshot.position - (shown + 0.015)) < 1e-9, "\(rig.snapshot.position)")
    #expect(rig.published.last?.0.position == rig.snapshot.position)
    // Played again, it goes on from there with what is heard: not ahead of it.
    rig.send(.play)
    rig.settle()
    rig.pass(1)
    #expect(abs(rig.snapshot.position - rig.engine.position) < 1e-9)
    // The engine saying less than was last shown does not take it back.
    rig.now += 60_000_000
    let last = rig.snapshot.position
    rig.engine.position = last - 0.010
    rig.send(.pause)
    #expect(rig.snapshot.position == last)
    #expect(rig.positionWentBack == nil, "\(rig.positionWentBack ?? "")")
  }

  @Test func aQuitStopsDeactivatesAndPublishesThatItStopped() {
    var rig = CoreRig()
    rig.playing()
    rig.input(.quit)
    #expect(rig.finished)
    #expect(rig.engine.shutDown)
    #expect(!rig.server.active)
    #expect(rig.published.last?.0.state == .stopped)
    #expect(rig.published.last?.1.isEmpty == true)
  }
}

/// The reason for a pause, in the one vocabulary of every view (docs/MANNERS.md): what took the
/// player from playing, an interruption by its kind, kept while it stays paused by it.
@Suite struct PauseReasonTests {
  @Test(arguments: [
    (InterruptionCause.Kind.call, PauseReason.call), (.alarm, .alarm),
    (.assistant, .assistant), (.navigation, .navigation), (.recording, .recording),
    (.otherAudio, .otherApp),
  ])
  func anInterruptionIsNamedByWhatInterrupted(kind: InterruptionCause.Kind, reason: PauseReason) {
    var rig = CoreRig()
    rig.playing()
    rig.deliver(.interruption(.began(InterruptionCause(kind: kind, by: "app"))))
    #expect(rig.snapshot.pauseReason == reason)
    #expect(rig.published.last?.0.reason == reason)
    // Over without resuming: still paused by it, still named.
    rig.deliver(.interruption(.ended(shouldResume: false, reason: .interrupterDeactivated)))
    #expect(rig.snapshot.pausedBy == .interruption)
    #expect(rig.snapshot.pauseReason == reason)
  }

  @Test func everyOtherWayOutOfPlayingHasItsWord() {
    var rig = CoreRig(tracks: ["a.wav"], seconds: 2)
    rig.playing()
    rig.send(.pause)
    #expect(rig.snapshot.pauseReason == .user)
    rig.send(.play)
    rig.perform(.pauseForLostOutput)
    #expect(rig.snapshot.pauseReason == .outputGone)
    rig.send(.play)
    rig.input(.sleep(true))
    #expect(rig.snapshot.pauseReason == .sleep)
    rig.send(.play)
    rig.pass(3)
    #expect(rig.snapshot.pauseReason == .endOfQueue)
    rig.send(.play)
    #expect(rig.snapshot.pauseReason == nil, "playing")
  }

  /// Paused by the user, a call that comes and goes leaves the user's reason.
  @Test func theReasonIsTheOneThatTookItFromPlaying() {
    var rig = CoreRig()
    rig.playing()
    rig.send(.pause)
    rig.deliver(.interruption(.began(InterruptionCause(kind: .call, by: "call"))))
    #expect(rig.snapshot.pauseReason == .call, "while the call lasts, the call is what it says")
    rig.deliver(.interruption(.ended(shouldResume: true, reason: .interrupterDeactivated)))
    #expect(rig.snapshot.pauseReason == .user)
  }
}
