import Glibc
import Platform

/// Why the session server's directory cannot be used.
public struct SessionPathError: Error, Sendable, Hashable, CustomStringConvertible {
  public let message: String
  public var description: String { message }
}

/// Where the session server and its clients meet, and where the server keeps its state.
///
/// The socket lives in `$XDG_RUNTIME_DIR/hark/` (a private, per-login directory); silent mode is
/// a setting and survives logins in `$XDG_STATE_HOME/hark/`.
public struct SessionPaths: Sendable, Hashable {
  /// `$XDG_RUNTIME_DIR/hark`, mode 0700.
  public var directory: String
  public var socket: String { directory + "/session.sock" }
  /// Where the user's hark player (the one a plain `hark` attaches to) serves its interfaces.
  public var playerSocket: String { directory + "/player.sock" }
  /// Held with flock(2) by that player; holds its pid.
  public var playerLock: String { directory + "/player.lock" }
  /// Held with flock(2) by the one running server; holds its pid.
  public var lock: String { directory + "/session.lock" }
  /// The simulated outputs (`hark route plug`): they last as long as the login.
  public var routes: String { directory + "/routes.json" }
  /// `$XDG_STATE_HOME/hark`.
  public var stateDirectory: String
  /// Silent mode, kept across logins like a physical switch.
  public var settings: String { stateDirectory + "/session.json" }
  /// Where an autospawned server writes its log.
  public var log: String { stateDirectory + "/session-server.log" }

  public init(directory: String, stateDirectory: String) {
    self.directory = directory
    self.stateDirectory = stateDirectory
  }

  /// The paths for this user, from `$XDG_RUNTIME_DIR`, `$XDG_STATE_HOME` and `$HOME`.
  public static func fromEnvironment() throws(SessionPathError) -> SessionPaths {
    guard let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty else {
      // Where scripts/quickstart puts it when a login did not: a second terminal asks for the
      // server the player there already runs, so say exactly what to export.
      if let running = runningElsewhere() {
        throw SessionPathError(
          message:
            "$XDG_RUNTIME_DIR is not set; hark's session server runs under '\(running)':"
            + " export XDG_RUNTIME_DIR=\(running)")
      }
      throw SessionPathError(
        message:
          "$XDG_RUNTIME_DIR is not set; the session server needs the private per-user runtime"
          + " directory a login provides (or: export XDG_RUNTIME_DIR=/run/user/$(id -u))")
    }
    guard runtime.hasPrefix("/") else {
      throw SessionPathError(message: "$XDG_RUNTIME_DIR '\(runtime)' is not an absolute path")
    }
    var st = stat()
    guard stat(runtime, &st) == 0 else {
      throw SessionPathError(
        message: "$XDG_RUNTIME_DIR '\(runtime)' cannot be used (\(SystemError.last("").reason))")
    }
    guard (st.st_mode & S_IFMT) == S_IFDIR else {
      throw SessionPathError(message: "$XDG_RUNTIME_DIR '\(runtime)' is not a directory")
    }
    guard st.st_uid == geteuid() else {
      throw SessionPathError(message: "$XDG_RUNTIME_DIR '\(runtime)' belongs to another user")
    }
    guard access(runtime, W_OK | X_OK) == 0 else {
      throw SessionPathError(message: "$XDG_RUNTIME_DIR '\(runtime)' is not writable")
    }
    let directory = runtime + "/hark"
    // sun_path holds 108 bytes with its terminating NUL.
    guard (directory + "/session.sock").utf8.count < 108 else {
      throw SessionPathError(
        message: "$XDG_RUNTIME_DIR '\(runtime)' is too long a path for a Unix socket")
    }
    let state: String
    if let base = XDGDirectory.state.path, base.hasPrefix("/") {
      state = base + "/hark"
    } else {
      state = directory
    }
    return SessionPaths(directory: directory, stateDirectory: state)
  }

  /// Creates the runtime directory (0700) if needed and checks that it is ours and private.
  public func prepareDirectory() throws(SessionPathError) {
    if mkdir(directory, 0o700) != 0, errno != EEXIST {
      throw SessionPathError(
        message: "cannot create '\(directory)' (\(SystemError.last("").reason))")
    }
    var st = stat()
    guard lstat(directory, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
      throw SessionPathError(message: "'\(directory)' is not a directory")
    }
    guard st.st_uid == geteuid() else {
      throw SessionPathError(message: "'\(directory)' belongs to another user")
    }
    if st.st_mode & 0o077 != 0 { chmod(directory, 0o700) }
  }
}

/// A runtime directory of this user's, where a login or scripts/quickstart would put one, that
/// holds a session server's socket; nil when there is none.
private func runningElsewhere() -> String? {
  let uid = geteuid()
  let tmp = environment("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
  for dir in ["/run/user/\(uid)", "\(tmp)/hark-runtime-\(uid)"] {
    var st = stat()
    guard lstat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == uid else {
      continue
    }
    var sock = stat()
    if lstat(dir + "/hark/session.sock", &sock) == 0, (sock.st_mode & S_IFMT) == S_IFSOCK {
      return dir
    }
  }
  return nil
}
