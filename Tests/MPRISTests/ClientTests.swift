import Glibc
import MPRIS
import Testing

/// The client side, as the session server's sleep timer uses it: against hark's own MPRIS
/// server on a private bus (a player whose every property and request the test knows).
@Suite(.timeLimit(.minutes(2))) struct ClientTests {
  @Test func itListsThePlayersAndReadsWhatEachDoes() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      player.position.current = .milliseconds(12_500)
      let client = try MPRISClient(address: bus.address)
      #expect(client.playerNames() == ["org.mpris.MediaPlayer2.hark"])
      let found = client.players()
      try #require(found.count == 1)
      let info = found[0]
      #expect(info.busName == "org.mpris.MediaPlayer2.hark")
      #expect(info.identity == "hark")
      #expect(info.pid == getpid())
      #expect(info.status == .playing)
      #expect(info.position == .milliseconds(12_500))
      #expect(info.length == .seconds(337))
      #expect(info.volume == 0.5)
      #expect(info.title == "Blue in Green")
      #expect(client.status("org.mpris.MediaPlayer2.hark") == .playing)
    }
  }

  @Test func itPausesAndSetsTheVolume() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      let client = try MPRISClient(address: bus.address)
      #expect(client.setVolume("org.mpris.MediaPlayer2.hark", to: 0.25))
      #expect(client.pause("org.mpris.MediaPlayer2.hark"))
      #expect(await player.requests(count: 2) == [.setVolume(0.25), .pause])
    }
  }

  @Test func aPlayerThatIsNotThereAnswersNothingAndCostsNoMoreThanTheTimeout() async throws {
    try await withTestBus { bus in
      let client = try MPRISClient(address: bus.address, timeout: .milliseconds(200))
      #expect(client.players().isEmpty)
      #expect(client.player("org.mpris.MediaPlayer2.gone") == nil)
      #expect(!client.pause("org.mpris.MediaPlayer2.gone"))
      #expect(!client.setVolume("org.mpris.MediaPlayer2.gone", to: 1))
      #expect(client.status("org.mpris.MediaPlayer2.gone") == nil)
    }
  }

  @Test func withoutABusItSaysSo() {
    let error = #expect(throws: MPRISError.self) {
      _ = try MPRISClient(address: "unix:path=/nonexistent/hark-no-bus")
    }
    if case .cannotConnect = error {} else { Issue.record("got \(String(describing: error))") }
  }
}
