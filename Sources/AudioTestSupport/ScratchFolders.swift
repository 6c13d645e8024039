import Glibc

/// Empty folders for tests, all under one folder of the test process's in /tmp, which is
/// removed with everything in it when the process exits: a test needs no cleanup of its own,
/// and a run leaves nothing behind (a run that crashes leaves that one folder).
public enum ScratchFolders {
  /// A new empty folder, its name beginning with `prefix`.
  public static func make(_ prefix: String) -> String {
    folder(in: ownFolder, named: prefix)
  }

  /// A new folder in `parent` (mkdtemp), its name `prefix` and six random characters.
  private static func folder(in parent: String, named prefix: String) -> String {
    var template = Array((parent + "/" + prefix + ".XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
    }
    guard let made else { preconditionFailure("cannot make a folder in \(parent): errno \(errno)") }
    return made
  }

  private static let ownFolder: String = {
    let made = folder(in: "/tmp", named: "hark-tests")
    removedAtExit = made
    atexit {
      // Made writable first: a test may leave a folder it made read-only.
      guard let folder = ScratchFolders.removedAtExit else { return }
      _ = system("chmod -R u+rwx '\(folder)' 2>/dev/null; rm -rf '\(folder)'")
    }
    return made
  }()

  nonisolated(unsafe) private static var removedAtExit: String?
}
