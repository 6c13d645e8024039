import ArgumentParser
import CHarkSys
import Glibc
import Logging
import Platform

@main
struct Hark: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "hark",
    abstract: "A terminal music player with the manners of a phone's music app.",
    discussion: """
      Every hark process is a client of the per-user session server, which decides who plays, \
      who is interrupted and who is ducked (the rules G1–G20 of docs/MANNERS.md). It starts on \
      demand.
      """,
    version: "0.1.0",
    subcommands: [
      Open.self, Play.self, Add.self, Ctl.self, Call.self, Simulate.self, RouteCommand.self,
      Silent.self, TimerCommand.self,
      Status.self, LibraryCommand.self, LyricsCommand.self, ScrobbleCommand.self,
      SessionServerCommand.self,
      BackgroundPlayerCommand.self,
    ],
    // 'hark [--device DEV] [PATH…]' opens the interface.
    defaultSubcommand: Open.self)

  static func main() async {
    // Lines must reach a pipe or file as they happen: tests and scripts read them live.
    chs_line_buffer_stdout()
    let level =
      environment("HARK_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .info
    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = level
      return handler
    }
    // 'hark stauts' would open the interface on a path that is not there: a word that is no
    // file and is one or two letters from a command is a mistyped command.
    // The arguments as bytes: a file name that is not UTF-8 stays whole (`FileName`), where
    // CommandLine.arguments would have replaced its bytes with U+FFFD and named no file.
    let arguments = (1..<Int(CommandLine.argc)).compactMap { i in
      CommandLine.unsafeArgv[i].map { FileName.string(cString: $0) }
    }
    if let word = arguments.first, let near = mistypedCommand(word) {
      FileHandleStderr.write("hark: no command or file '\(word)'; did you mean 'hark \(near)'?\n")
      Glibc.exit(2)
    }
    // `hark play …` as scripts, tests and the benchmark write it is read without ArgumentParser,
    // whose reflection is a quarter of a short play's work before its first sound; help and
    // every mistake in it still go through ArgumentParser (`PlayRequest.init(quickParsing:)`).
    if arguments.first == "play", let request = PlayRequest(quickParsing: arguments.dropFirst()) {
      await request.run()
      return
    }
    do {
      var command = try parseAsRoot(arguments)
      if var asyncCommand = command as? AsyncParsableCommand {
        try await asyncCommand.run()
      } else {
        try command.run()
      }
    } catch {
      // ArgumentParser's usage errors exit 64 with "Error: ..."; ours say "hark: ..." and exit
      // 2, like every other hark message (docs/HACKING.md, "Messages for people").
      if exitCode(for: error) == .validationFailure {
        FileHandleStderr.write("hark: \(message(for: error))\n")
        FileHandleStderr.write("Run 'hark --help' (or 'hark <command> --help') for usage.\n")
        Glibc.exit(2)
      }
      exit(withError: error)
    }
  }
}

/// Prints `hark: <message>` on stderr and exits with status 1.
func die(_ message: String, status: Int32 = 1) -> Never {
  FileHandleStderr.write("hark: \(message)\n")
  exit(status)
}

/// "nothing to play in 'empty.m3u'": what was given, named, when none of it plays (one path,
/// or how many).
func nothingToPlay(in paths: [String]) -> String {
  paths.count == 1
    ? "nothing to play in '\(paths[0].escapingControlCharacters)'"
    : "nothing to play in the \(paths.count) paths given"
}

enum FileHandleStderr {
  static func write(_ s: String) { try? writeAll(2, s.utf8) }
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
  /// "3 s", "2.6 s", "0.25 s": to the millisecond, as a person writes it (2.6, not the
  /// 2.5999999999999996 that sums of tenths give).
  var description: String {
    let ms = Int((value * 1000).rounded())
    guard ms % 1000 != 0 else { return "\(ms / 1000) s" }
    var fraction = String(ms % 1000)
    fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
    while fraction.hasSuffix("0") { fraction.removeLast() }
    return "\(ms / 1000).\(fraction) s"
  }
  var defaultValueDescription: String { description }
}

/// The command `word` was probably meant to be (one or two letters off, or two swapped), when
/// it is not a command, not an option and not a file or folder that exists.
func mistypedCommand(_ word: String) -> String? {
  let commands = Hark.configuration.subcommands.map { $0._commandName } + ["help"]
  guard word.count >= 3, !word.hasPrefix("-"), !commands.contains(word),
    access(FileName.c(word), F_OK) != 0
  else { return nil }
  let scored = commands.map { ($0, editDistance(word.lowercased(), $0)) }
  guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2, best.1 < word.count / 2 + 1
  else { return nil }
  return best.0
}

/// Damerau–Levenshtein (optimal string alignment): insertions, deletions, substitutions and
/// swaps of two neighbours each cost one.
func editDistance(_ a: String, _ b: String) -> Int {
  let x = Array(a)
  let y = Array(b)
  if x.isEmpty || y.isEmpty { return max(x.count, y.count) }
  var d = [[Int]](repeating: [Int](repeating: 0, count: y.count + 1), count: x.count + 1)
  for i in 0...x.count { d[i][0] = i }
  for j in 0...y.count { d[0][j] = j }
  for i in 1...x.count {
    for j in 1...y.count {
      let cost = x[i - 1] == y[j - 1] ? 0 : 1
      d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] {
        d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
      }
    }
  }
  return d[x.count][y.count]
}
