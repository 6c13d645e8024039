import Glibc
import SessionWire
import Settings
import Testing

@testable import Loudness
@testable import TerminalUI
import MediaFiles

/// Bounded mutation fuzzing of hark's own parsers, against hostile files and clients: the wire
/// codec (both ways), the config file, playlists and the terminal's key decoder, fed seeds from
/// Corpus/ mutated by a seeded generator (bit flips, byte and token insertions, deletions,
/// duplications, splices). A trap is a crash of the test process and fails the run; a hang is
/// caught by the time limit; each parser's own contract is checked on every input. Inputs that once
/// failed are kept in Corpus/*/regressions and replayed first.
///
/// Not coverage-guided (libFuzzer would need the package built with -sanitize=fuzzer, which
/// SwiftPM's executables cannot take beside a normal build): a random-mutation loop, bounded and
/// seeded so that a failure repeats. HARK_FUZZ_ITERATIONS (default 4,000 per parser) and
/// HARK_FUZZ_SEED set its size and its start; scripts/test runs it longer with a new seed each
/// time, and says the seed.
@Suite(.serialized) struct MutationFuzzTests {
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
    fuzz("playlist", iterations: FuzzLoop.iterations / 4) { bytes in
      let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
      _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      close(fd)
      let (files, _) = QueueLoader.load([path])
      for f in files where f.contains("\n") { Issue.record("an entry holds a newline: \(f)") }
    }
  }

  /// ReplayGain tags read from a file's own bytes (FLAC blocks, Ogg pages, ID3v2 frames, APEv2
  /// items): every length comes from the file.
  @Test(.timeLimit(.minutes(5))) func gainTags() {
    fuzz("gaintags") { bytes in
      let fields = GainTagReader.fields(in: bytes)
      for key in fields.keys where !GainTagReader.isGainField(key) {
        Issue.record("a field that is no gain tag: \(key)")
      }
      let tags = ReplayGainTags(tags: fields)
      for gain in [tags.trackGain, tags.albumGain].compactMap({ $0 }) where abs(gain) > 60 {
        Issue.record("a gain past ±60 dB: \(gain)")
      }
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

  // MARK: The mutation loop (FuzzSupport.swift)

  private func fuzz(
    _ corpus: String, iterations: Int = FuzzLoop.iterations, _ check: ([UInt8]) -> Void
  ) {
    FuzzLoop.run(corpus, iterations: iterations) { input, _ in check(input) }
  }
}
