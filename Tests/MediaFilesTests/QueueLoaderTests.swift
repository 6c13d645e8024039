import Foundation
import Testing

@testable import MediaFiles

/// A fresh folder for one test, removed afterwards.
private final class Scratch {
  let root: String

  init() throws {
    root =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("hark-queue-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: root) }

  func path(_ relative: String) -> String { root + "/" + relative }

  /// Creates the files (and their folders) under the root.
  func touch(_ relatives: String..., contents: String = "") throws {
    for relative in relatives {
      let path = path(relative)
      try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try contents.write(toFile: path, atomically: false, encoding: .utf8)
    }
  }

  func folder(_ relative: String) throws {
    try FileManager.default.createDirectory(
      atPath: path(relative), withIntermediateDirectories: true)
  }
}

@Suite(.timeLimit(.minutes(2))) struct QueueLoaderTests {
  @Test func foldersAreWalkedInNaturalNameOrder() throws {
    let scratch = try Scratch()
    try scratch.touch(
      "album/10 Ten.flac", "album/2 Two.flac", "album/1 One.wav", "album/Disc 10/01.mp3",
      "album/Disc 2/01.mp3", "album/Disc 2/02.mp3", "album/disc 1/01.ogg")
    let (files, problems) = QueueLoader.load([scratch.path("album")])
    #expect(problems.isEmpty)
    #expect(
      files
        == [
          "1 One.wav", "2 Two.flac", "10 Ten.flac", "disc 1/01.ogg", "Disc 2/01.mp3",
          "Disc 2/02.mp3", "Disc 10/01.mp3",
        ].map { scratch.path("album/" + $0) })
  }

  /// A scan's walk finds what a queue's finds, in the folders' own order, each file with its
  /// size and modification time, a cue sheet's tracks with the sheet's.
  @Test func aScansWalkFindsTheSameFilesWithTheirStamps() throws {
    let scratch = try Scratch()
    try scratch.touch("a/10 Ten.flac", "a/2 Two.flac", "a/B/01.mp3", "a/notes.txt", "a/.hidden.mp3")
    try scratch.touch("a/big.flac", contents: String(repeating: "x", count: 1234))
    try scratch.touch("a/Live/Live.flac")
    try scratch.touch(
      "a/Live/Live.cue",
      contents: "FILE \"Live.flac\" WAVE\n  TRACK 01 AUDIO\n    INDEX 01 00:00:00\n"
        + "  TRACK 02 AUDIO\n    INDEX 01 00:10:00\n")
    let walked = QueueLoader.walk(scratch.path("a"))
    let stamped = QueueLoader.walkStamped(scratch.path("a"))
    #expect(walked.count == 6)
    #expect(Set(stamped.map(\.path)) == Set(walked))
    #expect(stamped.count == walked.count)
    for file in stamped {
      let real = CueSheet.Reference(file.path)?.sheet ?? file.path
      let attributes = try FileManager.default.attributesOfItem(atPath: real)
      #expect(file.size == (attributes[.size] as? Int))
      var st = stat()
      #expect(stat(real, &st) == 0)
      #expect(file.mtime == Int(st.st_mtim.tv_sec) * 1_000_000_000 + Int(st.st_mtim.tv_nsec))
    }
    #expect(stamped.first { $0.path.hasSuffix("big.flac") }?.size == 1234)
    #expect(stamped.filter { $0.path.contains("Live.cue#") }.count == 2)
  }

  /// Walked by several threads at once, a tree of many folders (one a link back up it) gives
  /// each file once, as the walk of one thread does.
  @Test func aScansWalkOnSeveralThreadsFindsEachFileOnce() throws {
    let scratch = try Scratch()
    for artist in 0..<12 {
      for album in 0..<(artist % 4 + 1) {
        for track in 0..<(album + 2) {
          try scratch.touch("lib/A\(artist)/B\(album)/\(track).mp3")
        }
      }
    }
    try FileManager.default.createSymbolicLink(
      atPath: scratch.path("lib/A3/B0/up"), withDestinationPath: scratch.path("lib"))
    let walked = QueueLoader.walk(scratch.path("lib"))
    for threads in [1, 2, 5] {
      let stamped = QueueLoader.walkStamped(scratch.path("lib"), threads: threads)
      #expect(stamped.count == walked.count, "\(threads) threads")
      #expect(Set(stamped.map(\.path)) == Set(walked), "\(threads) threads")
    }
  }

  @Test func naturalOrderComparesNumbersByValueAndLettersWithoutCase() {
    let names = ["track 10", "Track 2", "track 1", "track 02b", "Track 2a", "a", "B", "10", "9"]
    #expect(
      names.sorted { $0.localizedStandardLess($1) } == [
        "9", "10", "a", "B", "track 1", "Track 2", "Track 2a", "track 02b", "track 10",
      ])
    #expect(!"x".localizedStandardLess("x"))
    #expect("x".localizedStandardLess("x1"))
  }

  /// Accents and letters written as two are placed as search folds them ("Ágætis byrjun" among the
  /// A's, not after Z), numbers by value; `NameOrder` sorts alike.
  @Test func naturalOrderPlacesAccentedNamesAmongTheirLetters() {
    let names = [
      "Zebra", "Ágætis byrjun", "apple", "Øresund", "Oslo", "Big Album 10", "Big Album 2",
      "Straße", "Strasse", "Émile", "Ellen",
    ]
    let expected = [
      "Ágætis byrjun", "apple", "Big Album 2", "Big Album 10", "Ellen", "Émile", "Øresund",
      "Oslo", "Strasse", "Straße", "Zebra",
    ]
    #expect(names.sorted { $0.localizedStandardLess($1) } == expected)
    #expect(names.sorted(byName: { $0 }) == expected)
    #expect(names.shuffled().sorted(byName: { $0 }) == expected)
  }

  /// Names the same but for case or leading zeros still have an order, one way only, so a
  /// folder lists the same every time, in the library as in the queue.
  @Test func namesEqualByValueStillHaveOneOrder() {
    for (a, b) in [("Track01", "track1"), ("A", "a"), ("x007", "x7")] {
      #expect(a.localizedStandardLess(b) != b.localizedStandardLess(a), "\(a) / \(b)")
    }
    #expect(
      ["track1", "Track01", "track 2"].sorted { $0.localizedStandardLess($1) }
        == ["track 2", "Track01", "track1"])
  }

  /// Names with long runs of digits (dates with times, catalogue numbers) sort without
  /// overflowing.
  @Test func naturalOrderSurvivesLongDigitRuns() async {
    await #expect(processExitsWith: .success) {
      let earlier = "recording 20240101123456789012.flac"
      let later = "recording 20240101123456789013.flac"
      if !earlier.localizedStandardLess(later) { exit(1) }
    }
  }

  /// A file's extension, read off its bytes: lower case, of the last name only, none for a
  /// hidden file's leading dot; a cue sheet's track reference only with its number.
  @Test func extensionsAndCueReferencesAreReadOffTheName() {
    let cases: [(String, String)] = [
      ("/m/a/b.FLAC", "flac"), ("/m/Zoë/Ágætis byrjun.Flac", "flac"), ("x/y.tar.gz", "gz"),
      (".hidden", ""), ("/m/.hidden", ""), ("/m/dir.d/file", ""), ("noext", ""), ("file.", ""),
      ("/m/a.b/", "b"), ("/", ""), ("", ""), ("/m/夜行列車.OPUS", "opus"), ("/m/a.m4a#2", "m4a#2"),
    ]
    for (path, ext) in cases {
      #expect(QueueLoader.fileExtension(path) == ext, "\(path)")
    }
    #expect(
      CueSheet.Reference("/m/Zoë/Live.cue#3")
        == CueSheet.Reference(sheet: "/m/Zoë/Live.cue", track: 3))
    #expect(CueSheet.Reference("/m/Live.CUE#12")?.track == 12)
    #expect(CueSheet.Reference("/m/Live.cue#-1") == nil)
    #expect(CueSheet.Reference("/m/Live.cue#x") == nil)
    #expect(CueSheet.Reference("/m/#1/song.flac") == nil)
    #expect(CueSheet.Reference("/m/Ágætis byrjun.flac") == nil)
  }

  @Test func hiddenFilesAndOtherExtensionsAreSkipped() throws {
    let scratch = try Scratch()
    try scratch.touch(
      "music/song.FLAC", "music/.hidden.flac", "music/.git/inside.flac", "music/cover.jpg",
      "music/notes.txt", "music/list.m3u", "music/voice.Opus")
    let (files, problems) = QueueLoader.load([scratch.path("music")])
    #expect(problems.isEmpty)
    #expect(files == [scratch.path("music/song.FLAC"), scratch.path("music/voice.Opus")])
  }

  /// A file with no extension is not audio, even when its whole name reads like one; it is
  /// not left out silently either.
  @Test func aFileNamedLikeAnExtensionIsNotTakenForAudio() throws {
    let scratch = try Scratch()
    try scratch.touch("music/flac", "music/a.flac")
    let (files, problems) = QueueLoader.load([scratch.path("music")])
    #expect(files == [scratch.path("music/a.flac")])
    #expect(
      problems == [
        "left out 1 file in '\(scratch.path("music"))' of no format hark plays (no extension)"
      ])
  }

  /// Nothing invisible: what FFmpeg decodes is queued with the rest; files of no format hark plays
  /// are counted and said once for the folder named, by kind; covers, booklets and playlists beside
  /// the music are not.
  @Test func filesOfNoFormatHarkPlaysAreSaidOnceAndFFmpegFormatsQueued() throws {
    let scratch = try Scratch()
    try scratch.touch(
      "music/A/01.m4a", "music/A/02.flac", "music/A/cover.jpg", "music/A/rip.log",
      "music/A/A.cue", "music/A/02.lrc", "music/B/01.wv", "music/B/02.mid", "music/B/03.mid",
      "music/B/04.xm",
      "music/B/booklet.pdf")
    let (files, problems) = QueueLoader.load([scratch.path("music")])
    #expect(
      files == ["music/A/01.m4a", "music/A/02.flac", "music/B/01.wv"].map(scratch.path))
    #expect(
      problems == [
        "left out 3 files in '\(scratch.path("music"))' of no format hark plays (.mid, .xm)"
      ])
    #expect(QueueLoader.whyLeftOut("02.mid") == "hark plays no .mid files")
    #expect(QueueLoader.whyLeftOut("01.M4A") == nil)
    #expect(QueueLoader.whyLeftOut("cover.JPG") == nil)
    // A track's synced lyrics beside it are its companion, not a file hark fails to play.
    #expect(QueueLoader.whyLeftOut("02 Salt Wind.lrc") == nil)
  }

  /// PLS playlists (what internet radio directories and old players write) are read too.
  @Test func aPLSPlaylistIsRead() throws {
    let scratch = try Scratch()
    try scratch.touch(
      "list.pls",
      contents:
        "[playlist]\r\nNumberOfEntries=2\r\nFile1=a.flac\r\nTitle1=A\r\nFile2=file:///m/b.ogg\r\nVersion=2\r\n"
    )
    #expect(
      QueueLoader.load([scratch.path("list.pls")]).files == [scratch.path("a.flac"), "/m/b.ogg"])
  }

  /// Internet radio: a URL on the command line, and playlists naming URLs (a station's .pls,
  /// an .m3u of stations), are queued as they are, beside files.
  @Test func streamURLsArePassedOnAsTheyAre() throws {
    let scratch = try Scratch()
    try scratch.touch(
      "radio.pls",
      contents: "[playlist]\nNumberOfEntries=1\nFile1=http://ice.example:8000/jazz\nTitle1=Jazz\n")
    try scratch.touch(
      "stations.m3u",
      contents: "#EXTM3U\n#EXTINF:-1,Rock\nHTTPS://rock.example/live.aac?x=1\nlocal.flac\n")
    let (files, problems) = QueueLoader.load([
      "http://radio.example/stream.mp3", scratch.path("radio.pls"), scratch.path("stations.m3u"),
    ])
    #expect(problems.isEmpty, "\(problems)")
    #expect(
      files == [
        "http://radio.example/stream.mp3", "http://ice.example:8000/jazz",
        "HTTPS://rock.example/live.aac?x=1", scratch.path("local.flac"),
      ])
    #expect(QueueLoader.title(fromPath: "http://ice.example:8000/jazz") == "ice.example:8000/jazz")
    #expect(QueueLoader.title(fromPath: "https://r.example/live.aac?x=1#a") == "r.example/live.aac")
    #expect(QueueLoader.title(fromPath: "http://r.example/") == "r.example")
    // Not a URL: a file whose name starts with "http" is a file.
    #expect(!QueueLoader.isStreamURL("http-notes.mp3") && !QueueLoader.isStreamURL("ftp://x/y"))
  }

  @Test func aFileNamedOnTheCommandLineIsTakenAsIs() throws {
    let scratch = try Scratch()
    try scratch.touch("odd.bin")
    let (files, problems) = QueueLoader.load([scratch.path("odd.bin")])
    #expect(files == [scratch.path("odd.bin")])
    #expect(problems.isEmpty)
  }

  @Test func playlistPathsAreRelativeToThePlaylistAndCommentsAreSkipped() throws {
    let scratch = try Scratch()
    try scratch.touch(
      "lists/mix.m3u8",
      contents: "\u{FEFF}#EXTM3U\n#EXTINF:123,Artist - Title\n../music/a.flac\n\n"
        + "b.ogg\n# a comment\n/srv/music/c.mp3\nsub/d.wav")
    let (files, problems) = QueueLoader.load([scratch.path("lists/mix.m3u8")])
    #expect(problems.isEmpty)
    #expect(
      files == [
        scratch.path("lists/../music/a.flac"), scratch.path("lists/b.ogg"), "/srv/music/c.mp3",
        scratch.path("lists/sub/d.wav"),
      ])
  }

  /// Playlists written on Windows end their lines with CR LF, which Swift reads as one
  /// `Character`.
  @Test func playlistsWithWindowsLineEndingsAreRead() throws {
    let scratch = try Scratch()
    try scratch.touch(
      "lists/mix.m3u", contents: "#EXTM3U\r\n#EXTINF:123,Artist - Title\r\na.flac\r\n\r\nb.ogg\r\n")
    let (files, problems) = QueueLoader.load([scratch.path("lists/mix.m3u")])
    #expect(problems.isEmpty)
    #expect(files == [scratch.path("lists/a.flac"), scratch.path("lists/b.ogg")])
  }

  @Test func argumentsKeepTheirOrder() throws {
    let scratch = try Scratch()
    try scratch.touch("z.wav", "dir/b.wav", "dir/a.wav")
    try scratch.touch("p.m3u", contents: "z.wav\n")
    let (files, _) = QueueLoader.load([
      scratch.path("z.wav"), scratch.path("dir"), scratch.path("p.m3u"),
    ])
    #expect(
      files == [
        scratch.path("z.wav"), scratch.path("dir/a.wav"), scratch.path("dir/b.wav"),
        scratch.path("z.wav"),
      ])
  }

  /// A folder holding links to itself grew the walk without end (168 MB in 30 s, one file queued 41
  /// times): each folder is visited once.
  @Test func linksBackUpTheTreeAreWalkedOnce() throws {
    let scratch = try Scratch()
    try scratch.touch("music/a.wav", "music/sub/b.flac")
    symlink(scratch.path("music"), scratch.path("music/loop1"))
    symlink(scratch.path("music"), scratch.path("music/sub/loop2"))
    symlink(scratch.path("music/sub"), scratch.path("music/sub/self"))
    let (files, problems) = QueueLoader.load([scratch.path("music")])
    #expect(problems.isEmpty)
    #expect(files == [scratch.path("music/a.wav"), scratch.path("music/sub/b.flac")])
  }

  /// A FIFO (or a device, a socket) is no track, and opening one would block until something writes
  /// to it: named on the command line it is refused with its kind before anything opens it; in a
  /// folder it is passed over.
  @Test func namedPipesAreRefusedBeforeTheyAreOpened() throws {
    let scratch = try Scratch()
    try scratch.touch("music/a.wav")
    #expect(mkfifo(scratch.path("music/pipe.wav"), 0o600) == 0)
    let (inFolder, folderProblems) = QueueLoader.load([scratch.path("music")])
    #expect(inFolder == [scratch.path("music/a.wav")])
    #expect(folderProblems.isEmpty)
    let (named, problems) = QueueLoader.load([scratch.path("music/pipe.wav"), "/dev/null"])
    #expect(named.isEmpty)
    #expect(
      problems == [
        "cannot play '\(scratch.path("music/pipe.wav"))': it is a named pipe (FIFO), not a sound file",
        "cannot play '/dev/null': it is a character device, not a sound file",
      ])
  }

  @Test func missingPathsAreReportedWithAReason() throws {
    let scratch = try Scratch()
    try scratch.touch("here.wav")
    try scratch.folder("empty")
    let missing = scratch.path("nowhere/gone.flac")
    let (files, problems) = QueueLoader.load([
      missing, scratch.path("here.wav"), scratch.path("empty"),
    ])
    #expect(files == [scratch.path("here.wav")])
    #expect(
      problems == [
        "cannot play '\(missing)': no such file or directory",
        "cannot play '\(scratch.path("empty"))': no audio files in it",
      ])
  }

  @Test(arguments: [
    ("/music/Album/01 Song.flac", "01 Song"),
    ("song.mp3", "song"),
    ("archive.tar.gz", "archive.tar"),
    ("/music/no extension", "no extension"),
    ("/music/.hidden", ".hidden"),
    ("folder/", "folder"),
  ])
  func titleFromPathIsTheNameWithoutFolderOrExtension(path: String, title: String) {
    #expect(QueueLoader.title(fromPath: path) == title)
  }
}
