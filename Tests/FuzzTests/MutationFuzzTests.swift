import Glibc
import SessionWire
import Settings
import Testing

@testable import PlayerEngine  // SplitMix64, the queue's seeded generator
@testable import TerminalUI

/// Bounded mutation fuzzing of hark's own parsers (issue 16): the wire codec (both ways), the
/// config file, playlists and the terminal's key decoder, fed seeds from Corpus/ mutated by a
/// seeded generator (bit flips, byte and token insertions, deletions, duplications, splices).
/// A trap is a crash of the test process and fails the run; a hang is caught by the time limit;
/// each parser's own contract is checked on every input. Inputs that once failed are kept in
/// Corpus/*/regressions and replayed first.
///
/// Not coverage-guided (libFuzzer would need the package built with -sanitize=fuzzer, which
/// SwiftPM's executables cannot take beside a normal build): a random-mutation loop, as the
/// issue allows. HARK_FUZZ_ITERATIONS (default 4,000 per parser) and HARK_FUZZ_SEED set its size
/// and its start; scripts/test runs it longer with a new seed each time, and says the seed.
@Suite(.serialized) struct MutationFuzzTests {
  static let iterations = Int(ProcessEnvironment.get("HARK_FUZZ_ITERATIONS") ?? "") ?? 4_000
  static let seed = UInt64(ProcessEnvironment.get("HARK_FUZZ_SEED") ?? "") ?? 0x6861_726B

  @Test(.timeLimit(.minutes(5))) func wireClientMessages() {
    fuzz("client") { bytes in
      guard let line = bytes.split(separator: 0x0A).first else { return }
      // A request that decodes encodes to one that decodes to the same request.
      guard let message = try? WireCodec.decodeClient(line) else { return }
      do {
        let again = try WireCodec.encode(message)
        let back = try WireCodec.decodeClient(again.dropLast())
        #expect(back == message, "round trip of \(String(decoding: line, as: UTF8.self))")
      } catch {
        Issue.record("a decoded request did not encode again: \(message) (\(error))")
      }
    }
  }

  @Test(.timeLimit(.minutes(5))) func wireServerMessages() {
    fuzz("server") { bytes in
      guard let line = bytes.split(separator: 0x0A).first else { return }
      guard let message = try? WireCodec.decodeServer(line) else { return }
      do {
        let again = try WireCodec.encode(message)
        #expect((try? WireCodec.decodeServer(again.dropLast())) == message)
      } catch {
        Issue.record("a decoded message did not encode again: \(message) (\(error))")
      }
    }
  }

  @Test(.timeLimit(.minutes(5))) func lineFraming() {
    fuzz("client") { bytes in
      var framer = LineFramer(limit: 512)
      framer.append(bytes)
      var total = 0
      while let line = try? framer.nextLine() {
        #expect(!line.contains(0x0A))
        total += line.count + 1
        if total > bytes.count { Issue.record("the framer made up bytes") }
      }
    }
  }

  @Test(.timeLimit(.minutes(5))) func configFile() {
    fuzz("toml") { bytes in
      let text = String(decoding: bytes, as: UTF8.self)
      // By scalars, as the parser counts: "\r\n" is one Character.
      let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).count
      let (_, problems) = Settings.parse(text)
      for p in problems where p.line < 0 || p.line > lines + 1 {
        Issue.record("a problem on line \(p.line) of \(lines)")
      }
    }
  }

  @Test(.timeLimit(.minutes(5))) func playlists() {
    let folder = makeTemporaryFolder()
    defer { _ = system("rm -rf '\(folder)'") }
    let path = folder + "/list.m3u8"
    fuzz("playlist", iterations: Self.iterations / 4) { bytes in
      let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
      _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      close(fd)
      let (files, _) = QueueLoader.load([path])
      for f in files where f.contains("\n") { Issue.record("an entry holds a newline: \(f)") }
    }
  }

  @Test(.timeLimit(.minutes(5))) func terminalKeys() {
    fuzz("keys") { bytes in
      var decoder = KeyDecoder()
      var events = 0
      // In pieces, as a terminal delivers them, then the escape timeout.
      var rest = bytes[...]
      while !rest.isEmpty {
        let n = min(rest.count, 1 + Int(rest.first! % 7))
        events += decoder.feed(rest.prefix(n)).count
        rest = rest.dropFirst(n)
      }
      events += decoder.timeout().count
      #expect(events <= bytes.count + 1, "\(events) keys from \(bytes.count) bytes")
    }
  }

  // MARK: The mutation loop

  private func fuzz(
    _ corpus: String, iterations: Int = MutationFuzzTests.iterations, _ check: ([UInt8]) -> Void
  ) {
    // With HARK_FUZZ_LAST set, each input is written there before it is tried: after a crash
    // the file holds the input that crashed, to be added to Corpus/<name>/regressions.
    let last = ProcessEnvironment.get("HARK_FUZZ_LAST").map {
      open($0 + "." + corpus, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    }
    defer { if let last, last >= 0 { close(last) } }
    func attempt(_ input: [UInt8]) {
      if let last, last >= 0 {
        _ = ftruncate(last, 0)
        _ = input.withUnsafeBytes { pwrite(last, $0.baseAddress, $0.count, 0) }
      }
      check(input)
    }
    let seeds = Corpus.inputs(corpus)
    #expect(!seeds.isEmpty, "no seeds in Corpus/\(corpus)")
    for regression in Corpus.inputs(corpus + "/regressions") { attempt(regression) }
    for s in seeds { attempt(s) }
    var rng = SplitMix64(seed: Self.seed ^ UInt64(corpus.utf8.count))
    for _ in 0..<iterations {
      var input = seeds[Int(rng.next() % UInt64(seeds.count))]
      for _ in 0...Int(rng.next() % 4) { mutate(&input, &rng, splice: seeds) }
      attempt(input)
    }
  }

  private static let tokens: [[UInt8]] = [
    "{", "}", "[", "]", "\"", "\\", "\\u0000", "\\ud800", ":", ",", "null", "true", "-1",
    "1e309", "99999999999999999999", "NaN", "\n", "\r\n", "=", "#", "'", "\"\"\"", "\u{1B}[",
    "\u{1B}", "\u{FEFF}", "é", "夜", "\u{0}", "../", "/", "~",
  ].map { Array($0.utf8) }

  private func mutate(_ input: inout [UInt8], _ rng: inout SplitMix64, splice seeds: [[UInt8]]) {
    let at = input.isEmpty ? 0 : Int(rng.next() % UInt64(input.count))
    switch rng.next() % 7 {
    case 0 where !input.isEmpty: input[at] ^= UInt8(1 << (rng.next() % 8))
    case 1: input.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
    case 2 where !input.isEmpty:
      input.removeSubrange(at..<min(input.count, at + 1 + Int(rng.next() % 16)))
    case 3:
      input.insert(contentsOf: Self.tokens[Int(rng.next() % UInt64(Self.tokens.count))], at: at)
    case 4 where !input.isEmpty:
      let end = min(input.count, at + 1 + Int(rng.next() % 32))
      input.insert(contentsOf: input[at..<end], at: at)
    case 5:
      let other = seeds[Int(rng.next() % UInt64(seeds.count))]
      let from = other.isEmpty ? 0 : Int(rng.next() % UInt64(other.count))
      input = Array(input[..<at]) + other[from...]
    default:
      if input.count > 1 { input.swapAt(at, Int(rng.next() % UInt64(input.count))) }
    }
    if input.count > 1 << 16 { input.removeLast(input.count - (1 << 16)) }
  }
}

/// The seed inputs in Tests/FuzzTests/Corpus/<name>: each file, and for .txt files each line.
enum Corpus {
  static let root: String = {
    let here = #filePath
    return String(here[..<(here.lastIndex(of: "/") ?? here.startIndex)]) + "/Corpus"
  }()

  static func inputs(_ name: String) -> [[UInt8]] {
    let folder = root + "/" + name
    guard let dir = opendir(folder) else { return [] }
    defer { closedir(dir) }
    var out: [[UInt8]] = []
    var names: [String] = []
    while let e = readdir(dir) {
      let n = withUnsafeBytes(of: e.pointee.d_name) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      if !n.hasPrefix(".") { names.append(n) }
    }
    for n in names.sorted() {
      let bytes = read(folder + "/" + n)
      guard let bytes else { continue }
      if n.hasSuffix(".txt") {
        out += bytes.split(separator: 0x0A).map(Array.init)
      } else {
        out.append(bytes)
      }
    }
    return out
  }

  private static func read(_ path: String) -> [UInt8]? {
    var st = stat()
    guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, let f = fopen(path, "rb")
    else { return nil }
    defer { fclose(f) }
    var out = [UInt8](repeating: 0, count: Int(st.st_size))
    let n = fread(&out, 1, out.count, f)
    return Array(out[0..<n])
  }
}

enum ProcessEnvironment {
  static func get(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

func makeTemporaryFolder() -> String {
  var template = Array("/tmp/hark-fuzz.XXXXXX".utf8CString)
  return template.withUnsafeMutableBufferPointer {
    mkdtemp($0.baseAddress!).map { String(cString: $0) } ?? "/tmp"
  }
}
