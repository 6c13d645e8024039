/*
 hark-tags — reads the tags of sound files with TagLib, for the library index, in a process of
 its own: TagLib is C++ (with libstdc++'s weight it would add to every player start), and a
 crash in it on a hostile file must not take the indexer down (the indexer starts it again and
 marks that one file).

   hark-tags < PATHS
   hark-tags --lyrics < PATHS
   hark-tags --write-gains < REQUESTS

 stdin: file paths, each ended by a NUL byte (a name may hold a newline).
 stdout: one record per path, in the order given: lines "key<TAB>value", then an empty line.
 The first line is "ok" or "error<TAB>reason". Keys, only those present: title, artist,
 albumartist, album, track, disc, year, genre, seconds (the length, whole seconds), trackgain
 and albumgain (ReplayGain, dB), cover ("1" when a picture is embedded). Values have tabs and
 line breaks as spaces. Ends at the end of stdin, status 0.

 TagLib's C binding gives title, artist, album, genre, year, track and the length; the album
 artist, the disc number, the gains and the cover come from hark's own reader of Vorbis
 comments, ID3v2 and APEv2 (Loudness's GainTagReader), which TagLib's C binding cannot reach.

 --lyrics: a record per path of the lyrics its tags hold, through TagLib's C++ API
 (TagLibBridge): "text<TAB>KIND<TAB>TEXT" for each unsynced lyrics tag (USLT, LYRICS,
 UNSYNCEDLYRICS, ©lyr…), "synced<TAB>MS<TAB>TEXT" for each entry of a SYLT frame. TEXT has
 backslash, tab, CR and LF as \\, \t, \r, \n.

 --write-gains: each request is five NUL-ended fields: the path, the track's gain (dB) and
 peak (linear), the album's gain and peak (empty when there is no album). It writes them as
 ReplayGain 2.0 tags (Opus: R128 gains) into a copy of the file beside it, checks that every
 other tag of the copy is as it was, syncs it and renames it over the file: a crash leaves the
 file as it was, and nothing else in it changes. The record says "ok" or "error<TAB>reason".
*/
import CTagLib
import Glibc
import Loudness
import Platform
import TagLibBridge

taglib_set_strings_unicode(1)
signal(SIGPIPE, SIG_DFL)

/// The extra fields hark's own reader takes.
let extra: Set<String> = [
  "ALBUMARTIST", "DISCNUMBER", "HAS_COVER", "REPLAYGAIN_TRACK_GAIN", "REPLAYGAIN_ALBUM_GAIN",
  "R128_TRACK_GAIN", "R128_ALBUM_GAIN",
]

/// The record of `path`: "key\tvalue" lines, the first "ok" or "error\treason", each ended by a
/// line break (the empty line that ends the record is the caller's).
func record(_ path: String) -> [UInt8] {
  var st = stat()
  guard stat(FileName.c(path), &st) == 0 else {
    return Array(
      ("error\t" + (errno == ENOENT ? "no such file" : String(cString: strerror(errno))) + "\n")
        .utf8)
  }
  guard st.st_mode & S_IFMT == S_IFREG else { return Array("error\tnot a regular file\n".utf8) }
  var out = Array("ok\n".utf8)
  out.reserveCapacity(512)
  func add(_ key: String, _ value: String?) {
    guard let value else { return }
    var copy = value
    copy.withUTF8 { add(key, UnsafeRawBufferPointer($0)) }
  }
  func add(_ key: String, _ value: UnsafePointer<CChar>?) {
    guard let value else { return }
    add(key, UnsafeRawBufferPointer(start: value, count: strlen(value)))
  }
  func add(_ key: String, _ value: UnsafeRawBufferPointer) {
    let start = out.count
    out += key.utf8
    out.append(0x09)
    if appendAsOneLine(value, to: &out) {
      out.append(0x0A)
    } else {
      out.removeSubrange(start...)
    }
  }
  // TagLib, through one opening of the file: its tags, its length, and an MP4's gains (which
  // hark's own reader below does not read).
  var tags = htl_tags()
  var mp4Gains: [String: String] = [:]
  if htl_read_tags(FileName.c(path), &tags) == 0 {
    add("title", tags.title)
    add("artist", tags.artist)
    add("album", tags.album)
    add("genre", tags.genre)
    if tags.year > 0 { add("year", String(tags.year)) }
    if tags.track > 0 { add("track", String(tags.track)) }
    if tags.seconds > 0 { add("seconds", String(tags.seconds)) }
    if let lines = tags.mp4_gains {
      for line in String(cString: lines).split(separator: "\n") {
        let kv = line.split(separator: "=", maxSplits: 1)
        if kv.count == 2 { mp4Gains[String(kv[0])] = String(kv[1]) }
      }
    }
  }
  let fields = GainTagReader.read(path: path) { extra.contains($0) }
  add("albumartist", fields["ALBUMARTIST"])
  // "2/3" is disc 2.
  add("disc", fields["DISCNUMBER"].map { String($0.prefix { $0.isASCII && $0.isNumber }) })
  var gains = ReplayGainTags(tags: fields)
  if gains.isEmpty, !mp4Gains.isEmpty {
    // MP4 keeps ReplayGain in freeform iTunes atoms, which hark's own reader does not read.
    gains = ReplayGainTags(tags: mp4Gains)
  }
  add("trackgain", gains.trackGain.map { String($0) })
  add("albumgain", gains.albumGain.map { String($0) })
  if fields["HAS_COVER"] != nil { out += "cover\t1\n".utf8 }
  return out
}

/// Writes all of `text`, or ends quietly when the reader has gone.
func writeOut(_ text: String) {
  do { try writeAll(1, text.utf8) } catch { exit(0) }
}

/// The fields of stdin, each ended by a NUL byte, given to `handle` as they come.
func readRequests(_ handle: (String) -> Void) {
  var pending: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65_536)
  while true {
    let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
    if n < 0 && errno == EINTR { continue }
    if n <= 0 { break }
    pending += chunk[..<n]
    while let nul = pending.firstIndex(of: 0) {
      let field = FileName.string(Array(pending[..<nul]))
      pending.removeFirst(nul + 1)
      handle(field)
    }
  }
}

/// Lyrics text on one line: backslash, tab, CR and LF escaped.
func escaped(_ text: String) -> String {
  var out = ""
  for c in text.unicodeScalars {
    switch c {
    case "\\": out += "\\\\"
    case "\t": out += "\\t"
    case "\r": out += "\\r"
    case "\n": out += "\\n"
    default: out.unicodeScalars.append(c)
    }
  }
  return out
}

/// The --lyrics record of `path`.
func lyricsRecord(_ path: String) -> [String] {
  var st = stat()
  guard stat(FileName.c(path), &st) == 0 else {
    return ["error\t" + (errno == ENOENT ? "no such file" : String(cString: strerror(errno)))]
  }
  guard st.st_mode & S_IFMT == S_IFREG else { return ["error\tnot a regular file"] }
  final class Found { var lines = ["ok"] }
  let found = Found()
  let context = Unmanaged.passUnretained(found).toOpaque()
  let rc = htl_read_lyrics(
    FileName.c(path), context,
    { context, kind, text in
      guard let context, let kind, let text else { return }
      let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
      found.lines.append(
        "text\t" + escaped(String(cString: kind)) + "\t" + escaped(String(cString: text)))
    },
    { context, ms, text in
      guard let context, let text else { return }
      let found = Unmanaged<Found>.fromOpaque(context).takeUnretainedValue()
      found.lines.append("synced\t\(ms)\t" + escaped(String(cString: text)))
    })
  return rc == 0 ? found.lines : ["error\tTagLib cannot read it"]
}

/// Reads fields in fives and writes each file's gains (`GainWriter`).
func writeGains() {
  var fields: [String] = []
  readRequests { field in
    fields.append(field)
    guard fields.count == 5 else { return }
    defer { fields = [] }
    let request = GainWriter.Request(
      path: fields[0], trackGain: Double(fields[1]), trackPeak: Double(fields[2]),
      albumGain: Double(fields[3]), albumPeak: Double(fields[4]))
    let line: String
    switch GainWriter.write(request) {
    case nil: line = "ok"
    case let why?: line = "error\t" + why
    }
    writeOut(line + "\n\n")
  }
}

// One record out for each path, at once (the indexer waits for it).
switch CommandLine.arguments.dropFirst().first {
case "--lyrics"?:
  readRequests { writeOut(lyricsRecord($0).joined(separator: "\n") + "\n\n") }
case "--write-gains"?:
  writeGains()
default:
  readRequests { path in
    var bytes = record(path)
    bytes.append(0x0A)
    do { try writeAll(1, bytes) } catch { exit(0) }
  }
}
exit(0)
