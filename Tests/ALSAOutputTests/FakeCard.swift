import Glibc
import Testing

/// The fake card's plugin, built with gcc once per test run (each build is a burst of CPU that
/// the timing tests running beside these would feel) and removed when the process exits.
actor FakeCardPlugin {
  static let shared = FakeCardPlugin()
  private var built: Result<String, BuildFailure>?

  struct BuildFailure: Error, CustomStringConvertible {
    var description: String
  }

  /// The path of libasound_module_ctl_fakejack.so, built on first use.
  func library() async -> Result<String, BuildFailure> {
    if let built { return built }
    let directory = makeTemporaryDirectory("hark-fakejack-plugin")
    pluginDirectory = strdup(directory)
    atexit { if let path = pluginDirectory { removeDirectory(String(cString: path)) } }
    let source = FakeCard.sourceDirectory + "/FakeJackCard/fakejack.c"
    let library = directory + "/libasound_module_ctl_fakejack.so"
    // -DPIC: alsa-lib's headers declare the plugin's version symbol for a shared build only then.
    let gcc = Child(
      [
        "/usr/bin/env", "gcc", "-shared", "-fPIC", "-DPIC", "-Wall", "-Werror", "-o", library,
        source, "-lasound",
      ],
      environment: ["PATH": getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"])
    let end = await gcc.finish(within: .seconds(60))
    let result: Result<String, BuildFailure> =
      end.status == 0
      ? .success(library)
      : .failure(BuildFailure(description: "gcc exited with \(end.status): \(end.errors)"))
    built = result
    return result
  }
}

/// Where the plugin was built, for the atexit handler (which cannot capture).
nonisolated(unsafe) private var pluginDirectory: UnsafeMutablePointer<CChar>?

/// The fake sound card of Tests/FakeJackCard: a directory of its own with the card's state file
/// and an ALSA configuration that defines the control device "fakejack". The probe runs with
/// HOME set to that directory, so alsa-lib reads that configuration (and no one's real one).
final class FakeCard {
  let directory: String
  var statePath: String { directory + "/state" }

  /// Writes the configuration and the starting `state`; `driver` is what the card says its
  /// kernel driver is ("USB-Audio" makes it a USB card). Nil, with an issue recorded, if the
  /// plugin cannot be built (gcc and libasound2-dev are needed).
  init?(driver: String = "FakeJack", state: String = "") async {
    let library: String
    switch await FakeCardPlugin.shared.library() {
    case .success(let path):
      library = path
    case .failure(let failure):
      Issue.record("cannot build the fake card's plugin: \(failure)")
      return nil
    }
    directory = makeTemporaryDirectory("hark-fakejack")
    writeFile(statePath, state)
    writeFile(
      directory + "/.asoundrc",
      """
      ctl_type.fakejack { lib "\(library)" }
      ctl.fakejack { type fakejack; state "\(statePath)"; driver "\(driver)" }

      """)
  }

  deinit { removeDirectory(directory) }

  /// Sets the jacks: every element named is plugged, the others not; `gone` makes the card
  /// vanish.
  func set(_ plugged: [String], gone: Bool = false) {
    writeFile(statePath, plugged.map { "\($0)=1\n" }.joined() + (gone ? "gone\n" : ""))
  }

  /// Starts the jack probe watching this card (and whatever real cards there are).
  func startProbe() -> Child {
    Child(
      [binaryDirectory() + "/JackProbe"],
      environment: [
        "HOME": directory, "XDG_CONFIG_HOME": directory + "/config",
        "HARK_JACK_CONTROLS": "fakejack", "PATH": "/usr/bin:/bin",
      ])
  }

  /// Tests/, found from this file's path.
  static var sourceDirectory: String {
    var path = #filePath
    for _ in 0..<2 {
      while !path.isEmpty && !path.hasSuffix("/") { path.removeLast() }
      path.removeLast()
    }
    return path
  }
}
