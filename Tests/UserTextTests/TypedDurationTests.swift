import Testing
import UserText

/// Timer lengths as people type them (`hark timer 30m`).
@Suite struct TypedDurationTests {
  @Test(arguments: [
    ("30m", 1800.0), ("30min", 1800), ("90s", 90), ("1h", 3600), ("1h30m", 5400),
    ("1h30", 5400), ("5m30", 330), ("1.5h", 5400), ("2h15m30s", 8130), ("45", 2700),
    ("0.5", 30), ("10sec", 10), ("3S", 3), ("1H5M", 3900), ("0m", 0),
  ])
  func lengthsAreRead(text: String, seconds: Double) {
    #expect(TypedDuration(text)?.seconds == seconds)
  }

  @Test(arguments: [
    "", "abc", "5x", "m", "30m30m", "30s5m", "-5m", "5 m", "1:30", "h1", "inf", "30s5", "1h30m5m",
  ])
  func whatIsNoLengthIsRefused(text: String) {
    #expect(TypedDuration(text) == nil)
  }
}
