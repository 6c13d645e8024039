import Glibc
import Platform

/// Finds event sounds by name, as the freedesktop sound theme specification says: in the
/// current theme, then the themes it inherits, then "freedesktop", then unthemed; each name
/// truncated at its last '-' and tried again ("phone-incoming-call" → "phone-incoming" →
/// "phone"); the "stereo" output profile; the locale's variants before the plain file. Past all
/// that, hark's own sounds (`fallback`), so a machine without a sound theme still has them.
public struct SoundTheme: Sendable {
  /// The theme asked for.
  public var name: String
  /// Folders holding themes, in order (`$XDG_DATA_HOME/sounds`, then each of
  /// `$XDG_DATA_DIRS/sounds`).
  public var baseDirectories: [String]
  /// hark's own sounds, named like the theme's (`phone-incoming-call.oga`).
  public var fallback: String?
  /// LC_MESSAGES-style locale ("de_CH.UTF-8@euro"), or nil for none.
  public var locale: String?

  public init(name: String, baseDirectories: [String], fallback: String?, locale: String? = nil) {
    self.name = name
    self.baseDirectories = baseDirectories
    self.fallback = fallback
    self.locale = locale
  }

  /// The theme from the environment: base directories from the XDG variables, the locale from
  /// LC_ALL, LC_MESSAGES or LANG.
  public static func fromEnvironment(name: String, fallback: String?) -> SoundTheme {
    func env(_ n: String) -> String? {
      environment(n).flatMap { $0.isEmpty ? nil : $0 }
    }
    var bases: [String] = []
    if let data = env("XDG_DATA_HOME") {
      bases.append(data + "/sounds")
    } else if let home = env("HOME") {
      bases.append(home + "/.local/share/sounds")
    }
    let dirs = env("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share"
    bases += dirs.split(separator: ":").map { $0 + "/sounds" }
    let locale = env("LC_ALL") ?? env("LC_MESSAGES") ?? env("LANG")
    return SoundTheme(name: name, baseDirectories: bases, fallback: fallback, locale: locale)
  }

  static let extensions = ["disabled", "oga", "ogg", "wav"]

  /// What a lookup found.
  public enum Found: Equatable, Sendable {
    /// Play this file.
    case file(String)
    /// The theme turns this sound off (a `.disabled` file): play nothing.
    case disabled
    /// Nothing anywhere by that name.
    case missing
  }

  /// The file for the sound `soundName`.
  public func lookup(_ soundName: String) -> Found {
    var visited: Set<String> = []
    var chain = [name]
    var i = 0
    // The inheritance chain, breadth first, each theme once, "freedesktop" last.
    while i < chain.count {
      let theme = chain[i]
      i += 1
      guard visited.insert(theme).inserted else { continue }
      for parent in inherits(theme) where !visited.contains(parent) && parent != "freedesktop" {
        chain.append(parent)
      }
    }
    var themes = chain.filter { $0 != "freedesktop" }
    var seen: Set<String> = []
    themes = themes.filter { seen.insert($0).inserted }
    themes.append("freedesktop")
    for theme in themes {
      let dirs = directories(theme)
      for variant in Self.truncations(of: soundName) {
        for base in baseDirectories {
          for dir in dirs {
            if let found = find(variant, in: base + "/" + theme + "/" + dir) { return found }
          }
        }
      }
    }
    for variant in Self.truncations(of: soundName) {
      for base in baseDirectories {
        if let found = find(variant, in: base) { return found }
      }
    }
    if let fallback {
      for variant in Self.truncations(of: soundName) {
        if let found = find(variant, in: fallback, localized: false) { return found }
      }
    }
    return .missing
  }

  /// "a-b-c" → ["a-b-c", "a-b", "a"].
  static func truncations(of name: String) -> [String] {
    var out = [name]
    var n = Substring(name)
    while let dash = n.lastIndex(of: "-") {
      n = n[..<dash]
      if !n.isEmpty { out.append(String(n)) }
    }
    return out
  }

  /// Locale folders to try, most specific first, then the plain folder ("").
  var localeVariants: [String] {
    var out: [String] = []
    if var l = locale, l != "C", l != "POSIX" {
      if let dot = l.firstIndex(of: "."), let at = l.firstIndex(of: "@") {
        l = String(l[..<dot]) + String(l[at...])  // the encoding never names a folder
      } else if let dot = l.firstIndex(of: ".") {
        l = String(l[..<dot])
      }
      out.append(l)
      if let at = l.firstIndex(of: "@") {
        l = String(l[..<at])
        out.append(l)
      }
      if let us = l.firstIndex(of: "_") { out.append(String(l[..<us])) }
    }
    out.append("C")
    out.append("")
    return out
  }

  private func find(_ sound: String, in dir: String, localized: Bool = true) -> Found? {
    for loc in localized ? localeVariants : [""] {
      let folder = loc.isEmpty ? dir : dir + "/" + loc
      for ext in Self.extensions {
        let path = folder + "/" + sound + "." + ext
        if access(path, R_OK) == 0 { return ext == "disabled" ? .disabled : .file(path) }
      }
    }
    return nil
  }

  /// The theme's index.theme: the first found in the base directories.
  private func index(_ theme: String) -> [String: String] {
    for base in baseDirectories {
      if let text = readSmallFile(base + "/" + theme + "/index.theme") {
        return Self.parseIndex(text)
      }
    }
    return [:]
  }

  private func inherits(_ theme: String) -> [String] {
    (index(theme)["Inherits"] ?? "").split(separator: ",").map {
      String($0.trimmingSpaces)
    }.filter { !$0.isEmpty }
  }

  /// The theme's folders, stereo first: its declared Directories with the stereo profile, then
  /// the rest; "stereo" when it declares none.
  private func directories(_ theme: String) -> [String] {
    let listed = (index(theme)["Directories"] ?? "").split(whereSeparator: {
      $0 == "," || $0 == " "
    })
    .map(String.init).filter { !$0.isEmpty }
    if listed.isEmpty { return ["stereo"] }
    return listed.filter { $0 == "stereo" } + listed.filter { $0 != "stereo" }
  }

  /// The [Sound Theme] group's keys.
  static func parseIndex(_ text: String) -> [String: String] {
    var out: [String: String] = [:]
    var inGroup = false
    for raw in text.unicodeScalars.split(separator: "\n") {
      let line = String(String.UnicodeScalarView(raw)).trimmingSpaces
      if line.hasPrefix("[") {
        inGroup = line == "[Sound Theme]"
        continue
      }
      guard inGroup, !line.hasPrefix("#"), let eq = line.firstIndex(of: "=") else { continue }
      let key = String(line[..<eq]).trimmingSpaces
      if !key.contains("[") { out[key] = String(line[line.index(after: eq)...]).trimmingSpaces }
    }
    return out
  }
}

extension StringProtocol {
  fileprivate var trimmingSpaces: String {
    var s = Substring(self)
    while let f = s.unicodeScalars.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
    while let l = s.unicodeScalars.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
    return String(s)
  }
}

/// A small text file's contents, or nil.
func readSmallFile(_ path: String) -> String? {
  guard let f = fopen(path, "r") else { return nil }
  defer { fclose(f) }
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 4096)
  while bytes.count < 1 << 16 {
    let n = fread(&buffer, 1, buffer.count, f)
    if n <= 0 { break }
    bytes += buffer[0..<n]
  }
  return String(decoding: bytes, as: UTF8.self)
}
