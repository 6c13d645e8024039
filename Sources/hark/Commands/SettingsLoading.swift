import Loudness
import Settings

/// The config file's settings; each problem in it is one line on stderr, and its default
/// stands in for the bad entry.
func loadSettings() -> Settings {
  let path = Settings.defaultPath()
  let (settings, problems) = Settings.load(from: path)
  for p in problems {
    FileHandleStderr.write("hark: config '\(path ?? "?")': \(p); using the default\n")
  }
  return settings
}

extension Settings {
  /// How the config file says ReplayGain is applied.
  var replayGainSettings: ReplayGainSettings {
    ReplayGainSettings(
      mode: ReplayGainMode(rawValue: replayGain) ?? .off, preampDecibels: replayGainPreampDecibels,
      preventClipping: replayGainPreventClipping)
  }
}
