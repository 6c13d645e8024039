import ArgumentParser
import Glibc
import LibraryIndex
import Platform
import PlayerEngine
import TerminalUI

/// `hark library`: the library index on the command line: scan a folder into it (only what
/// changed is read again), and search it.
struct LibraryCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "library",
    abstract: "Index the music folder's tags, and search the index.",
    discussion: """
      The index is an SQLite database in $XDG_CACHE_HOME/hark (~/.cache/hark), read by TagLib \
      in the hark-tags helper. A scan reads only files that are new or changed (size or \
      modification time) and drops files that are gone. A damaged index is set aside and \
      rebuilt; it is a cache of the files' own tags, never the only copy of anything.
      """,
    subcommands: [Scan.self, Search.self])

  struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "scan",
      abstract: "Bring the index of a folder up to date, showing progress.")
    @Argument(help: "The folder (default: the config's music_dir, else ~/Music).")
    var folder: String?

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
      let library = openLibrary()
      let onTerminal = isatty(2) == 1
      let report: ScanReport
      do {
        report = try library.scan(target) { p in
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

private func defaultMusicFolder() -> String {
  (environment("HOME") ?? ".") + "/Music"
}

extension String {
  /// For messages: escaped as a terminal should see it.
  fileprivate var shown: String { escapingControlCharacters }
}
