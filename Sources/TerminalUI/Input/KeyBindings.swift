/// What a key can be bound to. The raw value is the name the config's `[keys]` table uses.
public enum UIAction: String, CaseIterable, Hashable, Sendable {
  case playPause = "play_pause"
  case play
  case pause
  case stop
  case next
  case previous
  case seekForward = "seek_forward"
  case seekBackward = "seek_backward"
  case fastForward = "fast_forward"
  case rewind
  case volumeUp = "volume_up"
  case volumeDown = "volume_down"
  case mute
  case shuffle
  case `repeat`
  case routePicker = "route_picker"
  case playSelection = "play_selection"
  case addToQueue = "add_to_queue"
  case playNext = "play_next"
  case remove
  case moveUp = "move_up"
  case moveDown = "move_down"
  case clearQueue = "clear_queue"
  case shuffleOnce = "shuffle_once"
  case undo
  case saveQueue = "save_queue"
  case toggleSpoken = "toggle_spoken"
  case goTo = "go_to"
  case search
  case toggleView = "toggle_view"
  case libraryView = "library_view"
  case queueView = "queue_view"
  case lyricsView = "lyrics_view"
  case chaptersView = "chapters_view"
  case nextChapter = "next_chapter"
  case previousChapter = "previous_chapter"
  case faster
  case slower
  case normalSpeed = "normal_speed"
  case down
  case up
  case pageDown = "page_down"
  case pageUp = "page_up"
  case top
  case bottom
  case parentFolder = "parent_folder"
  case help
  case redraw
  case simulateCall = "simulate_call"
  case sleepTimer = "sleep_timer"
  case detach
  case quit

  /// What it does, for the help overlay and the man page.
  public var summary: String {
    switch self {
    case .playPause: "play or pause"
    case .play: "play"
    case .pause: "pause"
    case .stop: "stop"
    case .next: "next track"
    case .previous: "previous track (or back to the start of this one)"
    case .seekForward: "forward 5 s"
    case .seekBackward: "back 5 s"
    case .fastForward: "forward by the player's seek step (10 s)"
    case .rewind: "back by the player's seek step (10 s)"
    case .volumeUp: "system volume up 5 %"
    case .volumeDown: "system volume down 5 %"
    case .mute: "mute or unmute the output"
    case .shuffle: "shuffle on or off"
    case .repeat: "repeat: off, all, one"
    case .routePicker: "choose the output (route picker)"
    case .playSelection: "play the selection (open a folder)"
    case .addToQueue: "add the selection to the queue"
    case .playNext: "play the selection next (after the track playing)"
    case .remove: "remove the selection from the queue"
    case .moveUp: "move the queue entry up"
    case .moveDown: "move the queue entry down"
    case .clearQueue: "clear the queue (undo brings it back)"
    case .shuffleOnce: "shuffle the queue's order once"
    case .undo: "undo the last change to the queue"
    case .saveQueue: "save the queue as a playlist (asks its name, and before replacing one)"
    case .toggleSpoken: "the track playing is spoken word (a prompt pauses it) or music"
    case .goTo: "go to a time in the track (1:30, 90, +10, -0:15)"
    case .search: "filter the view as you type (Esc clears)"
    case .toggleView: "switch between library and queue"
    case .libraryView: "library"
    case .queueView: "queue"
    case .lyricsView: "the lyrics of the track playing (again: back to the list)"
    case .chaptersView: "the chapters of the track playing (again: back to the list)"
    case .nextChapter: "next chapter of the track playing (an audiobook's, a podcast's)"
    case .previousChapter: "previous chapter (or back to the start of this one)"
    case .faster: "faster, the pitch kept (to 3×; a podcast or book keeps its own speed)"
    case .slower: "slower, the pitch kept (to 0.5×)"
    case .normalSpeed: "back to 1× (as recorded)"
    case .down: "move down"
    case .up: "move up"
    case .pageDown: "page down"
    case .pageUp: "page up"
    case .top: "go to the top"
    case .bottom: "go to the bottom"
    case .parentFolder: "go to the parent folder"
    case .help: "this help"
    case .redraw: "redraw the screen"
    case .simulateCall: "simulate an incoming call ('hark call')"
    case .sleepTimer:
      "the desktop's sleep timer, pressed again and again: 15, 30, 45, 60 min, end of track, off"
    case .detach: "leave, the player playing on in the background ('hark' comes back to it)"
    case .quit: "quit, saving the queue and position"
    }
  }

  /// The keys it has when the config says nothing about it.
  public var defaultKeys: [String] {
    switch self {
    case .playPause: ["space", "media_play_pause"]
    case .play: ["media_play"]
    case .pause: ["media_pause"]
    case .stop: ["media_stop"]
    case .next: ["n", "media_track_next"]
    case .previous: ["b", "media_track_previous"]
    case .seekForward: ["right", "l"]
    case .seekBackward: ["left", "h"]
    case .fastForward: ["media_fast_forward"]
    case .rewind: ["media_rewind"]
    case .volumeUp: ["+", "=", "raise_volume"]
    case .volumeDown: ["-", "lower_volume"]
    case .mute: ["m", "mute_volume"]
    case .shuffle: ["s"]
    case .repeat: ["r"]
    case .routePicker: ["o"]
    case .playSelection: ["enter"]
    case .addToQueue: ["a"]
    case .playNext: ["e"]
    case .remove: ["d", "delete"]
    case .moveUp: ["K"]
    case .moveDown: ["J"]
    case .clearQueue: ["X"]
    case .shuffleOnce: ["S"]
    case .undo: ["u"]
    case .saveQueue: ["w"]
    case .toggleSpoken: ["T"]
    case .goTo: [":"]
    case .search: ["/"]
    case .toggleView: ["tab"]
    case .libraryView: ["1"]
    case .queueView: ["2"]
    case .lyricsView: ["3", "L"]
    case .chaptersView: ["4", "#"]
    case .nextChapter: ["]"]
    case .previousChapter: ["["]
    case .faster: ["}"]
    case .slower: ["{"]
    case .normalSpeed: ["\\"]
    case .down: ["j", "down"]
    case .up: ["k", "up"]
    case .pageDown: ["pgdn"]
    case .pageUp: ["pgup"]
    case .top: ["g", "home"]
    case .bottom: ["G", "end"]
    case .parentFolder: ["backspace"]
    case .help: ["?"]
    case .redraw: ["C-l"]
    case .simulateCall: ["C"]
    case .sleepTimer: ["z"]
    case .detach: ["Q"]
    case .quit: ["q"]
    }
  }
}

/// The live table from keys to actions: the defaults, changed by the config's `[keys]` table.
public struct KeyBindings: Sendable, Equatable {
  /// Each action's keys, in the order written.
  public private(set) var keys: [UIAction: [Key]]
  private var actions: [Key: UIAction]

  /// The built-in bindings.
  public static let defaults: KeyBindings = {
    var keys: [UIAction: [Key]] = [:]
    for action in UIAction.allCases {
      // The defaults are ours: a name that does not parse is a bug found by the tests.
      keys[action] = action.defaultKeys.compactMap { try? Key(parsing: $0) }
    }
    return KeyBindings(keys: keys)
  }()

  private init(keys: [UIAction: [Key]]) {
    self.keys = keys
    actions = [:]
    for action in UIAction.allCases {
      for key in keys[action] ?? [] { actions[key] = action }
    }
  }

  /// The action bound to `key`, if any.
  public func action(for key: Key) -> UIAction? { actions[key] }

  /// The keys of `action` as the config writes them ("space, media_play_pause").
  public func keyNames(_ action: UIAction) -> [String] {
    (keys[action] ?? []).map(\.description)
  }

  /// The defaults with the config's table applied: an action named there gets exactly the keys
  /// listed (an empty list unbinds it), and those keys leave whatever action had them by
  /// default. As for every other setting, a bad entry (an unknown action, a key name that does
  /// not parse) is one problem line and the default stands for it; the rest still applies.
  /// cmus's habits, for `keys = "cmus"`: x c v play, pause, stop; z b previous and next; h l
  /// and the arrows seek; , . a minute back and on; 5 the browser (the library), 4 the queue;
  /// e and a add, E plays next; D removes; p P move down and up. hark's own keys for what cmus
  /// has no key for stay, but the sleep timer's: z is cmus's previous, so it is Z there.
  public static let cmusPreset: [String: [String]] = [
    "play": ["x", "media_play"], "play_pause": ["c", "space", "media_play_pause"],
    "stop": ["v", "media_stop"], "next": ["b", "media_track_next"],
    "previous": ["z", "media_track_previous"], "seek_backward": ["h", "left"],
    "seek_forward": ["l", "right"], "rewind": [",", "media_rewind"],
    "fast_forward": [".", "media_fast_forward"], "library_view": ["5", "1"],
    "queue_view": ["4", "2"], "add_to_queue": ["e", "a"], "play_next": ["E"],
    "remove": ["D", "delete"], "move_down": ["p"], "move_up": ["P"], "sleep_timer": ["Z"],
  ]

  /// The bindings of `preset` ("hark" or "cmus") with the config's table on top: an action the
  /// table names takes exactly its keys there.
  public static func configured(_ table: [String: [String]], preset: String)
    -> (KeyBindings, [String])
  {
    guard preset == "cmus" else { return configured(table) }
    // The preset first, as the defaults the table then changes: a key the table gives to an
    // action leaves the action the preset gave it to.
    let (cmus, _) = configured(cmusPreset, over: defaults)
    return configured(table, over: cmus)
  }

  public static func configured(_ table: [String: [String]], over base: KeyBindings = defaults)
    -> (KeyBindings, [String])
  {
    var keys = base.keys
    var problems: [String] = []
    var claimed: [Key: UIAction] = [:]
    var configured: Set<UIAction> = []
    for (name, keyNames) in table.sorted(by: { $0.key < $1.key }) {
      guard let action = UIAction(rawValue: name) else {
        problems.append(
          "unknown action '\(name)' in [keys]; the actions are: "
            + UIAction.allCases.map(\.rawValue).joined(separator: ", "))
        continue
      }
      var parsed: [Key] = []
      var bad: KeyNameError?
      for keyName in keyNames {
        do { parsed.append(try Key(parsing: keyName)) } catch {
          bad = bad ?? error
        }
      }
      if let bad {
        let kept = base.keyNames(action).joined(separator: ", ")
        problems.append(
          "[keys] \(name): \(bad); it keeps its default keys" + (kept.isEmpty ? "" : " (\(kept))"))
        continue
      }
      var mine: [Key] = []
      for (key, keyName) in zip(parsed, keyNames) {
        if let other = claimed[key], other != action {
          problems.append(
            "key '\(keyName)' is given to both '\(other.rawValue)' and '\(name)'; "
              + "'\(other.rawValue)' keeps it")
          continue
        }
        claimed[key] = action
        mine.append(key)
      }
      keys[action] = mine
      configured.insert(action)
    }
    // A key the config gave to an action leaves the action that had it by default.
    for action in UIAction.allCases where !configured.contains(action) {
      keys[action]?.removeAll { claimed[$0] != nil }
    }
    return (KeyBindings(keys: keys), problems)
  }
}
