import ArgumentParser
import Glibc

struct Open: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "open",
    abstract: "Open the interface (the default: 'hark PATH…' is 'hark open PATH…').",
    discussion: """
      The terminal interface: a library browser, the queue, a now-playing bar and a status line \
      that says why playback is paused or quiet. It attaches to the hark player that runs (one \
      player per user), or starts it: the queue saved when it was last quit with q comes back, \
      paused where it was, else the music folder is queued (the config's music_dir, else \
      ~/Music, else the bundled demo music). PATHs are added to that queue, ready to play \
      (space plays), and the first is selected; 'hark play PATH…' also starts them. Press ? for \
      the keys. The player runs in a process of its own: q stops it; Q leaves it playing in the \
      background, as closing the terminal while it plays does, and 'hark' comes back to it. \
      Needs a terminal (without one, PATHs go to the running player as with 'hark add'); \
      'hark play --no-ui' plays without one.
      """)

  @Option(
    help: ArgumentHelp(
      "The ALSA device to play on ('aplay -L' lists them); default: the config's, else 'default'.",
      valueName: "device"))
  var device: String?

  @Flag(help: "Start another player even when one runs (else PATHs go to the running one).")
  var new = false

  @Argument(help: "Files, folders, playlists (.m3u, .pls) and http(s) stream URLs to add.")
  var paths: [String] = []

  func run() async throws {
    // One player per user: the interface attaches to the one running (detached with Q, or
    // another terminal's), PATHs joining its queue; a second interface with a player of its
    // own would take over from it.
    await InterfaceLauncher.run(paths: paths, device: device, duck: nil, autoplay: false, new: new)
  }
}
