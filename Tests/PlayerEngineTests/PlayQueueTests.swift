import Testing

@testable import PlayerEngine

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
}
