/// A duration as a clock shows it: 83 → "1:23", 3725 → "1:02:05" (negative as 0). The status
/// line, the headless player's lines and a scan's time left all write time so.
public func clockTime(seconds: Int) -> String {
  let s = max(0, seconds)
  func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
  return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
}

extension String {
  /// The line with its first character in capitals, the rest as it is ("cannot open 'x'" →
  /// "Cannot open 'x'"): how the status line, a hello and `hark play` show a message. Messages
  /// are written lower-case so that they also read inside another sentence ("hark: cannot…").
  public var capitalisedFirst: String { prefix(1).uppercased() + dropFirst() }
}
