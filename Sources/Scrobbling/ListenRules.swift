/// What a listen is of: the track as the services want it.
public struct ListenedTrack: Hashable, Sendable, Codable {
  /// The file (or stream) played: what the library's play count is kept by.
  public var path: String
  public var title: String?
  public var artist: String?
  public var album: String?
  public var trackNumber: Int?
  /// Seconds, when known.
  public var duration: Double?
  /// A title of a live stream (internet radio).
  public var isLive = false
  /// Spoken word (a podcast, an audiobook).
  public var isSpoken = false

  public init(path: String) { self.path = path }

  /// Both services need an artist and a title.
  public var isSendable: Bool {
    !(artist ?? "").trimmingSpaces.isEmpty && !(title ?? "").trimmingSpaces.isEmpty
  }
}

/// A listen that counted: the track, and when it began to be heard (seconds since 1970).
public struct Listen: Hashable, Sendable, Codable {
  public var track: ListenedTrack
  /// When it began to be heard, UTC seconds since 1970: the services' "listened at".
  public var startedAt: Int

  public init(track: ListenedTrack, startedAt: Int) {
    self.track = track
    self.startedAt = startedAt
  }
}

/// What the player is doing, as far as listens go: a `PlayerSnapshot` reduced to what the rules
/// read (the scrobbler makes one of each snapshot), so that the rules are tested without a
/// player.
public struct PlayingFacts: Hashable, Sendable {
  public enum State: Hashable, Sendable { case playing, paused, stopped }
  /// The queue entry heard, and its file; nil when nothing is.
  public var entry: Int?
  public var track: ListenedTrack?
  public var state: State = .stopped
  /// Playing and heard: the position moves with the clock.
  public var isAdvancing = false
  /// Seconds into the track.
  public var position = 0.0

  public init(
    entry: Int? = nil, track: ListenedTrack? = nil, state: State = .stopped,
    isAdvancing: Bool = false, position: Double = 0
  ) {
    self.entry = entry
    self.track = track
    self.state = state
    self.isAdvancing = isAdvancing
    self.position = position
  }
}

/// A moment: the monotonic clock (seconds) that heard time is counted on, and the wall clock
/// (seconds since 1970) that listens are stamped with.
public struct Moment: Hashable, Sendable {
  public var monotonic: Double
  public var wall: Double
  public init(monotonic: Double, wall: Double) {
    self.monotonic = monotonic
    self.wall = wall
  }
}

/// When a listen counts, as Last.fm says and ListenBrainz follows: a track longer than 30 s
/// counts once it has been heard for half its length or for 4 minutes, whichever comes first.
/// Heard means played and heard, on the clock: a seek forward adds nothing, a pause stops the
/// count, a seek back or a pause does not start a new listen. A track played again (repeat one,
/// or played anew) is another listen; so is a seek back to its start after it counted. A live
/// stream's titles are each a track of unknown length: one counts after 4 minutes, or at its
/// end after 30 s when it was heard from its start (its title came while hark listened, so not
/// the title that was on when the station was tuned in). Spoken word and tracks without an
/// artist and a title count in the library's plays but are not sent, spoken word unless asked.
///
/// Pure: the times come in with the inputs; `deadline` says when, if nothing else happens, the
/// track playing will count, for the shell's timer.
public struct ListenRules: Hashable, Sendable {
  /// What the shell does.
  public enum Effect: Hashable, Sendable {
    /// Tell the services this plays now (at its start, and again when it resumes).
    case nowPlaying(ListenedTrack)
    /// A listen counted: count it in the library, and send it when `send`.
    case listened(Listen, send: Bool)
  }

  public enum Input: Hashable, Sendable {
    /// A new snapshot of the player.
    case facts(PlayingFacts)
    /// The player said a track started being heard (`PlayerNotice.nowPlaying`): the entry
    /// playing again from its start is a new listen (repeat one).
    case started(entry: Int)
    /// The position jumped to this many seconds (`PlayerNotice.seeked`).
    case seeked(to: Double)
    /// The deadline came.
    case tick
  }

  /// The play being listened to.
  struct Play: Hashable, Sendable {
    var entry: Int
    var track: ListenedTrack
    /// When it began to be heard (wall clock).
    var startedAt: Double
    /// Seconds heard, up to `since`.
    var heard: Double = 0
    /// Heard since then (monotonic), while playing and heard.
    var since: Double?
    var counted = false
    /// A live title that came while hark listened.
    var fromItsStart = false
    /// Told as playing now, since it last played.
    var announced = false
  }

  private(set) var play: Play?
  /// The position the last facts gave.
  private var position = 0.0
  /// Whether live titles of the stream playing come while hark listens (after the first).
  private var streamEntry: Int?
  public var sendSpokenWord: Bool

  /// When (monotonic) the play will count if it goes on playing; nil when it will not by itself.
  public private(set) var deadline: Double?

  public init(sendSpokenWord: Bool = false) { self.sendSpokenWord = sendSpokenWord }

  /// Seconds a track must be heard to count; nil when it never counts by time alone.
  public static func threshold(for track: ListenedTrack) -> Double? {
    if track.isLive { return 240 }
    guard let duration = track.duration else { return 240 }
    guard duration > 30 else { return nil }
    return min(duration / 2, 240)
  }

  public mutating func handle(_ input: Input, at now: Moment) -> [Effect] {
    var effects: [Effect] = []
    accumulate(now)
    switch input {
    case .facts(let facts):
      position = facts.position
      effects += see(facts, now)
    case .started(let entry):
      // The same entry heard anew from its start after some of it was: repeat one, or played
      // again (a resume that opens the file afresh is not: it goes on from where it was).
      if var p = play, p.entry == entry, p.heard >= 1 || p.counted, position < 2 {
        effects += end(now)
        p = Play(entry: entry, track: p.track, startedAt: now.wall)
        p.since = now.monotonic
        play = p
        effects += announce()
      }
    case .seeked(let to):
      // Back to the start of a track that counted: played again.
      if let p = play, p.counted, !p.track.isLive, to < 2 {
        var again = Play(entry: p.entry, track: p.track, startedAt: now.wall)
        again.since = p.since
        play = again
      }
    case .tick:
      break
    }
    effects += check(now)
    deadline = nextDeadline(now)
    return effects
  }

  /// Heard time up to now.
  private mutating func accumulate(_ now: Moment) {
    guard var p = play, let since = p.since else { return }
    p.heard += max(0, now.monotonic - since)
    p.since = now.monotonic
    play = p
  }

  private mutating func see(_ facts: PlayingFacts, _ now: Moment) -> [Effect] {
    var effects: [Effect] = []
    guard let entry = facts.entry, let track = facts.track, facts.state != .stopped else {
      effects += end(now)
      play = nil
      streamEntry = nil
      return effects
    }
    let same: Bool
    if let p = play, p.entry == entry, p.track.path == track.path {
      // A stream's title changing is another track; a file's tags coming in are not.
      same = !track.isLive || (p.track.artist == track.artist && p.track.title == track.title)
    } else {
      same = false
    }
    if same {
      if var p = play, !p.counted {
        // What the tags said once read, until it counted (what was sent stays as it was).
        p.track = track
        play = p
      }
    } else {
      effects += end(now)
      let fromItsStart = track.isLive && streamEntry == entry && play != nil
      play = Play(entry: entry, track: track, startedAt: now.wall, fromItsStart: fromItsStart)
      streamEntry = track.isLive ? entry : nil
    }
    guard var p = play else { return effects }
    if facts.state == .playing && facts.isAdvancing {
      if p.since == nil { p.since = now.monotonic }
      play = p
      effects += announce()
    } else {
      p.since = nil
      p.announced = false
      play = p
    }
    return effects
  }

  private mutating func announce() -> [Effect] {
    guard var p = play, !p.announced, p.since != nil else { return [] }
    p.announced = true
    play = p
    return [.nowPlaying(p.track)]
  }

  /// The play is over: a live title heard from its start for 30 s counts now.
  private mutating func end(_ now: Moment) -> [Effect] {
    guard let p = play, !p.counted, p.track.isLive, p.fromItsStart, p.heard >= 30 else {
      return []
    }
    return [listened(p)]
  }

  private mutating func check(_ now: Moment) -> [Effect] {
    guard var p = play, !p.counted, let threshold = Self.threshold(for: p.track),
      p.heard >= threshold - 1e-9
    else { return [] }
    p.counted = true
    play = p
    return [listened(p)]
  }

  private func listened(_ p: Play) -> Effect {
    let send = p.track.isSendable && (!p.track.isSpoken || sendSpokenWord)
    var track = p.track
    // A station's name is what the stream calls its album: not the record's.
    if track.isLive { track.album = nil }
    return .listened(Listen(track: track, startedAt: Int(p.startedAt.rounded(.down))), send: send)
  }

  private func nextDeadline(_ now: Moment) -> Double? {
    guard let p = play, !p.counted, p.since != nil, let threshold = Self.threshold(for: p.track)
    else { return nil }
    return now.monotonic + max(0, threshold - p.heard)
  }
}

extension String {
  var trimmingSpaces: String {
    var s = Substring(self)
    while let f = s.first, f.isWhitespace { s = s.dropFirst() }
    while let l = s.last, l.isWhitespace { s = s.dropLast() }
    return String(s)
  }
}
