import AudioCore
import Glibc
import Testing

@testable import FFmpegDecoder

/// What FFmpegFile says when the file or the helper fails: one line of plain words, within the
/// answer timeout, with the helper killed and reaped, never a hang and never a zombie.
@Suite(.timeLimit(.minutes(2))) final class HelperFailureTests {
  let files = TestFiles()

  @Test func randomBytesNamedM4AAreRefusedAtOpenWithOneLine() throws {
    let path = files.folder + "/noise.m4a"
    var bytes = [UInt8](repeating: 0, count: 100_000)
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    for i in bytes.indices {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      bytes[i] = UInt8(truncatingIfNeeded: state >> 56)
    }
    let f = try #require(fopen(path, "wb"))
    fwrite(bytes, 1, bytes.count, f)
    fclose(f)
    let error = #expect(throws: DecodeError.self) { _ = try FFmpegFile(path: path) }
    #expect(error?.reason == "not an audio file FFmpeg can read")
    #expect(error?.path == path)
    #expect(error.map { !"\($0)".contains("\n") } ?? false)
  }

  /// An MP4 with its index first, cut in the middle of its audio: it plays what is there and
  /// then says it was cut short.
  @Test func anMP4CutInItsAudioPlaysWhatIsThereThenSaysSo() throws {
    let path = try files.tone("whole.m4a", ["-c:a", "aac", "-movflags", "+faststart"], seconds: 4)
    let cut = files.cut(path, to: size(path) / 2, as: "cut.m4a")
    let file = try FFmpegFile(path: cut)
    let (samples, error) = readAll(file)
    #expect(samples.count / 2 > 44_100 && samples.count / 2 < 3 * 44_100)
    let reason = try #require(error?.reason, "no word on a file cut in half")
    #expect(reason.hasPrefix("the file is cut short after ") && reason.hasSuffix(" of 4.0 s"))
  }

  /// Cut in its index (at the start, or at the end where ffmpeg puts it by default): refused at
  /// open, or plays nothing and says why; quickly either way.
  @Test func anMP4CutInItsIndexFailsWithAReason() throws {
    let first = try files.tone("first.m4a", ["-c:a", "aac", "-movflags", "+faststart"])
    let last = try files.tone("last.m4a", ["-c:a", "aac"])
    for cut in [
      files.cut(first, to: 300, as: "cut-first.m4a"),
      files.cut(last, to: size(last) - 200, as: "cut-last.m4a"),
    ] {
      let started = now()
      do {
        let file = try FFmpegFile(path: cut)
        let (samples, error) = readAll(file)
        #expect(error != nil || samples.isEmpty, "\(cut): \(samples.count / 2) frames, no word")
      } catch {
        #expect(!error.reason.isEmpty && !error.reason.contains("\n"))
      }
      #expect(now() - started < 5)
    }
  }

  @Test func aHelperKilledMidwayMakesTheReadSayWhichSignal() throws {
    let path = try files.tone("long.m4a", ["-c:a", "alac"], seconds: 60)
    let file = try FFmpegFile(path: path)
    #expect(readAll(file, reads: 2).error == nil)
    let pid = file.helperProcessID
    #expect(kill(pid, SIGKILL) == 0)
    let (_, error) = readAll(file)
    #expect(error?.reason == "FFmpeg crashed on it (signal 9)")
    #expect(isReaped(pid))
    // And again on the next read: the track is over.
    #expect(readAll(file).error?.reason == "FFmpeg crashed on it (signal 9)")
  }

  @Test func aHelperThatNeverAnswersFailsWithinTheTimeout() throws {
    let path = try files.tone("quiet.m4a", ["-c:a", "aac"], seconds: 1)
    let helper = files.script("sleeper", "exec sleep 60")
    let started = now()
    #expect(
      throws: DecodeError(
        .decoderFailed, path: path, reason: "FFmpeg stopped answering (no data for 0.3 s)")
    ) {
      _ = try FFmpegFile(path: path, helper: helper, answerTimeout: .milliseconds(300))
    }
    #expect(now() - started < 3)
  }

  /// A helper that sends its header and then nothing: the read fails within the timeout, and
  /// the helper is killed and reaped.
  @Test func aHelperThatStopsMidwayFailsTheReadWithinTheTimeout() throws {
    let path = try files.tone("stops.m4a", ["-c:a", "aac"], seconds: 1)
    let helper = files.script(
      "stopper", "printf 'hark-ffmpeg 1\\nrate 8000\\nchannels 1\\n\\n'; exec sleep 60")
    let file = try FFmpegFile(path: path, helper: helper, answerTimeout: .seconds(1))
    #expect(file.format == PCMFormat(sampleRate: 8_000, channels: 1))
    let pid = file.helperProcessID
    let started = now()
    let (_, error) = readAll(file)
    #expect(error?.reason == "FFmpeg stopped answering (no data for 1 s)")
    #expect(now() - started < 5)
    #expect(isReaped(pid))
  }

  /// A helper that speaks another protocol is refused, not believed.
  @Test func aHelperOfAnotherVersionIsRefused() throws {
    let path = try files.tone("other.m4a", ["-c:a", "aac"], seconds: 1)
    let helper = files.script("other", "printf 'hark-ffmpeg 2\\nrate 8000\\nchannels 1\\n\\n'")
    let error = #expect(throws: DecodeError.self) {
      _ = try FFmpegFile(path: path, helper: helper)
    }
    #expect(error?.reason == "hark-ffmpeg answered in a way hark does not understand")
  }

  /// The helper's line on stderr (reason, tab, FFmpeg's words, tab, kind) becomes the error;
  /// a line without a kind, or with one this hark does not know, is the decoder's failure.
  @Test func theHelpersLineBecomesTheReasonAndItsKind() throws {
    let path = try files.tone("line.m4a", ["-c:a", "aac"], seconds: 1)
    let lines: [(String, DecodeError.Kind, String?)] = [
      ("it is odd\\tInvalid data\\tdamaged", .damaged, "Invalid data"),
      ("it is odd\\t\\tunknownFormat", .unknownFormat, nil),
      ("it is odd\\tInvalid data", .decoderFailed, "Invalid data"),
      ("it is odd\\t\\tsomethingNew", .decoderFailed, nil),
    ]
    for (i, (line, kind, detail)) in lines.enumerated() {
      let helper = files.script(
        "liner\(i)", "echo 'some noise' >&2; printf '\(line)\\n' >&2; exit 1")
      #expect(throws: DecodeError(kind, path: path, reason: "it is odd", detail: detail)) {
        _ = try FFmpegFile(path: path, helper: helper)
      }
    }
  }

  @Test func aMissingHelperIsNamed() throws {
    let path = try files.tone("none.m4a", ["-c:a", "aac"], seconds: 1)
    let error = #expect(throws: DecodeError.self) {
      _ = try FFmpegFile(path: path, helper: files.folder + "/no-such-helper")
    }
    #expect(error?.reason == "hark-ffmpeg is not installed next to hark (it decodes this format)")
  }

  /// A FIFO and a folder are refused before anything is started (a helper that does not exist
  /// would say it is missing).
  @Test func aFIFOAndAFolderAreRefusedBeforeAnythingStarts() throws {
    let fifo = files.folder + "/pipe.m4a"
    #expect(mkfifo(fifo, 0o600) == 0)
    let missing = files.folder + "/no-such-helper"
    #expect(
      throws: DecodeError(
        .notAFile, path: fifo, reason: "it is a named pipe (FIFO), not a sound file")
    ) {
      _ = try FFmpegFile(path: fifo, helper: missing)
    }
    #expect(
      throws: DecodeError(.notAFile, path: files.folder, reason: "it is a folder, not a sound file")
    ) {
      _ = try FFmpegFile(path: files.folder, helper: missing)
    }
    #expect(
      throws: DecodeError(.notFound, path: files.folder + "/nothing.m4a", reason: "no such file")
    ) {
      _ = try FFmpegFile(path: files.folder + "/nothing.m4a", helper: missing)
    }
  }

  /// No helper is left behind: not after the decoder goes away mid-track, not after it played
  /// to the end, not after a seek, not after a failure at open.
  @Test func noHelperOutlivesItsDecoder() throws {
    let path = try files.tone("reap.m4a", ["-c:a", "aac"], seconds: 30)
    var pids: [pid_t] = []
    do {
      let file = try FFmpegFile(path: path)
      _ = readAll(file, reads: 1)
      pids.append(file.helperProcessID)
      try file.seek(toFrame: 44_100)
      pids.append(file.helperProcessID)
    }
    do {
      let file = try FFmpegFile(path: try files.tone("short.m4a", ["-c:a", "aac"], seconds: 1))
      #expect(readAll(file).error == nil)
      pids.append(file.helperProcessID)
    }
    for pid in pids { #expect(isReaped(pid), "helper \(pid) was not reaped") }
  }

  /// The helper ends when the player's end of its lifeline closes (as when the player dies),
  /// even while it waits for the player to read.
  @Test func theHelperEndsWhenItsLifelineCloses() throws {
    let path = try files.tone("lifeline.m4a", ["-c:a", "alac"], seconds: 60)
    let helper = try #require(FFmpegFile.installedHelper())
    let process = try HelperProcess.start(helper, ["--lifeline", "--", path])
    usleep(200_000)  // it fills its pipe and waits
    let started = now()
    process.closeLifeline()
    #expect(process.finish(timeout: .seconds(5)) == .exited(1))
    #expect(now() - started < 2)
  }

  /// A station's title comes on the events pipe while the frames' pipe is never empty (a
  /// stream the player is ahead of: once a read finds frames waiting, every read does). It is
  /// taken with the frames, not only when the frames run dry: radio.sh saw no title for 15 s.
  @Test func eventsAreTakenWhileFramesAreAlwaysWaiting() throws {
    let megabyte = 1 << 20
    // 2 MiB, the event, 8 MiB more: each write blocks until the pipe has room, so the frames'
    // pipe is full from before the event until the end.
    let script = """
      import os, sys
      def put(fd, b):
          while b: b = b[os.write(fd, b):]
      put(1, bytes(2 * \(megabyte)))
      put(3, b"icy StreamTitle='A - B';\\n")
      put(1, bytes(8 * \(megabyte)))
      """
    let process = try HelperProcess.start("/usr/bin/python3", ["-c", script], events: true)
    var buffer = [UInt8](repeating: 0, count: 4_096)
    var read = 0
    var seenAt: Int?
    loop: while seenAt == nil {
      let arrival = buffer.withUnsafeMutableBytes {
        process.read(into: $0.baseAddress!, count: $0.count, timeout: .seconds(10))
      }
      switch arrival {
      case .bytes(let n): read += n
      case .end, .silence: break loop
      }
      if process.takeEventLines().contains(Array("icy StreamTitle='A - B';".utf8)) {
        seenAt = read
      }
    }
    let at = try #require(seenAt, "the event was never taken (\(read) bytes read)")
    #expect(at < 4 * megabyte, "the event was taken after \(at) bytes, written after 2 MiB")
  }
}
