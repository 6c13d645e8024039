import AudioCore
import Platform
import Testing

@testable import TerminalUI

/// The interface's tags by path: keyed by the path's bytes, versioned, and a filter's folded rows
/// kept across tag changes, folded again only where the tags changed. One test at a time: the
/// versions remembered are shared, and the random one makes hundreds.
@Suite(.serialized, .timeLimit(.minutes(2))) struct TagTableTests {
  /// Two names that Unicode calls the same text but whose bytes differ are two files: each
  /// keeps its own tags. The same bytes are one key, however the String was made.
  @Test func pathsAreKeysByTheirBytes() {
    let composed = "/m/Zo\u{EB}.flac"  // ë as one scalar (NFC)
    let decomposed = "/m/Zoe\u{308}.flac"  // e and a combining diaeresis (NFD)
    #expect(composed == decomposed, "Swift's String compares them as equal")
    var tags = TagTable()
    tags[composed] = TrackInfo(title: "one")
    tags[decomposed] = TrackInfo(title: "two")
    #expect(tags.count == 2)
    #expect(tags[composed]?.title == "one")
    #expect(tags[decomposed]?.title == "two")
    let rebuilt = String(decoding: Array(composed.utf8), as: UTF8.self)
    #expect(tags[rebuilt]?.title == "one")
    #expect(PathKey(rebuilt) == PathKey(composed))
    #expect(PathKey(rebuilt).hashValue == PathKey(composed).hashValue)
    #expect(PathKey("/a") != PathKey("/a/"))
    #expect(PathKey("") == PathKey(""))
  }

  /// The same tags again are no change: the version stays, so nothing is folded again.
  @Test func sameTagsAgainKeepTheVersion() {
    var tags = TagTable()
    tags.merge(["/a.flac": TrackInfo(title: "A"), "/b.flac": TrackInfo(title: "B")])
    let version = tags.version
    tags.merge(["/a.flac": TrackInfo(title: "A")])
    tags["/b.flac"] = TrackInfo(title: "B")
    tags.merge([:])
    tags.reserveCapacity(1_000)
    #expect(tags.version == version)
    tags["/b.flac"] = TrackInfo(title: "B2")
    #expect(tags.version != version)
    #expect(TagsVersion.changed(from: version, to: tags.version) == [PathKey("/b.flac")])
  }

  static func queue(_ n: Int) -> [QueuedTrack] {
    (0..<n).map { QueuedTrack(id: $0 + 1, path: "/music/Artist \($0 % 37)/\($0) Song.flac") }
  }

  /// Folds the rows as the queue's filter does, counting the rows folded.
  final class CountingFilter {
    var folded = 0
    let filter = RowFilter<QueuedTrack>()

    func rows(_ queue: [QueuedTrack], _ query: String, _ tags: TagTable) -> [Int] {
      filter.rows(queue, matching: query, tagsVersion: tags.version, path: \.path) {
        track, text in
        self.folded += 1
        text.append(folding: track.path)
        if let title = tags[track.path]?.title { text.append(folding: title) }
      }.found.map(\.id)
    }

    func prepare(_ queue: [QueuedTrack], _ tags: TagTable) {
      filter.prepare(queue, tagsVersion: tags.version, path: \.path) { track, text in
        self.folded += 1
        text.append(folding: track.path)
        if let title = tags[track.path]?.title { text.append(folding: title) }
      }
    }
  }

  /// Folded ahead (as the interface's worker does, on its thread): the first key folds no
  /// row and finds what folding every row finds; tags changed after fold only their rows, ahead
  /// or at the key; a fold ahead for tags older than what a key folded since keeps the key's.
  @Test func aFilterFoldedAheadOnlySearchesAtItsFirstKey() {
    let queue = Self.queue(3_000)
    var tags = TagTable()
    tags[queue[7].path] = TrackInfo(title: "Zoë")
    let folder = CountingFilter()
    let old = tags
    folder.prepare(queue, old)
    #expect(folder.folded == 3_000)
    folder.folded = 0
    #expect(folder.rows(queue, "zoe", tags) == [8])
    #expect(folder.folded == 0, "the first key folded \(folder.folded) rows")
    tags[queue[9].path] = TrackInfo(title: "Zoe 2")
    folder.prepare(queue, tags)
    #expect(folder.folded == 1)
    #expect(folder.rows(queue, "zoe", tags) == [8, 10])
    #expect(folder.rows(queue, "zoe", tags) == Self.expected(queue, "zoe", tags))
    #expect(folder.folded == 1)
    // Ahead for the older tags, after a key folded the newer ones: the newer are kept.
    folder.prepare(queue, old)
    folder.folded = 0
    #expect(folder.rows(queue, "zoe", tags) == [8, 10])
    #expect(folder.folded == 0)
  }

  /// The rows of some changed paths, found by a binary search among the rows' hashes, are the
  /// rows a pass over all of them finds: paths queued twice, paths not queued, none.
  @Test func theRowsOfChangedPathsAreFoundByTheirHashes() {
    var random = SystemRandomNumberGenerator()
    for _ in 0..<200 {
      let names = (0..<Int.random(in: 0...60, using: &random)).map { _ in
        "/m/\(Int.random(in: 0..<40, using: &random)).flac"
      }
      let hashes = PathHashes(names) { $0 }
      let changed = Set(
        (0..<Int.random(in: 0...8, using: &random)).map { _ in
          PathKey("/m/\(Int.random(in: 0..<50, using: &random)).flac")
        })
      let expected = names.indices.filter { changed.contains(PathKey(names[$0])) }
      #expect(hashes.places(of: changed, in: names) { $0 } == expected)
    }
  }

  /// What folding every row finds, with no cache.
  static func expected(_ queue: [QueuedTrack], _ query: String, _ tags: TagTable) -> [Int] {
    CountingFilter().rows(queue, query, tags)
  }

  /// Tags that come in a batch fold those rows again and no other; what the filter finds is
  /// what folding them all would.
  @Test func aBatchOfTagsFoldsOnlyItsRowsAgain() {
    let queue = Self.queue(2_000)
    var tags = TagTable()
    let folder = CountingFilter()
    #expect(folder.rows(queue, "zoë", tags).isEmpty)
    #expect(folder.folded == 2_000)
    folder.folded = 0
    tags.merge([
      queue[10].path: TrackInfo(title: "Zoë"), queue[1_500].path: TrackInfo(title: "ZOE"),
    ])
    #expect(folder.rows(queue, "zoe", tags) == [11, 1_501])
    #expect(folder.folded == 2, "\(folder.folded) rows folded for 2 changed tags")
    // The same path twice in the queue: both rows follow its tags.
    let twice = queue + [queue[10]]
    folder.folded = 0
    #expect(folder.rows(twice, "zoe", tags) == [11, 1_501, 11])
    tags[queue[10].path] = TrackInfo(title: "Other")
    #expect(folder.rows(twice, "zoe", tags) == [1_501])
    #expect(folder.folded == 2_001 + 2)
  }

  /// A filter kept by one copy of the tags and asked by another (whose changes it never saw,
  /// on another branch) folds all again: it never answers with the other copy's tags.
  @Test func copiesOfTheTagsNeverMixTheirRows() {
    let queue = Self.queue(500)
    var mine = TagTable()
    mine[queue[0].path] = TrackInfo(title: "Common")
    var theirs = mine
    let folder = CountingFilter()
    mine[queue[1].path] = TrackInfo(title: "Mine")
    #expect(folder.rows(queue, "mine", mine) == [2])
    theirs[queue[2].path] = TrackInfo(title: "Theirs")
    folder.folded = 0
    #expect(folder.rows(queue, "mine", theirs).isEmpty)
    #expect(folder.rows(queue, "theirs", theirs) == [3])
    #expect(folder.folded == 500, "another branch's tags fold every row")
    #expect(folder.rows(queue, "common", mine) == [1])
    #expect(TagsVersion.changed(from: mine.version, to: theirs.version) == nil)
  }

  /// Random batches of tag changes on random copies, the queue now and then changed: the
  /// filter kept across all of it finds what folding every row finds, every time.
  @Test func aKeptFilterAnswersAsAFreshOneThroughRandomChanges() {
    var random = SystemRandomNumberGenerator()
    var queue = Self.queue(300)
    var copies = [TagTable()]
    let folder = CountingFilter()
    let titles = ["Zoë", "zoe live", "Café", "Sigur Rós", "cafe", "", "Song 7"]
    // Some one letter longer than others: a filter refines what the shorter one found.
    let queries = ["zoe", "cafe", "song", "ros", "7", "sigur ros", "s", "si", "sig", "z", "zo"]
    for step in 0..<400 {
      var tags = copies.randomElement(using: &random)!
      var batch: [String: TrackInfo] = [:]
      for _ in 0..<Int.random(in: 0...20, using: &random) {
        let path = queue.randomElement(using: &random)!.path
        batch[path] = TrackInfo(title: titles.randomElement(using: &random)!)
      }
      if Bool.random(using: &random) {
        tags.merge(batch)
      } else if let (path, info) = batch.first {
        tags[path] = Bool.random(using: &random) ? info : nil
      }
      if step % 50 == 49 { queue.removeFirst(Int.random(in: 0...3, using: &random)) }
      copies.append(tags)
      if copies.count > 4 { copies.removeFirst() }
      let query = queries.randomElement(using: &random)!
      let found = folder.rows(queue, query, tags)
      #expect(found == Self.expected(queue, query, tags), "step \(step), '\(query)'")
    }
  }

  /// The queue's length, kept across batches of tags on random copies and queues changed now
  /// and then, is what adding up every entry's length gives.
  @Test func theQueuesLengthThroughRandomChangesIsTheSumOfItsEntries() {
    var random = SystemRandomNumberGenerator()
    var queue = Self.queue(300)
    var copies = [TagTable()]
    let kept = QueueLength()
    for step in 0..<400 {
      var tags = copies.randomElement(using: &random)!
      var batch: [String: TrackInfo] = [:]
      for _ in 0..<Int.random(in: 0...20, using: &random) {
        let length = [nil, 0.25, 60, 1.5, 200.125].randomElement(using: &random)!
        batch[queue.randomElement(using: &random)!.path] = TrackInfo(duration: length)
      }
      tags.merge(batch)
      if step % 40 == 39 { queue.append(queue.randomElement(using: &random)!) }
      copies.append(tags)
      if copies.count > 4 { copies.removeFirst() }
      var sum = 0.0
      var any = false
      for entry in queue {
        guard let d = tags[entry.path]?.duration else { continue }
        sum += d
        any = true
      }
      #expect(kept.seconds(of: queue, tags: tags) == (any ? sum : nil), "step \(step)")
    }
  }

  /// More changes than are remembered: the filter cannot know which rows changed, and folds
  /// them all again.
  @Test func changesForgottenFoldEveryRowAgain() {
    let queue = Self.queue(100)
    var tags = TagTable()
    let folder = CountingFilter()
    _ = folder.rows(queue, "x", tags)
    for i in 0...TagsVersion.rememberedChanges {
      tags[queue[i % 100].path] = TrackInfo(title: "t\(i)")
    }
    folder.folded = 0
    #expect(folder.rows(queue, "t256", tags) == Self.expected(queue, "t256", tags))
    #expect(folder.folded == 100)
  }
}
