import SessionCore

/// The outputs the jacks of every card say are plugged in, and the route events that changes of
/// them make. A value: no I/O, no clock; the watcher feeds it what ALSA reported.
///
/// ALSA may report one plug several times (an event per bit of the mask, a re-report on resume),
/// so an observation that changes nothing makes no event. Each output is one `Route`, named after
/// its jack and card ("Headphones (HDA Intel PCH)"); the same route value is reported when it is
/// plugged and when it is unplugged.
public struct JackState: Hashable, Sendable {
  private struct Output: Hashable, Sendable {
    var element: JackElement
    var route: Route?  // nil: not an output we follow (phantom, input, ...)
    var isPlugged: Bool
  }

  private struct Card: Hashable, Sendable {
    var control: String
    var displayName: String
    var usbRoute: Route?
    var outputs: [Output]
  }

  private var cards: [Card] = []

  /// The state of the cards present when watching starts. Their plugged outputs are the
  /// starting point, not news: they make no events.
  public init(cards: [JackCard] = []) {
    for card in cards { _ = add(card) }
  }

  /// Every output plugged in now, card by card: the routes of plugged jacks, and each USB card.
  public var outputs: [Route] {
    cards.flatMap { card in
      card.usbRoute.map { [$0] } ?? card.outputs.compactMap { $0.isPlugged ? $0.route : nil }
    }
  }

  /// The control devices of the cards present now.
  public var controls: [String] { cards.map(\.control) }

  /// Takes in one observation and returns the route events it makes (none if nothing changed).
  public mutating func observe(_ observation: JackObservation) -> [JackEvent] {
    switch observation {
    case .cardAppeared(let card):
      guard let at = cards.firstIndex(where: { $0.control == card.control }) else {
        return add(card)
      }
      // Seen again (a rescan, a second notice of the same device): only differences count.
      if cards[at].usbRoute != nil { return [] }
      var events: [JackEvent] = []
      let present = Set(card.jacks.map(\.element))
      for output in cards[at].outputs where !present.contains(output.element) {
        events += observe(.jackRemoved(control: card.control, output.element))
      }
      for reading in card.jacks {
        events += observe(.jackChanged(control: card.control, reading))
      }
      return events
    case .jackChanged(let control, let reading):
      guard let c = cards.firstIndex(where: { $0.control == control }) else { return [] }
      if cards[c].usbRoute != nil { return [] }
      guard let j = cards[c].outputs.firstIndex(where: { $0.element == reading.element }) else {
        // An element added after the card was read (SND_CTL_EVENT_MASK_ADD).
        let output = makeOutput(reading, on: cards[c])
        cards[c].outputs.append(output)
        return output.isPlugged ? output.route.map { [.plugged($0)] } ?? [] : []
      }
      guard cards[c].outputs[j].isPlugged != reading.isPlugged else { return [] }
      cards[c].outputs[j].isPlugged = reading.isPlugged
      guard let route = cards[c].outputs[j].route else { return [] }
      return [reading.isPlugged ? .plugged(route) : .unplugged(route)]
    case .jackRemoved(let control, let element):
      guard let c = cards.firstIndex(where: { $0.control == control }),
        let j = cards[c].outputs.firstIndex(where: { $0.element == element })
      else { return [] }
      let output = cards[c].outputs.remove(at: j)
      guard cards[c].usbRoute == nil, output.isPlugged, let route = output.route else { return [] }
      return [.unplugged(route)]
    case .cardVanished(let control):
      guard let c = cards.firstIndex(where: { $0.control == control }) else { return [] }
      let card = cards.remove(at: c)
      if let usb = card.usbRoute { return [.unplugged(usb)] }
      return card.outputs.compactMap { $0.isPlugged ? $0.route.map(JackEvent.unplugged) : nil }
    }
  }

  private mutating func add(_ card: JackCard) -> [JackEvent] {
    var entry = Card(
      control: card.control, displayName: displayName(of: card), usbRoute: nil, outputs: [])
    if card.isUSB {
      entry.usbRoute = Route(
        name: "\(RouteKind.usb.defaultName) (\(entry.displayName))", kind: .usb)
    }
    for reading in card.jacks { entry.outputs.append(makeOutput(reading, on: entry)) }
    cards.append(entry)
    if let usb = entry.usbRoute { return [.plugged(usb)] }
    return entry.outputs.compactMap { $0.isPlugged ? $0.route.map(JackEvent.plugged) : nil }
  }

  /// The card's name, made unique among the cards present (two identical USB headsets): routes
  /// are picked by name.
  private func displayName(of card: JackCard) -> String {
    let name = card.name.isEmpty ? card.id : card.name
    let taken = Set(cards.map(\.displayName))
    guard taken.contains(name) else { return name }
    var n = 2
    while taken.contains("\(name) #\(n)") { n += 1 }
    return "\(name) #\(n)"
  }

  private func makeOutput(_ reading: JackReading, on card: Card) -> Output {
    var route: Route?
    switch JackName.meaning(of: reading.element.name, index: reading.element.index) {
    case .output(let kind, let label):
      route = Route(name: "\(label) (\(card.displayName))", kind: kind)
    case .ignored:
      route = nil
    }
    return Output(element: reading.element, route: route, isPlugged: reading.isPlugged)
  }
}
