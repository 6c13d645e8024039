import ArgumentParser
import Glibc
import Platform
import PlayerEngine
import SessionCore

extension Simulate {
  struct Recorder: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "recorder",
      abstract: "A voice-memo app records from the sound server's source (G12).",
      discussion: """
        The record category, active only while it records: while it does, music is \
        interrupted as for a call (and resumes after it), and no alert, prompt or other \
        app may sound into the recording; only a call may interrupt it, which ends the \
        recording there. It records the sound server's default source (or --source) with \
        parec into a WAV file it names, then deactivates with notify.
        """)

    @Option(help: ArgumentHelp("How long it records.", valueName: "seconds"))
    var seconds = Seconds(5)

    @Option(
      help: ArgumentHelp("The WAV file to write (default: memo-TIME.wav here).", valueName: "file"))
    var out: String?

    @Option(
      help: ArgumentHelp(
        "The sound server's source to record (default: its default).", valueName: "name"))
    var source: String?

    func run() async throws {
      let file = out ?? Self.defaultName()
      let app = await SimulatedApp.start("recorder")
      await app.setCategory(.record)
      // G12: active only while recording, so it is the last thing before recording starts.
      guard await app.activate() else { app.finish(status: 1) }
      guard let parec = Self.startRecording(into: file, source: source) else {
        app.say("cannot record: parec (pulseaudio-utils) did not start")
        await app.deactivate(notifyingOthers: true)
        app.finish(status: 1)
      }
      app.say("recording for \(seconds) into '\(file)'")
      await app.publish(.playing, title: "Voice memo")
      // The memo's length counts from its first samples in the file, not from parec's start:
      // connecting and opening a stream took parec nearly two seconds on a busy machine, and a
      // memo asked for 3 s held 1.1 (recorder.sh). At most 5 s are waited for them.
      let firstSamplesBy = ContinuousClock.now + .seconds(5)
      var end: ContinuousClock.Instant?
      var parecEnded: Int32?
      // Events as they come, and four times a second a look at parec (twenty times while no
      // sample has come): with no sound server or a source that is not there it ends at once,
      // and the recording must not go on holding everything else silent for nothing.
      recording: while ContinuousClock.now < (end ?? firstSamplesBy) {
        let tick = min(
          end ?? firstSamplesBy, ContinuousClock.now + .milliseconds(end == nil ? 50 : 250))
        while let input = await app.next(until: tick) {
          switch input {
          case .signal: break recording
          case .command(let c): c.respond(.commandDisabled)
          case .event(.interruption(.began(let cause))):
            // Only a call can (G11): the memo ends here, and keeps what it has.
            app.say("recording cut short by '\(cause.by)'")
            break recording
          case .event, .wake: break
          }
        }
        var status: Int32 = 0
        if waitpid(parec, &status, WNOHANG) == parec {
          parecEnded = status
          break recording
        }
        var st = stat()
        if end == nil, stat(file, &st) == 0, st.st_size > 44 {  // past the WAV header
          end = .after(seconds)
        }
      }
      if parecEnded == nil {
        // parec ends on SIGINT and closes the WAV file properly (its header says its length).
        kill(parec, SIGINT)
        _ = waitForChild(parec)
      }
      // With notify also after a call cut it short: what it interrupted may resume once the
      // call is over too (G13).
      await app.deactivate(notifyingOthers: true)
      await app.publish(.stopped, title: "Voice memo")
      var st = stat()
      guard parecEnded == nil, stat(file, &st) == 0, st.st_size > 44 else {
        app.say("cannot record: parec stopped (is there a sound server and a source?)")
        app.finish(status: 1)
      }
      app.say("saved '\(file)'")
      app.finish()
    }

    static func defaultName() -> String {
      var t = time(nil)
      var parts = tm()
      localtime_r(&t, &parts)
      var buffer = [CChar](repeating: 0, count: 32)
      strftime(&buffer, buffer.count, "memo-%Y%m%d-%H%M%S.wav", &parts)
      return String(
        decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// parec writing a 44.1 kHz mono 16-bit WAV file; its pid, or nil when it did not start.
    static func startRecording(into file: String, source: String?) -> pid_t? {
      var arguments = [
        "--file-format=wav", "--format=s16le", "--rate=44100", "--channels=1",
        "--client-name=hark recorder", "--latency-msec=50",
      ]
      if let source { arguments.append("--device=\(source)") }
      arguments.append(file)
      // Its output to ours (it says why when it cannot record); signals as a fresh process has
      // them: this process ignores SIGINT and SIGTERM (it takes them as events), and parec
      // must not inherit that, or the SIGINT that ends the recording would not reach it.
      return try? spawn("parec", arguments, descriptors: [1: .parent(1), 2: .parent(2)])
    }
  }
}
