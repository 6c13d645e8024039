import Testing

@testable import TerminalUI

@Suite(.timeLimit(.minutes(2))) struct KeyNameTests {
  @Test func namesParse() throws {
    #expect(try Key(parsing: "space") == .char(" "))
    #expect(try Key(parsing: "n") == .char("n"))
    #expect(try Key(parsing: "G") == .char("G"))
    #expect(try Key(parsing: "C-x") == .char("x", .ctrl))
    #expect(try Key(parsing: "M-x") == .char("x", .alt))
    #expect(try Key(parsing: "A-x") == .char("x", .alt))
    #expect(try Key(parsing: "left") == Key(.left))
    #expect(try Key(parsing: "S-tab") == Key(.tab, .shift))
    #expect(try Key(parsing: "F1") == Key(.function(1)))
    #expect(try Key(parsing: "f12") == Key(.function(12)))
    #expect(try Key(parsing: "C-S-up") == Key(.up, [.ctrl, .shift]))
    #expect(try Key(parsing: "pgdn") == Key(.pageDown))
    #expect(try Key(parsing: "PageUp") == Key(.pageUp))
    #expect(try Key(parsing: "enter") == Key(.enter))
    #expect(try Key(parsing: "esc") == Key(.escape))
    #expect(try Key(parsing: "media_play_pause") == Key(.media(.playPause)))
    #expect(try Key(parsing: "raise_volume") == Key(.media(.raiseVolume)))
    #expect(try Key(parsing: "-") == .char("-"))
    #expect(try Key(parsing: "C--") == .char("-", .ctrl))
    #expect(try Key(parsing: "+") == .char("+"))
    #expect(try Key(parsing: "中") == .char("中"))
  }

  /// The config and the decoder agree on one form: Shift+a is "A"; Ctrl+Shift+a is C-S-a.
  @Test func shiftedLettersHaveOneForm() throws {
    #expect(try Key(parsing: "S-a") == .char("A"))
    #expect(try Key(parsing: "C-A") == .char("a", [.ctrl, .shift]))
    #expect(try Key(parsing: "C-S-a") == .char("a", [.ctrl, .shift]))
    var d = KeyDecoder()
    #expect(d.feed(Array("\u{1B}[97;6u".utf8)) == [.key(try Key(parsing: "C-S-a"))])
    #expect(d.feed(Array("\u{1B}[97;2u".utf8)) == [.key(try Key(parsing: "A"))])
  }

  @Test func unknownNamesSayWhatIsWrong() {
    #expect(throws: KeyNameError.self) { try Key(parsing: "spcae") }
    #expect(throws: KeyNameError.self) { try Key(parsing: "X-a") }
    #expect(throws: KeyNameError.self) { try Key(parsing: "F36") }
    #expect(throws: KeyNameError.self) { try Key(parsing: "") }
    #expect(throws: KeyNameError.self) { try Key(parsing: "\u{1}") }
    do {
      _ = try Key(parsing: "spcae")
    } catch {
      #expect(error.description.hasPrefix("unknown key 'spcae'"))
      #expect(error.description.contains("'space'"))
    }
    do {
      _ = try Key(parsing: "X-a")
    } catch {
      #expect(error.description.contains("unknown modifier 'X-'"))
    }
  }

  @Test func namesRoundTrip() throws {
    for name in [
      "space", "n", "C-x", "M-x", "S-tab", "F1", "left", "pgdn", "enter", "esc", "G",
      "media_track_next", "C-S-a", "-", "?",
    ] {
      #expect(try Key(parsing: name).description == name)
    }
  }
}

@Suite(.timeLimit(.minutes(2))) struct KeyBindingTests {
  @Test func everyDefaultKeyParses() throws {
    for action in UIAction.allCases {
      for name in action.defaultKeys {
        _ = try Key(parsing: name)
      }
      #expect(
        KeyBindings.defaults.keyNames(action).count == action.defaultKeys.count, "\(action)")
    }
  }

  @Test func noDefaultKeyIsBoundTwice() throws {
    var seen: [Key: UIAction] = [:]
    for action in UIAction.allCases {
      for name in action.defaultKeys {
        let key = try Key(parsing: name)
        #expect(seen[key] == nil, "\(name) is bound to \(seen[key].map { "\($0)" } ?? "") too")
        seen[key] = action
      }
    }
  }

  @Test func theIssuesDefaults() throws {
    let b = KeyBindings.defaults
    func action(_ name: String) throws -> UIAction? { b.action(for: try Key(parsing: name)) }
    #expect(try action("space") == .playPause)
    #expect(try action("n") == .next)
    #expect(try action("b") == .previous)
    #expect(try action("left") == .seekBackward)
    #expect(try action("l") == .seekForward)
    #expect(try action("+") == .volumeUp)
    #expect(try action("-") == .volumeDown)
    #expect(try action("m") == .mute)
    #expect(try action("s") == .shuffle)
    #expect(try action("r") == .repeat)
    #expect(try action("o") == .routePicker)
    #expect(try action("enter") == .playSelection)
    #expect(try action("a") == .addToQueue)
    #expect(try action("d") == .remove)
    #expect(try action("/") == .search)
    #expect(try action("tab") == .toggleView)
    #expect(try action("1") == .libraryView)
    #expect(try action("2") == .queueView)
    #expect(try action("j") == .down)
    #expect(try action("up") == .up)
    #expect(try action("pgdn") == .pageDown)
    #expect(try action("g") == .top)
    #expect(try action("G") == .bottom)
    #expect(try action("?") == .help)
    #expect(try action("q") == .quit)
    #expect(try action("C") == .simulateCall)
    #expect(try action("media_play_pause") == .playPause)
  }

  @Test func theConfigReplacesAnActionsKeys() throws {
    let (b, problems) = KeyBindings.configured(["play_pause": ["p", "C-x"], "next": ["N"]])
    #expect(problems.isEmpty)
    #expect(b.action(for: .char("p")) == .playPause)
    #expect(b.action(for: .char("x", .ctrl)) == .playPause)
    #expect(b.action(for: .char(" ")) == nil)  // replaced, not added to
    #expect(b.action(for: .char("N")) == .next)
    #expect(b.action(for: .char("n")) == nil)
    #expect(b.keyNames(.playPause) == ["p", "C-x"])
  }

  @Test func aKeyTakenByTheConfigLeavesItsDefaultAction() throws {
    // 's' is shuffle by default; given to stop, shuffle loses it.
    let (b, problems) = KeyBindings.configured(["stop": ["s"]])
    #expect(problems.isEmpty)
    #expect(b.action(for: .char("s")) == .stop)
    #expect(b.keyNames(.shuffle).isEmpty)
  }

  @Test func anEmptyListUnbinds() {
    let (b, problems) = KeyBindings.configured(["quit": []])
    #expect(problems.isEmpty)
    #expect(b.action(for: .char("q")) == nil)
  }

  /// As with every setting, a bad entry is a problem line and the default stands for it.
  @Test func badEntriesAreProblemsTheirDefaultsStandAndTheRestApplies() {
    let (b, problems) = KeyBindings.configured([
      "plya_pause": ["p"], "next": ["spcae", "N"], "previous": ["B"],
    ])
    #expect(problems.count == 2)
    #expect(
      problems.contains { $0.contains("unknown action 'plya_pause'") && $0.contains("play_pause") })
    #expect(
      problems.contains {
        $0.contains("unknown key 'spcae'")
          && $0.contains("keeps its default keys (n, media_track_next)")
      })
    #expect(b.action(for: .char("n")) == .next)
    #expect(b.action(for: .char("N")) == nil)
    #expect(b.action(for: .char("B")) == .previous)
    #expect(b.action(for: .char("b")) == nil)
    #expect(b.action(for: .char(" ")) == .playPause)
  }

  @Test func aKeyGivenToTwoActionsIsAProblem() {
    let (b, problems) = KeyBindings.configured(["next": ["x"], "previous": ["x"]])
    #expect(problems.count == 1)
    #expect(b.action(for: .char("x")) == .next)
  }

  @Test func theHelpListsTheLiveBindings() {
    let (b, _) = KeyBindings.configured(["play_pause": ["p"]])
    let lines = HelpText.lines(b)
    #expect(lines.contains { $0.action == "play_pause" && $0.keys == "p" })
    for action in UIAction.allCases {
      #expect(lines.contains { $0.action == action.rawValue }, "\(action) missing from help")
    }
  }
}

/// The cmus preset: cmus's habits, with hark's keys for what cmus has none for, and the config's
/// table on top of it.
@Suite(.timeLimit(.minutes(2))) struct KeyPresetTests {
  private func action(_ bindings: KeyBindings, _ name: String) throws -> UIAction? {
    bindings.action(for: try Key(parsing: name))
  }

  @Test func cmusHabitsAreBoundAndHarksOwnStayForTheRest() throws {
    let (cmus, problems) = KeyBindings.configured([:], preset: "cmus")
    #expect(problems.isEmpty)
    #expect(try action(cmus, "x") == .play)
    #expect(try action(cmus, "c") == .playPause)
    #expect(try action(cmus, "v") == .stop)
    #expect(try action(cmus, "b") == .next, "b is next in cmus, previous in hark")
    #expect(try action(cmus, "z") == .previous)
    #expect(try action(cmus, "E") == .playNext)
    #expect(try action(cmus, "e") == .addToQueue)
    #expect(try action(cmus, "D") == .remove)
    #expect(try action(cmus, "p") == .moveDown)
    #expect(try action(cmus, "u") == .undo, "hark's own where cmus has none")
    #expect(try action(cmus, "Z") == .sleepTimer, "z is cmus's previous; the timer keeps a key")
    // The config's table still has the last word.
    let (mine, _) = KeyBindings.configured(["next": ["n"]], preset: "cmus")
    #expect(try action(mine, "n") == .next)
    #expect(try action(mine, "b") == nil)
    #expect(KeyBindings.configured([:], preset: "hark").0 == KeyBindings.defaults)
    // A key the table gives to another action leaves the preset's (p was cmus's move down).
    let (moved, refusals) = KeyBindings.configured(["play_pause": ["p"]], preset: "cmus")
    #expect(refusals.isEmpty)
    #expect(try action(moved, "p") == .playPause)
    #expect(try action(moved, "P") == .moveUp)
  }
}
