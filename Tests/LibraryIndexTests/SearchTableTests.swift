import Glibc
import Platform
import Testing

@testable import LibraryIndex
@testable import PlayerCore  // SplitMix64, the queue's seeded generator
import MediaFiles
import UserText

/// The search table (search in memory, as the interface types) against the index's own
/// search: the same folding, the same words, the same order, on tracks made up by the
/// thousand. The files are text, each holding the record a fake tag reader (a shell loop,
/// no TagLib, no ffmpeg) gives back for it, so that a scan indexes whatever tags a test names.
@Suite(.timeLimit(.minutes(2))) final class SearchTableTests {
  let folder: String = {
    var template = Array("/tmp/hark-search-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()
  var music: String { folder + "/music" }
  var index: String { folder + "/cache/hark/library.sqlite3" }
  var helper: String { folder + "/fake-tags" }

  init() throws {
    // Each file's text is its record; the empty line after it ends the record.
    let script = """
      #!/bin/bash
      while IFS= read -r -d '' p; do
        while IFS= read -r line; do printf '%s\\n' "$line"; done <"$p"
        printf '\\n'
      done
      """
    try write(script, to: helper)
    chmod(helper, 0o755)
  }

  deinit { _ = system("rm -rf '\(folder)'") }

  func write(_ text: String, to path: String) throws {
    _ = system("mkdir -p \"$(dirname '\(path)')\"")
    // Close-on-exec: a process another test spawns meanwhile through system(3) would hold the
    // helper script open for writing, and running it would fail (ETXTBSY).
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    try #require(fd >= 0, "cannot write \(path)")
    _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
    close(fd)
  }

  /// A track at `name` under the music folder with `tags` (the helper's keys: title, artist,
  /// albumartist, album, track, disc, year, genre).
  func make(_ name: String, _ tags: [String: String]) throws {
    let lines = tags.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value)\n" }
    try write("ok\n" + lines.joined(), to: music + "/" + name)
  }

  func scan(_ library: Library) throws -> ScanReport {
    try library.scan(music, tagHelper: helper)
  }

  /// What the index's search lists for `query`: paths, and titles as a list shows them.
  func sql(_ library: Library, _ query: String) throws -> [String] {
    try library.search(query).map {
      "\($0.path) | \($0.title ?? QueueLoader.title(fromPath: $0.path))"
    }
  }

  /// The same from the table, cut where the index's search stops.
  func memory(_ table: SearchTable, _ found: SearchMatches) -> [String] {
    found.rows.prefix(Library.searchLimit).map { "\(table.path($0)) | \(table.title($0))" }
  }

  /// A few thousand tracks made up from a seed: names with and without diacritics, tags
  /// missing here and there (no title: the file name; no album artist: the artist), numbers
  /// out of order.
  func makeLibrary(tracks: Int, seed: UInt64 = 13) throws {
    var random = SplitMix64(seed: seed)
    let artists = [
      "Sigur Rós", "Zoë Keating", "Björk", "Mötley Crüe", "Ærøskøbing Band", "Straße",
      "The Lovers", "ÉCOLE", "under_score", "100% Pure", "Łukasz", "Ångström",
    ]
    let words = [
      "love", "lovely", "glove", "Zoë", "zoe", "Ágætis", "byrjun", "quetzalcoatl", "song",
      "SONG", "nuit", "été", "Œuvre", "façade", "naïve", "x", "of", "the", "Ü", "crème",
    ]
    let genres = ["Post-rock", "Électro", "Jazz", "Rock"]
    for i in 0..<tracks {
      let artist = artists[random.below(artists.count)]
      let album = "\(words[random.below(words.count)]) \(random.below(40))"
      var tags: [String: String] = [:]
      if random.below(10) > 0 {
        tags["title"] = (0...random.below(3)).map { _ in words[random.below(words.count)] }
          .joined(separator: " ")
      }
      if random.below(8) > 0 { tags["artist"] = artist }
      if random.below(3) == 0 { tags["albumartist"] = artists[random.below(artists.count)] }
      if random.below(6) > 0 { tags["album"] = album }
      if random.below(5) > 0 { tags["track"] = String(random.below(20) + 1) }
      if random.below(4) == 0 { tags["disc"] = String(random.below(3) + 1) }
      if random.below(3) > 0 { tags["year"] = String(1960 + random.below(60)) }
      if random.below(2) == 0 { tags["genre"] = genres[random.below(genres.count)] }
      let file = "\(fourDigits(i)) \(words[random.below(words.count)]).flac"
      try make("\(artist)/\(album)/\(file)", tags)
    }
  }

  /// What is typed, a key at a time, with a mistake taken back: each a prefix of the next
  /// but for the backspace.
  static let typed = [
    "l", "lo", "lov", "love", "lovel", "love", "love ", "love s", "love so", "z", "zo", "zoe",
    "zoe 19", "q", "qu", "quetzalcoatl", "sigur", "sigur ", "sigur r", "sigur ros", "SIGUR RÓS",
    "agaetis", "ae", "oe", "ss", "100%", "100", "under_", "under%", "e", "é", "2", " ", "  x  ",
    "post rock", "post-rock", "rock post", "nothing-like-this", "\"love\"", "lo\"ve", "love*",
    "love OR song", "NEAR(love song)",
  ]

  @Test func theTableFindsWhatTheIndexFindsInTheSameOrder() throws {
    try makeLibrary(tracks: 2_000)
    let library = try Library(path: index)
    #expect(try scan(library).read == 2_000)
    let table = try library.searchTable(under: music)
    #expect(table.count == 2_000)
    var previous: (query: String, found: SearchMatches)?
    for query in Self.typed {
      let fresh = table.matches(query)
      let refined = table.matches(query, refining: previous?.found)
      #expect(fresh.rows == refined.rows, "'\(query)' after '\(previous?.query ?? "")'")
      #expect(memory(table, fresh) == (try sql(library, query)), "'\(query)'")
      previous = (query, refined)
    }
    // The index's other way, for a word many tracks hold (reading the tracks in order to the
    // limit): the same tracks in the same order, whether it is taken for some words or all.
    for crowded in [100, 0] {
      library.crowded = crowded
      for query in Self.typed {
        #expect(
          memory(table, table.matches(query)) == (try sql(library, query)),
          "'\(query)', crowded at \(crowded)")
      }
    }
  }

  @Test func foldingFindsZoeAndSigurRosByAnyFieldAndEveryWord() throws {
    try make(
      "Sigur Rós/1999 Ágætis byrjun/01 Svefn.flac",
      [
        "title": "Svefn-g-englar", "artist": "Sigur Rós", "album": "Ágætis byrjun",
        "year": "1999", "track": "1", "genre": "Post-rock",
      ])
    try make(
      "Zoë/Songs/03 Song 3.flac",
      ["title": "Song 3", "artist": "Zoë", "album": "Songs", "albumartist": "Zoë Keating"])
    try make("Misc/100% Pure.flac", ["title": "100% Pure", "artist": "Under_score"])
    try make("Misc/untitled track.flac", [:])
    let library = try Library(path: index)
    _ = try scan(library)
    let table = try library.searchTable(under: music)
    func titles(_ query: String) -> [String] { table.matches(query).rows.map { table.title($0) } }
    #expect(titles("zoe") == ["Song 3"])
    #expect(titles("ZOË KEATING") == ["Song 3"])
    #expect(titles("sigur ros") == ["Svefn-g-englar"])
    #expect(titles("agaetis 1999") == ["Svefn-g-englar"], "album and year")
    #expect(titles("post-rock") == ["Svefn-g-englar"], "genre")
    #expect(titles("svefn flac").isEmpty, "the file name's extension is not searched")
    #expect(titles("sigur songs").isEmpty, "every word must match")
    #expect(titles("100%") == ["100% Pure"], "% is a character")
    #expect(titles("under_") == ["100% Pure"])
    #expect(titles("under%").isEmpty)
    #expect(titles("untitled") == ["untitled track"], "no title: the file name")
    #expect(titles("").count == 4)
    let song = try #require(table.matches("zoe").rows.first)
    #expect(table.path(song) == music + "/Zoë/Songs/03 Song 3.flac")
  }

  @Test func aLongerQuerySearchesOnlyWhatTheShorterFound() throws {
    try makeLibrary(tracks: 300, seed: 7)
    let library = try Library(path: index)
    _ = try scan(library)
    let table = try library.searchTable(under: music)
    let lo = table.matches("lo")
    // Refining matches that leave out a row leaves it out: so refining must not happen when
    // the new query could match more ("l" after "lo", "love" after "lovely").
    let first = try #require(lo.rows.first)
    let trimmed = SearchMatches(rows: Array(lo.rows.dropFirst()), words: lo.words, table: lo.table)
    #expect(
      table.matches("lov", refining: trimmed).rows
        == table.matches("lov").rows.filter { $0 != first })
    #expect(table.matches("l", refining: trimmed).rows == table.matches("l").rows)
    #expect(table.matches("o", refining: trimmed).rows == table.matches("o").rows)
    #expect(table.matches("lo x", refining: trimmed).rows.allSatisfy { $0 != first })
    // Another table's matches are not refined.
    let other = try library.searchTable(under: music)
    #expect(other.matches("lov", refining: trimmed).rows == other.matches("lov").rows)
  }

  @Test func aRebuiltTableSeesTheIndexChangedAndTheOldOneDoesNot() throws {
    try makeLibrary(tracks: 200, seed: 3)
    try make("Zoë/Songs/01 First.flac", ["title": "Quetzalcoatl Rising", "artist": "Zoë"])
    let library = try Library(path: index)
    _ = try scan(library)
    let before = try library.searchTable(under: music)
    #expect(before.matches("quetzalcoatl rising").rows.count == 1)
    // Retitled (a second later, so that the scan sees it changed), one gone, one new.
    try make("Zoë/Songs/01 First.flac", ["title": "Svefn-g-englar", "artist": "Zoë"])
    _ = system("touch -d '+1 minute' '\(music)/Zoë/Songs/01 First.flac'")
    try make("Zoë/Songs/02 Second.flac", ["title": "Hoppípolla", "artist": "Zoë"])
    let report = try scan(library)
    #expect(report.read == 2)
    let after = try library.searchTable(under: music)
    #expect(after.matches("quetzalcoatl rising").rows.isEmpty)
    #expect(after.matches("svefn").rows.map { after.title($0) } == ["Svefn-g-englar"])
    #expect(after.matches("hoppipolla").rows.map { after.title($0) } == ["Hoppípolla"])
    #expect(before.matches("hoppipolla").rows.isEmpty, "a table is a snapshot")
    #expect(after.count == before.count + 1)
    for query in Self.typed {
      #expect(memory(after, after.matches(query)) == (try sql(library, query)))
    }
  }

  @Test func aTableHoldsOnlyTheTracksUnderItsFolder() throws {
    try makeLibrary(tracks: 100, seed: 5)
    let library = try Library(path: index)
    _ = try scan(library)
    let table = try library.searchTable(under: music + "/Björk")
    let all = try library.search("", limit: 1_000).filter { $0.path.hasPrefix(music + "/Björk/") }
    #expect(table.count == all.count && !all.isEmpty)
    #expect(table.matches("").rows.map { table.path($0) } == all.map(\.path))
  }
}

extension SplitMix64 {
  /// The same tracks on every run: a number in 0..<n.
  fileprivate mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// `n` with four digits.
private func fourDigits(_ n: Int) -> String {
  let digits = String(n)
  return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

/// What the index holds to search a track by, folded part by part into one buffer, is the text
/// its parts make joined and folded whole, as it was made before: on random tracks of tags in
/// several scripts, with and without each tag.
@Suite struct FoldedTextTests {
  @Test func partsFoldedApartAreTheWholeFolded() {
    let words = ["Zoë", "ÅSA", "Straße", "Θεοδωράκης", "Кино", "坂本", "e\u{301}", "Ǆ", "", " ", "ﬁ"]
    var rng = SystemRandomNumberGenerator()
    func tag() -> String? {
      Bool.random(using: &rng)
        ? nil
        : (0..<Int.random(in: 1...3, using: &rng)).map { _ in
          words.randomElement(using: &rng) ?? ""
        }.joined(separator: " ")
    }
    for _ in 0..<2_000 {
      var t = IndexedTrack(path: "/m/" + (tag() ?? "x") + "/" + (tag() ?? "y") + ".flac")
      t.title = tag()
      t.artist = tag()
      t.albumArtist = tag()
      t.album = tag()
      t.genre = tag()
      t.year = Bool.random(using: &rng) ? Int.random(in: 1900...2030, using: &rng) : nil
      let name = QueueLoader.title(fromPath: t.path)
      let whole =
        [t.title ?? name, t.artist, t.albumArtist, t.album, t.genre, name]
        .compactMap { $0 }.joined(separator: " ") + (t.year.map { " \($0)" } ?? "")
      #expect(Library.foldedBytes(t) == Array(SearchText.folded(whole).utf8))
      #expect(Library.folded(t) == SearchText.folded(whole))
    }
  }
}
