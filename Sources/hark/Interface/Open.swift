import ArgumentParser
import Glibc

struct Open: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "open",
    abstract: "Open the interface (the default: 'hark PATH…' is 'hark open PATH…').",
    discussion: """
      The terminal interface: a library browser, the queue, a now-playing bar and a status line \
      that says why playback is paused or quiet. PATHs are queued, ready to play (space plays); \
      'hark play PATH…' also starts them. With no PATH it restores the queue saved when it was \
      last quit with q (paused where it was), else queues the music folder: the config's \
      music_dir, else ~/Music, else the bundled demo music. Press ? for the keys. The player \
      runs in a process of its own: q stops it; Q leaves it playing in the background, as \
      closing the terminal while it plays does, and 'hark' with no PATH comes back to it. \
      Needs a terminal; 'hark play --no-ui' plays without one.
      """)

  @Option(
    help: ArgumentHelp(
      "The ALSA device to play on ('aplay -L' lists them); default: the config's, else 'default'.",
      valueName: "device"))
  var device: String?

  @Flag(help: "Start another player even when one runs (else PATHs go to the running one).")
  var new = false

  @Argument(help: "Files, folders, playlists (.m3u, .pls) and http(s) stream URLs to queue.")
  var paths: [String] = []

  func run() async throws {
    // One player per user: PATHs join the running one's queue; a second interface with a
    // player of its own would take over from it. With nothing named, the interface attaches to
    // the player that plays on without one (detached with Q), if one does.
    if !new, !paths.isEmpty, await HandOver.paths(paths, at: .end) == .handed { return }
    await InterfaceLauncher.run(paths: paths, device: device, duck: nil, autoplay: false, new: new)
  }
}
