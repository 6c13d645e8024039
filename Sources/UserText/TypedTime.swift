/// A time as people type it, for a seek: seconds ("90", "12.5"), minutes:seconds ("1:30"),
/// hours:minutes:seconds ("1:02:03"), and with a sign, relative to now ("+1:00", "-15").
public struct TypedTime: Sendable, Equatable {
  /// Seconds, from the start of the track, or (relative) from where it is.
  public var seconds: Double
  /// "+…" or "-…": a step from where playback is.
  public var isRelative: Bool

  public init(seconds: Double, isRelative: Bool) {
    self.seconds = seconds
    self.isRelative = isRelative
  }

  /// Nil for anything that is no time ("1:75", "abc", "1:2:3:4").
  public init?(_ text: String) {
    var body = Substring(text)
    var sign = 1.0
    isRelative = false
    if body.first == "+" || body.first == "-" {
      sign = body.first == "-" ? -1 : 1
      isRelative = true
      body = body.dropFirst()
    }
    let parts = body.split(separator: ":", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count), let last = Double(parts[parts.count - 1]),
      last.isFinite, last >= 0
    else { return nil }
    if parts.count > 1 && last >= 60 { return nil }  // "1:75" is no time
    var total = 0.0
    for part in parts.dropLast() {
      guard let n = Int(part), n >= 0 else { return nil }
      total = total * 60 + Double(n)
    }
    seconds = sign * (total * 60 + last)
  }
}
