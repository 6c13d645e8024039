// swift-tools-version:6.1
import PackageDescription

#if canImport(Glibc)
  import Glibc
#endif

// libdbus's header folders (`pkg-config --cflags dbus-1`), asked of pkg-config as the manifest is
// read: Debian keeps half of them under /usr/lib/<triplet>/dbus-1.0/include, Fedora under
// /usr/lib64, Arch under /usr/lib. Not a `.systemLibrary(pkgConfig: "dbus-1")`: SwiftPM adds
// the package's Libs (-ldbus-1) to the link of every product that depends on it, module map
// `link` or not, and hark would load libdbus at every start again (Tests/EndToEnd/install.sh
// checks it does not); nor `-Xlinker --as-needed`, which SwiftPM's link line puts after the
// -l flags it means to drop. CDBus loads libdbus with dlopen when MPRIS or the sleep watcher
// first needs it. No pkg-config (or no libdbus-1-dev): no folders, and the build stops at
// CDBus's `#include <dbus/dbus.h>`.
let dbusFlags: [String] = {
  #if canImport(Glibc)
    guard let output = popen("pkg-config --cflags dbus-1 2>/dev/null", "r") else { return [] }
    var text = ""
    var buffer = [CChar](repeating: 0, count: 4096)
    while fgets(&buffer, Int32(buffer.count), output) != nil {
      let line = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
      text += String(decoding: line, as: UTF8.self)
    }
    guard pclose(output) == 0 else { return [] }
    return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
  #else
    return []
  #endif
}()

let package = Package(
  name: "hark",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "hark", targets: ["hark"]),
    .executable(name: "hark-ffmpeg", targets: ["hark-ffmpeg"]),
    .executable(name: "hark-tags", targets: ["hark-tags"]),
    .executable(name: "hark-cover", targets: ["hark-cover"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
  ],
  targets: [
    // Pure Swift: categories, activation, interruptions, routes, the policy engine. No C, no I/O.
    .target(name: "SessionCore"),
    // The session server's wire protocol: messages and newline-delimited JSON framing.
    .target(name: "SessionWire", dependencies: ["SessionCore"]),
    // What Swift's Glibc module hides behind _GNU_SOURCE (SO_PEERCRED's ucred, POSIX_SPAWN_SETSID,
    // pipe2).
    .target(name: "CHarkSys"),
    // hark's main thread drains the main queue itself instead of ending in dispatch_main's
    // pthread_exit, whose unwinding made the unwind tables resident (MainQueue.c).
    .target(name: "CHarkMain"),
    // The process plumbing every other target would otherwise copy: threads, the semaphore, the
    // wake pipe, the monotonic clock, the environment and XDG directories, spawning (descriptor
    // map, close-on-exec pipes, reaping), write-all, the atomic file replace, lock files, system
    // errors, a rotating log file. Generic (nothing of hark's), no Foundation.
    .target(
      name: "Platform",
      dependencies: ["CHarkSys", .product(name: "SystemPackage", package: "swift-system")]),
    // Pure Swift: PCM formats, the decoder and output contracts, the sample ring, gain ramps.
    .target(name: "AudioCore"),
    .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
    .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
    // libdbus-1 (libdbus-1-dev's headers, in the folders dbusFlags names), loaded when MPRIS or
    // the sleep watcher starts (Loader.c), not at every start.
    .target(
      name: "CDBus", cSettings: [.unsafeFlags(dbusFlags)],
      linkerSettings: [.linkedLibrary("dl")]),
    // An MPRIS2 server on the D-Bus session bus, and a client of the other players on it (the
    // sleep timer's); depends on nothing of hark's (Platform is generic plumbing), so it is
    // reusable.
    .target(name: "MPRIS", dependencies: ["CDBus", "Platform"]),
    // Pure Swift: what ALSA jack names mean as routes, and the state machine that turns jack
    // observations into plugged/unplugged route events (G4, G5).
    .target(name: "JackRoutes", dependencies: ["SessionCore"]),
    // ALSA playback devices and the simple mixer (system volume, G3); the jack watcher (G4, G5).
    .target(
      name: "ALSAOutput",
      dependencies: ["AudioCore", "CALSA", "JackRoutes", "SessionCore", "Platform"]),
    // libsndfile decoding: WAV, AIFF, FLAC, Ogg Vorbis, Opus, MP3.
    .target(name: "SndFileDecoder", dependencies: ["AudioCore", "CSndFile", "Platform"]),
    .systemLibrary(
      name: "CFFmpeg", pkgConfig: "libavformat",
      providers: [
        .apt(["libavformat-dev", "libavcodec-dev", "libswresample-dev", "libavutil-dev"])
      ]
    ),
    // The FFmpeg helper: decodes what libsndfile cannot (AAC, ALAC, WavPack, WMA, ...) in a
    // process of its own and writes float frames to stdout, so that FFmpeg is never loaded
    // into the player and a crash or a hang in it cannot take the player down.
    .executableTarget(
      name: "hark-ffmpeg", dependencies: ["AudioCore", "CFFmpeg", "CHarkSys", "Platform"]),
    // Decoding through the hark-ffmpeg helper: spawns it, reads its frames, kills it on trouble.
    .target(name: "FFmpegDecoder", dependencies: ["AudioCore", "CHarkSys", "Platform"]),
    .systemLibrary(
      name: "CTagLib", pkgConfig: "taglib_c", providers: [.apt(["libtagc0-dev"])]),
    // SQLite (libsqlite3-dev's header), loaded by the index when it is first opened.
    .target(name: "CSQLite", linkerSettings: [.linkedLibrary("dl")]),
    // The tag reader for the library index: TagLib (C++, crash-prone on hostile files) in a
    // process of its own, so that the player never loads it.
    .executableTarget(
      name: "hark-tags", dependencies: ["CTagLib", "TagLibBridge", "Loudness", "Platform"]),
    // TagLib's C++ API behind C functions, for what its C binding cannot reach: lyrics (USLT,
    // SYLT, Vorbis LYRICS, MP4 ©lyr) and writing ReplayGain tags. hark-tags's only.
    .target(
      name: "TagLibBridge", cxxSettings: [.unsafeFlags(["-I/usr/include/taglib"])],
      linkerSettings: [.linkedLibrary("tag")]),
    // The cover helper: the playing album's picture (embedded in the file, or cover.jpg and
    // the like beside it), decoded and scaled by FFmpeg (libswscale) and made into coloured
    // character cells by chafa, in a process of its own as the other helpers are: neither
    // library (nor chafa's GLib) is loaded into hark, and a hostile picture costs only a cover.
    .systemLibrary(
      name: "CChafa", pkgConfig: "chafa", providers: [.apt(["libchafa-dev", "libswscale-dev"])]),
    .executableTarget(name: "hark-cover", dependencies: ["CChafa", "Platform"]),
    // The library index: tags in SQLite under $XDG_CACHE_HOME/hark, scanned incrementally.
    .target(
      name: "LibraryIndex",
      dependencies: [
        "CSQLite", "Platform", "MediaFiles", "UserText", "AudioCore", "Lyrics", "Loudness",
      ]),
    // ReplayGain: the gain tags libsndfile does not expose (FLAC, Ogg, ID3v2, APEv2), the
    // arithmetic (mode, preamp, clipping), and a decoder that applies the gain.
    .target(name: "Loudness", dependencies: ["AudioCore", "Platform"]),
    // libebur128 (libebur128-dev's header), loaded when loudness is first measured (Loader.c).
    .target(name: "CEBUR128", linkerSettings: [.linkedLibrary("dl")]),
    // SoundTouch's C interface (libSoundTouchDll.so.1, LGPL-2.1+), for playing long recordings at
    // other speeds with their pitch kept; loaded when a speed other than 1x is first asked for
    // (Loader.c). Its prototypes are declared in the target: listeners have only the runtime
    // package. Not Rubber Band, whose GPL would make hark's binaries GPL.
    .target(name: "CSoundTouch", linkerSettings: [.linkedLibrary("dl")]),
    // Loudness measured as EBU R128 says (libebur128): integrated loudness, true peak, and the
    // gating blocks an album is gated from; for the index's Sound Check of untagged files.
    .target(name: "LoudnessMeter", dependencies: ["CEBUR128", "AudioCore", "Loudness"]),
    // Lyrics: LRC files as found in the wild (encodings, stamps, offsets, enhanced LRC's word
    // stamps) and ID3's SYLT, and which line is sung when. Pure Swift.
    .target(name: "Lyrics"),
    // Text the user reads and types: search folding, control characters escaped for the
    // terminal, times as people type them. Pure Swift.
    .target(name: "UserText", dependencies: ["Platform"]),
    // What the user names, turned into files: folders walked, playlists and cue sheets read.
    .target(name: "MediaFiles", dependencies: ["AudioCore", "Platform", "UserText"]),
    // Pure Swift: the player's decisions as one state machine (state + input -> state +
    // effects), its queue, undo, snapshots and messages. No clock, no I/O.
    .target(name: "PlayerCore", dependencies: ["AudioCore", "SessionCore", "MediaFiles"]),
    // Listens counted and sent: when a listen counts (a pure state machine, fed by a player's
    // snapshots), ListenBrainz's and Last.fm's requests and answers, the queue of listens on
    // disk, and the scrobbler that observes a player and sends them (libcurl, CCurl).
    .target(
      name: "Scrobbling", dependencies: ["PlayerCore", "AudioCore", "Platform", "CCurl"]),
    // libcurl (libcurl4-openssl-dev's header), loaded when a listen is first sent (Loader.c).
    .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
    // The queue kept between runs: the saved state and its file, replaced atomically.
    .target(name: "StateFile", dependencies: ["PlayerCore", "Platform"]),
    // The decode and render threads, and the player's loop that carries out PlayerCore's effects.
    .target(
      name: "PlayerEngine",
      dependencies: [
        "AudioCore", "SessionCore", "Platform", "PlayerCore", "MediaFiles", "CSoundTouch",
      ]),
    // The AudioSession client library every hark process uses: where the server is (its paths),
    // connecting (starting a server when none answers), requests, events, reconnecting (G16).
    .target(
      name: "SessionClient", dependencies: ["SessionCore", "SessionWire", "Platform", "CHarkSys"]),
    // The per-user session server; it meets its clients where SessionClient's paths say. MPRIS's
    // client reaches the desktop's other players for the sleep timer.
    .target(
      name: "SessionServer",
      dependencies: [
        "SessionCore", "SessionWire", "SessionClient", "Platform", "CHarkSys", "MPRIS",
        .product(name: "Logging", package: "swift-log"),
      ]),
    // libpulse (libpulse-dev's headers), loaded when the sound-server watcher starts
    // (Loader.c), not at every start.
    .target(name: "CPulse", linkerSettings: [.linkedLibrary("dl")]),
    // The sound server (PulseAudio, PipeWire's pulse service) watched with libpulse: its sinks
    // as outputs, phone-role streams as calls, a stream whose sink went away.
    .target(name: "SoundServer", dependencies: ["CPulse", "SessionCore"]),
    // Playing on the sound server through libpulse itself: a long buffer (few wakeups) whose
    // contents a duck rewrites, on the render thread alone (no thread of libpulse's).
    .target(name: "PulseOutput", dependencies: ["AudioCore", "CPulse", "Platform"]),
    // Remote-command sources beyond the session server: MPRIS (G17-G19).
    .target(
      name: "RemoteCommands",
      dependencies: ["PlayerCore", "MediaFiles", "MPRIS", "SessionCore", "Platform"]),
    // The machine going to sleep and waking (systemd-logind's PrepareForSleep on the system
    // bus), with a delay inhibitor held while playing so that the player pauses first.
    .target(name: "SystemSleep", dependencies: ["CDBus", "Platform"]),
    // The config file: a TOML subset, read without Foundation.
    .target(name: "Settings", dependencies: ["Platform"]),
    // ncurses (libncurses-dev's headers), loaded by the interface when it takes the terminal.
    .target(name: "CNcursesw", linkerSettings: [.linkedLibrary("dl")]),
    // The terminal interface: curses drawing, key decoding and bindings, views of the player.
    .target(
      name: "TerminalUI",
      dependencies: [
        "CNcursesw", "PlayerCore", "MediaFiles", "UserText", "SessionCore", "AudioCore",
        "Platform", "Lyrics",
      ]),
    // A player served to the interfaces attached to it, over a socket of its own (detach and
    // attach), and the interface's side of that link.
    .target(
      name: "PlayerLink",
      dependencies: [
        "PlayerCore", "AudioCore", "SessionCore", "SessionWire", "SessionClient", "Platform",
      ]),
    // The one executable: subcommands parse arguments, wire the pieces, run.
    .executableTarget(
      name: "hark",
      dependencies: [
        "SessionCore", "SessionWire", "SessionClient", "SessionServer", "CHarkSys", "CHarkMain",
        "Platform", "AudioCore", "UserText", "MediaFiles", "PlayerCore", "StateFile",
        "PlayerEngine", "ALSAOutput", "PulseOutput", "JackRoutes", "SndFileDecoder",
        "FFmpegDecoder",
        "Settings", "RemoteCommands", "SoundServer", "TerminalUI", "SystemSleep", "Loudness",
        "LoudnessMeter", "LibraryIndex", "PlayerLink", "Lyrics", "Scrobbling",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    .testTarget(name: "PlatformTests", dependencies: ["Platform", "AudioTestSupport"]),
    .testTarget(name: "LyricsTests", dependencies: ["Lyrics"]),
    .testTarget(name: "UserTextTests", dependencies: ["UserText", "MediaFiles", "Platform"]),
    .testTarget(
      name: "MediaFilesTests",
      dependencies: ["MediaFiles", "AudioCore", "Platform", "AudioTestSupport"]),
    .testTarget(
      name: "PlayerCoreTests",
      dependencies: [
        "PlayerCore", "AudioCore", "SessionCore", "MediaFiles", "Platform",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]),
    .testTarget(
      name: "ScrobblingTests",
      dependencies: [
        "Scrobbling", "PlayerCore", "Platform", "AudioTestSupport",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]),
    .testTarget(
      name: "StateFileTests",
      dependencies: ["StateFile", "PlayerCore", "Platform", "AudioTestSupport"]),
    // The executable's own command-line reading, against ArgumentParser's.
    .testTarget(
      name: "HarkTests",
      dependencies: [
        "hark", "AudioTestSupport",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]),
    .testTarget(
      name: "PlayerLinkTests",
      dependencies: ["PlayerLink", "PlayerCore", "SessionCore", "AudioCore", "Platform"]),
    // The gain tags read from files the encoders make at test time, and the arithmetic.
    .testTarget(
      name: "LoudnessTests",
      dependencies: ["Loudness", "LoudnessMeter", "AudioCore", "AudioTestSupport"]),
    // The index against files made at test time, through the real hark-tags.
    .testTarget(
      name: "LibraryIndexTests",
      dependencies: [
        "LibraryIndex", "Platform", "MediaFiles", "PlayerCore", "Lyrics", "UserText",
        "AudioTestSupport",
      ]),
    .testTarget(
      name: "SessionCoreTests",
      dependencies: [
        "SessionCore",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]),
    .testTarget(name: "SessionWireTests", dependencies: ["SessionWire", "SessionCore"]),
    .testTarget(name: "SettingsTests", dependencies: ["Settings", "Platform"]),
    .testTarget(
      name: "TerminalUITests",
      dependencies: [
        "TerminalUI", "PlayerCore", "MediaFiles", "AudioCore", "SessionCore", "Lyrics",
        "Platform",
      ]),
    // Fakes shared by the engine's tests: FakeOutput, ToneDecoder, ManualClock.
    .target(name: "AudioTestSupport", dependencies: ["AudioCore", "Platform"]),
    .testTarget(
      name: "AudioCoreTests",
      dependencies: [
        "AudioCore", "AudioTestSupport",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]),
    .testTarget(
      name: "PlayerEngineTests",
      dependencies: [
        "PlayerEngine", "PlayerCore", "MediaFiles", "AudioCore", "AudioTestSupport", "SessionCore",
        "Platform",
      ]),
    // Test only: counts one thread's heap allocations by replacing malloc and its kin.
    .target(name: "CMallocCounter", path: "Tests/CMallocCounter"),
    .testTarget(
      name: "RenderPathTests",
      dependencies: ["PlayerEngine", "AudioCore", "AudioTestSupport", "CMallocCounter"]),
    .testTarget(name: "MPRISTests", dependencies: ["MPRIS", "Platform"]),
    .testTarget(
      name: "SoundServerTests",
      dependencies: [
        "SoundServer", "SessionCore", "Platform",
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]),
    .testTarget(name: "PulseOutputTests", dependencies: ["PulseOutput", "AudioCore"]),
    .testTarget(
      name: "RemoteCommandsTests",
      dependencies: ["RemoteCommands", "PlayerCore", "AudioCore", "MPRIS", "SessionCore"]),
    .testTarget(
      name: "SessionServerTests",
      dependencies: [
        "SessionServer", "SessionClient", "SessionWire", "SessionCore", "Platform",
        .product(name: "Logging", package: "swift-log"),
      ]),
    .testTarget(name: "JackRoutesTests", dependencies: ["JackRoutes", "SessionCore"]),
    .testTarget(
      name: "SndFileDecoderTests",
      dependencies: ["SndFileDecoder", "AudioCore", "CSndFile", "Platform"]),
    // FFmpegFile and the hark-ffmpeg helper (found next to the test bundle, as next to hark) on
    // files made at test time with the ffmpeg command.
    .testTarget(
      name: "FFmpegDecoderTests", dependencies: ["FFmpegDecoder", "AudioCore", "CSndFile"]),
    // Bounded mutation fuzzing of hark's own parsers and of the decoder (libsndfile); seeds
    // and regressions in Corpus/.
    .testTarget(
      name: "FuzzTests",
      dependencies: [
        "SessionWire", "Settings", "PlayerCore", "MediaFiles", "TerminalUI", "AudioCore",
        "SndFileDecoder",
        "Platform", "Loudness",
      ],
      exclude: ["Corpus"]),
    // Prints what JackWatcher reports, a line per event: the fake-card tests run it in a process
    // of its own (fresh HOME and ALSA configuration); people run it to see what hark sees.
    .executableTarget(
      name: "JackProbe", dependencies: ["ALSAOutput", "JackRoutes"], path: "Tests/JackProbe"),
    // The jack watcher against no cards, a temporary /dev/snd, and the fake card of
    // Tests/FakeJackCard (an alsa-lib control plugin the tests build with gcc).
    .testTarget(
      name: "ALSAOutputTests",
      dependencies: ["ALSAOutput", "JackRoutes", "SessionCore", "JackProbe", "Platform"]),
  ]
)

// CDBus's header includes libdbus's (dbusFlags, above), in every Swift target that sees it.
for target in package.targets where target.type != .system && target.name != "CDBus" {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [.unsafeFlags(dbusFlags.flatMap { ["-Xcc", $0] })]
}

// Release builds (the quick start's, the Makefile's, the benchmark's): the headless player's
// memory. The kernel reads 64 KB around each page of code that faults in, so what
// hark keeps resident follows how scattered the code that runs is, not how much of it runs
// (about 1 MB of 12). Each function in a section of its own, and the ones that run when hark
// plays laid out together (scripts/link-order.txt, made by scripts/make-link-order; a stale
// list costs memory, never correctness); lld, whose packed relative relocations (RELR,
// glibc 2.36) are 9 KB where the default linker's 1.1 MB were read whole at every start;
// GCC's libstdc++ linked statically (scripts/static-libstdc++: the Swift runtime's "-lstdc++"
// finds a linker script there first). hark is linked with its relocations kept and without PIE
// for scripts/bolt, which then lays out the toolchain's libraries' code too, function by
// function (BOLT needs the relocations, and breaks a PIE's packed ones; a PIE's unpacked ones
// are 1.1 MB read at every start). What each buys, measured: docs/PERFORMANCE.md, "The link:
// function sections and the link order" and "The code laid out by BOLT".
let release = BuildSettingCondition.when(configuration: .release)
for target in package.targets where target.type == .regular || target.type == .executable {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [.unsafeFlags(["-Xfrontend", "-function-sections"], release)]
}
for target in package.targets where target.name == "hark" {
  target.linkerSettings =
    (target.linkerSettings ?? []) + [
      .unsafeFlags(
        [
          "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
          "-Xlinker", "--emit-relocs", "-Xclang-linker", "-no-pie",
          "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/scripts/link-order.txt",
          "-Xlinker", "--no-warn-symbol-ordering", "-Xlinker", "--no-export-dynamic",
          "-L\(Context.packageDirectory)/scripts/static-libstdc++",
        ], release)
    ]
}
