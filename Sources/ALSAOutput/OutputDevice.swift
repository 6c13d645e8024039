import CALSA
import Glibc

/// An ALSA PCM device that can play: what the route picker offers (G6, G20).
public struct OutputDevice: Hashable, Sendable {
  /// The name to open it by: "default", "pulse", "hw:CARD=PCH,DEV=0".
  public var name: String
  /// ALSA's description, its lines joined: "HDA Intel PCH, ALC892 Analog — Direct hardware
  /// device without any conversions".
  public var description: String

  public init(name: String, description: String) {
    self.name = name
    self.description = description
  }

  /// The system's playback devices, from ALSA's device hints (snd_device_name_hint over every
  /// card): `default` first, then sound servers (`pulse`, `pipewire`, `jack`), then each card's
  /// `sysdefault`, `hw` and `plughw` devices, and `null`. Capture-only devices and the many
  /// channel-mapping aliases (`surround51`, `front`, `iec958`, ...) are left out.
  public static func list() -> [OutputDevice] {
    var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
    defer { snd_device_name_free_hint(hints) }
    var found: [(name: String, description: String, direction: String?)] = []
    var i = 0
    while let hint = hints[i] {
      // snd_device_name_get_hint returns malloc'd strings the caller frees.
      func field(_ id: String) -> String? {
        guard let p = snd_device_name_get_hint(hint, id) else { return nil }
        defer { free(p) }
        return String(cString: p)
      }
      if let name = field("NAME") {
        found.append((name, field("DESC") ?? "", field("IOID")))
      }
      i += 1
    }
    return choose(found)
  }

  /// The devices worth offering out of ALSA's hints (NAME, DESC, IOID), in the order shown.
  public static func choose(_ hints: [(name: String, description: String, direction: String?)])
    -> [OutputDevice]
  {
    let kept: [String: Int] = [
      "default": 0, "pulse": 1, "pipewire": 1, "jack": 1, "sysdefault": 2, "hw": 3,
      "plughw": 4, "null": 5,
    ]
    var out: [(Int, Int, OutputDevice)] = []
    var seen: Set<String> = []
    for (index, hint) in hints.enumerated() {
      if hint.direction == "Input" { continue }  // capture only
      let base = String(hint.name.split(separator: ":", maxSplits: 1).first ?? "")
      guard let rank = kept[base], seen.insert(hint.name).inserted else { continue }
      let description = hint.description.split(separator: "\n").map {
        $0.trimmingCharacters()
      }.filter { !$0.isEmpty }.joined(separator: " — ")
      out.append((rank, index, OutputDevice(name: hint.name, description: description)))
    }
    if !seen.contains("default") {
      // ALSA always has it, even when its configuration gives it no hint.
      out.append((0, -1, OutputDevice(name: "default", description: "The system's default output")))
    }
    return out.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
  }
}

extension Substring {
  fileprivate func trimmingCharacters() -> String {
    var s = self
    while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
    while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
    return String(s)
  }
}

/// An ALSA device that is PulseAudio's plugin: what ALSA would play through to the sound
/// server, and on which of its sinks.
public struct SoundServerDevice: Equatable, Sendable {
  /// The sink the device names (`pulse:NAME`), or nil for the server's default.
  public var sink: String?

  public init(sink: String?) { self.sink = sink }

  /// Whether ALSA's configuration defines `name` as PulseAudio's plugin (type `pulse`):
  /// `pulse`, `pulse:NAME`, and `default` where a desktop's configuration sends ALSA to
  /// PulseAudio (its hook does so only while a server runs). nil for any other device, or
  /// one ALSA does not know. Reads ALSA's configuration (and runs its hooks): any thread but
  /// the render thread.
  public static func behind(_ name: String) -> SoundServerDevice? {
    var top: OpaquePointer?
    guard snd_config_update_ref(&top) >= 0, let top else { return nil }
    defer { snd_config_unref(top) }
    var definition: OpaquePointer?
    guard snd_config_search_definition(top, "pcm", name, &definition) >= 0, let definition
    else { return nil }
    defer { snd_config_delete(definition) }
    func string(_ key: String) -> String? {
      var node: OpaquePointer?
      var value: UnsafePointer<CChar>?
      guard snd_config_search(definition, key, &node) >= 0, let node,
        snd_config_get_string(node, &value) >= 0, let value
      else { return nil }
      return String(cString: value)
    }
    guard string("type") == "pulse" else { return nil }
    let sink = string("device")
    return SoundServerDevice(sink: sink?.isEmpty == false ? sink : nil)
  }
}
