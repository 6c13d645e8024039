extension String {
  /// The line with its first character in capitals, the rest as it is ("cannot open 'x'" →
  /// "Cannot open 'x'"): how the status line, a hello and `hark play` show a message. Messages
  /// are written lower-case so that they also read inside another sentence ("hark: cannot…").
  public var capitalisedFirst: String { prefix(1).uppercased() + dropFirst() }
}
