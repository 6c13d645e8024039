import MPRIS
import Testing

/// PropertiesChanged and Seeked, as dbus-monitor and `playerctl --follow` see them.
@Suite(.timeLimit(.minutes(2))) struct SignalTests {
  @Test func propertiesChangedCarriesExactlyThePropertiesThatChanged() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      let monitor = try await bus.startSignalMonitor()
      func changes(_ count: Int) async -> [[String]] {
        await waitUntil("\(count) PropertiesChanged", describe: { monitor.output }) {
          monitor.signals("PropertiesChanged").count >= count
        }
        return monitor.signals("PropertiesChanged").map(\.changedProperties)
      }

      var state = playingState
      state.playbackStatus = .paused
      player.server.update(state)
      #expect(await changes(1) == [["PlaybackStatus"]])
      let first = monitor.signals("PropertiesChanged")[0].text
      #expect(first.contains("string \"org.mpris.MediaPlayer2.Player\""))
      #expect(first.contains("variant             string \"Paused\""))

      // The same state again, and a position that moves on: neither is a change to announce.
      player.server.update(state)
      player.position.current = .seconds(100)

      state.track = MPRISTrack(id: "4", title: "All Blues", length: .seconds(693))
      state.canGoNext = false
      state.volume = 0.75
      player.server.update(state)
      #expect(await changes(2) == [["PlaybackStatus"], ["Metadata", "Volume", "CanGoNext"]])
      let second = monitor.signals("PropertiesChanged")[1].text
      #expect(second.contains("object path \"/hark/track/4\""))
      #expect(second.contains("string \"All Blues\""))
      #expect(second.contains("double 0.75"))
      #expect(!monitor.output.contains("Position"))

      state.shuffle = true
      state.loopStatus = .track
      state.canControl = false
      player.server.update(state)
      #expect(
        await changes(3) == [
          ["PlaybackStatus"], ["Metadata", "Volume", "CanGoNext"],
          ["LoopStatus", "Shuffle", "CanControl"],
        ])
    }
  }

  @Test func playerctlFollowSeesEveryChangeOfStatus() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      let follow = try #require(
        bus.startWatcher("follow", ["playerctl", "-p", "hark", "--follow", "status"]))
      await waitUntil("playerctl --follow starting", describe: { follow.output }) {
        follow.output == "Playing\n"
      }
      var state = playingState
      for status in [MPRISPlaybackStatus.paused, .playing, .stopped] {
        state.playbackStatus = status
        player.server.update(state)
      }
      await waitUntil("playerctl seeing every change", describe: { follow.output }) {
        follow.output == "Playing\nPaused\nPlaying\nStopped\n"
      }
    }
  }

  @Test func seekedCarriesTheNewPosition() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      let monitor = try await bus.startSignalMonitor()
      player.server.seeked(to: .milliseconds(42_250))
      await waitUntil("Seeked", describe: { monitor.output }) {
        !monitor.signals("Seeked").isEmpty
      }
      let seeked = monitor.signals("Seeked")
      #expect(seeked.count == 1)
      #expect(seeked.first?.lines.first == "   int64 42250000")
      #expect(monitor.output.contains("interface=org.mpris.MediaPlayer2.Player; member=Seeked"))
    }
  }

  @Test func noSignalsGoOutWhileNoNameIsHeld() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState, eligible: false)
      let monitor = try await bus.startSignalMonitor()
      var state = playingState
      state.playbackStatus = .paused
      player.server.update(state)
      player.server.seeked(to: .seconds(3))
      player.server.setEligible(true)
      await waitUntil("taking the name") { player.server.busName != nil }
      // Changes are counted from the state shown when the name was taken.
      state.shuffle = true
      player.server.update(state)
      await waitUntil("PropertiesChanged", describe: { monitor.output }) {
        !monitor.signals("PropertiesChanged").isEmpty
      }
      #expect(monitor.signals("PropertiesChanged").map(\.changedProperties) == [["Shuffle"]])
      #expect(monitor.signals("Seeked").isEmpty)
      #expect(bus.playerctl("-p", "hark", "status").text == "Paused")
    }
  }
}
