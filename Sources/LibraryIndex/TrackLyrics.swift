import Glibc
import Lyrics
import MediaFiles
import Platform

/// A track's lyrics, from an .lrc file beside it or from its tags (read by TagLib in the
/// hark-tags helper, so that a hostile file costs the helper, never the player or the
/// interface). Synced lyrics win over unsynced: the .lrc beside the track (put there on
/// purpose), then the tags' SYLT, then LRC text in a lyrics tag (as some taggers store synced
/// lyrics in FLAC and MP4), then the .lrc's or the tags' plain text.
public enum TrackLyrics {
  /// What was found for `path`: the lyrics, or none; and why the tags could not be read, when
  /// that is why there are none.
  public struct Found: Sendable, Equatable {
    public var lyrics: Lyrics?
    public var problem: String?
  }

  /// The lyrics of `path` (a file, or a cue sheet's track: its sheet's audio file's tags).
  /// Blocks for the helper (tens of milliseconds): not on an interface's thread.
  public static func find(for path: String, tagHelper: String? = nil) -> Found {
    guard !QueueLoader.isStreamURL(path) else { return Found() }
    var file = path
    if let reference = CueSheet.Reference(path) {
      // The sheet's audio: its lyrics are the whole file's, so only a sheet of one track
      // would match them; unsynced lyrics of a whole concert are still worth showing.
      guard case .success(let sheet) = CueSheet.read(reference.sheet),
        let audio = sheet.tracks.first(where: { $0.number == reference.track })?.file
      else { return Found() }
      file = audio
    }
    let beside = besideFile(of: file).flatMap { lrc -> Lyrics? in
      guard case .bytes(let bytes) = readWholeFile(lrc, limit: 4 << 20) else { return nil }
      return LRC.parse(bytes, source: .file(lrc))
    }
    if let beside, beside.isSynced { return Found(lyrics: beside) }
    let helper = TagHelper(
      executable: tagHelper ?? TagHelper.installed() ?? "hark-tags", arguments: ["--lyrics"])
    defer { helper.stop() }
    let record = helper.read(file)
    let tags = embedded(record)
    if let synced = tags.first(where: \.isSynced) { return Found(lyrics: synced) }
    if let beside { return Found(lyrics: beside) }
    return Found(lyrics: tags.first, problem: tags.isEmpty ? record.problem : nil)
  }

  /// "Song.lrc" beside "Song.flac" (or "Song.LRC"), when there is one.
  static func besideFile(of path: String) -> String? {
    let base: Substring
    if let dot = path.lastIndex(of: "."), !path[dot...].contains("/") {
      base = path[..<dot]
    } else {
      base = Substring(path)
    }
    for ext in [".lrc", ".LRC", ".Lrc"] {
      let candidate = base + ext
      if access(FileName.c(String(candidate)), R_OK) == 0 { return String(candidate) }
    }
    return nil
  }

  /// The lyrics in a --lyrics record: each text tag (as LRC when it holds stamps), then the
  /// SYLT entries as one.
  static func embedded(_ record: TagRecord) -> [Lyrics] {
    var out: [Lyrics] = []
    var sylt: [(milliseconds: Int, text: String)] = []
    for (key, value) in record.lines {
      switch key {
      case "text":
        let parts = value.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { continue }
        let kind = unescaped(parts[0])
        if let lyrics = LRC.parse(text: unescaped(parts[1]), source: .tag(kind)) {
          out.append(lyrics)
        }
      case "synced":
        let parts = value.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let ms = Int(parts[0]) else { continue }
        sylt.append((ms, unescaped(parts[1])))
      default:
        continue
      }
    }
    if !sylt.isEmpty {
      let lyrics = Lyrics(synced: sylt, source: .tag("SYLT"))
      if lyrics.lines.contains(where: { !$0.text.isEmpty }) { out.insert(lyrics, at: 0) }
    }
    return out
  }

  /// hark-tags's escapes undone: \\, \t, \r, \n.
  static func unescaped(_ s: Substring) -> String {
    guard s.contains("\\") else { return String(s) }
    var out = ""
    var escaping = false
    for c in s.unicodeScalars {
      if escaping {
        switch c {
        case "t": out += "\t"
        case "r": out += "\r"
        case "n": out += "\n"
        default: out.unicodeScalars.append(c)
        }
        escaping = false
      } else if c == "\\" {
        escaping = true
      } else {
        out.unicodeScalars.append(c)
      }
    }
    return out
  }
}
