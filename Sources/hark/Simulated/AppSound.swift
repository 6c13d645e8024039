import ALSAOutput
import AudioCore
import Glibc
import Platform
import PlayerEngine
import Settings
import SndFileDecoder

/// Real sound for a simulated app, through the same engine as the player: a ring tone, an
/// alarm chime, a spoken prompt, music. When the device will not open the app says so once and
/// goes on silently: the simulation is about the session, the sound comes second.
final class AppSound {
  private let engine: AudioEngine
  private let app: String
  private let box = PathsBox()
  private var events: Task<Void, Never>?

  /// Sound for `app` on `device` (the config's, else "default").
  init(app: String, device: String?) {
    self.app = app
    silenceALSALibraryErrors()
    let name = device ?? loadSettings().device
    let box = self.box
    engine = AudioEngine(configuration: .alsa(device: name, duckDecibels: -20)) { track in
      box.next(after: track)
    }
    events = Task { [engine, app] in
      for await event in engine.events {
        switch event {
        case .deviceFailed(let message):
          print("\(app): no sound: \(message)")
        case .trackFailed(_, let error):
          print("\(app): no sound: \(error)")
        case .deviceLost(let device, _):
          print("\(app): no sound: '\(device)' went away")
        case .endOfQueue:
          box.finished()
        case .fault(let what):
          print("\(app): audio engine fault: \(what)")
        case .nowHearing, .outputStarted, .loaded, .streamChanged:
          break
        }
      }
    }
  }

  /// Plays `path` (again and again with `loop`); `whenDone` runs when a sound that does not
  /// loop has been heard to its end.
  func play(_ path: String, loop: Bool, whenDone: (@Sendable () -> Void)? = nil) {
    box.set(path: path, loop: loop, whenDone: whenDone)
    engine.load(QueuedTrack(id: 0, path: path), playing: true, wait: false)
  }

  /// Stops at once (an interruption, a hang-up).
  func pause() { engine.pause() }

  /// Goes on from where it paused.
  func resume() { engine.play() }

  func stop() { engine.stop() }

  func setDucked(_ ducked: Bool) { engine.setDucked(ducked) }

  func setMuted(_ muted: Bool) { engine.setMuted(muted) }

  /// Stops and closes the device; call before the app exits.
  func close() {
    engine.stop()
    engine.shutdown()
    events?.cancel()
  }

  /// The file for a freedesktop sound name ("phone-incoming-call"): the config's sound theme,
  /// the freedesktop theme, then hark's own. nil when the theme disables it or none is found.
  static func themed(_ name: String) -> String? {
    let theme = SoundTheme.fromEnvironment(
      name: loadSettings().soundTheme, fallback: Assets.sounds)
    if case .file(let path) = theme.lookup(name) { return path }
    return nil
  }

  /// The length of a sound file in seconds, when it says.
  static func duration(of path: String) -> Double? {
    guard let f = try? SoundFile(path: path), let frames = f.frameCount else { return nil }
    return f.format.seconds(frames)
  }
}

/// What the engine plays next: the same sound again when it loops. Read on the decode thread.
private final class PathsBox: Sendable {
  private struct State {
    var path = ""
    var loop = false
    var whenDone: (@Sendable () -> Void)?
  }
  private let state = Locked(State())

  func set(path: String, loop: Bool, whenDone: (@Sendable () -> Void)?) {
    state.withLock { $0 = State(path: path, loop: loop, whenDone: whenDone) }
  }

  func next(after track: QueuedTrack) -> QueuedTrack? {
    state.withLock { s in s.loop ? QueuedTrack(id: track.id + 1, path: s.path) : nil }
  }

  func finished() {
    state.withLock { $0.whenDone }?()
  }
}
