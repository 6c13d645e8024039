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
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
  posix_spawn_file_actions_adddup2(&actions, 1, 2)
  let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
  defer { for p in argv { free(p) } }
  var pid: pid_t = 0
  guard posix_spawnp(&pid, program, &actions, nil, argv, environ) == 0 else { return nil }
  var status: Int32 = 0
  while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
  // WIFEXITED / WEXITSTATUS are macros Swift cannot import.
  return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}
