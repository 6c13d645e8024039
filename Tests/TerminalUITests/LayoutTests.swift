import Platform
import SessionCore
import Testing

@testable import TerminalUI
import PlayerCore

@Suite(.timeLimit(.minutes(2))) struct TextWidthTests {
  @Test func widthsFollowWcwidth() {
    #expect(TextWidth.of("abc") == 3)
    #expect(TextWidth.of("中文") == 4)
    #expect(TextWidth.of("ｶﾀｶﾅ") == 4)  // halfwidth katakana: 1 each
    #expect(TextWidth.of("ＡＢ") == 4)  // fullwidth Latin: 2 each
    #expect(TextWidth.of("한국어") == 6)
    #expect(TextWidth.of("e\u{301}") == 1)  // a combining acute accent takes no cell
    #expect(TextWidth.of("🎵") == 2)
    #expect(TextWidth.of("a\u{200B}b") == 2)  // zero width space
    #expect(TextWidth.of("…") == 1)
  }

  /// What is shown escaped is measured as its escape, so a row around a hostile or a Latin-1
  /// name keeps its columns (the time column was cut to "0:" by "Bj\xf6rk").
  @Test func escapedTextIsMeasuredAsShown() {
    let latin1 = FileName.string(Array("Bj".utf8) + [0xF6] + Array("rk".utf8))
    #expect(TextWidth.of(latin1) == TextWidth.of(latin1.escapingControlCharacters))
    #expect(TextWidth.of(latin1) == 8)
    let hostile = "\u{1B}]0;x\u{07} two\nlines\u{9B}"
    #expect(TextWidth.of(hostile) == TextWidth.of(hostile.escapingControlCharacters))
  }

  @Test func cjkTitlesAreCutToTheColumnWithoutHalfCharacters() {
    let title = "夜行列車の歌"  // 12 cells
    #expect(TextWidth.truncate(title, to: 12) == title)
    #expect(TextWidth.truncate(title, to: 11) == "夜行列車の…")  // 10 + 1
    #expect(TextWidth.truncate(title, to: 10) == "夜行列車…")  // 8 + 1: the 9th cell stays empty
    for width in 0...14 {
      let cut = TextWidth.truncate(title, to: width)
      #expect(TextWidth.of(cut) <= width, "width \(width): '\(cut)'")
      #expect(TextWidth.of(TextWidth.fit(title, to: width)) == width)
    }
  }

  @Test func mixedTitlesAreFitExactly() {
    #expect(TextWidth.fit("Lanterns", to: 10) == "Lanterns  ")
    #expect(TextWidth.fit("Lanterns", to: 5) == "Lant…")
    #expect(TextWidth.fit("a中b", to: 3) == "a… ")  // 中 would not fit beside the "…"
    #expect(TextWidth.of(TextWidth.fit("a中b", to: 3)) <= 3)
    #expect(TextWidth.fitRight("3:45", to: 6) == "  3:45")
    #expect(TextWidth.fit("e\u{301}te\u{301}", to: 3) == "e\u{301}te\u{301}")
    #expect(TextWidth.fit("e\u{301}te\u{301}", to: 4) == "e\u{301}te\u{301} ")
  }

  @Test func controlCharactersAreMadeSpaces() {
    #expect(TextWidth.sanitized("a\nb\tc\u{1B}[31m") == "a b c [31m")
  }
}

@Suite(.timeLimit(.minutes(2))) struct FormatTests {
  @Test func times() {
    #expect(
      [0, 999, 1_000, 4_400, 50_000, 1_234_567].map(Format.count) == [
        "0", "999", "1,000", "4,400", "50,000", "1,234,567",
      ])
    #expect(Format.time(0) == "0:00")
    #expect(Format.time(5.9) == "0:05")
    #expect(Format.time(83.4) == "1:23")
    #expect(Format.time(600) == "10:00")
    #expect(Format.time(3725) == "1:02:05")
    #expect(Format.time(nil) == "--:--")
    #expect(Format.time(.nan) == "--:--")
    #expect(Format.time(.infinity) == "--:--")
    #expect(Format.time(-3) == "0:00")
  }

  @Test func bars() {
    #expect(Format.bar(0, width: 4) == "────")
    #expect(Format.bar(0.5, width: 4) == "━━──")
    #expect(Format.bar(1, width: 4) == "━━━━")
    #expect(Format.bar(2, width: 4) == "━━━━")
    #expect(Format.bar(-1, width: 4) == "────")
    #expect(Format.bar(.nan, width: 3) == "───")
    #expect(Format.bar(0.5, width: 0) == "")
  }

  @Test func volumeOrTheDevicesName() {
    #expect(Format.volume(.level(percent: 50, muted: false), barWidth: 4) == "vol ██░░ 50%")
    #expect(Format.volume(.level(percent: 50, muted: true), barWidth: 4) == "vol muted")
    #expect(Format.volume(.unavailable(device: "null"), barWidth: 4) == "out: null")
  }

  @Test func statesSayWhy() {
    var s = PlayerSnapshot()
    #expect(Format.state(s) == "Stopped")
    s.state = .playing
    #expect(Format.state(s) == "Playing")
    s.state = .paused
    s.pausedBy = .user
    #expect(Format.state(s) == "Paused")
    s.pausedBy = .interruption
    s.interruption = InterruptionCause(kind: .call, by: "call")
    #expect(Format.state(s) == "Paused (call)")
    s.interruption = InterruptionCause(kind: .otherAudio, by: "music")
    #expect(Format.state(s) == "Paused ('music')")
    s.pausedBy = .route
    s.lostRoute = Route(name: "Headphones", kind: .headphones)
    #expect(Format.state(s) == "Paused (headphones unplugged)")
  }
}

@Suite(.timeLimit(.minutes(2))) struct ListPositionTests {
  @Test func theSelectionStaysOnScreen() {
    var p = ListPosition()
    p.move(by: 15, count: 30, height: 10)
    #expect(p.selected == 15 && p.top == 6)
    p.move(by: -100, count: 30, height: 10)
    #expect(p.selected == 0 && p.top == 0)
    p.move(by: 100, count: 30, height: 10)
    #expect(p.selected == 29 && p.top == 20)
    p.clamp(count: 5, height: 10)
    #expect(p.selected == 4 && p.top == 0)
    p.clamp(count: 0, height: 10)
    #expect(p.selected == 0 && p.top == 0)
  }
}
