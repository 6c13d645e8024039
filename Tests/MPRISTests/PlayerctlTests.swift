import Glibc
import MPRIS
import Testing

/// The server as the real `playerctl` sees it, on a private bus per test.
@Suite(.timeLimit(.minutes(5))) struct PlayerctlTests {
  @Test func playerctlReadsStatusAndMetadataAsTheOwnerGaveThem() async throws {
    try await withTestBus { bus in
      _ = try await FakePlayer(bus: bus, state: playingState)
      #expect(bus.playerctl("-l").text == "hark")
      #expect(bus.playerctl("-p", "hark", "status").text == "Playing")
      #expect(bus.playerctl("-p", "hark", "metadata", "title").text == "Blue in Green")
      #expect(bus.playerctl("-p", "hark", "metadata", "artist").text == "Miles Davis, Bill Evans")
      #expect(bus.playerctl("-p", "hark", "metadata", "album").text == "Kind of Blue")
      #expect(bus.playerctl("-p", "hark", "metadata", "mpris:length").text == "337000000")
      #expect(bus.playerctl("-p", "hark", "metadata", "mpris:trackid").text == "'/hark/track/3'")
      #expect(bus.playerctl("-p", "hark", "metadata", "xesam:trackNumber").text == "3")
      #expect(
        bus.playerctl("-p", "hark", "metadata", "xesam:url").text
          == "file:///music/Kind%20of%20Blue/03%20Blue%20in%20Green.flac")
      #expect(bus.playerctl("-p", "hark", "volume").text == "0.500000")
      #expect(bus.playerctl("-p", "hark", "shuffle").text == "Off")
      #expect(bus.playerctl("-p", "hark", "loop").text == "None")
    }
  }

  @Test func positionIsReadFromTheOwnerEachTimeItIsAsked() async throws {
    try await withTestBus { bus in
      var paused = playingState
      // Paused, so that playerctl prints what it read instead of extrapolating.
      paused.playbackStatus = .paused
      let player = try await FakePlayer(bus: bus, state: paused)
      player.position.current = .milliseconds(12_500)
      #expect(bus.playerctl("-p", "hark", "position").text == "12.500000")
      player.position.current = .seconds(30)
      #expect(bus.playerctl("-p", "hark", "position").text == "30.000000")
    }
  }

  @Test func playerctlCommandsArriveAsRequestsInOrder() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      for command in [
        ["play-pause"], ["play"], ["pause"], ["stop"], ["next"], ["previous"], ["position", "12"],
        ["position", "5+"], ["position", "3-"], ["volume", "0.4"], ["shuffle", "On"],
        ["loop", "Track"], ["open", "file:///music/a.flac"],
      ] {
        let output = runCommand(
          ["playerctl", "-p", "hark"] + command, environment: bus.environment)
        #expect(output.status == 0, "playerctl \(command): \(output)")
      }
      let expected: [MPRISRequest] = [
        .playPause, .play, .pause, .stop, .next, .previous,
        .setPosition(trackID: "3", to: .seconds(12)), .seek(by: .seconds(5)),
        .seek(by: .seconds(-3)), .setVolume(0.4), .setShuffle(true), .setLoopStatus(.track),
        .openURI("file:///music/a.flac"),
      ]
      #expect(await player.requests(count: expected.count) == expected)
    }
  }

  @Test func nextAtTheLastTrackDeliversNothing() async throws {
    try await withTestBus { bus in
      var lastTrack = playingState
      lastTrack.canGoNext = false
      let player = try await FakePlayer(bus: bus, state: lastTrack)
      // playerctl checks CanGoNext itself; dbus-send calls Next regardless, so the server's
      // own check is tested too.
      #expect(bus.playerctl("-p", "hark", "next").status != 0)
      let call = bus.call("org.mpris.MediaPlayer2.Player.Next")
      #expect(call.status == 0, "MPRIS: Next with CanGoNext false has no effect, no error")
      #expect(bus.playerctl("-p", "hark", "previous").status == 0)
      // Requests arrive in order, so a Next forwarded by mistake would come first.
      #expect(await player.requests(count: 1) == [.previous])
      #expect(bus.playerctl("-p", "hark", "metadata", "title").text == "Blue in Green")
    }
  }

  @Test func disabledCommandsAreIgnoredNotMappedToOthers() async throws {
    try await withTestBus { bus in
      var state = playingState
      state.canSeek = false
      state.canGoPrevious = false
      let player = try await FakePlayer(bus: bus, state: state)
      _ = bus.call("org.mpris.MediaPlayer2.Player.Previous")
      _ = bus.call(
        "org.mpris.MediaPlayer2.Player.Seek",
        "int64:5000000")
      _ = bus.call(
        "org.mpris.MediaPlayer2.Player.SetPosition",
        "objpath:/hark/track/3", "int64:5000000")
      _ = bus.playerctl("-p", "hark", "position", "5+")

      // Paused with play disabled: PlayPause would mean Play, so it is refused.
      state.playbackStatus = .paused
      state.canPlay = false
      player.server.update(state)
      let playPause = bus.playerctl("-p", "hark", "play-pause")
      #expect(playPause.status != 0, "\(playPause)")
      _ = bus.playerctl("-p", "hark", "play")

      #expect(bus.playerctl("-p", "hark", "pause").status == 0)
      #expect(await player.requests(count: 1) == [.pause])
    }
  }

  @Test func withoutCanControlNothingIsForwardedAndWritesFail() async throws {
    try await withTestBus { bus in
      var state = playingState
      state.canControl = false
      let player = try await FakePlayer(bus: bus, state: state)
      for command in [["play-pause"], ["next"], ["previous"], ["play"], ["pause"], ["stop"]] {
        _ = runCommand(["playerctl", "-p", "hark"] + command, environment: bus.environment)
      }
      let stop = bus.call("org.mpris.MediaPlayer2.Player.Stop")
      #expect(stop.stderr.contains("org.freedesktop.DBus.Error.NotSupported"), "\(stop)")
      let volume = bus.call(
        "org.freedesktop.DBus.Properties.Set", "string:org.mpris.MediaPlayer2.Player",
        "string:Volume", "variant:double:0.1")
      #expect(volume.stderr.contains("org.freedesktop.DBus.Error.NotSupported"), "\(volume)")

      state.canControl = true
      player.server.update(state)
      #expect(bus.playerctl("-p", "hark", "next").status == 0)
      #expect(await player.requests(count: 1) == [.next])
    }
  }

  @Test func volumeIsTheOwnersAndWritesAreIgnoredWithoutAVolumeControl() async throws {
    try await withTestBus { bus in
      var state = playingState
      state.volume = nil
      let player = try await FakePlayer(bus: bus, state: state)
      #expect(bus.playerctl("-p", "hark", "volume").text == "1.000000")
      #expect(bus.playerctl("-p", "hark", "volume", "0.3").status == 0)
      // The module never sets its own volume: only the owner's next state changes what is read.
      #expect(bus.playerctl("-p", "hark", "volume").text == "1.000000")

      state.volume = 0.25
      player.server.update(state)
      #expect(bus.playerctl("-p", "hark", "volume").text == "0.250000")
      #expect(bus.playerctl("-p", "hark", "volume", "0.3").status == 0)
      #expect(bus.playerctl("-p", "hark", "volume").text == "0.250000")
      #expect(await player.requests(count: 1) == [.setVolume(0.3)])
    }
  }

  @Test func shuffleAndLoopReadBackWhatTheOwnerReports() async throws {
    try await withTestBus { bus in
      var state = playingState
      let player = try await FakePlayer(bus: bus, state: state)
      #expect(bus.playerctl("-p", "hark", "shuffle", "Toggle").status == 0)
      #expect(bus.playerctl("-p", "hark", "loop", "Playlist").status == 0)
      #expect(await player.requests(count: 2) == [.setShuffle(true), .setLoopStatus(.playlist)])
      #expect(bus.playerctl("-p", "hark", "shuffle").text == "Off")

      state.shuffle = true
      state.loopStatus = .playlist
      player.server.update(state)
      #expect(bus.playerctl("-p", "hark", "shuffle").text == "On")
      #expect(bus.playerctl("-p", "hark", "loop").text == "Playlist")
    }
  }

  @Test func setPositionIsIgnoredForAStaleTrackOrAPositionOutsideIt() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      func setPosition(_ track: String, _ microseconds: String) {
        let output = bus.call(
          "org.mpris.MediaPlayer2.Player.SetPosition", "objpath:\(track)", "int64:\(microseconds)")
        #expect(output.status == 0, "\(output)")
      }
      setPosition("/hark/track/2", "1000000")  // the previous track: stale
      setPosition("/hark/track/3", "-1")
      setPosition("/hark/track/3", "337000001")  // past the end
      setPosition("/hark/track/3", "337000000")
      #expect(
        await player.requests(count: 1) == [.setPosition(trackID: "3", to: .seconds(337))])
    }
  }

  @Test func openURIRefusesSchemesOtherThanFileAndHTTP() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      let ftp = bus.call("org.mpris.MediaPlayer2.Player.OpenUri", "string:ftp://example.com/a.mp3")
      #expect(ftp.stderr.contains("org.freedesktop.DBus.Error.NotSupported"), "\(ftp)")
      #expect(bus.playerctl("-p", "hark", "open", "FILE:///b.wav").status == 0)
      #expect(bus.playerctl("-p", "hark", "open", "https://example.com/live.mp3").status == 0)
      #expect(
        await player.requests(count: 2) == [
          .openURI("FILE:///b.wav"), .openURI("https://example.com/live.mp3"),
        ])
    }
  }

  @Test func aTrackIDOfAnyTextMakesAValidObjectPath() async throws {
    try await withTestBus { bus in
      var state = playingState
      state.track?.id = "Ünïcode / spaces & more"
      let player = try await FakePlayer(bus: bus, state: state)
      let trackID = bus.playerctl("-p", "hark", "metadata", "mpris:trackid").text
      #expect(trackID == "'/hark/track/_c3_9cn_c3_afcode_20_2f_20spaces_20_26_20more'")
      #expect(bus.playerctl("-p", "hark", "position", "7").status == 0)
      #expect(
        await player.requests(count: 1) == [
          .setPosition(trackID: "Ünïcode / spaces & more", to: .seconds(7))
        ])
    }
  }
}

/// WirePlumber (0.5.11 and later) pauses over MPRIS the players whose sink went away: its Pause
/// is told apart by the process that sends it, and arrives as the output's news, not the user's
/// pause (G5). A person's Pause, from any other process, is the user's.
@Suite(.timeLimit(.minutes(2))) struct SoundServerPauseTests {
  @Test func aPauseFromWirePlumberSaysTheOutputWentAndAnyOtherIsTheUsers() async throws {
    try await withTestBus { bus in
      let player = try await FakePlayer(bus: bus, state: playingState)
      // The same dbus-send under WirePlumber's name: what the bus daemon says of its process.
      let wireplumber = bus.directory + "/wireplumber"
      let copied = runCommand(
        ["cp", "/usr/bin/dbus-send", wireplumber], environment: bus.environment)
      try #require(copied.status == 0, "\(copied.stderr)")
      let policy = runCommand(
        [
          wireplumber, "--session", "--print-reply", "--dest=org.mpris.MediaPlayer2.hark",
          "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player.Pause",
        ], environment: bus.environment)
      #expect(policy.status == 0, "\(policy.stderr)")
      #expect(bus.call("org.mpris.MediaPlayer2.Player.Pause").status == 0)
      #expect(await player.requests(count: 2) == [.pauseForLostOutput, .pause])
    }
  }
}
