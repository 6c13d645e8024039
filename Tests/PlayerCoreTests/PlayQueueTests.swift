import Testing

@testable import PlayerCore

/// The queue's lookups stay right through every edit, shuffled or not.
@Suite(.timeLimit(.minutes(2))) struct PlayQueueTests {
  private func invariants(_ q: PlayQueue) {
    for (i, t) in q.entries.enumerated() {
      #expect(q.index(of: t.id) == i)
      #expect(q.entry(t.id) == t)
    }
    #expect(Set(q.playOrder.map(\.id)) == Set(q.entries.map(\.id)))
    #expect(q.playOrder.count == q.entries.count)
    for (i, t) in q.playOrder.enumerated() {
      let next = i + 1 < q.playOrder.count ? q.playOrder[i + 1] : nil
      #expect(q.track(after: t.id, automatic: false) == next)
    }
  }

  @Test func lookupsFollowEditsInOrderAndShuffled() {
    var q = PlayQueue(seed: 7)
    let added = q.add((0..<20).map { "t\($0).wav" })
    q.setCurrent(added[3].id)
    invariants(q)
    q.move(added[10].id, to: 0)
    invariants(q)
    q.setShuffle(true)
    #expect(q.playOrder.first == added[3])
    invariants(q)
    q.move(added[5].id, to: 19)
    invariants(q)
    q.add(["x.wav", "y.wav"])
    invariants(q)
    q.remove(added[7].id)
    #expect(q.entry(added[7].id) == nil)
    #expect(q.index(of: added[7].id) == nil)
    invariants(q)
    q.setShuffle(false)
    #expect(q.playOrder == q.entries)
    invariants(q)
    q.clear()
    #expect(q.playOrder.isEmpty && q.entry(added[0].id) == nil)
  }

  @Test func repeatAllWrapsAndRepeatOneRepeatsOnlyAtATracksEnd() {
    var q = PlayQueue()
    let t = q.add(["a", "b", "c"])
    q.repeatMode = .all
    #expect(q.track(after: t[2].id, automatic: true) == t[0])
    #expect(q.track(before: t[0].id) == t[2])
    q.repeatMode = .one
    #expect(q.track(after: t[1].id, automatic: true) == t[1])
    #expect(q.track(after: t[1].id, automatic: false) == t[2])
    q.repeatMode = .off
    #expect(q.track(after: t[2].id, automatic: true) == nil)
    #expect(q.track(before: t[0].id) == nil)
  }

  // MARK: Files handed over (`hark play`, `hark add`: one player per user)

  private func paths(_ q: PlayQueue) -> [String] { q.playOrder.map(\.path) }

  @Test func playNextGoesAfterTheCurrentAndAfterEarlierPlayNextsInOrder() {
    var q = PlayQueue()
    let added = q.add(["a", "b", "c"])
    q.setCurrent(added[0].id)
    q.insert(["x"], at: .next)
    q.insert(["y", "z"], at: .next)
    #expect(paths(q) == ["a", "x", "y", "z", "b", "c"])
    #expect(q.entries.map(\.path) == ["a", "x", "y", "z", "b", "c"])
    invariants(q)
    // Once x is playing, the next "play next" still goes after y and z, not before them.
    q.setCurrent(q.playOrder[1].id)
    q.insert(["w"], at: .next)
    #expect(paths(q) == ["a", "x", "y", "z", "w", "b", "c"])
    // The user jumps to c: what was up next after a is not after c, so it goes right after c.
    q.setCurrent(q.playOrder[6].id)
    q.insert(["v"], at: .next)
    #expect(paths(q) == ["a", "x", "y", "z", "w", "b", "c", "v"])
    invariants(q)
  }

  @Test func playNowGoesRightAfterTheCurrentAndTheRestOfItPlaysNext() {
    var q = PlayQueue()
    let added = q.add(["a", "b"])
    q.setCurrent(added[0].id)
    q.insert(["u"], at: .next)
    let now = q.insert(["x", "y"], at: .now)
    #expect(paths(q) == ["a", "x", "y", "u", "b"])
    // The player makes the first current; a later "play next" goes after the rest of them.
    q.setCurrent(now[0].id)
    q.insert(["z"], at: .next)
    #expect(paths(q) == ["a", "x", "y", "z", "u", "b"])
    q.insert(["e"], at: .end)
    #expect(paths(q).last == "e")
    invariants(q)
  }

  @Test func handedOverFilesInAShuffledQueueKeepTheirPlaceAndOrder() {
    var q = PlayQueue(seed: 11)
    let added = q.add((0..<12).map { "t\($0)" })
    q.setCurrent(added[4].id)
    q.setShuffle(true)
    let before = paths(q)
    q.insert(["x"], at: .next)
    q.insert(["y"], at: .next)
    q.insert(["e"], at: .end)
    var expected = before
    expected.insert(contentsOf: ["x", "y"], at: 1)
    let order = paths(q)
    // Up next is never shuffled away; the end goes in at random among those still to play
    // after it.
    #expect(Array(order.prefix(3)) == [before[0], "x", "y"])
    #expect(order.filter { $0 != "e" } == expected)
    invariants(q)
  }

  @Test func withNoCurrentEntryEveryPlacementAppends() {
    var q = PlayQueue()
    q.add(["a"])
    q.insert(["x"], at: .next)
    q.insert(["y"], at: .now)
    #expect(paths(q) == ["a", "x", "y"])
    invariants(q)
  }
}
