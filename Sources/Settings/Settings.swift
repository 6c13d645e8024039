import Glibc
import Platform

/// What the user can set in `$XDG_CONFIG_HOME/hark/config.toml` (default
/// `~/.config/hark/config.toml`). Every setting has a default, so a missing file is fine.
public struct Settings: Hashable, Sendable {
  /// The ALSA device to play on ("default", "pulse", "hw:1,0"); `--device` overrides it.
  public var device = "default"
  /// Where the interface opens when no path is given; nil: ~/Music, else the bundled music.
  public var musicDirectory: String?
  /// How far other apps' prompts duck the music (G9), in dB, −60…0.
  public var duckLevelDecibels = -20.0
  /// G5's opt-in: resume when the output that went away comes back. Off by default.
  public var resumeOnReconnect = false
  /// The freedesktop sound theme for event sounds.
  public var soundTheme = "freedesktop"
  /// Key bindings: action name → keys, as written ("space", "n", "C-x", "left").
  public var keys: [String: [String]] = [:]
  /// A set of key bindings to start from: "hark" (the default) or "cmus" (cmus's habits); the
  /// `[keys]` table applies on top. `keys = "cmus"` (with no table) or `preset = "cmus"` in it.
  public var keyPreset = "hark"
  /// Shuffle and repeat when nothing else says (a saved queue keeps its own).
  public var shuffle = false
  /// "off", "all" or "one".
  public var repeatMode = "off"
  /// The interface's first view: "library" or "queue".
  public var startView = "library"
  /// Folders whose files are spoken word (podcasts, audiobooks): a navigation prompt pauses
  /// them instead of ducking them.
  public var spokenFolders: [String] = []
  /// How long a recording must be, in minutes, to keep its own place when it is not spoken
  /// word (spoken word always does): a lecture, a concert recording, a DJ mix. 1…1440.
  public var longRecordingMinutes = 20.0
  /// ReplayGain: "off", "track" or "album" (the gain tags' own, like the phone's Sound Check).
  public var replayGain = "off"
  /// Added to every tagged gain, in dB, −15…15.
  public var replayGainPreampDecibels = 0.0
  /// Lower a gain that would make the track's peak clip.
  public var replayGainPreventClipping = true
  /// Measure the loudness (EBU R128) of the library's files that have no ReplayGain tags, in
  /// the background while the index is brought up to date, so that ReplayGain applies to every
  /// file, like the phone's Sound Check.
  public var measureLoudness = true
  /// The lyrics of the track playing shown beside the list, following the song (a view of
  /// their own is always a key away).
  public var lyricsBeside = false
  /// ListenBrainz: the user token (from listenbrainz.org/settings), and the server (another
  /// ListenBrainz, self-hosted); no token, no listens sent there.
  public var listenBrainzToken: String?
  public var listenBrainzURL = "https://api.listenbrainz.org"
  /// Last.fm (or a service that speaks its 2.0 API, such as Libre.fm): the application's API
  /// key and secret (from last.fm/api/account/create); the session key comes from
  /// `hark scrobble login lastfm`.
  public var lastFMAPIKey: String?
  public var lastFMAPISecret: String?
  public var lastFMURL = "https://ws.audioscrobbler.com/2.0/"
  /// Where the user allows hark, in the desktop auth flow.
  public var lastFMAuthURL = "https://www.last.fm/api/auth/"
  /// Send listens of spoken word (podcasts, audiobooks) too; off by default, as they are not
  /// music to be counted.
  public var scrobbleSpokenWord = false
  /// The playing album's cover in the interface, drawn in coloured character cells.
  public var coverArt = true
  /// The terminal closing under the interface (SIGHUP) while it plays leaves the player playing
  /// on in the background, as `Q` does; false: it stops, as `q` does.
  public var detachOnHangup = true

  public init() {}

  /// The settings a file holds, with a problem line for each entry that could not be used
  /// (the default stands for it).
  public static func parse(_ text: String) -> (Settings, [ConfigProblem]) {
    var settings = Settings()
    let (entries, syntax) = TOMLSubset.parse(text)
    var problems = syntax
    for (key, value, line) in entries {
      func problem(_ message: String) {
        problems.append(ConfigProblem(line: line, message: message))
      }
      func wrongKind(_ wanted: String) {
        problem("'\(key)' must be \(wanted), not \(value.kind) (\(value))")
      }
      switch key {
      case "device":
        guard case .string(let s) = value, !s.isEmpty else { wrongKind("a device name"); continue }
        settings.device = s
      case "music_dir":
        guard case .string(let s) = value, !s.isEmpty else { wrongKind("a folder"); continue }
        settings.musicDirectory = expandingTilde(s)
      case "duck_level_db":
        guard let d = value.number else { wrongKind("a number of dB"); continue }
        guard d >= -60 && d <= 0 else {
          problem("'duck_level_db' must be from -60 to 0, not \(value)")
          continue
        }
        settings.duckLevelDecibels = d
      case "resume_on_reconnect":
        guard case .boolean(let b) = value else { wrongKind("true or false"); continue }
        settings.resumeOnReconnect = b
      case "shuffle":
        guard case .boolean(let b) = value else { wrongKind("true or false"); continue }
        settings.shuffle = b
      case "repeat":
        guard case .string(let s) = value, ["off", "all", "one"].contains(s) else {
          wrongKind("\"off\", \"all\" or \"one\"")
          continue
        }
        settings.repeatMode = s
      case "start_view":
        guard case .string(let s) = value, ["library", "queue"].contains(s) else {
          wrongKind("\"library\" or \"queue\"")
          continue
        }
        settings.startView = s
      case "spoken_dirs":
        let items: [ConfigValue]
        switch value {
        case .string: items = [value]
        case .array(let a): items = a
        default:
          wrongKind("a folder or a list of folders")
          continue
        }
        let folders = items.compactMap {
          if case .string(let s) = $0, !s.isEmpty { s } else { nil }
        }
        guard folders.count == items.count else {
          wrongKind("a folder or a list of folders")
          continue
        }
        settings.spokenFolders = folders.map(expandingTilde)
      case "long_recording_minutes":
        guard let m = value.number else { wrongKind("a number of minutes"); continue }
        guard m >= 1 && m <= 1_440 else {
          problem("'long_recording_minutes' must be from 1 to 1440, not \(value)")
          continue
        }
        settings.longRecordingMinutes = m
      case "replaygain":
        guard case .string(let s) = value, ["off", "track", "album"].contains(s) else {
          wrongKind("\"off\", \"track\" or \"album\"")
          continue
        }
        settings.replayGain = s
      case "replaygain_preamp_db":
        guard let d = value.number else { wrongKind("a number of dB"); continue }
        guard d >= -15 && d <= 15 else {
          problem("'replaygain_preamp_db' must be from -15 to 15, not \(value)")
          continue
        }
        settings.replayGainPreampDecibels = d
      case "measure_loudness":
        guard case .boolean(let b) = value else { wrongKind("true or false"); continue }
        settings.measureLoudness = b
      case "lyrics_beside":
        guard case .boolean(let b) = value else { wrongKind("true or false"); continue }
        settings.lyricsBeside = b
      case "scrobble_spoken_word", "scrobble.spoken_word":
        guard case .boolean(let b) = value else { wrongKind("true or false"); continue }
        settings.scrobbleSpokenWord = b
      case "listenbrainz.token", "lastfm.api_key", "lastfm.api_secret":
        guard case .string(let s) = value, !s.isEmpty, !s.contains(where: \.isWhitespace) else {
          wrongKind("a token (letters and digits, no spaces)")
          continue
        }
        switch key {
        case "listenbrainz.token": settings.listenBrainzToken = s
        case "lastfm.api_key": settings.lastFMAPIKey = s
        default: settings.lastFMAPISecret = s
        }
      case "listenbrainz.url", "lastfm.url", "lastfm.auth_url":
        guard case .string(let s) = value, s.hasPrefix("http://") || s.hasPrefix("https://")
        else {
          wrongKind("an http:// or https:// address")
          continue
        }
        switch key {
        case "listenbrainz.url": settings.listenBrainzURL = s
        case "lastfm.url": settings.lastFMURL = s
        default: settings.lastFMAuthURL = s
        }
      case "cover_art":
        guard case .boolean(let b) = value else { wrongKind("true or false"); continue }
        settings.coverArt = b
      case "detach_on_hangup":
        guard case .boolean(let b) = value else { wrongKind("true or false"); continue }
        settings.detachOnHangup = b
      case "replaygain_clip":
        guard case .boolean(let b) = value else { wrongKind("true or false"); continue }
        settings.replayGainPreventClipping = b
      case "sound_theme":
        guard case .string(let s) = value, !s.isEmpty, !s.contains("/") else {
          wrongKind("a theme name")
          continue
        }
        settings.soundTheme = s
      default:
        if key == "keys" || key == "keys.preset" {
          guard case .string(let s) = value, ["hark", "cmus"].contains(s) else {
            wrongKind("\"hark\" or \"cmus\"")
            continue
          }
          settings.keyPreset = s
        } else if key.hasPrefix("keys.") {
          let action = String(key.dropFirst(5))
          switch value {
          case .string(let s): settings.keys[action] = [s]
          case .array(let items):
            let keys = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
            guard keys.count == items.count else { wrongKind("a key or a list of keys"); continue }
            settings.keys[action] = keys
          default: wrongKind("a key or a list of keys")
          }
        } else {
          problem("unknown setting '\(key)'")
        }
      }
    }
    return (settings, problems)
  }

  /// Where the config file is: `$XDG_CONFIG_HOME/hark/config.toml`, else under `$HOME/.config`.
  public static func defaultPath() -> String? {
    XDGDirectory.config.path.map { $0 + "/hark/config.toml" }
  }

  /// Loads the file at `path` (default: `defaultPath()`). A missing file gives the defaults and
  /// no problems; an unreadable one gives the defaults and one problem.
  public static func load(from path: String? = defaultPath()) -> (Settings, [ConfigProblem]) {
    guard let path else { return (Settings(), []) }
    switch readTextFile(path) {
    case .missing: return (Settings(), [])
    case .failed(let reason): return (Settings(), [ConfigProblem(line: 0, message: reason)])
    case .text(let text): return parse(text)
    }
  }
}

extension ConfigValue {
  fileprivate var number: Double? {
    switch self {
    case .integer(let i): Double(i)
    case .float(let d): d
    case .string, .boolean, .array: nil
    }
  }
}

/// "~/Music" → "$HOME/Music"; other paths as they are.
func expandingTilde(_ path: String) -> String {
  guard path == "~" || path.hasPrefix("~/"), let home = environment("HOME") else { return path }
  return home + path.dropFirst()
}

enum FileText {
  case missing
  case failed(String)
  case text(String)
}

/// The whole of a small text file, at most 1 MiB.
func readTextFile(_ path: String) -> FileText {
  let fd = open(path, O_RDONLY | O_CLOEXEC)
  if fd < 0 {
    return errno == ENOENT ? .missing : .failed(String(cString: strerror(errno)).lowercased())
  }
  defer { close(fd) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 16_384)
  while true {
    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if n < 0 {
      if errno == EINTR { continue }
      return .failed(String(cString: strerror(errno)).lowercased())
    }
    if n == 0 { break }
    bytes += chunk[0..<n]
    if bytes.count > 1 << 20 { return .failed("it is larger than 1 MiB; is it the right file?") }
  }
  guard let text = String(validating: bytes, as: UTF8.self) else {
    return .failed("it is not UTF-8 text")
  }
  return .text(text)
}
