import ALSAOutput
import AudioCore
import Dispatch
import Glibc
import PlayerEngine
import SessionCore
import SessionServer
import SndFileDecoder

/// `hark play --no-ui`: the queue played as a full session client — playback category,
/// now-playing info published, interruptions and route changes obeyed, remote commands served.
final class HeadlessPlayer {
  private enum Input {
    case session(SessionEvent)
    case command(IncomingCommand)
    case engine(EngineEvent)
    case signal(Int32)
    case tick
  }

  private let files: [String]
  private let deviceName: String
  private let session: AudioSession
  private let engine: AudioEngine
  private let mixer: Mixer?
  private var policy = PlaybackPolicy()
  private var inputs: AsyncStream<Input>.Iterator
  private let continuation: AsyncStream<Input>.Continuation
  private var tasks: [Task<Void, Never>] = []
  private var signalSources: [any DispatchSourceSignal] = []
  private var failed: Set<Int> = []
  private var announced: Int?
  private var lastPublished: PlaybackInfo?

  init(files: [String], deviceName: String, duckDecibels: Double, session: AudioSession) {
    self.files = files
    self.deviceName = deviceName
    self.session = session
    mixer = Mixer(forDevice: deviceName)
    var configuration = AudioEngine.Configuration(
      deviceName: deviceName,
      openDecoder: { path throws(DecodeError) in try SoundFile(path: path) },
      openOutput: { name, format in try PlaybackDevice(name: name, format: format) })
    configuration.duckGain = linearGain(decibels: duckDecibels)
    let queue = files
    engine = AudioEngine(configuration: configuration) { track in
      track.id + 1 < queue.count ? QueuedTrack(id: track.id + 1, path: queue[track.id + 1]) : nil
    }
    let (stream, continuation) = AsyncStream<Input>.makeStream()
    inputs = stream.makeAsyncIterator()
    self.continuation = continuation
  }

  /// Plays until the queue ends (0), nothing could be played (1), or a signal (128 + it).
  func run() async -> Int32 {
    startInputs()
    do { try await session.setCategory(.playback) } catch {
      say("cannot register with the session server: \(error)")
      return 1
    }
    await perform(policy.userPlay())
    while let input = await inputs.next() {
      switch input {
      case .session(let event): await handle(event)
      case .command(let incoming): incoming.respond(await handle(incoming.command))
      case .engine(let event):
        if let status = await handle(event) { return await finish(status) }
      case .signal(let s): return await finish(128 + s)
      case .tick: break
      }
      await publish()
    }
    return await finish(1)
  }

  // MARK: Inputs

  private func startInputs() {
    let c = continuation
    tasks.append(Task { [session] in for await e in session.events { c.yield(.session(e)) } })
    tasks.append(Task { [session] in for await x in session.commands { c.yield(.command(x)) } })
    tasks.append(Task { [engine] in for await e in engine.events { c.yield(.engine(e)) } })
    tasks.append(
      Task {
        // Position and track changes are published once a second while something plays.
        while !Task.isCancelled {
          try? await Task.sleep(for: .seconds(1))
          c.yield(.tick)
        }
      })
    for s in [SIGINT, SIGTERM] {
      signal(s, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
      source.setEventHandler { c.yield(.signal(s)) }
      source.resume()
      signalSources.append(source)
    }
  }

  private func handle(_ event: SessionEvent) async {
    switch event {
    case .interruption(.began(let cause)):
      await perform(policy.interruptionBegan(cause))
    case .interruption(.ended(let shouldResume, let reason)):
      await perform(policy.interruptionEnded(shouldResume: shouldResume, reason: reason))
    case .routeChange(let change):
      await perform(policy.routeChanged(change))
    case .ducking(let ducked):
      engine.setDucked(ducked)
    case .mediaServicesWereReset:
      // Re-registered by the library; make sure the new server has our state.
      lastPublished = nil
    case .silenceSecondaryAudioHint, .silentMode, .nowPlaying:
      break  // playback is primary audio and never muted by silent mode (G2)
    }
  }

  /// Returns an exit status when the player is done.
  private func handle(_ event: EngineEvent) async -> Int32? {
    switch event {
    case .trackFailed(let track, let error):
      failed.insert(track.id)
      say(error.description)
      return nil
    case .deviceLost(let device, let code):
      say("output '\(device)' went away (\(String(cString: strerror(-code))))")
      let lost = Route(name: device, kind: .unknown)
      await perform(
        policy.routeChanged(
          RouteChange(reason: .oldDeviceUnavailable, previous: lost, current: lost)))
      return nil
    case .deviceFailed(let message):
      say(
        "cannot play on '\(deviceName)': \(message); list devices with 'aplay -L' or use --device default"
      )
      return 1
    case .endOfQueue:
      policy.stopped()
      return failed.count == files.count ? 1 : 0
    }
  }

  private func handle(_ command: RemoteCommand) async -> CommandStatus {
    let snap = engine.snapshot()
    switch command {
    case .play:
      await perform(policy.userPlay())
    case .pause:
      await perform(policy.userPause())
    case .togglePlayPause:
      await perform(policy.isPlaying ? policy.userPause() : policy.userPlay())
    case .stop:
      await perform(policy.userPause())
      engine.seek(to: 0)
    case .nextTrack:
      guard let t = snap.track, t.id + 1 < files.count else { return .commandDisabled }
      engine.load(QueuedTrack(id: t.id + 1, path: files[t.id + 1]), playing: policy.isPlaying)
    case .previousTrack:
      guard let t = snap.track else { return .noSuchContent }
      if snap.position > 3 || t.id == 0 {
        engine.seek(to: 0)
      } else {
        engine.load(QueuedTrack(id: t.id - 1, path: files[t.id - 1]), playing: policy.isPlaying)
      }
    case .seekForward, .skipForward:
      guard snap.isSeekable else { return .commandDisabled }
      engine.seek(to: snap.position + (command.argument ?? 10))
    case .seekBackward, .skipBackward:
      guard snap.isSeekable else { return .commandDisabled }
      engine.seek(to: max(0, snap.position - (command.argument ?? 10)))
    case .changePlaybackPosition(let seconds):
      guard snap.isSeekable else { return .commandDisabled }
      engine.seek(to: seconds)
    case .volumeUp(let percent), .volumeDown(let percent):
      guard let mixer else { return .commandDisabled }
      let sign: Double = command.kind == .volumeUp ? 1 : -1
      do { try mixer.setVolume(percent: mixer.volumePercent + sign * percent) } catch {
        return .commandFailed
      }
    case .mute:
      guard let mixer, mixer.hasSwitch else { return .commandDisabled }
      do { try mixer.setMuted(!mixer.isMuted) } catch { return .commandFailed }
    }
    return .success
  }

  // MARK: Effects

  private func perform(_ effects: [PlaybackPolicy.Effect]) async {
    for effect in effects {
      switch effect {
      case .activateAndPlay:
        do {
          try await session.setActive(true)
          if engine.snapshot().track == nil {
            engine.load(QueuedTrack(id: 0, path: files[0]), playing: true)
          } else {
            engine.play()
          }
          policy.started()
        } catch .refused(let reason) {
          await perform(policy.activationRefused(reason.description))
        } catch {
          say("cannot play: \(error)")
        }
      case .stopOutput:
        engine.pause()
      case .deactivate:
        try? await session.setActive(false)
      case .say(let line):
        say(line)
      }
    }
  }

  private func publish() async {
    let snap = engine.snapshot()
    if let t = snap.track, t.id != announced, policy.isPlaying {
      announced = t.id
      say("playing '\(title(snap))' (\(t.id + 1)/\(files.count))")
    }
    let state: PlaybackState =
      switch policy.phase {
      case .playing: .playing
      case .paused, .interrupted: .paused
      case .stopped: .stopped
      }
    let info = PlaybackInfo(
      state: state, title: title(snap), artist: snap.metadata?.artist, album: snap.metadata?.album,
      duration: snap.duration, position: (snap.position * 1000).rounded() / 1000,
      rate: state == .playing ? 1 : 0, pausedBy: policy.pausedBy)
    if info == lastPublished { return }
    lastPublished = info
    try? await session.publish(info, commands: enabledCommands(snap))
  }

  /// What may be asked now (G19): a command that cannot be honoured is disabled, not remapped.
  private func enabledCommands(_ snap: EngineSnapshot) -> Set<RemoteCommandKind> {
    guard let t = snap.track else { return [.play] }
    var c: Set<RemoteCommandKind> = [.play, .pause, .togglePlayPause, .stop]
    if t.id + 1 < files.count { c.insert(.nextTrack) }
    if t.id > 0 || snap.position > 3 { c.insert(.previousTrack) }
    if snap.isSeekable {
      c.formUnion([
        .seekForward, .seekBackward, .skipForward, .skipBackward, .changePlaybackPosition,
      ])
    }
    if mixer != nil { c.formUnion([.volumeUp, .volumeDown]) }
    if mixer?.hasSwitch == true { c.insert(.mute) }
    return c
  }

  private func title(_ snap: EngineSnapshot) -> String {
    guard let t = snap.track else { return "" }
    return snap.metadata?.title ?? QueueLoader.title(fromPath: t.path)
  }

  private func finish(_ status: Int32) async -> Int32 {
    engine.stop()
    try? await session.setActive(false)
    lastPublished = nil
    try? await session.publish(PlaybackInfo(state: .stopped), commands: [])
    engine.shutdown()
    session.close()
    for t in tasks { t.cancel() }
    return status
  }

  private func say(_ line: String) { print("hark: \(line)") }
}
