import AudioCore
import Testing

@Suite(.timeLimit(.minutes(2))) struct PCMFormatTests {
  let cd = PCMFormat(sampleRate: 44_100, channels: 2)
  let dat = PCMFormat(sampleRate: 48_000, channels: 1)

  @Test func framesInSecondsRoundDown() {
    #expect(cd.frames(in: 1.5) == 66_150)
    #expect(cd.frames(in: 0) == 0)
    #expect(cd.frames(in: 2.9 / 44_100) == 2)
    #expect(dat.frames(in: 10) == 480_000)
    #expect(dat.frames(in: 0.000_02) == 0)
  }

  @Test func secondsOfFrames() {
    #expect(cd.seconds(22_050) == 0.5)
    #expect(cd.seconds(0) == 0)
    #expect(dat.seconds(48_000) == 1)
    #expect(dat.seconds(12) == 0.000_25)
  }

  /// A position the engine reports in seconds, handed back to seek or load, lands on the same
  /// frame (not the one before it).
  @Test(arguments: [44_100, 48_000, 22_050, 96_000])
  func framesAndSecondsRoundTrip(sampleRate: Int) {
    let format = PCMFormat(sampleRate: sampleRate, channels: 2)
    let off = (0..<200_000).filter { format.frames(in: format.seconds($0)) != $0 }
    let framesOff = off.count
    #expect(framesOff == 0, "frames that come back one short include \(off.prefix(5))")
  }

  @Test func describesItselfForPeople() {
    #expect(cd.description == "44100 Hz stereo")
    #expect(dat.description == "48000 Hz mono")
    #expect(PCMFormat(sampleRate: 96_000, channels: 6).description == "96000 Hz 6 ch")
  }

  @Test func formatsAreEqualByRateAndChannels() {
    #expect(cd == PCMFormat(sampleRate: 44_100, channels: 2))
    #expect(cd != PCMFormat(sampleRate: 44_100, channels: 1))
    #expect(cd != PCMFormat(sampleRate: 48_000, channels: 2))
  }

  @Test func aFormatNeedsARateAndChannels() async {
    await #expect(processExitsWith: .failure) {
      _ = PCMFormat(sampleRate: 44_100, channels: 0)
    }
  }

  /// The year column: a date tag's year, whatever the tagger wrote around it.
  @Test(
    arguments: [
      ("1999", 1999), ("1999-06-12", 1999), ("2002/03", 2002), (" 1971 ", 1971),
      ("(P) 1985 EMI", 1985), ("99", nil), ("June", nil), ("", nil), ("0000", nil),
    ] as [(String, Int?)])
  func aDateTagGivesItsYear(date: String, year: Int?) {
    #expect(TrackMetadata.year(fromDate: date) == year)
  }
}
