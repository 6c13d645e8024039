import Glibc
import Platform

/// hark's bundled files (`assets/music`, `assets/sounds`): `$HARK_ASSETS` when set, else
/// `share/hark/assets` beside an installed binary's `bin/`, else the `assets/` folder found by
/// walking up from the executable (a build in `.build/…` inside the work tree).
enum Assets {
  static let directory: String? = {
    if let given = environment("HARK_ASSETS"), isDirectory(given) { return given }
    guard let exe = executablePath() else { return nil }
    var dir = parent(exe)
    let installed = parent(dir) + "/share/hark/assets"
    if isDirectory(installed + "/sounds") { return installed }
    while dir.count > 1 {
      if isDirectory(dir + "/assets/sounds") { return dir + "/assets" }
      dir = parent(dir)
    }
    return nil
  }()

  static var sounds: String? { directory.map { $0 + "/sounds" } }
  static var music: String? { directory.map { $0 + "/music" } }

  private static func parent(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
    return String(path[..<slash])
  }
}

func isDirectory(_ path: String) -> Bool {
  var st = stat()
  return stat(FileName.c(path), &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}

/// Runs a program to its end with stdin, stdout and stderr on /dev/null; its exit status, or
/// nil when it could not be started (not installed).
func runQuietly(_ program: String, _ arguments: [String]) -> Int32? {
  guard let pid = try? spawn(program, arguments) else { return nil }
  switch waitForChild(pid) {
  case .exited(let status): return status
  case .signaled(let signal): return 128 + signal
  case nil: return nil
  }
}
