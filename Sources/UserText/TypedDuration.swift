/// A length of time as people type it for a timer: "30m", "90s", "1h", "1h30m", "1h30", "1.5h",
/// or a bare number of minutes ("45", as a sleep timer is counted). Units: h, m (or min), s (or
/// sec), each at most once, largest first; a bare number after one is of the next unit down.
public struct TypedDuration: Sendable, Equatable {
  public var seconds: Double

  public init(seconds: Double) { self.seconds = seconds }

  /// Nil for anything that is no such length ("abc", "5x", "30m30m", "-5m", "m").
  public init?(_ text: String) {
    let lower = text.lowercased()
    if let minutes = Double(lower) {
      guard minutes.isFinite, minutes >= 0 else { return nil }
      seconds = minutes * 60
      return
    }
    let units: [(names: [String], seconds: Double)] = [
      (["h", "hr", "hour", "hours"], 3600), (["m", "min", "mins", "minute", "minutes"], 60),
      (["s", "sec", "secs", "second", "seconds"], 1),
    ]
    var rest = Substring(lower)
    var total = 0.0
    var next = 0  // the first unit still allowed
    while !rest.isEmpty {
      let digits = rest.prefix { $0.isNumber || $0 == "." }
      guard !digits.isEmpty, let n = Double(digits), n.isFinite else { return nil }
      rest = rest.dropFirst(digits.count)
      let name = rest.prefix { $0.isLetter }
      rest = rest.dropFirst(name.count)
      // A bare number last, after a unit, is of the next unit down: "1h30", "5m30".
      let bare = name.isEmpty && rest.isEmpty && next > 0 && next < units.count
      guard
        let u = bare
          ? next : units.indices.first(where: { units[$0].names.contains(String(name)) }),
        u >= next
      else { return nil }
      total += n * units[u].seconds
      next = u + 1
    }
    guard next > 0 else { return nil }
    seconds = total
  }
}
