// swift-tools-version:6.1
import PackageDescription

let package = Package(
  name: "hark",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "hark", targets: ["hark"])
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
  ],
  targets: [
    // Pure Swift: categories, activation, interruptions, routes, the policy engine. No C, no I/O.
    .target(name: "SessionCore"),
    // The session server's wire protocol: messages and newline-delimited JSON framing.
    .target(name: "SessionWire", dependencies: ["SessionCore"]),
    // What Swift's Glibc module hides behind _GNU_SOURCE (SO_PEERCRED's ucred, POSIX_SPAWN_SETSID).
    .target(name: "CHarkSys"),
    // Pure Swift: PCM formats, the decoder and output contracts, the sample ring, gain ramps.
    .target(name: "AudioCore"),
    .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
    .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
    // ALSA playback devices and the simple mixer (system volume, G3).
    .target(name: "ALSAOutput", dependencies: ["AudioCore", "CALSA"]),
    // libsndfile decoding: WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3.
    .target(name: "SndFileDecoder", dependencies: ["AudioCore", "CSndFile"]),
    // Transport, the decode and render threads, and the player's reactions to its session.
    .target(name: "PlayerEngine", dependencies: ["AudioCore", "SessionCore"]),
    // The per-user session server and the AudioSession client library every hark process uses.
    .target(
      name: "SessionServer",
      dependencies: [
        "SessionCore", "SessionWire", "CHarkSys",
        .product(name: "Logging", package: "swift-log"),
      ]),
    // The config file: a TOML subset, read without Foundation.
    .target(name: "Settings"),
    .systemLibrary(
      name: "CNcursesw", pkgConfig: "ncursesw", providers: [.apt(["libncurses-dev"])]),
    // The terminal interface: curses drawing, key decoding and bindings, views of the player.
    .target(
      name: "TerminalUI", dependencies: ["CNcursesw", "PlayerEngine", "AudioCore", "SessionCore"]),
    // The one executable: subcommands parse arguments, wire the pieces, run.
    .executableTarget(
      name: "hark",
      dependencies: [
        "SessionCore", "SessionWire", "SessionServer", "CHarkSys", "AudioCore", "PlayerEngine",
        "ALSAOutput", "SndFileDecoder", "Settings", "TerminalUI",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    .testTarget(
      name: "SessionCoreTests",
      dependencies: [
        "SessionCore",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]),
    .testTarget(name: "SessionWireTests", dependencies: ["SessionWire"]),
    .testTarget(name: "SettingsTests", dependencies: ["Settings"]),
    .testTarget(
      name: "TerminalUITests", dependencies: ["TerminalUI", "PlayerEngine", "SessionCore"]),
    // Fakes shared by the engine's tests: FakeOutput, ToneDecoder, ManualClock.
    .target(name: "AudioTestSupport", dependencies: ["AudioCore"]),
    .testTarget(name: "AudioCoreTests", dependencies: ["AudioCore", "AudioTestSupport"]),
    .testTarget(
      name: "PlayerEngineTests",
      dependencies: ["PlayerEngine", "AudioCore", "AudioTestSupport", "SessionCore"]),
    .testTarget(
      name: "SessionServerTests",
      dependencies: ["SessionServer", "SessionWire", "SessionCore"]),
  ]
)
