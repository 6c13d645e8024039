import Testing

@testable import TerminalUI

/// Byte sequences as terminals send them (xterm, the Linux console, kitty's protocol as its
/// documentation gives them), decoded whole and split across reads at every point.
@Suite(.timeLimit(.minutes(2))) struct KeyDecoderTests {
  private func decode(_ bytes: [UInt8]) -> [InputEvent] {
    var d = KeyDecoder()
    return d.feed(bytes)
  }

  private func decode(_ text: String) -> [InputEvent] { decode(Array(text.utf8)) }

  private func keys(_ text: String) -> [Key] {
    decode(text).compactMap { if case .key(let k) = $0 { k } else { nil } }
  }

  /// Found by the fuzzer: a kitty key number past UInt32 trapped the interface.
  @Test func aKittyKeyNumberPastUInt32IsNoKeyAndNoCrash() {
    var d = KeyDecoder()
    let events = d.feed(Array("\u{1B}[99999999999u".utf8)) + d.timeout()
    #expect(!events.contains { if case .key = $0 { true } else { false } })
  }

  @Test func plainTextIsCharacters() {
    #expect(keys("nb q") == [.char("n"), .char("b"), .char(" "), .char("q")])
    #expect(keys("G?/+") == [.char("G"), .char("?"), .char("/"), .char("+")])
  }

  @Test func utf8TextIsOneKeyPerCharacter() {
    #expect(keys("é中🎵") == [.char("é"), .char("中"), .char("🎵")])
  }

  @Test func controlCharacters() {
    #expect(keys("\r") == [Key(.enter)])
    #expect(keys("\n") == [Key(.enter)])
    #expect(keys("\t") == [Key(.tab)])
    #expect(decode([0x7F]) == [.key(Key(.backspace))])
    #expect(decode([0x08]) == [.key(Key(.backspace))])
    #expect(decode([0x03]) == [.key(.char("c", .ctrl))])
    #expect(decode([0x0C]) == [.key(.char("l", .ctrl))])
    #expect(decode([0x1A]) == [.key(.char("z", .ctrl))])
    #expect(decode([0x00]) == [.key(.char(" ", .ctrl))])
  }

  @Test func legacyCursorKeysInBothModes() {
    // Normal mode (CSI) and application mode (SS3), as xterm sends them.
    #expect(
      keys("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D") == [Key(.up), Key(.down), Key(.right), Key(.left)])
    #expect(
      keys("\u{1B}OA\u{1B}OB\u{1B}OC\u{1B}OD") == [Key(.up), Key(.down), Key(.right), Key(.left)])
    #expect(
      keys("\u{1B}[H\u{1B}[F\u{1B}OH\u{1B}OF") == [Key(.home), Key(.end), Key(.home), Key(.end)])
  }

  @Test func legacyTildeKeys() {
    #expect(
      keys("\u{1B}[5~\u{1B}[6~\u{1B}[2~\u{1B}[3~\u{1B}[1~\u{1B}[4~")
        == [Key(.pageUp), Key(.pageDown), Key(.insert), Key(.delete), Key(.home), Key(.end)])
    #expect(keys("\u{1B}[15~\u{1B}[24~") == [Key(.function(5)), Key(.function(12))])
    #expect(keys("\u{1B}OP\u{1B}OS") == [Key(.function(1)), Key(.function(4))])
    #expect(keys("\u{1B}[[A") == [Key(.function(1))])  // the Linux console
  }

  @Test func legacyModifiers() {
    #expect(keys("\u{1B}[1;5A") == [Key(.up, .ctrl)])
    #expect(keys("\u{1B}[1;2D") == [Key(.left, .shift)])
    #expect(keys("\u{1B}[1;3C") == [Key(.right, .alt)])
    #expect(keys("\u{1B}[5;5~") == [Key(.pageUp, .ctrl)])
    #expect(keys("\u{1B}[Z") == [Key(.tab, .shift)])
    // Alt is an Esc before the key.
    #expect(keys("\u{1B}x") == [.char("x", .alt)])
    #expect(keys("\u{1B}X") == [.char("x", [.alt, .shift])])
    #expect(decode([0x1B, 0x7F]) == [.key(Key(.backspace, .alt))])
  }

  @Test func kittyKeys() {
    #expect(keys("\u{1B}[27u") == [Key(.escape)])
    #expect(keys("\u{1B}[99;5u") == [.char("c", .ctrl)])
    #expect(keys("\u{1B}[97;6u") == [.char("a", [.ctrl, .shift])])
    #expect(keys("\u{1B}[120;3u") == [.char("x", .alt)])
    #expect(keys("\u{1B}[13u\u{1B}[9;2u") == [Key(.enter), Key(.tab, .shift)])
    // Arrows keep their legacy letters, with "1;" and the modifiers when there are any.
    #expect(keys("\u{1B}[1;5A\u{1B}[C") == [Key(.up, .ctrl), Key(.right)])
    #expect(keys("\u{1B}[57376u") == [Key(.function(13))])
    #expect(keys("\u{1B}[57399u\u{1B}[57414u") == [.char("0"), Key(.enter)])  // keypad
  }

  @Test func kittyExtrasAreIgnoredButTheKeyIsKept() {
    // Alternate keys after ':', an event type after the modifiers, text after a third ';'.
    #expect(keys("\u{1B}[97:65;2u") == [.char("A")])
    #expect(keys("\u{1B}[97;1:1u") == [.char("a")])
    #expect(keys("\u{1B}[97;1:2u") == [.char("a")])  // a repeat is a press
    #expect(keys("\u{1B}[97;1:3u").isEmpty)  // a release is not
    #expect(keys("\u{1B}[97;2;65u") == [.char("A")])
    // Caps Lock and Num Lock do not change what a key means.
    #expect(keys("\u{1B}[99;69u") == [.char("c", .ctrl)])
    // Keys of their own that are not ours: Caps Lock, a lone Shift.
    #expect(keys("\u{1B}[57358u\u{1B}[57441u").isEmpty)
  }

  @Test func everyMediaKey() {
    let expected: [(Int, MediaKey)] = [
      (57428, .play), (57429, .pause), (57430, .playPause), (57431, .reverse), (57432, .stop),
      (57433, .fastForward), (57434, .rewind), (57435, .trackNext), (57436, .trackPrevious),
      (57437, .record), (57438, .lowerVolume), (57439, .raiseVolume), (57440, .muteVolume),
    ]
    #expect(expected.count == MediaKey.allCases.count)
    for (number, media) in expected {
      #expect(keys("\u{1B}[\(number)u") == [Key(.media(media))], "CSI \(number) u")
      #expect(keys("\u{1B}[\(number);1u") == [Key(.media(media))])
    }
  }

  @Test func terminalAnswersAreNotKeys() {
    #expect(decode("\u{1B}[?1u") == [.keyboardProtocol(flags: 1)])
    #expect(decode("\u{1B}[?0u") == [.keyboardProtocol(flags: 0)])
    #expect(decode("\u{1B}[?62;22c") == [.deviceAttributes(sixel: false)])
    #expect(decode("\u{1B}[?1;2c") == [.deviceAttributes(sixel: false)])
    // Sixel graphics (feature 4): xterm -ti vt340, foot, mlterm, WezTerm; xterm as a VT420
    // does not; a VT100's option bits are not features.
    #expect(decode("\u{1B}[?63;1;2;4;6;9;15;16;22;28c") == [.deviceAttributes(sixel: true)])
    #expect(decode("\u{1B}[?62;4;22c") == [.deviceAttributes(sixel: true)])
    #expect(decode("\u{1B}[?65;4;6;18;22c") == [.deviceAttributes(sixel: true)])
    #expect(decode("\u{1B}[?64;1;2;6;9;15;16;17;18;21;22;28c") == [.deviceAttributes(sixel: false)])
    #expect(decode("\u{1B}[?1;4c") == [.deviceAttributes(sixel: false)])
    // Windows Terminal, a VT510-like class 61, draws sixels.
    #expect(decode("\u{1B}[?61;4;6;7;14;21;22;23;24;28;32;42c") == [.deviceAttributes(sixel: true)])
    // The size of a cell (CSI 16 t): height, then width; other window reports are dropped.
    #expect(decode("\u{1B}[6;13;6t") == [.cellSize(width: 6, height: 13)])
    #expect(decode("\u{1B}[4;394;604t\u{1B}[6;0;6t").isEmpty)
    #expect(decode("\u{1B}[?62;14c") == [.deviceAttributes(sixel: false)])
    // Focus reports, SGR mouse reports: dropped whole, nothing leaks out as keys.
    #expect(decode("\u{1B}[I\u{1B}[O\u{1B}[<0;3;4M").isEmpty)
  }

  /// kitty's answers to the graphics query (asked to draw the cover as a picture), whole and split
  /// at every byte; other application commands are dropped whole; Esc _ alone is Alt+_.
  @Test func theGraphicsAnswerIsNotKeys() {
    let ok = "\u{1B}_Gi=31;OK\u{1B}\\"
    #expect(decode(ok) == [.graphicsProtocol(true)])
    #expect(
      decode("\u{1B}_Gi=31;ENOTSUPPORTED:no such format\u{1B}\\") == [.graphicsProtocol(false)])
    #expect(decode("\u{1B}_Gi=31;OK\u{07}") == [.graphicsProtocol(true)])
    #expect(decode("\u{1B}_Gi=32;OK\u{1B}\\") == [])
    #expect(decode("\u{1B}_something else\u{1B}\\x") == [.key(Key.char("x"))])
    let bytes = Array((ok + "\u{1B}[?62;22c").utf8)
    for cut in 1..<bytes.count {
      var d = KeyDecoder()
      let events = d.feed(bytes[..<cut]) + d.feed(bytes[cut...])
      #expect(
        events == [.graphicsProtocol(true), .deviceAttributes(sixel: false)], "cut at \(cut)")
    }
    var d = KeyDecoder()
    #expect(d.feed(Array("\u{1B}_".utf8)).isEmpty)
    #expect(d.timeout() == [.key(Key.char("_", .alt))])
    // One that never ends is dropped once it is long, not held for ever.
    var long = KeyDecoder()
    _ = long.feed(Array(("\u{1B}_G" + String(repeating: "a", count: 5_000)).utf8))
    #expect(!long.isPending)
  }

  /// Every sequence, fed one byte at a time and split at every point, decodes the same.
  @Test func sequencesSplitAcrossReads() {
    let recorded = [
      "q", "\u{1B}[A", "\u{1B}OB", "\u{1B}[1;5C", "\u{1B}[5~", "\u{1B}[57430u", "\u{1B}[99;5u",
      "\u{1B}[97:65;2:1u", "中", "🎵", "\u{1B}x", "\u{1B}[?1u", "\u{1B}[?62;22c",
      "\u{1B}[24~", "\u{1B}[[B",
    ]
    for text in recorded {
      let bytes = Array(text.utf8)
      let whole = decode(bytes)
      #expect(!whole.isEmpty, "\(bytes)")
      for cut in 1..<max(1, bytes.count) {
        var d = KeyDecoder()
        let first = d.feed(bytes[..<cut])
        #expect(first.isEmpty, "\(bytes) cut at \(cut) gave \(first) early")
        #expect(d.isPending)
        let rest = d.feed(bytes[cut...])
        #expect(rest == whole, "\(bytes) cut at \(cut)")
        #expect(!d.isPending)
      }
      var d = KeyDecoder()
      var oneByOne: [InputEvent] = []
      for b in bytes { oneByOne += d.feed([b]) }
      #expect(oneByOne == whole)
    }
  }

  @Test func severalKeysInOneRead() {
    #expect(
      keys("j\u{1B}[Bk\u{1B}[57435u ")
        == [.char("j"), Key(.down), .char("k"), Key(.media(.trackNext)), .char(" ")])
  }

  @Test func aLoneEscIsEscOnlyAfterTheWait() {
    var d = KeyDecoder()
    #expect(d.feed([0x1B]).isEmpty)
    #expect(d.isPending)
    #expect(d.timeout() == [.key(Key(.escape))])
    #expect(!d.isPending)
  }

  /// An Esc is taken once 50 ms passed since it came, however often the owner looked before
  /// (an interface woken every few milliseconds by its player's news once never took it), and
  /// the wait counts from the last byte of a sequence still coming.
  @Test func aLoneEscIsTakenWhenItsWaitIsOverHoweverOftenTheOwnerLooks() {
    let ms: UInt64 = 1_000_000
    var d = KeyDecoder()
    #expect(d.untilExpiry(now: 0) == nil)
    #expect(d.feed([0x1B], at: 1000 * ms).isEmpty)
    for t in stride(from: 1000 * ms, to: 1050 * ms, by: Int(3 * ms)) {
      #expect(d.expire(now: t).isEmpty, "at \(t / ms) ms")
      #expect(d.untilExpiry(now: t) == 1050 * ms - t)
    }
    #expect(d.expire(now: 1050 * ms) == [.key(Key(.escape))])
    #expect(!d.isPending)
    #expect(d.untilExpiry(now: 1050 * ms) == nil)
    // Esc then "[" a little later: the wait starts again from the "[".
    #expect(d.feed([0x1B], at: 2000 * ms).isEmpty)
    #expect(d.feed(Array("[".utf8), at: 2040 * ms).isEmpty)
    #expect(d.expire(now: 2060 * ms).isEmpty)
    #expect(d.expire(now: 2090 * ms) == [.key(Key.char("[", .alt))])
  }

  @Test func anEscThatStartsASequenceIsNotEsc() {
    var d = KeyDecoder()
    #expect(d.feed([0x1B]).isEmpty)
    #expect(d.feed(Array("[A".utf8)) == [.key(Key(.up))])
    #expect(!d.isPending)
  }

  @Test func escThenBracketAloneIsAltBracket() {
    var d = KeyDecoder()
    #expect(d.feed(Array("\u{1B}[".utf8)).isEmpty)
    #expect(d.timeout() == [.key(.char("[", .alt))])
  }

  @Test func aSequenceCutShortIsDroppedNotTyped() {
    var d = KeyDecoder()
    #expect(d.feed(Array("\u{1B}[1;5".utf8)).isEmpty)
    // Its "1", ";" and "5" must not reach the bindings ('1' switches to the library).
    #expect(d.timeout().isEmpty)
    #expect(d.feed(Array("n".utf8)) == [.key(.char("n"))])
  }

  @Test func escEscIsTwoEscs() {
    var d = KeyDecoder()
    #expect(d.feed([0x1B, 0x1B]) == [.key(Key(.escape))])
    #expect(d.timeout() == [.key(Key(.escape))])
  }

  @Test func invalidUTF8IsSkipped() {
    #expect(keys(String(decoding: [0x61], as: UTF8.self)) == [.char("a")])
    #expect(decode([0xFF, 0x61]) == [.key(.char("a"))])
    #expect(decode([0xE4, 0x61]) == [.key(.char("a"))])  // a lead byte without its tail
  }
}
