import PropertyBased
import Testing

@testable import AudioCore

/// The speed control's arithmetic: speeds as typed, shown and stepped through, and time in the
/// file against time heard.
@Suite struct PlaybackRateTests {
  @Test(
    arguments: [
      ("1.5", 150), ("1.5x", 150), ("1.5X", 150), ("1.5×", 150), ("150%", 150), (" 2 ", 200),
      ("1.25 x", 125), ("1,5", 150), ("0.5", 50), ("3", 300), ("3x", 300), ("300%", 300),
      ("50%", 50), ("1.333", 133), (".75", 75), ("1.", 100), ("1", 100), ("\t2x\n", 200),
      ("133.3%", 133),
    ])
  func speedsAsPeopleTypeThem(text: String, hundredths: Int) throws {
    #expect(try PlaybackRate(parsing: text).hundredths == hundredths)
  }

  @Test(
    arguments: [
      ("", PlaybackRate.ParseError.Kind.notASpeed), ("fast", .notASpeed), ("1.5.2", .notASpeed),
      ("nan", .notASpeed), ("inf", .notASpeed), ("1e1", .notASpeed), ("0x1p1", .notASpeed),
      ("-1", .notASpeed), ("x", .notASpeed), ("%", .notASpeed), ("1.5xx", .notASpeed),
      ("1,5.0", .notASpeed), ("x1.5", .notASpeed), ("1.5%x", .notASpeed), ("0.4", .tooSlow),
      ("0", .tooSlow), ("40%", .tooSlow), ("0.49", .tooSlow), ("4x", .tooFast),
      ("301%", .tooFast), ("3.01", .tooFast), ("99999999999999999999", .tooFast),
    ])
  func speedsThatWillNotDoAreRefusedWithTheirKind(text: String, kind: PlaybackRate.ParseError.Kind)
  {
    #expect(throws: PlaybackRate.ParseError(kind, text: text)) {
      try PlaybackRate(parsing: text)
    }
  }

  @Test func refusalsNameWhatWasTypedAndWhy() {
    #expect(
      PlaybackRate.ParseError(.notASpeed, text: "fast").description
        == "speed 'fast' is not a speed; write it as 1.5, 1.5x or 150%")
    #expect(
      PlaybackRate.ParseError(.tooSlow, text: "0.25x").description
        == "speed '0.25x' is too slow; 0.5× is the slowest")
    #expect(
      PlaybackRate.ParseError(.tooFast, text: "400%").description
        == "speed '400%' is too fast; 3× is the fastest")
  }

  @Test(arguments: [(100, "1×"), (150, "1.5×"), (75, "0.75×"), (105, "1.05×"), (300, "3×")])
  func shownWithTheFewestDigits(hundredths: Int, shown: String) {
    #expect(PlaybackRate(clampingHundredths: hundredths).description == shown)
  }

  @Test func everyShownSpeedReadsBackAsItself() throws {
    for h in 50...300 {
      let rate = PlaybackRate(clampingHundredths: h)
      #expect(try PlaybackRate(parsing: rate.description) == rate)
    }
  }

  @Test func clampingKeepsSpeedsInRange() {
    #expect(PlaybackRate(clamping: 5) == .fastest)
    #expect(PlaybackRate(clamping: 0.1) == .slowest)
    #expect(PlaybackRate(clamping: -.infinity) == .slowest)
    #expect(PlaybackRate(clamping: .infinity) == .fastest)
    #expect(PlaybackRate(clamping: .nan) == .normal)
    #expect(PlaybackRate(clamping: 1.004) == .normal)
    #expect(PlaybackRate(clamping: 1.006).hundredths == 101)
    #expect(PlaybackRate(clampingHundredths: 1_000) == .fastest)
    #expect(PlaybackRate(clampingHundredths: -3) == .slowest)
  }

  @Test func stepsRunFromSlowestToFastestInSmallProportions() {
    let steps = PlaybackRate.steps
    #expect(steps.first == .slowest)
    #expect(steps.last == .fastest)
    #expect(steps.contains(.normal))
    for (a, b) in zip(steps, steps.dropFirst()) {
      #expect(a < b)
      // Each step is at most a quarter faster than the one before.
      #expect(b.value / a.value <= 1.25, "\(a) to \(b)")
    }
  }

  @Test func stepsFromSpeedsBetweenThem() {
    let r125 = PlaybackRate(clampingHundredths: 125)
    #expect(r125.next.hundredths == 130)
    #expect(r125.previous.hundredths == 120)
    #expect(PlaybackRate.normal.next.hundredths == 110)
    #expect(PlaybackRate.normal.previous.hundredths == 90)
    #expect(PlaybackRate.fastest.next == .fastest)
    #expect(PlaybackRate.slowest.previous == .slowest)
    #expect(PlaybackRate(clampingHundredths: 299).next == .fastest)
    #expect(PlaybackRate(clampingHundredths: 51).previous == .slowest)
  }

  @Test func timeInTheFileAndTimeHeard() {
    let r = PlaybackRate(clampingHundredths: 150)
    #expect(r.fileFrames(heardFrames: 44_100) == 66_150)
    #expect(r.heardFrames(fileFrames: 66_150) == 44_100)
    #expect(r.fileSeconds(heardFrames: 48_000, sampleRate: 48_000) == 1.5)
    #expect(r.heardSeconds(fileSeconds: 3_600) == 2_400)
    let half = PlaybackRate.slowest
    #expect(half.heardFrames(fileFrames: 44_100) == 88_200)
    #expect(half.fileFrames(heardFrames: 3) == 2)  // 1.5, rounded half up
    #expect(PlaybackRate.fastest.heardFrames(fileFrames: 10) == 3)
    #expect(PlaybackRate.fastest.heardFrames(fileFrames: -10) == -3)
  }

  /// Frames counted one way and back land where they started: exactly from heard frames at 1×
  /// and above (each heard frame covers a frame or more of the file), within a frame below;
  /// from file frames within half a heard frame's worth.
  @Test func timeArithmeticRoundTrips() async {
    let frames30Hours = 44_100 * 3_600 * 30
    await propertyCheck(count: 2_000, input: Gen.int(in: 50...300), Gen.int(in: 0...frames30Hours))
    { h, frames in
      let r = PlaybackRate(clampingHundredths: h)
      let heard = r.heardFrames(fileFrames: r.fileFrames(heardFrames: frames))
      #expect(abs(heard - frames) <= (h >= 100 ? 0 : 1), "\(r) from \(frames) heard frames")
      let file = r.fileFrames(heardFrames: r.heardFrames(fileFrames: frames))
      #expect(abs(file - frames) <= (h + 99) / 200 + 1, "\(r) from \(frames) file frames")
    }
  }

  /// Random walks of steps, speeds set and typed: always in range, `next` never slower and
  /// `previous` never faster, each lands on a step, and on a step they undo each other.
  @Test func randomStepsStayInRangeAndUndoEachOther() async {
    let walks = zip(Gen.int(in: 0...3), Gen.int(in: -100...400)).array(of: 1...60)
    await propertyCheck(count: 500, input: walks) { walk in
      var rate = PlaybackRate.normal
      for (kind, number) in walk {
        let before = rate
        switch kind {
        case 0: rate = rate.next
        case 1: rate = rate.previous
        case 2: rate = PlaybackRate(clampingHundredths: number)
        default: rate = (try? PlaybackRate(parsing: "\(number)%")) ?? rate
        }
        #expect(rate >= .slowest && rate <= .fastest)
        #expect(before.next >= before && before.previous <= before)
        #expect(before.next == .fastest || before.next > before)
        #expect(before.previous == .slowest || before.previous < before)
        #expect(PlaybackRate.steps.contains(before.next))
        #expect(PlaybackRate.steps.contains(before.previous))
        if PlaybackRate.steps.contains(before) {
          if before != .fastest { #expect(before.next.previous == before) }
          if before != .slowest { #expect(before.previous.next == before) }
        } else {
          #expect(before.next.previous <= before && before.previous.next >= before)
        }
      }
    }
  }
}
