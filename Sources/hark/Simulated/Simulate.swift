import ArgumentParser
import Glibc
import MediaFiles
import Platform
import PlayerEngine
import SessionCore

struct Simulate: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "simulate",
    abstract:
      "Simulate another app, to watch hark's manners: alarm, nav, music, assistant, game, recorder.",
    subcommands: [
      Alarm.self, Nav.self, Music.self, Assistant.self, Game.self, Recorder.self,
    ])
}

extension Simulate {
  struct Alarm: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "alarm",
      abstract: "An alarm goes off: a resumable interruption (playback, deactivates with notify).")

    @Option(help: ArgumentHelp("How long it rings.", valueName: "seconds"))
    var seconds = Seconds(5)

    @OptionGroup var sound: SoundOptions

    func run() async throws {
      let app = await SimulatedApp.start("alarm", sound: sound)
      await app.setCategory(.playback)
      guard await app.activate() else { app.finish(status: 1) }
      app.say("ringing for \(seconds)")
      await app.publish(.playing, title: "Alarm", commands: [.stop, .pause])
      // An alarm the user set rings even in silent mode (G2).
      app.play(sound: "alarm-clock-elapsed", loop: true)
      let deadline = ContinuousClock.Instant.after(seconds)
      loop: while let input = await app.next(until: deadline) {
        switch input {
        case .signal: break loop
        case .command(let c):
          // Stop and pause both dismiss an alarm; nothing else applies to it.
          c.respond(.success)
          app.say("dismissed by remote command '\(c.command.kind.rawValue)'")
          break loop
        case .event(.interruption(.began)):
          app.sound?.pause()
        case .event(.interruption(.ended)):
          // Like a game, an alarm has no transport: it rings again after any interruption.
          if await app.activate() {
            app.sound?.resume()
            app.say("ringing again")
          }
        case .event, .wake: break
        }
      }
      app.say("stopped")
      await app.deactivate(notifyingOthers: true)
      await app.publish(.stopped, title: "Alarm")
      app.finish()
    }
  }

  struct Nav: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "nav",
      abstract:
        "A navigation prompt: ducks the others while it speaks, and pauses spoken audio (G9).")

    @Argument(help: "What the prompt says.")
    var text = "In 300 metres, turn left"

    @Option(
      help: ArgumentHelp(
        "How long it speaks (default: from the text's length).", valueName: "seconds"))
    var seconds: Seconds?

    @OptionGroup var sound: SoundOptions

    func run() async throws {
      let app = await SimulatedApp.start("nav", sound: sound)
      await app.setCategory(
        .playback, options: [.mixWithOthers, .duckOthers, .interruptSpokenAudioAndMixWithOthers])
      // The prompt is spoken by espeak-ng when it is installed, else a chime stands for it.
      let speech = sound.noSound ? nil : Self.speak(text)
      defer { if let speech { unlink(speech) } }
      // About three words a second, as a voice prompt speaks, unless the speech says.
      let words = Double(text.split(separator: " ").count)
      let spoken = speech.flatMap(AppSound.duration(of:)).map {
        Seconds(($0 * 10).rounded() / 10 + 0.3)
      }
      let length = seconds ?? spoken ?? Seconds(max(1.5, (words / 3 * 10).rounded() / 10 + 0.5))
      guard await app.activate() else { app.finish(status: 1) }
      app.say(
        "speaking \"\(text)\" (\(length))"
          + (sound.noSound ? " (no sound)" : speech == nil ? " (a chime: no espeak-ng)" : ""))
      await app.publish(.playing, title: text)
      if let speech {
        app.sound?.play(speech, loop: false)
      } else {
        app.play(sound: "message-new-instant", loop: false)
      }
      let deadline = ContinuousClock.Instant.after(length)
      loop: while let input = await app.next(until: deadline) {
        switch input {
        case .signal: break loop
        case .command(let c): c.respond(.commandDisabled)
        case .event(.interruption(.began)):
          app.say("prompt cut short")
          break loop
        case .event, .wake: break
        }
      }
      app.say("done")
      app.sound?.stop()
      await app.deactivate(notifyingOthers: true)
      await app.publish(.stopped, title: text)
      app.finish()
    }

    /// The prompt as a WAV file made by espeak-ng; nil when it is not installed or fails.
    static func speak(_ text: String) -> String? {
      let dir = environment("XDG_RUNTIME_DIR") ?? "/tmp"
      let path = "\(dir)/hark-nav-\(getpid()).wav"
      guard runQuietly("espeak-ng", ["-w", path, text]) == 0 else {
        unlink(path)
        return nil
      }
      return path
    }
  }

  struct Music: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "music",
      abstract: "Another music app takes over: a non-resumable interruption (G13).",
      discussion: """
        Non-mixable playback. It obeys interruptions as a media app must (G14) and answers \
        play, pause, toggle and stop remote commands; when its time is up it deactivates \
        without notifying others, so what it interrupted stays paused.
        """)

    @Option(help: ArgumentHelp("How long it runs before it exits.", valueName: "seconds"))
    var seconds = Seconds(10)

    @OptionGroup var sound: SoundOptions

    func run() async throws {
      let app = await SimulatedApp.start("music", sound: sound)
      await app.setCategory(.playback)
      guard await app.activate() else { app.finish(status: 1) }
      let title = "Simulated music"
      let commands: Set<RemoteCommandKind> = [.play, .pause, .togglePlayPause, .stop]
      let started = ContinuousClock.now
      app.say("playing for \(seconds)")
      await app.publish(.playing, title: title, commands: commands, position: 0)
      if let music = Assets.music, let track = Self.firstTrack(in: music) {
        app.sound?.play(track, loop: true)
      }
      var playing = true
      var playingWhenInterrupted = false
      func position() -> Double {
        let c = (ContinuousClock.now - started).components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
      }

      func pause(by cause: PauseCause) async {
        playing = false
        app.sound?.pause()
        await app.publish(
          .paused, title: title, pausedBy: cause, commands: commands, position: position())
      }
      func resume() async -> Bool {
        guard await app.activate() else { return false }
        playing = true
        app.sound?.resume()
        await app.publish(.playing, title: title, commands: commands, position: position())
        return true
      }

      let deadline = ContinuousClock.Instant.after(seconds)
      loop: while let input = await app.next(until: deadline) {
        switch input {
        case .signal: break loop
        case .event(.interruption(.began)):
          playingWhenInterrupted = playing
          await pause(by: .interruption)
        case .event(.interruption(.ended(let shouldResume, _))):
          if shouldResume && playingWhenInterrupted {
            if await resume() { app.say("resumed") }
          } else {
            app.say("stays paused")
          }
        case .event(.routeChange(let change)) where change.reason == .oldDeviceUnavailable:
          if playing {
            await app.deactivate(notifyingOthers: false)
            await pause(by: .route)
            app.say("paused: '\(change.previous.name)' went away")
          }
        case .command(let c):
          app.say("remote command '\(c.command.kind.rawValue)'")
          switch c.command {
          case .play where !playing, .togglePlayPause where !playing:
            c.respond(await resume() ? .success : .commandFailed)
          case .pause where playing, .togglePlayPause where playing:
            await app.deactivate(notifyingOthers: false)
            await pause(by: .user)
            c.respond(.success)
          case .play, .pause:
            c.respond(.success)  // already so
          case .stop:
            c.respond(.success)
            break loop
          default:
            c.respond(.commandDisabled)
          }
        case .event, .wake: break
        }
      }
      app.say("exits")
      app.sound?.stop()
      await app.deactivate(notifyingOthers: false)
      await app.publish(.stopped, title: title)
      app.finish()
    }

    /// The bundled music's second track (Ogg Vorbis), else the first file there.
    static func firstTrack(in folder: String) -> String? {
      let files = QueueLoader.load([folder]).files
      return files.first { $0.hasSuffix(".ogg") } ?? files.first
    }
  }

  struct Assistant: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "assistant",
      abstract: "A voice assistant listens and answers: a non-resumable interruption (G13).")

    @Option(help: ArgumentHelp("How long it listens and speaks.", valueName: "seconds"))
    var seconds = Seconds(3)

    @OptionGroup var sound: SoundOptions

    func run() async throws {
      let app = await SimulatedApp.start("assistant", sound: sound)
      await app.setCategory(.playAndRecord)
      guard await app.activate() else { app.finish(status: 1) }
      app.say("listening for \(seconds)")
      await app.publish(.playing, title: "Voice assistant")
      app.play(sound: "message-new-instant", loop: false)
      let deadline = ContinuousClock.Instant.after(seconds)
      loop: while let input = await app.next(until: deadline) {
        switch input {
        case .signal: break loop
        case .command(let c): c.respond(.commandDisabled)
        case .event, .wake: break
        }
      }
      app.say("done")
      await app.deactivate(notifyingOthers: false)
      await app.publish(.stopped, title: "Voice assistant")
      app.finish()
    }
  }

  struct Game: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "game",
      abstract: "A game with a soundtrack: ambient if other audio plays, else soloAmbient (G8).",
      discussion: """
        It has no playback controls, so it resumes after every interruption, whatever the flag \
        (G15), and it quiets its soundtrack while another app's primary audio plays.
        """)

    @Option(help: ArgumentHelp("How long it runs.", valueName: "seconds"))
    var seconds = Seconds(10)

    @OptionGroup var sound: SoundOptions

    func run() async throws {
      let app = await SimulatedApp.start("game", sound: sound)
      let other: Bool
      do { other = try await app.session.isOtherAudioPlaying() } catch {
        die("game: \(error)")
      }
      let category: Category = other ? .ambient : .soloAmbient
      app.say(
        other
          ? "other audio is playing: ambient, mixing with it"
          : "no other audio: soloAmbient, the soundtrack plays alone")
      await app.setCategory(category)
      guard await app.activate() else { app.finish(status: 1) }
      let title = "Game soundtrack"
      app.say("playing for \(seconds)" + (app.silentMode ? " (muted: silent mode is on)" : ""))
      await app.publish(.playing, title: title)
      // soloAmbient and ambient are silenced by silent mode (G2): muted before it starts.
      app.sound?.setMuted(app.silentMode)
      if let music = Assets.music {
        let files = QueueLoader.load([music]).files
        if let track = files.first(where: { $0.hasSuffix(".wav") }) ?? files.first {
          app.sound?.play(track, loop: true)
        }
      }
      let deadline = ContinuousClock.Instant.after(seconds)
      loop: while let input = await app.next(until: deadline) {
        switch input {
        case .signal: break loop
        case .command(let c): c.respond(.commandDisabled)
        case .event(.interruption(.began)):
          app.sound?.pause()
          await app.publish(.paused, title: title, pausedBy: .interruption)
        case .event(.interruption(.ended)):
          // G15: no playback controls, so resume after every interruption.
          if await app.activate() {
            app.sound?.resume()
            app.say("resumed")
            await app.publish(.playing, title: title)
          }
        case .event(.silenceSecondaryAudioHint(.begin)):
          app.sound?.setDucked(true)
          app.say("soundtrack quieted, sound effects go on")
        case .event(.silenceSecondaryAudioHint(.end)):
          app.sound?.setDucked(false)
          app.say("soundtrack back")
        case .event, .wake: break
        }
      }
      app.say("exits")
      await app.deactivate(notifyingOthers: false)
      await app.publish(.stopped, title: title)
      app.finish()
    }
  }
}
