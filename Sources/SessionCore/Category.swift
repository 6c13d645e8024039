/// What an app's audio means (the category table in docs/MANNERS.md); the session server
/// decides from it who mixes, who is interrupted and who silent mode mutes.
public enum Category: String, Sendable, Hashable, Codable, CaseIterable {
  /// The default: sound that is part of the app, silenced by silent mode, never mixes.
  case soloAmbient
  /// Sound that goes along with other audio (a game soundtrack), silenced by silent mode.
  case ambient
  /// Media the user asked for; not silenced, keeps playing in the background.
  case playback
  /// Recording only; active only while recording (G12).
  case record
  /// Recording and playing at once: calls, voice assistants.
  case playAndRecord
  /// Offline processing; produces no output of its own.
  case audioProcessing

  /// Whether silent mode (G2) mutes this category: the "yes" rows of the category table in
  /// docs/MANNERS.md.
  public var isSilencedBySilentMode: Bool {
    switch self {
    case .soloAmbient, .ambient: true
    case .playback, .record, .playAndRecord, .audioProcessing: false
    }
  }

  /// Whether mixWithOthers and duckOthers apply: only to playback and playAndRecord, whose row
  /// in the category table in docs/MANNERS.md says they mix only with an option.
  public var acceptsOptions: Bool {
    switch self {
    case .playback, .playAndRecord: true
    case .soloAmbient, .ambient, .record, .audioProcessing: false
    }
  }

  /// Whether sessions of this category mix with others, given their options.
  public func mixes(with options: CategoryOptions) -> Bool {
    switch self {
    case .ambient: true
    case .playback, .playAndRecord:
      !options.isDisjoint(
        with: [.mixWithOthers, .duckOthers, .interruptSpokenAudioAndMixWithOthers])
    case .soloAmbient, .record, .audioProcessing: false
    }
  }
}

/// Refinements of a category (AVAudioSession's category options).
public struct CategoryOptions: OptionSet, Sendable, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// Play along with other active sessions instead of interrupting them.
  public static let mixWithOthers = CategoryOptions(rawValue: 1 << 0)
  /// Lower every other session while this one is active (implies mixing).
  public static let duckOthers = CategoryOptions(rawValue: 1 << 1)
  /// Pause the sessions of spoken audio (mode `spokenAudio`: a podcast, an audiobook) while
  /// this one is active, resumably, instead of ducking them: words over words are lost. A
  /// navigation prompt sets it (implies mixing).
  public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 1 << 2)

  /// The options' names, as the wire protocol and `hark status` spell them.
  public var names: [String] {
    var out: [String] = []
    if contains(.mixWithOthers) { out.append("mixWithOthers") }
    if contains(.duckOthers) { out.append("duckOthers") }
    if contains(.interruptSpokenAudioAndMixWithOthers) {
      out.append("interruptSpokenAudioAndMixWithOthers")
    }
    return out
  }

  /// The options named, or nil when a name is unknown.
  public init?(names: [String]) {
    var options: CategoryOptions = []
    for name in names {
      switch name {
      case "mixWithOthers": options.insert(.mixWithOthers)
      case "duckOthers": options.insert(.duckOthers)
      case "interruptSpokenAudioAndMixWithOthers":
        options.insert(.interruptSpokenAudioAndMixWithOthers)
      default: return nil
      }
    }
    self = options
  }
}

/// What kind of use the session makes of its category; only a voice call changes policy.
public enum SessionMode: String, Sendable, Hashable, Codable, CaseIterable {
  /// Everything that is not a call.
  case `default`
  /// A phone or voice call: can always interrupt, interrupts every session, and while it is
  /// active no other session may start (G10, G11).
  case voiceCall
  /// Spoken words (a podcast, an audiobook): a session that interrupts spoken audio (a
  /// navigation prompt) pauses it, resumably, instead of ducking it.
  case spokenAudio
}

/// Options for deactivating a session.
public struct SetActiveOptions: OptionSet, Sendable, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// Tell the sessions this one interrupted that they may resume (G13).
  public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1 << 0)
}

/// Who an app is, as the server shows it: a name and a process id.
public struct AppIdentity: Sendable, Hashable, Codable {
  /// A short name the user recognises ("hark", "call", "music").
  public var name: String
  /// The client's process id, as the kernel reported it (SO_PEERCRED).
  public var pid: Int32
  /// What the app is, as it says in its hello: what it interrupts others as, and what they tell
  /// their users ("paused: alarm"). Nil: what its category makes it.
  public var role: AppRole?

  public init(name: String, pid: Int32, role: AppRole? = nil) {
    self.name = name
    self.pid = pid
    self.role = role
  }
}

/// What an app's audio is for, in the words people use for a phone's apps (Android's audio
/// usages say the same): it names the reason another app gives for its pause.
public enum AppRole: String, Sendable, Hashable, Codable, CaseIterable {
  case music, call, alarm, navigation, game, assistant
}
