import Glibc

/// What the user asked to play, turned into files: folders are walked (sorted, hidden files
/// skipped), playlists (.m3u, .m3u8) read with paths relative to themselves.
public enum QueueLoader {
  /// The files found, and one line for each argument that could not be used.
  public static func load(_ arguments: [String]) -> (files: [String], problems: [String]) {
    var files: [String] = []
    var problems: [String] = []
    for argument in arguments {
      var st = stat()
      guard stat(argument, &st) == 0 else {
        problems.append(
          "cannot play '\(argument)': \(String(cString: strerror(errno)).lowercased())")
        continue
      }
      if (st.st_mode & S_IFMT) == S_IFDIR {
        let found = walk(argument)
        if found.isEmpty { problems.append("cannot play '\(argument)': no audio files in it") }
        files += found
      } else if isPlaylist(argument) {
        files += readPlaylist(argument, problems: &problems)
      } else {
        files.append(argument)
      }
    }
    return (files, problems)
  }

  static let audioExtensions: Set<String> = [
    "wav", "wave", "aif", "aiff", "aifc", "flac", "ogg", "oga", "opus", "mp3", "au", "snd", "caf",
    "w64",
  ]

  static func isPlaylist(_ path: String) -> Bool {
    let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
    return ext == "m3u" || ext == "m3u8"
  }

  /// Audio files below `directory`, in name order, folders before the files after them.
  static func walk(_ directory: String) -> [String] {
    guard let dir = opendir(directory) else { return [] }
    var names: [String] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if !name.hasPrefix(".") { names.append(name) }
    }
    closedir(dir)
    var out: [String] = []
    for name in names.sorted(by: { $0.localizedStandardLess($1) }) {
      let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
      var st = stat()
      guard stat(path, &st) == 0 else { continue }
      if (st.st_mode & S_IFMT) == S_IFDIR {
        out += walk(path)
      } else if let ext = name.split(separator: ".").last,
        audioExtensions.contains(ext.lowercased())
      {
        out.append(path)
      }
    }
    return out
  }

  static func readPlaylist(_ path: String, problems: inout [String]) -> [String] {
    guard let f = fopen(path, "r") else {
      problems.append(
        "cannot read playlist '\(path)': \(String(cString: strerror(errno)).lowercased())")
      return []
    }
    defer { fclose(f) }
    let base =
      path.contains("/") ? String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) : "."
    var out: [String] = []
    var line = [CChar](repeating: 0, count: 4096)
    while fgets(&line, Int32(line.count), f) != nil {
      var entry = String(
        decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      while let last = entry.last, last == "\n" || last == "\r" { entry.removeLast() }
      if entry.hasPrefix("\u{FEFF}") { entry.removeFirst() }
      if entry.isEmpty || entry.hasPrefix("#") { continue }
      out.append(entry.hasPrefix("/") ? entry : base + "/" + entry)
    }
    return out
  }

  /// A title for a file without tags: its name without folder and extension.
  public static func title(fromPath path: String) -> String {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
    return String(name[..<dot])
  }
}

extension String {
  /// Name order as people expect: "track 2" before "track 10".
  func localizedStandardLess(_ other: String) -> Bool {
    var a = self.unicodeScalars.makeIterator()
    var b = other.unicodeScalars.makeIterator()
    var ca = a.next()
    var cb = b.next()
    while let x = ca, let y = cb {
      if x.properties.numericType != nil && y.properties.numericType != nil,
        let dx = Int(String(x)), let dy = Int(String(y))
      {
        var nx = dx
        var ny = dy
        ca = a.next()
        while let c = ca, let d = Int(String(c)) { nx = nx * 10 + d; ca = a.next() }
        cb = b.next()
        while let c = cb, let d = Int(String(c)) { ny = ny * 10 + d; cb = b.next() }
        if nx != ny { return nx < ny }
        continue
      }
      let lx = String(x).lowercased()
      let ly = String(y).lowercased()
      if lx != ly { return lx < ly }
      ca = a.next()
      cb = b.next()
    }
    return ca == nil && cb != nil
  }
}
