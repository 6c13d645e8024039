import ArgumentParser
import Glibc
import PlayerLink
import Settings
import StateFile

/// The player the interface shows, in a process of its own: a full session client (calls,
/// unplugged outputs, media keys through MPRIS, sleep) that plays on when the interface
/// detaches (Q, or the terminal closing while it plays) and that any `hark` attaches to again.
/// The interface starts it (`PlayerPlace`) and is its client over `PlayerLink`; it ends when an
/// interface quits (q) or on SIGTERM/SIGINT, saving the queue as it goes (`PlayerHost`).
struct BackgroundPlayerCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "background-player",
    abstract: "The interface's player, in a process of its own (started by 'hark').",
    shouldDisplay: false)

  @Option(help: "The socket it serves interfaces at.")
  var socket: String

  @Option(help: "The lock that makes it the user's one attachable player.")
  var lock: String?

  @Option(help: "The ALSA device to play on.")
  var device: String?

  @Option(help: "How far to lower the music under a navigation prompt, in dB.")
  var duck: Double?

  @Flag(help: "Restore the queue saved when the player last ended.")
  var restore = false

  @Option(help: "The folder to queue when there is no saved queue to restore.")
  var queueFolder: String?

  /// Exit status when another player holds the lock: the interface attaches to that one.
  static let taken: Int32 = 3

  func run() async throws {
    // Before anything registers with the session server: of two racing players, one serves.
    let endpoint: PlayerService.Endpoint
    do { endpoint = try PlayerService.bind(socketPath: socket, lockPath: lock) } catch {
      HarkLog.write("the player does not start: \(error)")
      if case .taken = error { Glibc.exit(Self.taken) }
      Glibc.exit(1)
    }
    // The config's problems are the interface's to say; the player takes what it can.
    let (settings, _) = Settings.load(from: Settings.defaultPath())
    // Only the user's player (the one holding the lock) takes what `hark add` hands over; a
    // private one (`--new`) is reached from the interface that started it.
    let session = await connectOrPlayAlone(quietly: true, acceptsFiles: lock != nil)
    var options = PlayerHost.Options(
      device: device ?? settings.device, duckDecibels: duck ?? settings.duckLevelDecibels,
      settings: settings, serving: .at(PlayerServiceEndpointBox(endpoint)))
    if session == nil {
      options.lines.append(
        "No session server: calls and other apps will not pause hark, and 'hark ctl' cannot reach it"
      )
    }
    // The saved queue is the player's to read, restore and save again: an interface that dies
    // before handing it over cannot make the player save an empty queue over it. It is the
    // user's player's (the one holding the lock): a private one (`--new`) neither restores nor
    // saves it, so that quitting it cannot replace the queue the user's player saved.
    options.stateFile = lock != nil ? StateFile.standard : nil
    options.restore = restore
    options.queueFolder = queueFolder
    HarkLog.write("the player serves interfaces at '\(socket)'")
    Glibc.exit(await PlayerHost.run(options, session: session))
  }
}
