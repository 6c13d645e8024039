import Glibc
import Platform
import TagLibBridge

/// Writes measured ReplayGain into a file with care: into a copy beside it, checked, then
/// renamed over it. A crash, a full disk or TagLib failing leaves the file as it was; a copy
/// whose other tags differ from the file's is thrown away, never put in its place.
enum GainWriter {
  struct Request {
    var path: String
    var trackGain: Double?
    var trackPeak: Double?
    var albumGain: Double?
    var albumPeak: Double?
  }

  /// Nil when written, else why not, in words.
  static func write(_ r: Request) -> String? {
    guard let trackGain = r.trackGain, let trackPeak = r.trackPeak else {
      return "no measured loudness to write"
    }
    var before = stat()
    guard stat(FileName.c(r.path), &before) == 0 else {
      return String(cString: strerror(errno)).lowercased()
    }
    guard before.st_mode & S_IFMT == S_IFREG else { return "not a regular file" }
    guard let tagsBefore = properties(r.path) else { return "TagLib cannot read its tags" }
    let folder = r.path.lastIndex(of: "/").map { String(r.path[..<$0]) } ?? "."
    let name = r.path.lastIndex(of: "/").map { String(r.path[r.path.index(after: $0)...]) }
    // Hidden, and with the extension kept (TagLib chooses the format by it).
    let copy = folder + "/.hark-gain-\(getpid())-" + (name ?? r.path)
    if let why = copyFile(r.path, to: copy, mode: before.st_mode & 0o7777) { return why }
    var keep = false
    defer { if !keep { unlink(FileName.c(copy)) } }

    let formatted = [trackGain, trackPeak, r.albumGain, r.albumPeak]
    let texts = formatted.enumerated().map { i, v -> String? in
      guard let v else { return nil }
      return i % 2 == 0 ? gainText(v) : peakText(v)
    }
    let failure: String? = withCStrings(texts) { pointers in
      // Opus: Q7.8 dB to -23 LUFS, 5 dB below ReplayGain's -18.
      var gains = htl_gains(
        track_gain: pointers[0], track_peak: pointers[1], album_gain: pointers[2],
        album_peak: pointers[3], opus_track_q78: q78(trackGain),
        opus_album_q78: r.albumGain.map(q78) ?? 0, has_opus_album: r.albumGain == nil ? 0 : 1)
      return htl_write_gains(FileName.c(copy), &gains).map { String(cString: $0) }
    }
    if let failure { return failure }
    guard let tagsAfter = properties(copy) else { return "TagLib cannot read what it wrote" }
    let (otherAfter, otherBefore) = (withoutGains(tagsAfter), withoutGains(tagsBefore))
    guard otherAfter == otherBefore else {
      let changed =
        otherAfter.first { !otherBefore.contains($0) }.map { "'\($0)' is new" }
        ?? otherBefore.first { !otherAfter.contains($0) }.map { "'\($0)' went" } ?? "their order"
      return "TagLib changed other tags in writing it (\(changed)); the file is left as it was"
    }
    // The gain is there (as a tag TagLib knows, or keeps without knowing).
    guard tagsAfter.count > otherAfter.count else { return "the gain written cannot be read back" }
    // The file must not have changed while the copy was made and written.
    var now = stat()
    guard stat(FileName.c(r.path), &now) == 0, now.st_size == before.st_size,
      now.st_mtim.tv_sec == before.st_mtim.tv_sec, now.st_mtim.tv_nsec == before.st_mtim.tv_nsec
    else { return "it changed while its tags were written; nothing was written" }
    let fd = open(FileName.c(copy), O_RDONLY | O_CLOEXEC)
    guard fd >= 0, fsync(fd) == 0 else {
      if fd >= 0 { close(fd) }
      return "the copy cannot be synced (\(String(cString: strerror(errno)).lowercased()))"
    }
    close(fd)
    // Its owner's, as far as this user may say so (root's scan keeps a user's file theirs).
    _ = chown(FileName.c(copy), before.st_uid, before.st_gid)
    guard rename(FileName.c(copy), FileName.c(r.path)) == 0 else {
      return "it cannot be replaced (\(String(cString: strerror(errno)).lowercased()))"
    }
    keep = true
    syncFolder(of: r.path)
    return nil
  }

  /// "-6.54 dB", as ReplayGain 2.0 writes a gain.
  static func gainText(_ db: Double) -> String {
    let hundredths = Int((db * 100).rounded())
    let sign = hundredths < 0 ? "-" : "+"
    let a = abs(hundredths)
    return sign + "\(a / 100)." + (a % 100 < 10 ? "0" : "") + "\(a % 100) dB"
  }

  /// "0.987654", six decimals.
  static func peakText(_ peak: Double) -> String {
    let millionths = Int((peak * 1_000_000).rounded())
    let fraction = String(millionths % 1_000_000)
    return "\(millionths / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count)
      + fraction
  }

  /// A ReplayGain gain as an Opus R128 gain: whole 1/256 dB, to -23 LUFS.
  static func q78(_ replayGainDB: Double) -> Int32 {
    Int32(max(-32_768, min(32_767, ((replayGainDB - 5) * 256).rounded())))
  }

  /// The lines that are not of a gain tag: "KEY=value" or "?KEY" (a tag TagLib keeps without
  /// knowing it, as MP4's freeform "----:com.apple.iTunes:replaygain_track_gain").
  static func withoutGains(_ lines: [String]) -> [String] {
    lines.filter { line in
      var key = Substring(line.uppercased())
      if key.hasPrefix("?") { key = key.dropFirst() }
      if key.hasPrefix("----:COM.APPLE.ITUNES:") { key = key.dropFirst(22) }
      return !key.hasPrefix("REPLAYGAIN_") && !key.hasPrefix("R128_")
    }
  }

  /// The file's tags as TagLib's property map lists them, a "KEY=value" line each.
  static func properties(_ path: String) -> [String]? {
    guard let raw = htl_properties(FileName.c(path)) else { return nil }
    defer { free(raw) }
    return String(cString: raw).split(separator: "\n").map(String.init)
  }

  /// Copies `source` to `target` (made anew, `mode`); nil, or why not.
  static func copyFile(_ source: String, to target: String, mode: mode_t) -> String? {
    let from = open(FileName.c(source), O_RDONLY | O_CLOEXEC)
    guard from >= 0 else { return "it cannot be read (\(String(cString: strerror(errno))))" }
    defer { close(from) }
    let to = open(FileName.c(target), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard to >= 0 else {
      return "its folder cannot be written (\(String(cString: strerror(errno)).lowercased()))"
    }
    defer { close(to) }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let n = buffer.withUnsafeMutableBytes { raw in
        retryingEINTR { read(from, raw.baseAddress, raw.count) }
      }
      if n < 0 { return "it cannot be read (\(String(cString: strerror(errno))))" }
      if n == 0 { return nil }
      var done = 0
      while done < n {
        let w = buffer[done..<n].withUnsafeBytes { raw in
          retryingEINTR { Glibc.write(to, raw.baseAddress, raw.count) }
        }
        if w <= 0 {
          return
            "the copy cannot be written (\(String(cString: strerror(w < 0 ? errno : ENOSPC)).lowercased()))"
        }
        done += w
      }
    }
  }
}

/// `body` with C strings for `texts` (NULL for nil), valid during the call.
func withCStrings<T>(_ texts: [String?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
  let copies = texts.map { $0.map { strdup($0) } ?? nil }
  defer { for p in copies { free(p) } }
  return body(copies.map { $0.map { UnsafePointer($0) } })
}
