import AudioCore
import MediaFiles
import SessionCore

/// Speed, the pitch kept, as a phone's podcast app does it: spoken word keeps its own speed by
/// podcast or book (the folder its files are in), kept in the library index; music plays at 1×
/// unless the user asks, and then at that speed until asked again, for as long as the player
/// runs. Positions, lengths and seeks stay in the file's own time.
///
/// The rules:
/// - A speed the user asks for is the track's: a spoken-word track's becomes its podcast's or
///   book's, and the index keeps it (`keepRate`); a music track's becomes music's.
/// - The engine asks what speed a track plays at as it begins one (`RatePlan`, published
///   before any load). When the speeds change (the user asked, made the track spoken word or
///   music, or its podcast's speed was found), the track held is played at its new speed, in
///   the same step: the engine is told only when what it plays differs.
/// - The speed the index keeps for a folder comes with the place of a recording in it
///   (`placeFound`); one the user chose in this run wins over it.
/// - A live stream plays at 1× (at any other speed it would run out, or fall behind).
extension PlayerCore {
  /// The speed the track the engine holds should play at, and the engine told when it plays
  /// at another (after each input).
  mutating func keepRateRight(_ world: Observation, _ effects: inout [PlayerEffect]) {
    let now = world.engine
    guard let track = now.track, now.state != .stopped, now.loading == nil, now.isSeekable,
      now.canChangeRate
    else { return }
    let wanted = now.isLive ? 1 : rates.rate(for: track.path, genre: now.metadata?.genre)
    if abs(wanted - now.rate) > 1e-6 { setRate(wanted, &effects) }
  }

  /// The engine decodes the track heard again from where it is heard, at `rate`: a jump, as a
  /// seek is (the position shown may go back the few milliseconds the device held).
  private mutating func setRate(_ rate: Double, _ effects: inout [PlayerEffect]) {
    effects.append(.engine(.setRate(rate)))
    positionJumped = true
  }

  /// The user's speed for the track held: kept for its podcast or book when it is spoken word,
  /// for music otherwise.
  mutating func changeRate(
    to asked: Double, _ world: Observation, _ effects: inout [PlayerEffect]
  ) {
    let e = world.engine
    guard let track = e.track, e.isSeekable, !e.isLive, e.canChangeRate else {
      return reply(.commandDisabled, &effects)
    }
    let rate = PlaybackRate(clamping: asked).value
    let spoken = isSpokenWord(track, world)
    if spoken {
      let folder = RatePlan.collection(of: track.path)
      rates.collections[folder] = rate
      effects.append(.keepRate(folder: folder, rate))
    } else {
      rates.music = rate
    }
    ratesVersion += 1
    if abs(world.engine.rate - rate) > 1e-6 { setRate(rate, &effects) }
    say(.rateChanged(rate, keptFor: spoken ? RatePlan.collectionName(of: track.path) : nil))
    reply(.success, &effects)
  }

  /// One step faster or slower than the track held plays now (`PlaybackRate.steps`); at the
  /// fastest (slowest) nothing changes.
  mutating func stepRate(faster: Bool, _ world: Observation, _ effects: inout [PlayerEffect]) {
    let e = world.engine
    let now = PlaybackRate(clamping: e.rate)
    let to = faster ? now.next : now.previous
    guard to != now, e.track != nil, e.isSeekable, !e.isLive, e.canChangeRate else { return }
    changeRate(to: to.value, world, &effects)
  }

  /// The index's speed for `track`'s podcast or book, found with its place: taken unless the
  /// user chose one in this run.
  mutating func rateFound(_ rate: Double?, for track: QueuedTrack) {
    guard let rate, rate.isFinite, rate > 0 else { return }
    let folder = RatePlan.collection(of: track.path)
    guard rates.collections[folder] == nil else { return }
    rates.collections[folder] = PlaybackRate(clamping: rate).value
    ratesVersion += 1
  }

  mutating func publishRatesIfChanged(_ effects: inout [PlayerEffect]) {
    guard ratesVersion != publishedRatesVersion else { return }
    publishedRatesVersion = ratesVersion
    // First, as the queue is: the decode thread asks what speed a track plays at when it
    // begins one, before any load.
    effects.insert(.publishRates(rates), at: 0)
  }
}

/// What speed each track plays at, as the engine's decode thread asks when it begins one (the
/// next track gaplessly, a load): the core publishes it whenever it changes.
public struct RatePlan: Sendable, Equatable {
  /// Music's speed (1 unless the user asked for another in this run).
  public var music = 1.0
  /// The speeds of podcasts and books (spoken word), by the folder their files are in: as the
  /// user chose them, or as the index kept them.
  public var collections: [String: Double] = [:]
  /// Tracks the user said are spoken word (true) or music (false), by path.
  public var spokenOverrides: [String: Bool] = [:]
  /// The config's spoken-word folders.
  public var spokenFolders: [String] = []

  public init() {}

  /// The speed `path` plays at, its genre tag as its file says (the decode thread asks once
  /// the file is open): spoken word's is its podcast's or book's (1 until one is chosen), and
  /// music's is music's, also in a folder that holds both.
  public func rate(for path: String, genre: String?) -> Double {
    if QueueLoader.isStreamURL(path) { return 1 }
    let spoken =
      spokenOverrides[path]
      ?? SpokenWord.isSpoken(path: path, genre: genre, folders: spokenFolders)
    return spoken ? collections[Self.collection(of: path)] ?? 1 : music
  }

  /// The podcast or book a file belongs to, for its speed: the folder it is in (a cue sheet's
  /// track: the sheet's), or an audiobook file (.m4b) itself. Podcast apps keep one folder a
  /// podcast, and audiobooks are one folder a book or one file a book: a book's own speed is
  /// not shared with the other books and recordings beside it (an .m4b straight in the music
  /// folder kept its speed for the whole folder).
  public static func collection(of path: String) -> String {
    let file = CueSheet.Reference(path)?.sheet ?? path
    if isAudiobookFile(file) { return file }
    guard let slash = file.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
    return slash == file.utf8.startIndex ? "/" : String(file[..<slash])
  }

  /// The folder's own name, for a message ("kept for 'Lectures'"); an audiobook file's name.
  public static func collectionName(of path: String) -> String {
    fileName(collection(of: path))
  }

  /// A file that is a book by itself: MPEG-4 audio named .m4b, the audiobook's own extension.
  static func isAudiobookFile(_ path: String) -> Bool {
    path.utf8.count > 4 && path.lowercased().hasSuffix(".m4b")
  }
}
