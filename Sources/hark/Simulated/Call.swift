import ArgumentParser
import SessionCore

struct Call: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "call",
    abstract: "Simulate a phone call: it rings, connects and hangs up (Ctrl-C hangs up).",
    discussion: """
      The call is a playAndRecord session in voice-call mode: it always activates and interrupts \
      every other session (G11), and while it lasts nothing else may start (G10). It hangs up \
      with notifyOthersOnDeactivation, so what it interrupted may resume (G13).
      """)

  @Option(help: ArgumentHelp("How long it rings.", valueName: "seconds"))
  var ring = Seconds(2)

  @Option(help: ArgumentHelp("How long the call lasts once answered.", valueName: "seconds"))
  var talk = Seconds(3)

  @Flag(help: "The call is declined after ringing instead of answered.")
  var declined = false

  @OptionGroup var sound: SoundOptions

  func run() async throws {
    let app = await SimulatedApp.start("call", sound: sound)
    await app.setCategory(.playAndRecord, mode: .voiceCall)
    guard await app.activate() else { app.finish(status: 1) }
    // The ring tone is an alert: silent mode silences it (G2), as a phone's switch does.
    app.say(
      "incoming call, ringing for \(ring)"
        + (app.silentMode ? " (silently: silent mode is on)" : ""))
    await app.publish(.playing, title: "Incoming call")
    // Muted before it starts, or its first moments would be heard.
    app.sound?.setMuted(app.silentMode)
    app.play(sound: "phone-incoming-call", loop: true)
    let answered = await wait(app, for: ring, ringing: true)
    app.sound?.stop()
    if answered {
      if declined {
        app.say("declined")
      } else {
        app.say("connected, talking for \(talk)")
        await app.publish(.playing, title: "Call in progress", position: 0, duration: talk.value)
        _ = await wait(app, for: talk, ringing: false)
      }
    }
    app.say("hung up")
    await app.deactivate(notifyingOthers: true)
    await app.publish(.stopped, title: "Call ended")
    app.finish()
  }

  /// Waits, printing what happens; false when Ctrl-C or SIGTERM cut it short.
  private func wait(_ app: SimulatedApp, for seconds: Seconds, ringing: Bool) async -> Bool {
    let deadline = ContinuousClock.Instant.after(seconds)
    while let input = await app.next(until: deadline) {
      switch input {
      case .signal: return false
      case .command(let c): c.respond(.commandDisabled)
      case .event(.silentMode(let on, _)) where ringing: app.sound?.setMuted(on)
      case .event, .wake: break
      }
    }
    return true
  }
}
