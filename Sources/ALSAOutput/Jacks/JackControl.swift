import CALSA
import Glibc
import JackRoutes

/// One card's control device opened to watch its jacks (snd_ctl_open, non-blocking, subscribed
/// to element events). Owns the snd_ctl_t and the scratch objects it reads into, and closes and
/// frees them in `deinit`. Watcher thread only, once opened.
final class JackControl {
  /// The control device's name ("hw:0", "fakejack").
  let name: String
  /// The card as read when it was opened: ids, names, and its jacks' values.
  private(set) var card: JackCard
  private let handle: OpaquePointer
  private let event: OpaquePointer  // snd_ctl_event_t
  private let id: OpaquePointer  // snd_ctl_elem_id_t
  private let info: OpaquePointer  // snd_ctl_elem_info_t
  private let value: OpaquePointer  // snd_ctl_elem_value_t
  /// The boolean " Jack" elements seen so far; events for other elements are skipped.
  private var jacks: Set<JackElement> = []

  /// What waking on the control's descriptors meant.
  enum Readiness: Equatable {
    /// Nothing to read (another descriptor of a plugin woke, or a spurious wake).
    case idle
    /// Events are waiting: call `readEvents()`.
    case events
    /// The device is gone (POLLERR, POLLHUP or POLLNVAL: a disconnected card's file does this).
    case gone
  }

  /// Opens `name`, subscribes to its events, then reads the card and every jack element.
  ///
  /// Subscribing comes first, so a change between reading a value and subscribing still arrives
  /// as an event (a duplicate at worst, which `JackState` ignores).
  init(name: String) throws(ALSAError) {
    self.name = name
    let operation = "opening ALSA control '\(name)'"
    var opened: OpaquePointer?
    try ALSAError.check(snd_ctl_open(&opened, name, SND_CTL_NONBLOCK), operation)
    guard let opened else { throw ALSAError(code: -EINVAL, operation: operation) }
    var e: OpaquePointer?
    var i: OpaquePointer?
    var n: OpaquePointer?
    var v: OpaquePointer?
    guard snd_ctl_event_malloc(&e) == 0, snd_ctl_elem_id_malloc(&i) == 0,
      snd_ctl_elem_info_malloc(&n) == 0, snd_ctl_elem_value_malloc(&v) == 0,
      let e, let i, let n, let v
    else {
      snd_ctl_event_free(e)
      snd_ctl_elem_id_free(i)
      snd_ctl_elem_info_free(n)
      snd_ctl_elem_value_free(v)
      snd_ctl_close(opened)
      throw ALSAError(code: -ENOMEM, operation: operation)
    }
    handle = opened
    event = e
    id = i
    info = n
    value = v
    card = JackCard(control: name, id: "", name: name, driver: "", jacks: [])
    // From here on deinit cleans up whatever fails.
    try ALSAError.check(
      snd_ctl_subscribe_events(handle, 1), "subscribing to the events of ALSA control '\(name)'")
    try readCard()
  }

  deinit {
    snd_ctl_close(handle)
    snd_ctl_event_free(event)
    snd_ctl_elem_id_free(id)
    snd_ctl_elem_info_free(info)
    snd_ctl_elem_value_free(value)
  }

  private func readCard() throws(ALSAError) {
    var cardInfo: OpaquePointer?
    try ALSAError.check(snd_ctl_card_info_malloc(&cardInfo), "reading card '\(name)'")
    defer { snd_ctl_card_info_free(cardInfo) }
    try ALSAError.check(snd_ctl_card_info(handle, cardInfo), "reading card '\(name)'")
    card.id = String(cString: snd_ctl_card_info_get_id(cardInfo))
    card.name = String(cString: snd_ctl_card_info_get_name(cardInfo))
    card.driver = String(cString: snd_ctl_card_info_get_driver(cardInfo))

    let listing = "listing the controls of '\(name)'"
    var list: OpaquePointer?
    try ALSAError.check(snd_ctl_elem_list_malloc(&list), listing)
    defer { snd_ctl_elem_list_free(list) }
    try ALSAError.check(snd_ctl_elem_list(handle, list), listing)
    let count = snd_ctl_elem_list_get_count(list)
    try ALSAError.check(snd_ctl_elem_list_alloc_space(list, count), listing)
    defer { snd_ctl_elem_list_free_space(list) }
    try ALSAError.check(snd_ctl_elem_list(handle, list), listing)
    for k in 0..<snd_ctl_elem_list_get_used(list) {
      let elementName = String(cString: snd_ctl_elem_list_get_name(list, k))
      guard elementName.hasSuffix(JackName.suffix) else { continue }
      snd_ctl_elem_list_get_id(list, k, id)
      let element = JackElement(elementName, index: Int(snd_ctl_elem_list_get_index(list, k)))
      guard isBoolean() else { continue }
      jacks.insert(element)
      let plugged = try readValue(of: element)
      card.jacks.append(JackReading(element, isPlugged: plugged))
    }
  }

  /// Whether the element in `id` is a boolean (jack elements are; a " Jack" of another type is
  /// not one we understand).
  private func isBoolean() -> Bool {
    snd_ctl_elem_info_set_id(info, id)
    return snd_ctl_elem_info(handle, info) == 0
      && snd_ctl_elem_info_get_type(info) == SND_CTL_ELEM_TYPE_BOOLEAN
  }

  /// Reads the boolean element in `id` (snd_ctl_elem_read).
  private func readValue(of element: JackElement) throws(ALSAError) -> Bool {
    snd_ctl_elem_value_set_id(value, id)
    try ALSAError.check(
      snd_ctl_elem_read(handle, value), "reading \(element) of ALSA control '\(name)'")
    return snd_ctl_elem_value_get_boolean(value, 0) != 0
  }

  /// How many poll descriptors the control needs (snd_ctl_poll_descriptors_count).
  var pollDescriptorCount: Int { max(0, Int(snd_ctl_poll_descriptors_count(handle))) }

  /// Fills `slots` with the control's descriptors (snd_ctl_poll_descriptors); returns how many.
  func fillPollDescriptors(_ slots: UnsafeMutableBufferPointer<pollfd>) -> Int {
    guard let base = slots.baseAddress, !slots.isEmpty else { return 0 }
    return max(0, Int(snd_ctl_poll_descriptors(handle, base, UInt32(slots.count))))
  }

  /// What the descriptors `slots`, filled by `fillPollDescriptors` and polled, say
  /// (snd_ctl_poll_descriptors_revents: plugins translate their own descriptors here).
  func readiness(_ slots: UnsafeMutableBufferPointer<pollfd>) -> Readiness {
    guard let base = slots.baseAddress, !slots.isEmpty else { return .idle }
    var revents: UInt16 = 0
    let rc = snd_ctl_poll_descriptors_revents(handle, base, UInt32(slots.count), &revents)
    if rc < 0 { return .gone }
    if Int32(revents) & (Int32(POLLERR) | Int32(POLLHUP) | Int32(POLLNVAL)) != 0 { return .gone }
    return Int32(revents) & Int32(POLLIN) != 0 ? .events : .idle
  }

  /// Reads every waiting event (snd_ctl_read until EAGAIN) and turns the ones about jack elements
  /// into observations, re-reading each changed element's value. Throws when the device is gone
  /// (ENODEV) or cannot be read any more.
  func readEvents() throws(ALSAError) -> [JackObservation] {
    var seen: [JackObservation] = []
    while true {
      let rc = snd_ctl_read(handle, event)
      if rc == 0 || rc == -EAGAIN { return seen }
      try ALSAError.check(rc, "reading the events of ALSA control '\(name)'")
      guard snd_ctl_event_get_type(event) == SND_CTL_EVENT_ELEM else { continue }
      let elementName = String(cString: snd_ctl_event_elem_get_name(event))
      guard elementName.hasSuffix(JackName.suffix) else { continue }
      let element = JackElement(elementName, index: Int(snd_ctl_event_elem_get_index(event)))
      let mask = snd_ctl_event_elem_get_mask(event)
      if mask == calsa_ctl_event_mask_remove() {
        if jacks.remove(element) != nil { seen.append(.jackRemoved(control: name, element)) }
        continue
      }
      let interesting =
        UInt32(SND_CTL_EVENT_MASK_VALUE | SND_CTL_EVENT_MASK_INFO)
        | UInt32(SND_CTL_EVENT_MASK_ADD)
      guard mask & interesting != 0 else { continue }
      snd_ctl_event_elem_get_id(event, id)
      if !jacks.contains(element) {
        guard isBoolean() else { continue }
        jacks.insert(element)
      }
      do {
        let plugged = try readValue(of: element)
        seen.append(.jackChanged(control: name, JackReading(element, isPlugged: plugged)))
      } catch {
        // A card going away fails every read with ENODEV: that is the card's news, not the
        // element's. Anything else (the element vanished between event and read) skips it.
        if error.code == -ENODEV { throw error }
      }
    }
  }
}
