import ArgumentParser
import Glibc
import Platform
import SessionClient
import SessionCore
import SessionWire
import UserText

/// `hark timer`: the desktop's sleep timer, kept by the session server.
struct TimerCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "timer",
    abstract: "Set, cancel or show the sleep timer: when it ends, what plays fades out and pauses.",
    discussion: """
      A sleep timer for the whole desktop, as the phone's clock has it ("when the timer ends: \
      stop playing"). The session server keeps it; when it ends, hark's player and every other \
      player on the desktop that plays (mpv with mpv-mpris, cmus, a browser: through MPRIS) fade \
      out over the fade's seconds and pause, saying why (the reason 'timer'), and nothing \
      resumes by itself. Setting it again replaces it. Without WHEN, prints its state; \
      'hark status' shows it too.
      """)

  @Argument(
    help: ArgumentHelp(
      "30m, 1h15m, 1h30, 90s or minutes (45); end-of-track; end-of-chapter; cancel (or off).",
      valueName: "when"))
  var when: String?

  @Option(
    help: ArgumentHelp(
      "Seconds over which what plays fades out before it pauses, 0 to 60 (default: 5; 0 pauses at once).",
      valueName: "seconds"))
  var fade: Seconds?

  /// What `when` asks for: a setting, or nil to cancel.
  static func setting(_ when: String, fade: Double) throws(ValidationError) -> SleepTimerSetting? {
    switch when.lowercased() {
    case "cancel", "off": return nil
    case "end-of-track", "eot": return SleepTimerSetting(.endOfTrack, fade: fade)
    case "end-of-chapter", "eoc": return SleepTimerSetting(.endOfChapter, fade: fade)
    default: break
    }
    guard let length = TypedDuration(when) else {
      throw ValidationError(
        "cannot read the timer '\(when)': give a time (30m, 1h15m, 90s, or minutes: 45), "
          + "end-of-track, end-of-chapter or cancel")
    }
    guard length.seconds > 0 else { throw ValidationError("the timer '\(when)' is no time at all") }
    guard length.seconds <= SleepTimerSetting.longest else {
      throw ValidationError("the timer '\(when)' is longer than a day; the longest is 24h")
    }
    return SleepTimerSetting(.duration(seconds: length.seconds), fade: fade)
  }

  func validate() throws {
    if let fade, fade.value > SleepTimerSetting.longestFade {
      throw ValidationError(
        "--fade must be 0 to \(Int(SleepTimerSetting.longestFade)) seconds, not \(fade)")
    }
    if let when { _ = try Self.setting(when, fade: 0) }
    if when == nil, fade != nil {
      throw ValidationError("--fade goes with a timer to set ('hark timer 30m --fade 10')")
    }
  }

  func run() async throws {
    let session = await controlSession("hark timer")
    defer { session.close() }
    guard let when else {
      do { print(Self.describe(try await session.status().timer)) } catch {
        die(error.description)
      }
      return
    }
    let setting = try Self.setting(when, fade: fade?.value ?? SleepTimerSetting.defaultFade)
    let before = (try? await session.status())?.timer
    do { try await session.setTimer(setting) } catch { die(error.description) }
    guard setting != nil else {
      let running = before.map { $0.state == .running || $0.state == .ending } ?? false
      print(running ? "hark: sleep timer cancelled" : "hark: no sleep timer was running")
      return
    }
    let now = (try? await session.status())?.timer
    print("hark: sleep timer set: " + Self.describe(now).dropFirst("sleep timer: ".count))
  }

  /// One line: "sleep timer: ends in 29:41 (at 23:41), then what plays fades out over 5 s".
  static func describe(_ timer: SleepTimerStatus?) -> String {
    guard let timer else { return "sleep timer: off" }
    let fade = timer.fade > 0 ? "fades out over \(Seconds(timer.fade)) and pauses" : "pauses"
    let apps = timer.apps.map { "'\($0)'" }.joined(separator: ", ")
    switch timer.state {
    case .ending:
      return "sleep timer: ended; fading out " + (apps.isEmpty ? "what plays" : apps)
    case .ended:
      return "sleep timer: ended; "
        + (apps.isEmpty ? "nothing was playing" : "it paused \(apps) (they stay paused)")
    case .running:
      let left = timer.remaining.map { "in \(clock($0)) (at \(wallClock(after: $0)))" }
      switch timer.mode {
      case .duration:
        return "sleep timer: ends \(left ?? "soon"); then what plays \(fade)"
      case .endOfTrack, .endOfChapter:
        let what = timer.mode == .endOfTrack ? "track" : "chapter"
        let when =
          left.map { "its fade begins \($0)" }
          ?? "waiting: nothing with a length is playing"
        return "sleep timer: at the end of the \(what) (\(when)); then what plays \(fade)"
      }
    }
  }

  /// 1781 → "29:41", 4000 → "1:06:40".
  static func clock(_ seconds: Double) -> String { clockTime(seconds: Int(seconds.rounded(.up))) }

  /// The local time `seconds` from now, "23:41".
  static func wallClock(after seconds: Double) -> String {
    var then = time(nil) + Int(seconds.rounded())
    var parts = tm()
    localtime_r(&then, &parts)
    var text = [CChar](repeating: 0, count: 16)
    let n = strftime(&text, text.count, "%H:%M", &parts)
    return String(decoding: text.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
