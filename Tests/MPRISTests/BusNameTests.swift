import Glibc
import MPRIS
import Testing

/// Which name the server holds, and when (G18); what happens without a bus.
@Suite(.timeLimit(.minutes(2))) struct BusNameTests {
  @Test func theNameIsHeldOnlyWhileTheOwnerIsEligible() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState, eligible: false)
      #expect(player.server.busName == nil)
      let none = bus.playerctl("-l")
      #expect(none.text.isEmpty && none.stderr.contains("No players found"), "\(none)")

      player.server.setEligible(true)
      await waitUntil("taking the name") { bus.playerctl("-l").text == "hark" }
      #expect(player.server.busName == "org.mpris.MediaPlayer2.hark")

      player.server.setEligible(false)
      await waitUntil("giving the name back") { bus.playerctl("-l").text.isEmpty }
      #expect(player.server.busName == nil)
      // Media keys go to whoever holds a name: nothing reaches a player that has none.
      #expect(bus.playerctl("-p", "hark", "play-pause").status != 0)

      player.server.setEligible(true)
      await waitUntil("taking the name again") { bus.playerctl("-l").text == "hark" }
      #expect(bus.playerctl("-p", "hark", "play-pause").status == 0)
      #expect(await player.requests(count: 1) == [.playPause])
    }
  }

  @Test func aSecondInstanceTakesTheInstanceName() async throws {
    try await withTestBus { bus in
      let first = try await FakePlayer(bus: bus, state: playingState)
      var secondState = playingState
      secondState.playbackStatus = .paused
      let second = try await FakePlayer(bus: bus, state: secondState)
      let instance = "hark.instance\(getpid())"
      #expect(first.server.busName == "org.mpris.MediaPlayer2.hark")
      #expect(second.server.busName == "org.mpris.MediaPlayer2.\(instance)")
      let listed = Set(bus.playerctl("-l").text.split(separator: "\n").map(String.init))
      #expect(listed == ["hark", instance])
      #expect(bus.playerctl("-p", instance, "status").text == "Paused")

      #expect(bus.playerctl("-p", instance, "next").status == 0)
      #expect(await second.requests(count: 1) == [.next])
      #expect(first.log.all.isEmpty)

      first.server.setEligible(false)
      await waitUntil("the first giving its name back") { bus.playerctl("-l").text == instance }
    }
  }

  @Test func anUnreachableBusFailsCleanly() async throws {
    let directory = makeTemporaryDirectory("hark-mpris-nobus")
    defer { removeDirectory(directory) }
    let address = "unix:path=\(directory)/no-such-bus"
    let error = #expect(throws: MPRISError.self) {
      _ = try MPRISServer(
        configuration: MPRISConfiguration(busAddress: address), position: { .zero })
    }
    guard case .cannotConnect(let reported, let reason) = error else {
      Issue.record("expected cannotConnect, got \(String(describing: error))")
      return
    }
    #expect(reported == address)
    #expect(!reason.isEmpty)
    #expect(
      error?.description.hasPrefix("cannot reach the D-Bus session bus at '\(address)'") == true)

    #expect(throws: MPRISError.self) {
      _ = try MPRISServer(
        configuration: MPRISConfiguration(busAddress: "not an address"), position: { .zero })
    }
  }

  @Test func withNoBusInTheEnvironmentThereIsNoSessionBusAddress() throws {
    #expect(MPRISServer.sessionBusAddress(environment: [:]) == nil)
    #expect(MPRISServer.sessionBusAddress(environment: ["DBUS_SESSION_BUS_ADDRESS": ""]) == nil)
    #expect(
      MPRISServer.sessionBusAddress(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"])
        == "unix:path=/x")

    let directory = makeTemporaryDirectory("hark-mpris-runtime")
    defer { removeDirectory(directory) }
    #expect(MPRISServer.sessionBusAddress(environment: ["XDG_RUNTIME_DIR": directory]) == nil)
    try bindUnixSocket(at: directory + "/bus")
    #expect(
      MPRISServer.sessionBusAddress(environment: ["XDG_RUNTIME_DIR": directory])
        == "unix:path=\(directory)/bus")
    #expect(MPRISError.noSessionBus.description.contains("DBUS_SESSION_BUS_ADDRESS is not set"))
  }

  @Test func theRequestStreamEndsWhenTheBusGoesAway() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      bus.stop()
      await waitUntil("the request stream ending") { player.log.streamEnded }
      #expect(player.server.busName == nil)
      // The owner may go on pushing; nothing happens and nothing crashes.
      player.server.update(MPRISState())
      player.server.seeked(to: .seconds(1))
      player.server.setEligible(true)
    }
  }

  @Test func closingGivesTheNameBackAndEndsTheStream() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      player.server.close()
      #expect(player.server.busName == nil)
      await waitUntil("the request stream ending") { player.log.streamEnded }
      await waitUntil("the name going away") { bus.playerctl("-l").text.isEmpty }
      player.server.close()
    }
  }
}

/// Leaves a listening Unix socket at `path` (closed again; the file stays, as a bus's would).
private func bindUnixSocket(at path: String) throws {
  let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
  try #require(fd >= 0)
  defer { close(fd) }
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  withUnsafeMutableBytes(of: &address.sun_path) { raw in
    for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
  }
  let rc = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
    }
  }
  try #require(rc == 0)
}
