import AudioCore
import Glibc
import Platform

/// A cue sheet (.cue): one recording (a concert, an album ripped to one file) cut into its
/// tracks, with titles and performers. Each track is queued as a path of its own,
/// `SHEET.cue#N` (`CueSheet.Reference`), which `CueSheet.open` turns into a decoder of that
/// stretch of the audio file: consecutive tracks of one file follow each other gaplessly, and
/// each seeks within itself.
///
/// Times are minutes:seconds:frames of a CD, 75 frames a second. A track runs from its
/// INDEX 01 to the next track's INDEX 01 in the same file (a pregap, INDEX 00, is heard at the
/// end of the track before, as a CD player plays it), the last to the end of its file.
public struct CueSheet: Sendable, Equatable {
  public struct Track: Sendable, Equatable {
    public var number: Int
    /// The audio file, as a path (relative ones made relative to the sheet's folder).
    public var file: String
    public var title: String?
    public var performer: String?
    /// INDEX 01, in CD frames (1/75 s) from the start of `file`.
    public var start: Int
    /// Its REM REPLAYGAIN_* lines, by name in upper case ("REPLAYGAIN_TRACK_GAIN": "-6.5 dB").
    public var gainTags: [String: String] = [:]
  }

  public var title: String?
  public var performer: String?
  public var tracks: [Track]
  /// The sheet's own REM REPLAYGAIN_* lines (the album's, as EAC and foobar2000 write them).
  public var gainTags: [String: String] = [:]

  /// The gain tags for track `number`: its own over the sheet's.
  public func gainTags(ofTrack number: Int) -> [String: String] {
    let own = tracks.first { $0.number == number }?.gainTags ?? [:]
    return gainTags.merging(own) { _, track in track }
  }

  /// A queue path naming one track of a sheet: "/music/Live.cue#3".
  public struct Reference: Sendable, Equatable {
    public var sheet: String
    public var track: Int

    public init(sheet: String, track: Int) {
      self.sheet = sheet
      self.track = track
    }

    /// The reference `path` spells, if it is one.
    public init?(_ path: String) {
      // The byte, not the Character: asked of every path in a library, most of them long and
      // with no "#" at all.
      guard let hash = path.utf8.lastIndex(of: UInt8(ascii: "#")),
        let number = Int(path[path.index(after: hash)...]), number >= 0,
        QueueLoader.fileExtension(String(path[..<hash])) == "cue"
      else { return nil }
      sheet = String(path[..<hash])
      track = number
    }

    public var path: String { "\(sheet)#\(track)" }
  }

  /// Reads the sheet at `path`: UTF-8, or Latin-1 when it is not (as many rippers write it).
  /// Nil, with the reason, when it cannot be read or names no track.
  public static func read(_ path: String) -> Result<CueSheet, DecodeError> {
    guard let f = fopen(FileName.c(path), "r") else {
      return .failure(
        DecodeError(
          errno == ENOENT ? .notFound : .unreadable, path: path,
          reason: String(cString: strerror(errno)).lowercased()))
    }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let n = fread(&chunk, 1, chunk.count, f)
      if n <= 0 { break }
      bytes += chunk[0..<n]
      // A cue sheet is a few kilobytes; a megabyte is not one.
      if bytes.count > 1 << 20 {
        return .failure(
          DecodeError(.unsupported, path: path, reason: "it is too large to be a cue sheet"))
      }
    }
    let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    guard var sheet = parse(text(bytes), folder: folder), !sheet.tracks.isEmpty else {
      return .failure(
        DecodeError(.damaged, path: path, reason: "the cue sheet names no audio track"))
    }
    for i in sheet.tracks.indices { sheet.tracks[i].file = present(sheet.tracks[i].file) }
    return .success(sheet)
  }

  /// The audio file a sheet names, or, when it is not there, the one beside it with the same
  /// name and another audio extension (the sheet says "Live.wav"; the rip was made FLAC).
  static func present(_ file: String) -> String {
    if access(FileName.c(file), F_OK) == 0 { return file }
    let stem = file.lastIndex(of: ".").map { String(file[..<$0]) } ?? file
    for ext in QueueLoader.audioExtensions.sorted()
    where access(FileName.c(stem + "." + ext), R_OK) == 0 {
      return stem + "." + ext
    }
    return file
  }

  /// The text of the sheet: UTF-8 (a BOM dropped), else each byte as Latin-1.
  static func text(_ bytes: [UInt8]) -> String {
    var body = bytes[...]
    if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
    if let utf8 = String(validating: body, as: UTF8.self) { return utf8 }
    return String(String.UnicodeScalarView(body.map { Unicode.Scalar($0) }))
  }

  /// Parses the commands hark uses (FILE, TRACK, TITLE, PERFORMER, INDEX 01, REM REPLAYGAIN_*);
  /// the rest (other REMs, FLAGS, ISRC, CATALOG...) is skipped. Tracks that are not AUDIO are left out.
  static func parse(_ text: String, folder: String) -> CueSheet? {
    var sheet = CueSheet(title: nil, performer: nil, tracks: [])
    var file: String?
    var current: Track?
    var isAudio = false
    func close() {
      if let t = current, isAudio, t.start >= 0 { sheet.tracks.append(t) }
      current = nil
    }
    for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
      let words = Self.words(raw)
      guard let command = words.first?.uppercased() else { continue }
      switch command {
      case "FILE" where words.count >= 2:
        close()
        let name = words[1]
        file = name.hasPrefix("/") ? name : folder + "/" + name
      case "TRACK" where words.count >= 3:
        close()
        guard let file, let number = Int(words[1]) else { continue }
        isAudio = words[2].uppercased() == "AUDIO"
        current = Track(number: number, file: file, title: nil, performer: nil, start: -1)
      case "TITLE" where words.count >= 2:
        if current != nil { current?.title = words[1] } else { sheet.title = words[1] }
      case "PERFORMER" where words.count >= 2:
        if current != nil { current?.performer = words[1] } else { sheet.performer = words[1] }
      case "INDEX" where words.count >= 3 && Int(words[1]) == 1:
        if let at = cdFrames(words[2]) { current?.start = at }
      case "REM" where words.count >= 3 && words[1].uppercased().hasPrefix("REPLAYGAIN_"):
        let name = words[1].uppercased()
        let value = words[2...].joined(separator: " ")
        if current != nil { current?.gainTags[name] = value } else { sheet.gainTags[name] = value }
      default:
        continue
      }
    }
    close()
    return sheet
  }

  /// "mm:ss:ff" as CD frames (75 a second).
  static func cdFrames(_ time: String) -> Int? {
    let parts = time.split(separator: ":").map { Int($0) }
    // Minutes past 99 999 (69 days) are no CD time but a damaged or hostile sheet.
    guard parts.count == 3, let m = parts[0], let s = parts[1], let f = parts[2],
      (0..<100_000).contains(m), s >= 0, s < 60, f >= 0, f < 75
    else { return nil }
    return (m * 60 + s) * 75 + f
  }

  /// A line's words: quoted strings as one word, quotes removed.
  static func words(_ line: Substring) -> [String] {
    var out: [String] = []
    var word = ""
    var quoted = false
    var inWord = false
    for c in line {
      if c == "\"" {
        quoted.toggle()
        inWord = true
      } else if !quoted && (c == " " || c == "\t") {
        if inWord { out.append(word) }
        word = ""
        inWord = false
      } else {
        word.append(c)
        inWord = true
      }
    }
    if inWord { out.append(word) }
    return out
  }

  /// The references to every track, in order: what a queue holds for the sheet at `path`.
  public func references(_ path: String) -> [String] {
    tracks.map { Reference(sheet: path, track: $0.number).path }
  }

  /// The files the sheet's tracks are cut from.
  public var files: Set<String> { Set(tracks.map(\.file)) }

  /// Opens track `reference.track` of its sheet with `openFile` (the decoder for the audio
  /// file it names): a decoder of that stretch alone, with the sheet's titles.
  public static func open(
    _ reference: Reference,
    using openFile: (String) throws(DecodeError) -> any AudioDecoder
  ) throws(DecodeError) -> any AudioDecoder {
    let sheet: CueSheet
    switch read(reference.sheet) {
    case .success(let s): sheet = s
    case .failure(let e): throw e
    }
    guard let at = sheet.tracks.firstIndex(where: { $0.number == reference.track }) else {
      throw DecodeError(
        .notFound, path: reference.path, reason: "the cue sheet has no track \(reference.track)")
    }
    let track = sheet.tracks[at]
    let next = sheet.tracks.indices.contains(at + 1) ? sheet.tracks[at + 1] : nil
    let decoder = try openFile(track.file)
    let rate = decoder.format.sampleRate
    let start = track.start * rate / 75
    let end = next.flatMap { $0.file == track.file ? $0.start * rate / 75 : nil }
    let metadata = TrackMetadata(
      title: track.title, artist: track.performer ?? sheet.performer, album: sheet.title,
      trackNumber: track.number)
    return try TrackSlice(decoder, from: start, to: end, metadata: metadata, path: reference.path)
  }
}
