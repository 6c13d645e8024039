import Platform
import PlayerCore
import SessionCore

/// How the views write times, bars and states.
public enum Format {
  /// A gain for people: "−6.5 dB", "+2.0 dB", "0.0 dB" (a real minus sign, one decimal).
  public static func decibels(_ value: Double) -> String {
    let tenths = Int((abs(value) * 10).rounded())
    let sign = tenths == 0 ? "" : value < 0 ? "−" : "+"
    return "\(sign)\(tenths / 10).\(tenths % 10) dB"
  }

  /// A count with its thousands apart: 500 → "500", 4400 → "4,400", 50000 → "50,000".
  public static func count(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (i, d) in digits.enumerated() {
      if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
      out.append(d)
    }
    return (n < 0 ? "-" : "") + out
  }

  /// 83.4 → "1:23"; 3725 → "1:02:05"; unknown (nil, NaN, infinite) → "--:--".
  public static func time(_ seconds: Double?) -> String {
    guard let seconds, seconds.isFinite else { return "--:--" }
    return clockTime(seconds: Int(max(0, seconds)))
  }

  /// A bar of `width` cells, filled to `fraction` (clamped to 0…1): "━━━━━━──────".
  public static func bar(_ fraction: Double, width: Int, filled: String = "━", empty: String = "─")
    -> String
  {
    guard width > 0 else { return "" }
    let f = fraction.isFinite ? min(1, max(0, fraction)) : 0
    let n = Int((f * Double(width)).rounded(.down))
    return String(repeating: filled, count: n) + String(repeating: empty, count: width - n)
  }

  /// The state word with its short cause: "Playing", "Paused (call)", "Paused (headphones
  /// unplugged)", "Stopped". The status line says the same at length.
  public static func state(_ s: PlayerSnapshot) -> String {
    switch s.state {
    case .stopped: return s.pausedBy == .endOfQueue ? "Stopped (end of queue)" : "Stopped"
    case .playing: return s.ducked ? "Playing (quieter)" : "Playing"
    case .paused:
      switch s.pausedBy {
      case .route:
        if let lost = s.lostRoute, lost.kind == .headphones {
          return "Paused (headphones unplugged)"
        }
        return "Paused (\(s.lostRoute.map { "'\($0.name)' gone" } ?? "output gone"))"
      case .interruption:
        guard let i = s.interruption else { return "Paused (interrupted)" }
        switch i.kind {
        case .call: return "Paused (call)"
        case .otherAudio: return "Paused ('\(i.by)')"
        case .recording: return "Paused (recording)"
        case .alarm: return "Paused (alarm)"
        case .assistant: return "Paused (assistant)"
        case .navigation: return "Paused (navigation)"
        }
      case .sleep: return "Paused (slept)"
      case .timer: return "Paused (sleep timer)"
      case .user, .endOfQueue, nil: return "Paused"
      }
    }
  }

  /// A glyph for the state: ▶ ⏸ ■.
  public static func stateGlyph(_ s: PlaybackState) -> String {
    switch s {
    case .playing: "▶"
    case .paused: "⏸"
    case .stopped: "■"
    }
  }

  /// "15 min", "1 h", "1 h 30 min", "end of track", "end of chapter".
  public static func sleepTimerChoice(_ mode: SleepTimerMode) -> String {
    switch mode {
    case .duration(let seconds):
      let minutes = Int((seconds / 60).rounded())
      if minutes < 1 { return "\(Int(seconds.rounded())) s" }
      if minutes < 60 { return "\(minutes) min" }
      return "\(minutes / 60) h" + (minutes % 60 == 0 ? "" : " \(minutes % 60) min")
    case .endOfTrack: return "end of track"
    case .endOfChapter: return "end of chapter"
    }
  }

  /// The sleep timer on the now-playing bar: "sleep 29:41", "sleep: end of track", "sleep:
  /// fading"; nil when none runs.
  public static func sleepTimer(_ snap: PlayerSnapshot, now: UInt64) -> String? {
    guard let timer = snap.sleepTimer else { return nil }
    switch timer.state {
    case .ending: return "sleep: fading"
    case .ended: return nil
    case .running:
      if let left = snap.sleepTimerRemaining(at: now) {
        let end =
          timer.mode == .endOfTrack ? " (track)" : timer.mode == .endOfChapter ? " (chapter)" : ""
        return "sleep " + clockTime(seconds: Int(left.rounded(.up))) + end
      }
      return "sleep: end of " + (timer.mode == .endOfChapter ? "chapter" : "track")
    }
  }

  /// "repeat off" / "repeat all" / "repeat one".
  public static func repeatMode(_ mode: RepeatMode) -> String { "repeat \(mode.rawValue)" }

  /// The volume as words and a bar, or, where the output has none, its device's name (G3).
  public static func volume(_ v: VolumeReading, barWidth: Int) -> String {
    switch v {
    case .level(let percent, let muted):
      let p = Int(percent.rounded())
      if muted { return "vol muted" }
      return barWidth > 0
        ? "vol \(bar(percent / 100, width: barWidth, filled: "█", empty: "░")) \(p)%"
        : "vol \(p)%"
    case .unavailable(let device):
      return "out: \(device)"
    }
  }

  /// "Title – Artist", or the title alone.
  public static func titleAndArtist(_ title: String, _ artist: String?) -> String {
    guard let artist, !artist.isEmpty else { return title }
    return "\(title) – \(artist)"
  }
}
