/*
 hark-tags — reads the tags of sound files with TagLib, for the library index, in a process of
 its own: TagLib is C++ (with libstdc++'s weight it would add to every player start), and a
 crash in it on a hostile file must not take the indexer down (the indexer starts it again and
 marks that one file).

   hark-tags < PATHS

 stdin: file paths, each ended by a NUL byte (a name may hold a newline).
 stdout: one record per path, in the order given: lines "key<TAB>value", then an empty line.
 The first line is "ok" or "error<TAB>reason". Keys, only those present: title, artist,
 albumartist, album, track, disc, year, genre, seconds (the length, whole seconds), trackgain
 and albumgain (ReplayGain, dB), cover ("1" when a picture is embedded). Values have tabs and
 line breaks as spaces. Ends at the end of stdin, status 0.

 TagLib's C binding gives title, artist, album, genre, year, track and the length; the album
 artist, the disc number, the gains and the cover come from hark's own reader of Vorbis
 comments, ID3v2 and APEv2 (Loudness's GainTagReader), which TagLib's C binding cannot reach.
*/
import CTagLib
import Glibc
import Loudness
import Platform

taglib_set_strings_unicode(1)
signal(SIGPIPE, SIG_DFL)

/// The extra fields hark's own reader takes.
let extra: Set<String> = [
  "ALBUMARTIST", "DISCNUMBER", "HAS_COVER", "REPLAYGAIN_TRACK_GAIN", "REPLAYGAIN_ALBUM_GAIN",
  "R128_TRACK_GAIN", "R128_ALBUM_GAIN",
]

/// "key\tvalue" lines for `path`, the first "ok" or "error\treason".
func record(_ path: String) -> [String] {
  var st = stat()
  guard stat(FileName.c(path), &st) == 0 else {
    return ["error\t" + (errno == ENOENT ? "no such file" : String(cString: strerror(errno)))]
  }
  guard st.st_mode & S_IFMT == S_IFREG else { return ["error\tnot a regular file"] }
  var lines = ["ok"]
  func add(_ key: String, _ value: String?) {
    guard let value else { return }
    let clean = String(value.map { $0 == "\t" || $0.isNewline ? " " : $0 })
      .trimmingCharacters(" ")
    if !clean.isEmpty { lines.append(key + "\t" + clean) }
  }
  if let file = taglib_file_new(FileName.c(path)) {
    defer {
      taglib_tag_free_strings()
      taglib_file_free(file)
    }
    if taglib_file_is_valid(file) != 0, let tag = taglib_file_tag(file) {
      add("title", taglib_tag_title(tag).map { String(cString: $0) })
      add("artist", taglib_tag_artist(tag).map { String(cString: $0) })
      add("album", taglib_tag_album(tag).map { String(cString: $0) })
      add("genre", taglib_tag_genre(tag).map { String(cString: $0) })
      let year = taglib_tag_year(tag)
      if year > 0 { add("year", String(year)) }
      let track = taglib_tag_track(tag)
      if track > 0 { add("track", String(track)) }
      if let properties = taglib_file_audioproperties(file) {
        let seconds = taglib_audioproperties_length(properties)
        if seconds > 0 { add("seconds", String(seconds)) }
      }
    }
  }
  let fields = GainTagReader.read(path: path) { extra.contains($0) }
  add("albumartist", fields["ALBUMARTIST"])
  // "2/3" is disc 2.
  add("disc", fields["DISCNUMBER"].map { String($0.prefix { $0.isASCII && $0.isNumber }) })
  let gains = ReplayGainTags(tags: fields)
  add("trackgain", gains.trackGain.map { String($0) })
  add("albumgain", gains.albumGain.map { String($0) })
  if fields["HAS_COVER"] != nil { lines.append("cover\t1") }
  return lines
}

extension String {
  fileprivate func trimmingCharacters(_ c: Character) -> String {
    var s = Substring(self)
    while s.first == c { s = s.dropFirst() }
    while s.last == c { s = s.dropLast() }
    return String(s)
  }
}

/// Writes all of `text`, or ends quietly when the reader has gone.
func writeAll(_ text: String) {
  var text = text
  text.withUTF8 { bytes in
    guard let base = bytes.baseAddress else { return }
    var at = 0
    while at < bytes.count {
      let n = write(1, base + at, bytes.count - at)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { exit(0) }
      at += n
    }
  }
}

// Paths from stdin, NUL-ended; one record out for each, at once (the indexer waits for it).
var pending: [UInt8] = []
var chunk = [UInt8](repeating: 0, count: 65_536)
while true {
  let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
  if n < 0 && errno == EINTR { continue }
  if n <= 0 { break }
  pending += chunk[..<n]
  while let nul = pending.firstIndex(of: 0) {
    let path = FileName.string(Array(pending[..<nul]))
    pending.removeFirst(nul + 1)
    writeAll(record(path).joined(separator: "\n") + "\n\n")
  }
}
exit(0)
