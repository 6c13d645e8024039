import Glibc
import Platform

/// What a hark process's sound streams say about themselves to the sound server, so that the
/// desktop's own policies treat them as what they are: PulseAudio's module-role-cork corks
/// music while a `phone` stream plays (so `hark call` is a call for every other app too),
/// stream-restore and WirePlumber's restore-stream remember volumes per role, and `pactl` and
/// pavucontrol show hark by name.
///
/// hark reaches the sound server through ALSA's plugins, which take no stream properties of
/// their own; each reads them from its environment, so they are set there before the first
/// device opens (at the start of a subcommand, before any thread reads the environment):
/// - `pulse` (libasound2-plugins) is a libpulse client, and libpulse adds `PULSE_PROP` to the
///   client's properties, which the server copies onto each of its streams.
/// - `pipewire` (pipewire-alsa, ALSA's `default` on PipeWire desktops) is a native PipeWire
///   stream, which adds `PIPEWIRE_ALSA` (an object of properties) to the stream's own
///   (pcm_pipewire.c reads it since 0.3.4x; `PIPEWIRE_PROPS` is not read by this plugin).
///
/// `application.process.id` needs no help: both libraries set it from the process. What the
/// user set in either variable comes after hark's and so wins.
enum StreamIdentity {
  /// The role of each kind of hark app, in both vocabularies.
  enum Role {
    case music, call, alarm, navigation, game, assistant

    /// PulseAudio's names where it has one (music, phone, game; PipeWire's pulse service turns
    /// them into Music, Communication, Game), else PipeWire's own, which its pulse service
    /// passes on as they are and PulseAudio keeps as a plain name.
    var pulse: String {
      switch self {
      case .music: "music"
      case .call: "phone"
      case .game: "game"
      case .alarm, .navigation, .assistant: pipewire
      }
    }

    /// The roles WirePlumber's role-based policy knows (0.5's media-role-nodes: Music and Game
    /// mix; Navigation ducks what is below it; Assistant, Communication and Alert cork it).
    var pipewire: String {
      switch self {
      case .music: "Music"
      case .call: "Communication"
      case .alarm: "Alert"
      case .navigation: "Navigation"
      case .assistant: "Assistant"
      case .game: "Game"
      }
    }
  }

  /// Sets the environment so that every stream this process opens carries `role`, hark's name
  /// and `application.id=org.hark.<app>`.
  static func announce(app: String, role: Role) {
    guard !announced else { return }  // `hark play` announces, then may start the interface
    announced = true
    let common = "application.name='hark' application.id='org.hark.\(app)'"
    // PulseAudio's stream-restore would otherwise keep hark's volume and mute under the role,
    // shared with every music app (mute one and all later ones start muted); its own key keeps
    // them hark's. (WirePlumber's restore-stream keys by role first and has no such override.)
    prepend(
      "PULSE_PROP",
      "media.role='\(role.pulse)' \(common) "
        + "module-stream-restore.id='sink-input-by-application-id:org.hark.\(app)'")
    // PIPEWIRE_ALSA is a SPA-JSON object.
    prepend(
      "PIPEWIRE_ALSA",
      "{ media.role = \"\(role.pipewire)\" application.name = \"hark\" "
        + "application.id = \"org.hark.\(app)\" }",
      json: true)
  }

  nonisolated(unsafe) private static var announced = false

  private static func prepend(_ name: String, _ ours: String, json: Bool = false) {
    let theirs = environment(name).map { $0.trimmingCharacters(in: " \t") } ?? ""
    let value: String
    if theirs.isEmpty {
      value = ours
    } else if json {
      // Both are objects: merge by dropping our closing brace and their opening one.
      let inner =
        theirs.hasPrefix("{") && theirs.hasSuffix("}")
        ? String(theirs.dropFirst().dropLast()) : theirs
      value = String(ours.dropLast()) + " " + inner + " }"
    } else {
      value = ours + " " + theirs
    }
    setenv(name, value, 1)
  }
}

extension String {
  fileprivate func trimmingCharacters(in set: String) -> String {
    let drop: (Character) -> Bool = { set.contains($0) }
    return String(self.drop(while: drop).reversed().drop(while: drop).reversed())
  }
}
