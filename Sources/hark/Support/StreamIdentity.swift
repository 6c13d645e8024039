import Glibc
import Platform
import SessionCore

/// What a hark process's sound streams say about themselves to the sound server, so that the
/// desktop's own policies treat them as what they are: PulseAudio's module-role-cork corks
/// music while a `phone` stream plays (so `hark call` is a call for every other app too),
/// WirePlumber's role policy routes, ducks and corks them by role, and `pactl` and pavucontrol
/// show hark by name.
///
/// What the sound server remembers of a stream (its volume and mute) and restores on the next
/// one with the same key must not come from another app: the user muting another music player
/// would start hark muted. hark has no volume of its own (G3: the volume keys move the output's),
/// so a stream of hark's is heard at full level:
/// - PulseAudio's module-stream-restore keys by `media.role` first, unless told a key of the
///   stream's own (`module-stream-restore.id`): hark's is its application id.
/// - WirePlumber's restore-stream keys by the first of `media.role`, `application.id`,
///   `application.name`... in 0.4 and 0.5.0-0.5.14, so every Music stream shares one volume and
///   mute; from 0.5.15 by `application.id` first (`media.role` only for Notification), hark's
///   own. A stream with `state.restore-props = false` is neither restored nor remembered in
///   0.5 (all of it); WirePlumber 0.4.13 compares that property with a boolean and never sees
///   it: there, hark shares the Music role's volume and mute, as every music player does.
///   `state.restore-target = false` likewise: the sink the user last moved any Music stream to
///   (0.5.0-0.5.14) is not where hark's next stream goes; it goes to the current output (G4),
///   and a stream moved while it plays stays moved (G6). (WirePlumber 0.5.15 would have kept
///   hark's own choice; 0.5.8 also answered a move back to the default sink with the saved one:
///   the desktop tests' stream stayed on 'other'.)
///
/// hark reaches the sound server through libpulse itself (PulseOutput, for ALSA's `pulse`
/// devices) or through ALSA's plugins, which take no stream properties of their own; each reads
/// them from its environment, so they are set there before the first device opens (at the start
/// of a subcommand, before any thread reads the environment):
/// - libpulse (hark's own stream, and the `pulse` plugin of libasound2-plugins) adds
///   `PULSE_PROP` to the client's properties, which the server copies onto each of its streams.
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

    /// The same, as the session server hears it (what other apps' pauses name).
    var appRole: AppRole {
      switch self {
      case .music: .music
      case .call: .call
      case .alarm: .alarm
      case .navigation: .navigation
      case .game: .game
      case .assistant: .assistant
      }
    }

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
    // The pulse service copies the client's properties onto its streams: state.restore-props
    // reaches WirePlumber through it as through PIPEWIRE_ALSA; PulseAudio ignores it.
    prepend(
      "PULSE_PROP",
      "media.role='\(role.pulse)' \(common) "
        + "module-stream-restore.id='sink-input-by-application-id:org.hark.\(app)' "
        + "state.restore-props='false' state.restore-target='false'")
    // PIPEWIRE_ALSA is a SPA-JSON object.
    prepend(
      "PIPEWIRE_ALSA",
      "{ media.role = \"\(role.pipewire)\" application.name = \"hark\" "
        + "application.id = \"org.hark.\(app)\" state.restore-props = false "
        + "state.restore-target = false }",
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
