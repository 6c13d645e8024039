import ArgumentParser
import FoundationEssentials
import PropertyBased
import Testing

@testable import hark

/// `hark play`'s command line read without ArgumentParser (`PlayRequest.init(quickParsing:)`)
/// must mean what ArgumentParser's `Play` makes of it, or be left to ArgumentParser.
@Suite(.timeLimit(.minutes(2))) struct PlayQuickParsingTests {
  /// What ArgumentParser makes of `arguments` (after `play`): the request, or nil when it
  /// refuses them (an error, or help).
  static func viaArgumentParser(_ arguments: [String]) -> PlayRequest? {
    guard let play = try? Play.parse(arguments) else { return nil }
    return PlayRequest(
      noUI: play.noUI, device: play.device, duck: play.duck, new: play.new, paths: play.paths)
  }

  @Test func theBenchmarksAndTheTestsCommandLinesAreReadQuickly() {
    let cases: [([String], PlayRequest)] = [
      (
        ["--no-ui", "--device", "pulse", "a.flac"],
        PlayRequest(noUI: true, device: "pulse", paths: ["a.flac"])
      ),
      (["a.wav", "b.ogg", "--no-ui"], PlayRequest(noUI: true, paths: ["a.wav", "b.ogg"])),
      (
        ["--duck", "-12", "--new", "--device=null", "dir/"],
        PlayRequest(device: "null", duck: -12, new: true, paths: ["dir/"])
      ),
      (["--duck=-60", "x=y.mp3"], PlayRequest(duck: -60, paths: ["x=y.mp3"])),
      (
        ["--duck", "0", "http://radio.example/stream"],
        PlayRequest(duck: 0, paths: ["http://radio.example/stream"])
      ),
    ]
    for (arguments, expected) in cases {
      #expect(PlayRequest(quickParsing: arguments) == expected, "\(arguments)")
      #expect(Self.viaArgumentParser(arguments) == expected, "\(arguments)")
    }
  }

  /// Help and every mistake go to ArgumentParser, which says what is wrong.
  @Test func helpAndMistakesAreLeftToArgumentParser() {
    let cases: [[String]] = [
      [], ["--no-ui"], ["--help", "a.wav"], ["-h"], ["a.wav", "--help"],
      ["--device"], ["a.wav", "--device"], ["--device", "--no-ui", "a.wav"],
      ["--device", "", "a.wav"], ["--duck", "5", "a.wav"], ["--duck", "-61", "a.wav"],
      ["--duck", "nan", "a.wav"], ["--duck", "loud", "a.wav"], ["--duck=", "a.wav"],
      ["--no-ui", "--no-ui", "a.wav"], ["--device", "a", "--device", "b", "x.wav"],
      ["--no-ui=yes", "a.wav"], ["--ui", "a.wav"], ["-n", "a.wav"], ["--", "-a.wav"],
      ["-", "a.wav"], ["--generate-completion-script", "bash"], ["--version"],
    ]
    for arguments in cases {
      #expect(PlayRequest(quickParsing: arguments) == nil, "\(arguments)")
    }
  }

  /// `--duck nan` was taken before: NaN is neither below -60 nor above 0.
  @Test func aDuckThatIsNotANumberIsRefusedByBoth() {
    #expect(PlayRequest.problem(duck: .nan) != nil)
    #expect(Self.viaArgumentParser(["--duck", "nan", "a.wav"]) == nil)
    #expect(Self.viaArgumentParser(["--duck", "-20", "a.wav"]) != nil)
  }

  /// The quick reading knows `Play`'s options exactly: one added to `Play` and not to it would
  /// only be slower (left to ArgumentParser), but one renamed or removed in `Play` and still
  /// read quickly would be taken where ArgumentParser refuses it.
  @Test func itKnowsExactlyPlaysOptions() throws {
    // ArgumentParser's own description of the command, as `--experimental-dump-help` prints it.
    struct Dump: Decodable {
      struct Command: Decodable { var arguments: [Argument]? }
      struct Argument: Decodable { var names: [Name]? }
      struct Name: Decodable { var kind: String, name: String }
      var command: Command
    }
    let dump = try JSONDecoder().decode(Dump.self, from: Data(Play._dumpHelp().utf8))
    var names = Set<String>()
    for name in (dump.command.arguments ?? []).flatMap({ $0.names ?? [] }) {
      names.insert((name.kind == "long" ? "--" : "-") + name.name)
    }
    // Help is ArgumentParser's, and left to it.
    #expect(names.isSuperset(of: ["--help", "-h"]))
    names.subtract(["--help", "-h"])
    #expect(names == PlayRequest.quickOptions)
  }

  /// Random command lines made of `Play`'s options, values good and bad, paths and stray words:
  /// whatever is read quickly is read the same by ArgumentParser.
  @Test func randomCommandLinesMeanTheSameToBoth() async {
    let word = Gen.element(of: [
      "--no-ui", "--new", "--device", "--duck", "--device=pulse", "--duck=-6", "--duck=3",
      "pulse", "null", "hw:0,0", "-12", "-60.5", "0", "1e1", "nan", "-inf", "a.wav", "b c.flac",
      "dir/", "x=1.ogg", "--", "-h", "--help", "--ui", "-", "", "=",
    ]).map { $0 ?? "a.wav" }
    var quick = 0
    await propertyCheck(count: 3000, input: word.array(of: 0...7)) { words in
      guard let request = PlayRequest(quickParsing: words) else { return }
      quick += 1
      #expect(Self.viaArgumentParser(words) == request, "\(words)")
    }
    // The generator reaches command lines both readings take.
    #expect(quick > 100)
  }
}
