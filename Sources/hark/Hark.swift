import ArgumentParser
import CHarkSys
import Glibc
import Logging

@main
struct Hark: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "hark",
    abstract: "A terminal music player with the manners of a phone's music app.",
    discussion: """
      Every hark process is a client of the per-user session server, which decides who plays, \
      who is interrupted and who is ducked (SPEC.md rules G1–G20). It starts on demand.
      """,
    version: "0.1.0",
    subcommands: [
      Open.self, Play.self, Add.self, Ctl.self, Call.self, Simulate.self, RouteCommand.self,
      Silent.self,
      Status.self, SessionServerCommand.self,
    ],
    // 'hark [--device DEV] [PATH…]' opens the interface.
    defaultSubcommand: Open.self)

  static func main() async {
    // Lines must reach a pipe or file as they happen: tests and scripts read them live.
    chs_line_buffer_stdout()
    let level =
      ProcessEnvironment.get("HARK_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .info
    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = level
      return handler
    }
    do {
      var command = try parseAsRoot()
      if var asyncCommand = command as? AsyncParsableCommand {
        try await asyncCommand.run()
      } else {
        try command.run()
      }
    } catch {
      // ArgumentParser's usage errors exit 64 with "Error: ..."; ours say "hark: ..." and exit
      // 2, like every other hark message (STYLE.md §5).
      if exitCode(for: error) == .validationFailure {
        FileHandleStderr.write("hark: \(message(for: error))\n")
        FileHandleStderr.write("Run 'hark --help' (or 'hark <command> --help') for usage.\n")
        Glibc.exit(2)
      }
      exit(withError: error)
    }
  }
}

enum ProcessEnvironment {
  static func get(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

/// Prints `hark: <message>` on stderr and exits with status 1.
func die(_ message: String, status: Int32 = 1) -> Never {
  FileHandleStderr.write("hark: \(message)\n")
  exit(status)
}

enum FileHandleStderr {
  static func write(_ s: String) {
    var bytes = Array(s.utf8)
    _ = Glibc.write(2, &bytes, bytes.count)
  }
}

/// A duration in seconds given on the command line.
struct Seconds: ExpressibleByArgument, Sendable, CustomStringConvertible {
  let value: Double
  init(_ value: Double) { self.value = value }
  init?(argument: String) {
    guard let v = Double(argument), v.isFinite, v >= 0, v <= 86_400 else { return nil }
    value = v
  }
  var duration: Duration { .milliseconds(Int64((value * 1000).rounded())) }
  var description: String {
    value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
  }
  var defaultValueDescription: String { description }
}
