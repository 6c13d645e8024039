import SessionCore

/// What a jack watcher reports: an output came or went, or something kept it from watching.
///
/// `plugged` means a new device is available (G4: playback goes on); `unplugged` of the route in
/// use means the old device is unavailable (G5: pause at once).
public enum JackEvent: Hashable, Sendable {
  /// Something was plugged into an output jack, or a USB audio device appeared.
  case plugged(Route)
  /// Something was pulled out of an output jack, or its card (a USB device) went away.
  case unplugged(Route)
  /// A card or control could not be watched; the text says which and why, for a log.
  case problem(String)
}

/// One jack element of a card: the element's name and index (names are unique per index).
public struct JackElement: Hashable, Sendable, CustomStringConvertible {
  /// "Headphone Jack".
  public var name: String
  /// Nonzero when a card has several elements of the same name.
  public var index: Int

  /// An element named `name` at `index`.
  public init(_ name: String, index: Int = 0) {
    self.name = name
    self.index = index
  }

  public var description: String { index == 0 ? "'\(name)'" : "'\(name)',\(index)" }
}

/// One reading of a jack element: whether something is plugged in.
public struct JackReading: Hashable, Sendable {
  /// The element read.
  public var element: JackElement
  /// The element's boolean value: true while something is in the socket.
  public var isPlugged: Bool

  /// `element` reads `isPlugged`.
  public init(_ element: JackElement, isPlugged: Bool) {
    self.element = element
    self.isPlugged = isPlugged
  }
}

/// A sound card as its control device describes it, with its jack elements read once.
public struct JackCard: Hashable, Sendable {
  /// The control device opened ("hw:0", "fakejack"): the card's identity while it exists.
  public var control: String
  /// ALSA's card id ("PCH", "Headset").
  public var id: String
  /// The card's name as people see it ("HDA Intel PCH", "Jabra EVOLVE 20").
  public var name: String
  /// The kernel driver ("HDA-Intel", "USB-Audio").
  public var driver: String
  /// Every boolean element whose name ends in " Jack", in the card's order.
  public var jacks: [JackReading]

  /// A card as read from its control device.
  public init(control: String, id: String, name: String, driver: String, jacks: [JackReading]) {
    self.control = control
    self.id = id
    self.name = name
    self.driver = driver
    self.jacks = jacks
  }

  /// Whether the card is a USB audio device: the device is the route, so its appearing and
  /// vanishing are what matter, and its own jack elements (UAC connectors) are not followed.
  public var isUSB: Bool { driver == "USB-Audio" }
}

/// What a jack watcher saw on the control devices, in the order it saw it: the input of
/// `JackState`. Tests write these down as data, the way snd_ctl reported them.
public enum JackObservation: Hashable, Sendable {
  /// A card's control device appeared (a USB device plugged in, a driver loaded) and was read.
  case cardAppeared(JackCard)
  /// An element event (value, info or add) for a jack of `control`, and the value re-read.
  case jackChanged(control: String, JackReading)
  /// The element was removed (SND_CTL_EVENT_MASK_REMOVE).
  case jackRemoved(control: String, JackElement)
  /// The card's control device went away (ENODEV, POLLERR, its /dev/snd node deleted).
  case cardVanished(control: String)
}
