import Glibc
import Platform
import Testing

@testable import PlayerCore  // SplitMix64, the queue's seeded generator

/// The mutation loop the fuzz suites share (MutationFuzzTests, DecoderMutationFuzzTests): seeds
/// from Corpus/<name>, regressions from Corpus/<name>/regressions replayed first, then
/// `iterations` inputs, each a seed mutated one to four times by a generator seeded from
/// HARK_FUZZ_SEED and the corpus name. HARK_FUZZ_ITERATIONS (default 4,000) sets the size.
enum FuzzLoop {
  static let iterations = Int(environment("HARK_FUZZ_ITERATIONS") ?? "") ?? 4_000
  static let seed = UInt64(environment("HARK_FUZZ_SEED") ?? "") ?? 0x6861_726B

  /// How one input is mutated: the input, the generator, and every seed (for splices).
  typealias Mutator = (inout [UInt8], inout SplitMix64, [[UInt8]]) -> Void

  /// Runs `check` on every regression, every seed and `iterations` mutants. `check` is also
  /// given the name of the corpus file the input came from (a mutant: its seed's).
  static func run(
    _ corpus: String, iterations: Int = FuzzLoop.iterations,
    mutate: Mutator = Mutations.generic, _ check: (_ input: [UInt8], _ origin: String) -> Void
  ) {
    // With HARK_FUZZ_LAST set, each input is written there before it is tried: after a crash
    // the file holds the input that crashed, to be added to Corpus/<name>/regressions.
    let last = environment("HARK_FUZZ_LAST").map {
      open($0 + "." + corpus, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    }
    defer { if let last, last >= 0 { close(last) } }
    func attempt(_ input: [UInt8], _ origin: String) {
      if let last, last >= 0 {
        _ = ftruncate(last, 0)
        _ = input.withUnsafeBytes { pwrite(last, $0.baseAddress, $0.count, 0) }
      }
      check(input, origin)
    }
    let entries = Corpus.entries(corpus)
    let seeds = entries.map(\.bytes)
    #expect(!seeds.isEmpty, "no seeds in Corpus/\(corpus)")
    for regression in Corpus.entries(corpus + "/regressions") {
      attempt(regression.bytes, regression.name)
    }
    for e in entries { attempt(e.bytes, e.name) }
    var rng = SplitMix64(seed: Self.seed ^ UInt64(corpus.utf8.count))
    for _ in 0..<iterations {
      let chosen = Int(rng.next() % UInt64(seeds.count))
      var input = seeds[chosen]
      for _ in 0...Int(rng.next() % 4) { mutate(&input, &rng, seeds) }
      attempt(input, entries[chosen].name)
    }
  }
}

/// Format-blind mutations: bit flips, byte and token insertions, deletions, duplications,
/// splices with another seed, swaps. Inputs stay under 64 KiB.
enum Mutations {
  static let tokens: [[UInt8]] = [
    "{", "}", "[", "]", "\"", "\\", "\\u0000", "\\ud800", ":", ",", "null", "true", "-1",
    "1e309", "99999999999999999999", "NaN", "\n", "\r\n", "=", "#", "'", "\"\"\"", "\u{1B}[",
    "\u{1B}", "\u{FEFF}", "é", "夜", "\u{0}", "../", "/", "~",
  ].map { Array($0.utf8) }

  static func generic(_ input: inout [UInt8], _ rng: inout SplitMix64, splice seeds: [[UInt8]]) {
    let at = input.isEmpty ? 0 : Int(rng.next() % UInt64(input.count))
    switch rng.next() % 7 {
    case 0 where !input.isEmpty: input[at] ^= UInt8(1 << (rng.next() % 8))
    case 1: input.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
    case 2 where !input.isEmpty:
      input.removeSubrange(at..<min(input.count, at + 1 + Int(rng.next() % 16)))
    case 3:
      input.insert(contentsOf: tokens[Int(rng.next() % UInt64(tokens.count))], at: at)
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

  static func inputs(_ name: String) -> [[UInt8]] { entries(name).map(\.bytes) }

  /// The inputs with the name of the file each came from, in the order of the names.
  static func entries(_ name: String) -> [(name: String, bytes: [UInt8])] {
    let folder = root + "/" + name
    guard let dir = opendir(folder) else { return [] }
    defer { closedir(dir) }
    var out: [(name: String, bytes: [UInt8])] = []
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
        out += bytes.split(separator: 0x0A).map { (n, Array($0)) }
      } else {
        out.append((n, bytes))
      }
    }
    return out
  }

  static func read(_ path: String) -> [UInt8]? {
    var st = stat()
    guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, let f = fopen(path, "rb")
    else { return nil }
    defer { fclose(f) }
    var out = [UInt8](repeating: 0, count: Int(st.st_size))
    let n = fread(&out, 1, out.count, f)
    return Array(out[0..<n])
  }
}

func makeTemporaryFolder() -> String {
  var template = Array("/tmp/hark-fuzz.XXXXXX".utf8CString)
  return template.withUnsafeMutableBufferPointer {
    mkdtemp($0.baseAddress!).map { String(cString: $0) } ?? "/tmp"
  }
}
