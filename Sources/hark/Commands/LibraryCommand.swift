import ArgumentParser
import Glibc
import LibraryIndex
import MediaFiles
import Platform
import PlayerEngine
import TerminalUI

/// `hark library`: the library index on the command line: scan a folder into it (only what
/// changed is read again), search it, and list or forget the places long recordings keep.
struct LibraryCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "library",
    abstract: "Index the music folder's tags, search the index, list the places kept.",
    discussion: """
      The index is an SQLite database in $XDG_CACHE_HOME/hark (~/.cache/hark), read by TagLib \
      in the hark-tags helper. A scan reads only files that are new or changed (size or \
      modification time) and drops files that are gone. A damaged index is set aside and \
      rebuilt; it is a cache of the files' own tags, but for the places long recordings were \
      left ('hark library places'), which are copied into the index built in its place.
      """,
    subcommands: [Scan.self, Search.self, Loudness.self, TagLoudness.self, Places.self])

  /// `hark library places [clear] [PATH]`: where long recordings were left.
  struct Places: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "places",
      abstract: "List where long recordings were left, or forget them (clear).",
      discussion: """
        A long recording (spoken word: a podcast, an audiobook, a lecture; or anything longer \
        than the config's long_recording_minutes, 20 by default) keeps its own place: played \
        again, it goes on from there, 10 s earlier. Heard to its end, it is played. One line \
        each, the latest first: where it was left and its length, or 'played', then the file. \
        'clear' forgets them all, or those of a file or of the files under a folder; the \
        recording a player is playing keeps its place again as it plays on.
        """,
      subcommands: [List.self, Clear.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the places kept (the default).")
      @Argument(help: "Only those of this file, or of the files under this folder.")
      var path: String?

      func run() async throws {
        let library = openLibrary(scanning: false)
        let places: [KeptPlace]
        do { places = try library.places(under: path.map(Folder.absolute)) } catch {
          die("cannot read the library index '\(library.path.shown)': \(error)")
        }
        if places.isEmpty {
          FileHandleStderr.write(
            "hark: no place is kept" + (path.map { " under '\($0.shown)'" } ?? "") + "\n")
        }
        for p in places {
          let length = p.duration.map { " of " + clockTime(seconds: Int($0)) } ?? ""
          let place = p.position.map { "at " + clockTime(seconds: Int($0)) + length } ?? "played"
          print(place + "\t" + p.path.escapingControlCharacters)
        }
      }
    }

    struct Clear: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Forget the places kept: all of them, or those of a file or folder.")
      @Argument(help: "A file, or a folder: only its places (default: every one).")
      var path: String?

      func run() async throws {
        let library = openLibrary(scanning: false)
        let target = path.map(Folder.absolute)
        let forgotten: Int
        do { forgotten = try library.clearPlaces(under: target) } catch {
          die("cannot write the library index '\(library.path.shown)': \(error)")
        }
        let of = target.map { " under '\($0.shown)'" } ?? ""
        let recordings = forgotten == 1 ? "1 recording was" : "\(forgotten) recordings were"
        print(forgotten == 0 ? "no place was kept\(of)" : "forgot where \(recordings) left\(of)")
      }
    }
  }

  struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "scan",
      abstract: "Bring the index of a folder up to date, showing progress.",
      discussion: """
        Then the loudness of the files without ReplayGain tags is measured (EBU R128, with \
        libebur128), album by album, so that ReplayGain applies to them too; only files new or \
        changed since they were measured are. Interrupted, it keeps what it measured.
        """)
    @Argument(help: "The folder (default: the config's music_dir, else ~/Music).")
    var folder: String?
    @Flag(name: .customLong("no-measure"), help: "Only read the tags; measure no loudness.")
    var noMeasure = false

    func run() async throws {
      let settings = loadSettings()
      let target = Folder.absolute(folder ?? settings.musicDirectory ?? defaultMusicFolder())
      if !isDirectory(target) {
        var info = stat()
        guard stat(target, &info) != 0 else { die("cannot index '\(target.shown)': not a folder") }
        // A folder that is gone, with tracks still indexed under it: scanned, they go too.
        let indexed = Library.defaultPath().flatMap { path in
          access(FileName.c(path), F_OK) == 0 ? try? Library(path: path, checked: false) : nil
        }
        guard (try? indexed?.holdsTracks(under: target)) == true else {
          die("cannot index '\(target.shown)': no such folder")
        }
      }
      // Walked while the index is opened and checked.
      let walk = Library.walkAhead(target)
      let library = openLibrary()
      let onTerminal = isatty(2) == 1
      let report: ScanReport
      do {
        report = try library.scan(target, walked: walk) { p in
          guard p.toRead > 0 else { return }
          let line = progressLine(p)
          if onTerminal {
            FileHandleStderr.write("\r\u{1B}[K" + line)
          } else if p.read == p.toRead || Int(p.elapsed * 5) % 5 == 0 {
            FileHandleStderr.write(line + "\n")
          }
        }
      } catch {
        die("cannot write the library index '\(library.path.shown)': \(error)")
      }
      if onTerminal { FileHandleStderr.write("\r\u{1B}[K") }
      var line = "indexed '\(target.shown)': \(report.found) track\(report.found == 1 ? "" : "s")"
      line += " (\(report.read) read, \(report.removed) removed"
      line += report.unreadable > 0 ? ", \(report.unreadable) without readable tags)" : ")"
      print(line)
      guard !noMeasure, settings.measureLoudness else { return }
      measure(library, under: target, onTerminal: onTerminal)
    }

    /// The loudness of the tracks under `target` still to measure, with progress.
    private func measure(_ library: Library, under target: String, onTerminal: Bool) {
      var lastSaid = 0.0
      let measured: MeasureReport
      do {
        measured = try library.measureLoudness(
          under: target, parallel: processorCount(), measure: { Decoders.measureLoudness($0) },
          progress: { p in
            let line = "measuring loudness: " + p.summary
            if onTerminal {
              FileHandleStderr.write("\r\u{1B}[K" + line)
            } else if p.measured == p.toMeasure || p.elapsed - lastSaid >= 1 {
              lastSaid = p.elapsed
              FileHandleStderr.write(line + "\n")
            }
          })
      } catch {
        if onTerminal { FileHandleStderr.write("\n") }
        die("cannot write the library index '\(library.path.shown)': \(error)")
      }
      if onTerminal { FileHandleStderr.write("\r\u{1B}[K") }
      guard measured.measured + measured.failed + measured.albums > 0 else { return }
      var line =
        "measured the loudness of \(measured.measured) track\(measured.measured == 1 ? "" : "s")"
      if measured.failed > 0 { line += " (\(measured.failed) could not be)" }
      if measured.albums > 0 {
        line += "; \(measured.albums) album\(measured.albums == 1 ? "" : "s") gated as one"
      }
      print(line)
    }
  }

  struct Loudness: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "loudness",
      abstract: "List the loudness measured for the tracks under a folder or of a file.",
      discussion: """
        A line a track: its integrated loudness (LUFS, EBU R128), its true peak (dBTP), the \
        ReplayGain 2.0 gain that brings it to -18 LUFS, and its album's; or its tags' own gain, \
        or why it could not be measured, or that it is not yet.
        """)
    @Argument(help: "A folder or a file (default: the config's music_dir, else ~/Music).")
    var path: String?

    func run() async throws {
      let settings = loadSettings()
      let target = Folder.absolute(path ?? settings.musicDirectory ?? defaultMusicFolder())
      let library = openLibrary(scanning: false)
      let measured: [Library.Measurement]
      do { measured = try library.measurements(under: target) } catch {
        die("cannot read the library index '\(library.path.shown)': \(error)")
      }
      guard !measured.isEmpty else {
        die("nothing indexed under '\(target.shown)'; 'hark library scan' indexes and measures it")
      }
      for m in measured {
        let what: String
        switch (m.state, m.taggedGain, m.loudness) {
        case (_, let tagged?, _):
          what = "tagged: ReplayGain \(String(format2: tagged)) dB"
        case (1, nil, let l?):
          var line =
            "\(String(format1: l)) LUFS, peak \(String(format1: 20 * log10(m.truePeak ?? 1))) dBTP"
          line += ", gain \(String(format2: -18 - l)) dB"
          if let a = m.albumLoudness {
            line += "; album \(String(format1: a)) LUFS, gain \(String(format2: -18 - a)) dB"
          }
          what = line
        case (1, nil, nil): what = "silent: no gain"
        case (2, nil, _): what = "cannot be measured: " + (m.problem ?? "?")
        default: what = "not measured yet"
        }
        print("\(m.path.shown)\t\(what)")
      }
    }
  }

  struct TagLoudness: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "tag-loudness",
      abstract: "Write the loudness the index measured into the files, as ReplayGain 2.0 tags.",
      discussion: """
        Only when asked: hark never writes into your files otherwise. For each measured file \
        (one without ReplayGain tags, measured by 'hark library scan') under the folders or \
        files named: REPLAYGAIN_TRACK_GAIN and _PEAK, and the album's when its album was \
        measured whole, as the format keeps them (Vorbis comments in FLAC and Ogg, R128 gains \
        in Opus, ID3v2 in MP3, WAV and AIFF, iTunes atoms in MP4, APEv2 in WavPack). TagLib \
        writes a copy beside the file; it replaces the file only when every other tag of the \
        copy is as it was, so nothing else in it changes and a crash leaves it as it was.
        """)
    @Argument(help: "Folders or files (default: the config's music_dir, else ~/Music).")
    var paths: [String] = []
    @Flag(help: "Say what would be written, and write nothing.")
    var dryRun = false

    func run() async throws {
      let settings = loadSettings()
      let targets = (paths.isEmpty ? [settings.musicDirectory ?? defaultMusicFolder()] : paths)
        .map(Folder.absolute)
      let library = openLibrary(scanning: false)
      var items: [GainTagWriter.Item] = []
      var waiting = 0
      for target in targets {
        let measured: [Library.Measurement]
        do { measured = try library.measurements(under: target) } catch {
          die("cannot read the library index '\(library.path.shown)': \(error)")
        }
        if measured.isEmpty {
          die(
            "nothing indexed under '\(target.shown)'; 'hark library scan' indexes and measures it")
        }
        items += measured.compactMap(GainTagWriter.Item.init)
        waiting += measured.filter { $0.state == 0 && $0.taggedGain == nil }.count
      }
      if waiting > 0 {
        FileHandleStderr.write(
          "hark: \(waiting) file\(waiting == 1 ? " is" : "s are") not measured yet; "
            + "'hark library scan' measures them\n")
      }
      guard !items.isEmpty else {
        print("nothing to write: no file there is measured and without ReplayGain tags")
        return
      }
      func describe(_ i: GainTagWriter.Item) -> String {
        var line = "track \(String(format2: i.trackGain)) dB, peak \(String(format6: i.trackPeak))"
        if let g = i.albumGain { line += "; album \(String(format2: g)) dB" }
        return line
      }
      if dryRun {
        for i in items { print("would tag '\(i.path.shown)': \(describe(i))") }
        return
      }
      var failed = 0
      GainTagWriter.write(items) { item, problem in
        if let problem {
          failed += 1
          FileHandleStderr.write("hark: cannot tag '\(item.path.shown)': \(problem)\n")
        } else {
          print("tagged '\(item.path.shown)': \(describe(item))")
        }
      }
      print("wrote ReplayGain tags into \(items.count - failed) of \(items.count) files")
      if failed > 0 { throw ExitCode(1) }
    }
  }

  struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "search",
      abstract: "List the indexed tracks matching every word, by any field.",
      discussion: """
        Case and accents do not matter: 'zoe' finds 'Zoë', 'sigur ros' finds 'Sigur Rós', \
        'nguyen' finds 'Nguyễn'. One line per track, every track found, in the library's \
        order: artist, title, album and year, then the file.
        """)
    @Argument(help: "Words to find in the title, artist, album, genre, file name or year.")
    var words: [String]

    func validate() throws {
      guard words.contains(where: { $0.contains { $0 != " " } }) else {
        throw ValidationError("name a word to find, as in 'hark library search sigur ros'")
      }
    }

    func run() async throws {
      let library = openLibrary(scanning: false)
      let found: [IndexedTrack]
      do {
        found = try library.search(words.joined(separator: " "), limit: Int.max)
        if found.isEmpty, try library.count() == 0 {
          die(
            "the library index '\(library.path.shown)' holds no tracks yet: 'hark library scan'"
              + " indexes the music folder")
        }
      } catch {
        die("cannot read the library index '\(library.path.shown)': \(error)")
      }
      for t in found {
        let title = t.title ?? QueueLoader.title(fromPath: t.path)
        var line = (t.artist.map { $0 + " — " } ?? "") + title
        if let album = t.album { line += " — " + album }
        if let year = t.year { line += " (\(year))" }
        print(line.escapingControlCharacters + "   " + t.path.escapingControlCharacters)
      }
      if found.isEmpty { FileHandleStderr.write("hark: nothing in the library matches\n") }
    }
  }
}

/// The index at its usual place; dies with the reason when it cannot be opened. One that was
/// set aside is said, with what builds it again: this scan, else `hark library scan`.
private func openLibrary(scanning: Bool = true) -> Library {
  guard let path = Library.defaultPath() else { die("no home folder for the library index") }
  do {
    let library = try Library(path: path)
    if let aside = library.setAsideAs {
      let next = scanning ? "rebuilding it" : "'hark library scan' builds it again"
      FileHandleStderr.write("hark: \(aside); \(next)\n")
    }
    return library
  } catch {
    die("cannot open the library index '\(path.shown)': \(error)")
  }
}

/// "indexing: 1200 of 50000 files read, 850 a second, about 0:57 left".
private func progressLine(_ p: ScanProgress) -> String { "indexing: " + p.summary }

/// The processors online: how many tracks are measured at once.
func processorCount() -> Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

private func defaultMusicFolder() -> String {
  (environment("HOME") ?? ".") + "/Music"
}

extension String {
  /// "-6.54", "+1.20".
  fileprivate init(format2 value: Double) {
    let hundredths = Int((value * 100).rounded())
    let a = abs(hundredths)
    self = (hundredths < 0 ? "-" : "+") + "\(a / 100)." + (a % 100 < 10 ? "0" : "") + "\(a % 100)"
  }

  /// "0.987654".
  fileprivate init(format6 value: Double) {
    let millionths = Int((value * 1_000_000).rounded())
    let fraction = String(millionths % 1_000_000)
    self =
      "\(millionths / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
  }

  /// For messages: escaped as a terminal should see it.
  fileprivate var shown: String { escapingControlCharacters }
}
