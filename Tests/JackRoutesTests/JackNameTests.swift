import SessionCore
import Testing

@testable import JackRoutes

/// The jack-name table: what each name the kernel uses means as a route.
@Suite(.timeLimit(.minutes(2))) struct JackNameTests {
  static let outputs: [(String, RouteKind, String)] = [
    ("Headphone Jack", .headphones, "Headphones"),
    ("Front Headphone Jack", .headphones, "Front headphones"),
    ("Front Headphone Front Jack", .headphones, "Front headphones"),
    ("Dock Headphone Jack", .headphones, "Dock headphones"),
    ("Headphone Mic Jack", .headphones, "Headphone/mic"),
    ("Headset Jack", .headphones, "Headphones"),
    ("Headphone - Output Jack", .headphones, "Headphones"),
    ("Line Out Jack", .line, "Line out"),
    ("Line Out Front Jack", .line, "Line out"),
    ("Front Line Out Jack", .line, "Front line out"),
    ("Rear Line Out Jack", .line, "Rear line out"),
    ("Dock Line Out Jack", .line, "Dock line out"),
    ("Speaker Jack", .speakers, "Speakers"),
    ("Speaker Front Jack", .speakers, "Speakers"),
    ("Speaker - Output Jack", .speakers, "Speakers"),
    ("HDMI/DP,pcm=3 Jack", .hdmi, "HDMI/DisplayPort 3"),
    ("HDMI/DP,pcm=10 Jack", .hdmi, "HDMI/DisplayPort 10"),
    ("HDMI/DP Jack", .hdmi, "HDMI/DisplayPort"),
    ("HDMI Jack", .hdmi, "HDMI/DisplayPort"),
    ("DP Jack", .hdmi, "HDMI/DisplayPort"),
    ("SPDIF Jack", .line, "Digital out"),
    ("Bass Jack", .unknown, "Bass"),
  ]

  @Test(arguments: outputs)
  func outputJacksNameARoute(name: String, kind: RouteKind, label: String) {
    #expect(JackName.meaning(of: name) == .output(kind, label: label))
  }

  static let ignored: [(String, JackIgnoredReason)] = [
    ("Speaker Phantom Jack", .phantom),
    ("Internal Speaker Phantom Jack", .phantom),
    ("Headphone Phantom Jack", .phantom),
    ("Internal Mic Phantom Jack", .phantom),
    ("SPDIF Phantom Jack", .phantom),
    ("Mic Jack", .input),
    ("Front Mic Jack", .input),
    ("Rear Mic Jack", .input),
    ("Dock Mic Jack", .input),
    ("Headset Mic Jack", .input),
    ("Line Jack", .input),
    ("Aux Jack", .input),
    ("Mic - Input Jack", .input),
    ("Line Out Surround Jack", .extraChannels),
    ("Line Out CLFE Jack", .extraChannels),
    ("Line Out Side Jack", .extraChannels),
    ("Speaker Surround Jack", .extraChannels),
    ("Master Playback Switch", .notAJack),
    ("Headphone Playback Volume", .notAJack),
    ("Jack", .notAJack),
  ]

  @Test(arguments: ignored)
  func otherJacksAreIgnoredWithAReason(name: String, reason: JackIgnoredReason) {
    #expect(JackName.meaning(of: name) == .ignored(reason))
  }

  @Test func aSecondElementOfTheSameNameIsNumbered() {
    #expect(
      JackName.meaning(of: "Headphone Jack", index: 1)
        == .output(.headphones, label: "Headphones 2"))
  }
}
