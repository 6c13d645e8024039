import Glibc
import Platform

/// hark's own playlists: the queue saved under a name, as M3U8 (a format every player reads),
/// in `$XDG_DATA_HOME/hark/playlists` (else `~/.local/share/hark/playlists`).
public enum Playlists {
  /// The folder, or nil without a home.
  public static func folder() -> String? { XDGDirectory.data.path.map { $0 + "/hark/playlists" } }

  /// Why `name` cannot name a playlist, or nil when it can.
  public static func problem(with name: String) -> String? {
    if name.trimmingSpaces.isEmpty { return "a playlist needs a name" }
    if name.contains("/") { return "a playlist's name cannot hold '/'" }
    if name.hasPrefix(".") { return "a playlist's name cannot start with '.'" }
    if name.utf8.count > 200 { return "the name is too long" }
    return nil
  }

  /// Writes `paths` (absolute) as the playlist `name`, replacing one of that name (written
  /// beside it and renamed over it, so that a failure leaves the old one whole). The path
  /// written, and whether it replaced one; or why not, in plain words.
  public static func save(_ paths: [String], as name: String, in given: String? = nil)
    -> Result<(path: String, replaced: Bool), SaveError>
  {
    if let problem = problem(with: name) { return .failure(SaveError(message: problem)) }
    guard let folder = given ?? folder() else {
      return .failure(SaveError(message: "no home folder to keep playlists in"))
    }
    makeDirectories(folder)
    let path = folder + "/" + name.trimmingSpaces + ".m3u8"
    let replaced = access(path, F_OK) == 0
    let temporary = path + ".saving"
    guard let f = fopen(temporary, "w") else {
      return .failure(SaveError(message: "cannot write '\(path)': \(systemReason())"))
    }
    // Each name as the file system has it: one that is not UTF-8 is written as its bytes
    // (`FileName`), so that the playlist names that very file for hark and every other player.
    var bytes = Array("#EXTM3U\n".utf8)
    for p in paths { bytes += FileName.bytes(p) + [0x0A] }
    let written = fwrite(bytes, 1, bytes.count, f) == bytes.count
    let closed = fclose(f) == 0
    guard written, closed, rename(temporary, path) == 0 else {
      let reason = systemReason()
      unlink(temporary)
      return .failure(SaveError(message: "cannot write '\(path)': \(reason)"))
    }
    return .success((path, replaced))
  }

  public struct SaveError: Error, Equatable, Sendable {
    public var message: String
  }

  private static func systemReason() -> String { String(cString: strerror(errno)).lowercased() }
}

extension String {
  fileprivate var trimmingSpaces: String {
    var s = Substring(self)
    while s.first == " " { s = s.dropFirst() }
    while s.last == " " { s = s.dropLast() }
    return String(s)
  }
}
