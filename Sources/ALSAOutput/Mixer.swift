import AudioCore
import CALSA
import Glibc

/// The system volume of an output (G3): the ALSA simple-mixer element of its card — Master,
/// else PCM, else the first element with a playback volume. Owns its snd_mixer_t.
public final class Mixer: SystemVolume {
  private let handle: OpaquePointer
  private let element: OpaquePointer
  /// The control device opened: "default", "pulse", "hw:1".
  public let controlName: String
  /// The element's name: "Master", "PCM", ...
  public let elementName: String
  private let minimum: Int
  private let maximum: Int
  public let hasSwitch: Bool
  public var canMute: Bool { hasSwitch }

  /// The mixer for the PCM device `device`, or nil when it has none (null, file and network
  /// devices): the UI then shows the device's name where a volume would be.
  public init?(forDevice device: String) {
    let control = Self.controlName(forDevice: device)
    guard let control else { return nil }
    var opened: OpaquePointer?
    guard snd_mixer_open(&opened, 0) == 0, let h = opened else { return nil }
    guard snd_mixer_attach(h, control) == 0, snd_mixer_selem_register(h, nil, nil) == 0,
      snd_mixer_load(h) == 0
    else {
      snd_mixer_close(h)
      return nil
    }
    var chosen: OpaquePointer?
    for preferred in ["Master", "PCM"] {
      var e = snd_mixer_first_elem(h)
      while let el = e {
        if String(cString: snd_mixer_selem_get_name(el)) == preferred,
          snd_mixer_selem_has_playback_volume(el) != 0
        {
          chosen = el
          break
        }
        e = snd_mixer_elem_next(el)
      }
      if chosen != nil { break }
    }
    if chosen == nil {
      var e = snd_mixer_first_elem(h)
      while let el = e {
        if snd_mixer_selem_has_playback_volume(el) != 0 {
          chosen = el
          break
        }
        e = snd_mixer_elem_next(el)
      }
    }
    guard let element = chosen else {
      snd_mixer_close(h)
      return nil
    }
    var lo = 0
    var hi = 0
    snd_mixer_selem_get_playback_volume_range(element, &lo, &hi)
    guard hi > lo else {
      snd_mixer_close(h)
      return nil
    }
    handle = h
    self.element = element
    controlName = control
    elementName = String(cString: snd_mixer_selem_get_name(element))
    minimum = lo
    maximum = hi
    hasSwitch = snd_mixer_selem_has_playback_switch(element) != 0
  }

  deinit { snd_mixer_close(handle) }

  /// The control device that goes with a PCM name: "hw:1,0" → "hw:1", "plughw:CARD=X,DEV=0" →
  /// "hw:CARD=X"; "default" and "pulse" are their own; nil for devices that have no mixer.
  static func controlName(forDevice device: String) -> String? {
    let (base, args) = device.split(separator: ":", maxSplits: 1).map(String.init).pair
    switch base {
    case "null", "file", "tee", "plugnull": return nil
    case "hw", "plughw", "sysdefault", "front", "dmix", "surround40", "surround51":
      guard let args else { return base == "sysdefault" ? "default" : nil }
      let card = args.split(separator: ",").first.map(String.init) ?? args
      return "hw:" + (card.hasPrefix("DEV=") ? "0" : card)
    default:
      return device
    }
  }

  /// Refreshes the element from the device (someone else may have changed it).
  private func refresh() { snd_mixer_handle_events(handle) }

  /// The volume in percent of the element's range (the mean of the channels).
  public var volumePercent: Double {
    refresh()
    var left = 0
    var right = 0
    snd_mixer_selem_get_playback_volume(element, SND_MIXER_SCHN_FRONT_LEFT, &left)
    if snd_mixer_selem_is_playback_mono(element) != 0 {
      right = left
    } else {
      snd_mixer_selem_get_playback_volume(element, SND_MIXER_SCHN_FRONT_RIGHT, &right)
    }
    return (Double(left + right) / 2 - Double(minimum)) / Double(maximum - minimum) * 100
  }

  /// Sets every channel to `percent` (clamped to 0…100).
  public func setVolume(percent: Double) throws {
    let p = min(100, max(0, percent))
    let raw = minimum + Int((p / 100 * Double(maximum - minimum)).rounded())
    try ALSAError.check(
      snd_mixer_selem_set_playback_volume_all(element, raw),
      "setting the volume on '\(controlName)'")
  }

  /// Whether the output is muted (its playback switch is off).
  public var isMuted: Bool {
    guard hasSwitch else { return false }
    refresh()
    var on: Int32 = 1
    snd_mixer_selem_get_playback_switch(element, SND_MIXER_SCHN_FRONT_LEFT, &on)
    return on == 0
  }

  /// Mutes or unmutes (the playback switch); without a switch, fails.
  public func setMuted(_ muted: Bool) throws {
    guard hasSwitch else { throw ALSAError(code: -ENOTSUP, operation: "muting '\(controlName)'") }
    try ALSAError.check(
      snd_mixer_selem_set_playback_switch_all(element, muted ? 0 : 1), "muting '\(controlName)'")
  }
}

extension Array where Element == String {
  fileprivate var pair: (String, String?) { (self.first ?? "", self.count > 1 ? self[1] : nil) }
}
