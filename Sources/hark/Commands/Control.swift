import AudioCore
import ArgumentParser
import FoundationEssentials
import SessionCore
import SessionClient
import SessionWire

/// Connects a short-lived control client (it never registers a session) or exits.
func controlSession(_ name: String) async -> AudioSession {
  do { return try await AudioSession.connect(.init(name: name)) } catch { die(error.description) }
}

extension RouteKind: ExpressibleByArgument {}

struct RouteCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "route",
    abstract: "List the outputs, or simulate plugging, unplugging and picking one.",
    discussion: """
      Route events for machines without such hardware, delivered to every session exactly like \
      real ones: plugging in makes the device current (newDeviceAvailable, G4); unplugging the \
      current one falls back to the most recently plugged remaining output, else the speakers \
      (oldDeviceUnavailable, G5); selecting is an override (G6).
      """,
    subcommands: [List.self, Plug.self, Unplug.self, Select.self])

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "List the outputs; * marks the current one.")
    func run() async throws {
      let session = await controlSession("hark route")
      let report: StatusReport
      do { report = try await session.status() } catch { die(error.description) }
      for r in report.routes {
        print("\(r == report.route ? "*" : " ") \(r.name) (\(r.kind.rawValue))")
      }
      session.close()
    }
  }

  struct Plug: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "plug",
      abstract: "Plug in an output; it becomes current.")
    @Argument(help: "headphones, bluetooth, usb, hdmi or line.")
    var kind: RouteKind = .headphones
    func run() async throws {
      await routeAction(.plug(kind), done: "plugged in \(kind.defaultName)")
    }
  }

  struct Unplug: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "unplug", abstract: "Unplug an output.")
    @Argument(help: "headphones, bluetooth, usb, hdmi or line.")
    var kind: RouteKind = .headphones
    func run() async throws {
      await routeAction(.unplug(kind), done: "unplugged \(kind.defaultName)")
    }
  }

  struct Select: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "select",
      abstract: "Make an output current, by name or kind.")
    @Argument(help: "The output's name, as 'hark route list' shows it, or its kind.")
    var name: String
    func run() async throws { await routeAction(.select(name), done: "selected '\(name)'") }
  }
}

private func routeAction(_ action: RouteAction, done: String) async {
  let session = await controlSession("hark route")
  do { try await session.route(action) } catch { die(error.description) }
  let current = (try? await session.status())?.route
  print("hark: \(done)" + (current.map { "; output is now \($0.name)" } ?? ""))
  session.close()
}

struct Silent: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "silent",
    abstract: "Turn silent mode on or off (the ring/silent switch, G2), or show it.",
    discussion: """
      Silent mode mutes soloAmbient and ambient sessions (games, app sounds) and UI feedback \
      sounds; never playback, recording or calls. It is kept across logins.
      """)

  enum Switch: String, ExpressibleByArgument, CaseIterable { case on, off }

  @Argument(help: "on or off; without it, print the current state.")
  var state: Switch?

  func run() async throws {
    let session = await controlSession("hark silent")
    if let state {
      do { try await session.setSilentMode(state == .on) } catch { die(error.description) }
      print("hark: silent mode \(state.rawValue)")
    } else {
      do { print("hark: silent mode is \(try await session.status().silent ? "on" : "off")") } catch
      {
        die(error.description)
      }
    }
    session.close()
  }
}

struct Status: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Show the session server's state: outputs, silent mode, every session.")

  @Flag(help: "Print one JSON object (see README for its fields).")
  var json = false

  func run() async throws {
    let session = await controlSession("hark status")
    let report: StatusReport
    do { report = try await session.status() } catch { die(error.description) }
    session.close()
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys]
      guard let data = try? encoder.encode(report) else { die("cannot encode the status") }
      print(String(decoding: data, as: UTF8.self))
      return
    }
    print("session server: pid \(report.serverPid), protocol \(report.version)")
    print("silent mode: \(report.silent ? "on" : "off")")
    print("output: \(report.route.name) (\(report.route.kind.rawValue))")
    let np = report.sessions.first { $0.nowPlaying }
    print("now playing: " + (np.map { "\($0.name) (pid \($0.pid))" } ?? "none"))
    if report.timer != nil { print(TimerCommand.describe(report.timer)) }
    if report.sessions.isEmpty {
      print("no sessions")
      return
    }
    for s in report.sessions { print(Self.line(s)) }
  }

  static func line(_ s: SessionStatus) -> String {
    var flags: [String] = [s.active ? "active" : "inactive"]
    if s.interrupted { flags.append("interrupted") }
    if s.ducked { flags.append("ducked") }
    if s.muted { flags.append("muted") }
    if s.nowPlaying { flags.append("now playing") }
    let category =
      ([s.category.rawValue] + s.options + (s.mode == .default ? [] : [s.mode.rawValue]))
      .joined(separator: "+")
    var text = "\(s.pid)\t\(s.name)\t\(category)\t\(flags.joined(separator: ", "))"
    if let p = s.playback {
      text += "\t\(p.state.rawValue)"
      if let by = p.pausedBy { text += " (\(by.rawValue))" }
      if let t = p.title { text += " '\(t)'" }
      // The speed, while it plays at one other than as recorded.
      if let r = p.rate, r > 0, abs(r - 1) > 1e-6 {
        text += " at \(PlaybackRate(clamping: r).description)"
      }
      if let output = p.output {
        text +=
          " on '\(output)'"
          + (p.volume.map { " at \(Int($0.rounded()))%" } ?? " (no volume control)")
      }
    }
    return text
  }
}
