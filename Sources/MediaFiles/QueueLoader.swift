import Glibc
import Platform
import UserText

/// What the user asked to play, turned into files: folders are walked (sorted, hidden files
/// skipped), playlists (.m3u, .m3u8) read with paths relative to themselves; http(s) URLs
/// (internet radio) are passed on as they are.
public enum QueueLoader {
  /// The files found, and one line for each argument that could not be used.
  public static func load(_ arguments: [String]) -> (files: [String], problems: [String]) {
    var files: [String] = []
    var problems: [String] = []
    for argument in arguments {
      if isStreamURL(argument) {
        files.append(argument)
        continue
      }
      // A track of a cue sheet, as a queue names it ("Live.cue#3"), passed on as it is.
      if let reference = CueSheet.Reference(argument),
        access(FileName.c(reference.sheet), R_OK) == 0
      {
        files.append(argument)
        continue
      }
      var st = stat()
      guard stat(FileName.c(argument), &st) == 0 else {
        problems.append(
          "cannot play '\(argument)': \(String(cString: strerror(errno)).lowercased())")
        continue
      }
      switch st.st_mode & S_IFMT {
      case S_IFDIR:
        var walked = Walk()
        let found = walked.files(in: argument, st)
        problems += walked.problems
        if let line = walked.leftOutLine(argument) { problems.append(line) }
        if found.isEmpty && walked.problems.isEmpty {
          problems.append("cannot play '\(argument)': no audio files in it")
        }
        files += found
      case S_IFREG:
        if isPlaylist(argument) {
          files += readPlaylist(argument, problems: &problems)
        } else if fileExtension(argument) == "cue" {
          switch CueSheet.read(argument) {
          case .success(let sheet): files += sheet.references(argument)
          case .failure(let error): problems.append(error.description)
          }
        } else {
          files.append(argument)
        }
      default:
        // A FIFO would block the decoder for ever; a device or a socket is no file to play.
        problems.append(
          "cannot play '\(argument)': it is \(kindName(st.st_mode) ?? "not a regular file"), "
            + "not a sound file")
      }
    }
    return (files, problems)
  }

  /// `path` made absolute against the current directory, with "." and ".." resolved by name;
  /// a stream's URL as it is.
  public static func absolute(_ path: String) -> String {
    if QueueLoader.isStreamURL(path) { return path }
    var base: [Substring] = []
    if !path.hasPrefix("/") {
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      if getcwd(&buffer, buffer.count) != nil {
        let cwd = FileName.string(buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
        base = cwd.split(separator: "/")
      }
    }
    for part in path.split(separator: "/") {
      switch part {
      case ".": continue
      case "..": if !base.isEmpty { base.removeLast() }
      default: base.append(part)
      }
    }
    return "/" + base.joined(separator: "/")
  }

  /// Whether `text` names a stream hark plays (an http or https URL).
  public static func isStreamURL(_ text: String) -> Bool {
    let scheme = text.prefix(8).lowercased()
    return scheme.hasPrefix("http://") || scheme.hasPrefix("https://")
  }

  /// What libsndfile reads, in the player's own process.
  public static let soundFileExtensions: Set<String> = [
    "wav", "wave", "aif", "aiff", "aifc", "flac", "ogg", "oga", "opus", "mp3", "au", "snd", "caf",
    "w64",
  ]
  /// What the hark-ffmpeg helper decodes (FFmpeg): AAC and ALAC in MP4, raw AAC, WavPack,
  /// Monkey's Audio, TTA, WMA, AC-3 and E-AC-3, DTS, Matroska and WebM audio, Musepack, DSD.
  public static let ffmpegExtensions: Set<String> = [
    "m4a", "m4b", "mp4", "aac", "adts", "alac", "wv", "ape", "tta", "wma", "asf", "ac3", "eac3",
    "dts", "mka", "webm", "mpc", "dsf", "dff", "mp2", "spx",
  ]
  /// Whether `path` is played through the hark-ffmpeg helper: a stream, or one of its
  /// extensions.
  public static func needsFFmpeg(_ path: String) -> Bool {
    isStreamURL(path) || ffmpegExtensions.contains(fileExtension(path))
  }
  /// Every file a decoder of hark's reads, by its extension (lower case, no dot).
  public static let audioExtensions = soundFileExtensions.union(ffmpegExtensions)

  /// What sits beside the music in an album's folder and is no track: covers, booklets, rip
  /// logs and checksums, cue sheets, playlists. Left out of the queue and the browser quietly.
  public static let companionExtensions: Set<String> = [
    "jpg", "jpeg", "png", "gif", "bmp", "webp", "tif", "tiff", "txt", "nfo", "log", "md", "pdf",
    "rtf", "htm", "html", "cue", "m3u", "m3u8", "pls", "xspf", "sfv", "md5", "ffp", "accurip",
    "db", "ini", "url", "lnk", "json", "xml", "toc", "lrc",
  ]

  /// Why hark leaves a file out of a folder, or nil when it plays it or it is a companion (a
  /// cover, a booklet, a playlist...). A file with an extension no decoder of hark's reads,
  /// or none, is not left out silently: `hark ~/Music` said nothing of 61 .m4a files.
  public static func whyLeftOut(_ name: String) -> String? {
    let ext = fileExtension(name)
    if audioExtensions.contains(ext) || companionExtensions.contains(ext) { return nil }
    return ext.isEmpty
      ? "it has no extension that names a sound format" : "hark plays no .\(ext) files"
  }

  /// The extension of a file name or path, lower case, without the dot ("" for none).
  public static func fileExtension(_ path: String) -> String {
    // On the UTF-8 bytes: "/" and "." are never part of another character, and a scan of a
    // library asks this of every file (by Character, 14 % of a rescan's time).
    let utf8 = path.utf8
    var end = utf8.endIndex
    while end > utf8.startIndex, utf8[utf8.index(before: end)] == UInt8(ascii: "/") {
      end = utf8.index(before: end)
    }
    let name = utf8[..<end]
    let start = name.lastIndex(of: UInt8(ascii: "/")).map(utf8.index(after:)) ?? utf8.startIndex
    guard let dot = name[start...].lastIndex(of: UInt8(ascii: ".")), dot != start else { return "" }
    return String(Substring(name[utf8.index(after: dot)...])).lowercased()
  }

  /// Whether `path` names a playlist hark reads: M3U, M3U8 or PLS.
  public static func isPlaylist(_ path: String) -> Bool {
    ["m3u", "m3u8", "pls"].contains(fileExtension(path))
  }

  /// Audio files below `directory`, in name order, folders before the files after them (cue
  /// sheets as their tracks): what a folder load queues, and what the library index holds.
  public static func walk(_ directory: String) -> [String] {
    var st = stat()
    guard stat(FileName.c(directory), &st) == 0 else { return [] }
    var walked = Walk()
    return walked.files(in: directory, st)
  }

  /// The same files as `walk`, for a scan of the library that wants no order: each with the
  /// size and modification time (ns) of what it was read from (a cue sheet's tracks, of the
  /// sheet). The folders' names are not sorted (name order folds every name), each file is
  /// looked at through its folder (`fstatat`), not by its whole path again, and the folders
  /// are walked by `threads` threads at once (the caller's and `threads - 1` more), each
  /// taking the next folder any of them found: a rescan of a library is mostly the kernel
  /// looking at 50,000 files, which two cores do in about half the time of one.
  public static func walkStamped(
    _ directory: String, threads: Int = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  ) -> StampedFiles {
    var st = stat()
    guard stat(FileName.c(directory), &st) == 0 else { return StampedFiles() }
    let folders = FolderQueue(first: (directory, st))
    let visited = VisitedFolders()
    @Sendable func walkFolders() -> StampedFiles {
      var walked = Walk(visited: visited)
      walked.inNameOrder = false
      var found = StampedFiles()
      while let (folder, st) = folders.next() {
        var below: [(String, stat)] = []
        for entry in walked.entries(of: folder, st) {
          switch entry {
          case .file(let path, let size, let mtime):
            found.append(path: path, size: size, mtime: mtime)
          case .folder(let path, let st): below.append((path, st))
          }
        }
        folders.done(adding: below)
      }
      return found
    }
    let parts = Locked<[StampedFiles]>([])
    let others = (1..<max(1, threads)).compactMap { _ in
      try? JoinableThread(named: "hark-walk") {
        let found = walkFolders()
        parts.withLock { $0.append(found) }
      }
    }
    let mine = walkFolders()
    for thread in others { thread.join() }
    return parts.withLock { StampedFiles(joining: [mine] + $0) }
  }

  /// A file's size and modification time in ns (what a scan compares), from its `stat`.
  static func stamp(_ st: stat) -> (size: Int, mtime: Int) {
    (Int(st.st_size), Int(st.st_mtim.tv_sec) * 1_000_000_000 + Int(st.st_mtim.tv_nsec))
  }

  /// The folders of tree still to walk, for the threads of `walkStamped`: each takes the next
  /// one, and gives back the folders it found in it; the walk is over when none is left and
  /// no thread is walking one (which could still find more).
  final class FolderQueue: @unchecked Sendable {
    private let state: Locked<(pending: [(String, stat)], walking: Int)>

    init(first: (String, stat)) { state = Locked(([first], 0)) }

    /// The next folder to walk; nil once the walk is over.
    func next() -> (String, stat)? {
      while true {
        let taken: (String, stat)?? = state.withLock { s in
          if let folder = s.pending.popLast() {
            s.walking += 1
            return .some(folder)
          }
          return s.walking == 0 ? .some(nil) : nil
        }
        if let taken { return taken }
        // Another thread is walking a folder that may hold more: a moment, then look again.
        usleep(200)
      }
    }

    /// The folder taken last is walked; these were found in it.
    func done(adding found: [(String, stat)]) {
      state.withLock { s in
        s.pending += found
        s.walking -= 1
      }
    }
  }

  /// The folders a walk has been in (by device and inode), shared by the threads of one walk.
  final class VisitedFolders: Sendable {
    private let seen = Locked<Set<[UInt64]>>([])

    /// Whether `st`'s folder is new to the walk (and now taken).
    func enter(_ st: stat) -> Bool {
      seen.withLock { $0.insert([UInt64(st.st_dev), UInt64(st.st_ino)]).inserted }
    }
  }

  /// One walk of a folder tree: each folder visited once (by device and inode), so that links
  /// back up the tree (a folder holding links to itself grew without end) add nothing; regular
  /// files only (a FIFO among the tracks would block the decoder for ever); unreadable folders
  /// said, once each; files of no format hark plays counted (`leftOut`), to be said once.
  struct Walk {
    private let visited: VisitedFolders
    private(set) var problems: [String] = []
    /// Files left out, by extension ("" for none).
    private(set) var leftOut: [String: Int] = [:]
    /// Each folder's names in name order (as a queue lists them), else as the folder has them.
    var inNameOrder = true

    init(visited: VisitedFolders = VisitedFolders()) { self.visited = visited }

    /// What a folder holds that a walk takes, in its order: an audio file (a cue sheet's track)
    /// with its size and modification time (the sheet's), or a folder below.
    enum Entry {
      case file(path: String, size: Int, mtime: Int)
      case folder(path: String, stat)
    }

    /// One line for the files left out below `folder`, or nil when there were none.
    func leftOutLine(_ folder: String) -> String? {
      let count = leftOut.values.reduce(0, +)
      guard count > 0 else { return nil }
      let kinds = leftOut.keys.sorted().prefix(5).map { $0.isEmpty ? "no extension" : "." + $0 }
      let more = leftOut.count > 5 ? ", …" : ""
      return "left out \(count) file\(count == 1 ? "" : "s") in '\(folder)' of no format hark "
        + "plays (\(kinds.joined(separator: ", "))\(more))"
    }

    /// The audio files below `directory` (whose `stat` is `st`), folders walked where they
    /// come.
    mutating func files(in directory: String, _ st: stat) -> [String] {
      var out: [String] = []
      for entry in entries(of: directory, st) {
        switch entry {
        case .file(let path, _, _): out.append(path)
        case .folder(let path, let st): out += files(in: path, st)
        }
      }
      return out
    }

    /// What `directory` (whose `stat` is `st`) holds for the walk; nothing when the walk has
    /// been in it already, or it cannot be read (said in `problems`).
    mutating func entries(of directory: String, _ st: stat) -> [Entry] {
      guard visited.enter(st) else { return [] }
      guard let dir = opendir(FileName.c(directory)) else {
        problems.append(
          "cannot read the folder '\(directory)': \(String(cString: strerror(errno)).lowercased())")
        return []
      }
      // Open until its files are looked at, through it.
      defer { closedir(dir) }
      let fd = dirfd(dir)
      var names: [String] = []
      while let entry = readdir(dir) {
        // Bytes, as the file system has them: a name that is not UTF-8 is kept whole.
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          FileName.string(Array(raw.prefix { $0 != 0 }))
        }
        if !name.hasPrefix(".") { names.append(name) }
      }
      // An album ripped to one file with its cue sheet is its tracks: the sheet stands for the
      // file it cuts (a sheet that cannot be read leaves the file as it is).
      let sheets = QueueLoader.cueSheets(in: directory, names)
      let cut = Set(sheets.values.flatMap(\.files))
      var out: [Entry] = []
      for name in inNameOrder ? names.sorted(byName: { $0 }) : names {
        let path = FileName.join(directory, name)
        var st = stat()
        let found = fstatat(fd, FileName.c(name), &st, 0) == 0
        if let sheet = sheets[path] {
          let (size, mtime) = found ? QueueLoader.stamp(st) : (-1, -1)
          out += sheet.references(path).map { .file(path: $0, size: size, mtime: mtime) }
          continue
        }
        if cut.contains(path) || !found { continue }
        switch st.st_mode & S_IFMT {
        case S_IFDIR:
          out.append(.folder(path: path, st))
        case S_IFREG:
          if QueueLoader.audioExtensions.contains(QueueLoader.fileExtension(name)) {
            let (size, mtime) = QueueLoader.stamp(st)
            out.append(.file(path: path, size: size, mtime: mtime))
          } else if QueueLoader.whyLeftOut(name) != nil {
            leftOut[QueueLoader.fileExtension(name), default: 0] += 1
          }
        default:
          continue  // a FIFO, a device, a socket: never a track
        }
      }
      return out
    }
  }

  static func readPlaylist(_ path: String, problems: inout [String]) -> [String] {
    guard let f = fopen(FileName.c(path), "r") else {
      problems.append(
        "cannot read playlist '\(path)': \(String(cString: strerror(errno)).lowercased())")
      return []
    }
    defer { fclose(f) }
    let base =
      path.contains("/") ? String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) : "."
    var out: [String] = []
    let pls = fileExtension(path) == "pls"
    var line = [CChar](repeating: 0, count: 4096)
    while fgets(&line, Int32(line.count), f) != nil {
      // A line's bytes as they are: a Latin-1 .m3u naming Latin-1 files names them exactly.
      var entry = FileName.string(line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
      // "\r\n" is one Character in Swift: trim by scalars so Windows line endings go too.
      while let last = entry.unicodeScalars.last, last == "\n" || last == "\r" {
        entry.unicodeScalars.removeLast()
      }
      if entry.hasPrefix("\u{FEFF}") { entry.removeFirst() }
      if pls {
        // [playlist], then File1=..., Title1=..., Length1=...: only the files.
        guard entry.lowercased().hasPrefix("file"), let eq = entry.firstIndex(of: "=") else {
          continue
        }
        entry = String(entry[entry.index(after: eq)...])
        if entry.hasPrefix("file://") { entry = String(entry.dropFirst(7)) }
      }
      if entry.isEmpty || entry.hasPrefix("#") { continue }
      out.append(entry.hasPrefix("/") || isStreamURL(entry) ? entry : base + "/" + entry)
    }
    return out
  }

  /// The readable cue sheets among `names` in `directory` whose audio files are there, by path.
  public static func cueSheets(in directory: String, _ names: [String]) -> [String: CueSheet] {
    var sheets: [String: CueSheet] = [:]
    for name in names where fileExtension(name) == "cue" {
      let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
      guard case .success(let sheet) = CueSheet.read(path),
        sheet.files.allSatisfy({ access(FileName.c($0), R_OK) == 0 })
      else { continue }
      sheets[path] = sheet
    }
    return sheets
  }

  /// A title for a file without tags: its name without folder and extension ("Live #3" for
  /// the third track of Live.cue).
  public static func title(fromPath path: String) -> String {
    if isStreamURL(path) {
      // "radio.example.org/jazz.mp3": the host and path, without the scheme or a query.
      let rest = path.drop { $0 != ":" }.dropFirst(3)
      let shown = rest.prefix { $0 != "?" && $0 != "#" }
      return String(shown.hasSuffix("/") ? shown.dropLast() : shown)
    }
    if let reference = CueSheet.Reference(path) {
      return title(fromPath: reference.sheet) + " #\(reference.track)"
    }
    let name = path.split(separator: "/").last.map(String.init) ?? path
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
    return String(name[..<dot])
  }
}

extension String {
  /// Name order as people expect: "track 2" before "track 10", letters without case or accents
  /// ("Ágætis" among the A's, "Øresund" among the O's, as search folds them). Runs of digits
  /// compare by value, however long (dates, catalogue numbers), without converting them. Names
  /// equal that way ("Track01", "track1") fall back to their characters, so the order is total
  /// and the library and the queue list a folder alike. To sort many names, `NameOrder` folds
  /// each once.
  public func localizedStandardLess(_ other: String) -> Bool {
    NameOrder(self) < NameOrder(other)
  }
}

/// A name's place in name order (`String.localizedStandardLess`), its folding done once: for a
/// sort of many names, where folding both at every comparison would cost more than the sort.
public struct NameOrder: Comparable, Sendable {
  public let name: String
  private let folded: [Unicode.Scalar]

  public init(_ name: String) {
    self.name = name
    folded = SearchText.foldedScalars(name)
  }

  public static func == (a: NameOrder, b: NameOrder) -> Bool { a.name == b.name }

  public static func < (x: NameOrder, y: NameOrder) -> Bool {
    let a = x.folded
    let b = y.folded
    var i = 0
    var j = 0
    func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }
    while i < a.count && j < b.count {
      if isDigit(a[i]) && isDigit(b[j]) {
        var ei = i
        while ei < a.count && isDigit(a[ei]) { ei += 1 }
        var ej = j
        while ej < b.count && isDigit(b[ej]) { ej += 1 }
        // The value: leading zeros dropped, then the longer run is larger, then digit by digit.
        var si = i
        while si < ei - 1 && a[si] == "0" { si += 1 }
        var sj = j
        while sj < ej - 1 && b[sj] == "0" { sj += 1 }
        if ei - si != ej - sj { return ei - si < ej - sj }
        for (p, q) in zip(a[si..<ei], b[sj..<ej]) where p != q { return p < q }
        i = ei
        j = ej
        continue
      }
      if a[i] != b[j] { return a[i] < b[j] }
      i += 1
      j += 1
    }
    if a.count - i != b.count - j { return a.count - i < b.count - j }
    return x.name < y.name
  }
}

extension Sequence {
  /// The elements sorted by the names `name` gives them, in name order, each name folded once.
  public func sorted(byName name: (Element) -> String) -> [Element] {
    map { (NameOrder(name($0)), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
  }
}
