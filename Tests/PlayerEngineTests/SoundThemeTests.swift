import Glibc
import Testing

@testable import PlayerEngine

/// The freedesktop sound theme lookup, over a made-up tree of themes in a temp folder.
@Suite(.timeLimit(.minutes(2))) struct SoundThemeTests {
  /// A folder tree: paths relative to a fresh temp folder, each with its contents.
  final class Tree {
    let root: String
    init(_ files: [String: String]) throws {
      var template = Array("/tmp/hark-sounds-XXXXXX".utf8CString)
      guard let made = mkdtemp(&template) else { throw Failure() }
      root = String(cString: made)
      for (path, contents) in files {
        let full = root + "/" + path
        var dir = Substring(full)
        var parents: [String] = []
        while let slash = dir.lastIndex(of: "/"), slash != dir.startIndex {
          dir = dir[..<slash]
          parents.append(String(dir))
        }
        for p in parents.reversed() { mkdir(p, 0o755) }
        guard let f = fopen(full, "w") else { throw Failure() }
        fputs(contents, f)
        fclose(f)
      }
    }
    deinit { _ = system("rm -rf '\(root)'") }
    func path(_ p: String) -> String { root + "/" + p }
    struct Failure: Error {}
  }

  private func theme(_ tree: Tree, _ name: String, locale: String? = nil) -> SoundTheme {
    SoundTheme(
      name: name, baseDirectories: [tree.path("home"), tree.path("usr")],
      fallback: tree.path("hark"), locale: locale)
  }

  @Test func theCurrentThemeComesFirstThenWhatItInheritsThenFreedesktop() throws {
    let tree = try Tree([
      "usr/ocean/index.theme": "[Sound Theme]\nName=Ocean\nInherits=wood\nDirectories=stereo\n",
      "usr/ocean/stereo/bell.oga": "",
      "usr/wood/index.theme": "[Sound Theme]\nName=Wood\nDirectories=stereo\n",
      "usr/wood/stereo/phone-incoming-call.wav": "",
      "usr/freedesktop/index.theme": "[Sound Theme]\nName=Default\nDirectories=stereo\n",
      "usr/freedesktop/stereo/alarm-clock-elapsed.oga": "",
      "usr/freedesktop/stereo/bell.oga": "",
      "hark/device-removed.oga": "",
    ])
    let t = theme(tree, "ocean")
    #expect(t.lookup("bell") == .file(tree.path("usr/ocean/stereo/bell.oga")))
    #expect(
      t.lookup("phone-incoming-call") == .file(tree.path("usr/wood/stereo/phone-incoming-call.wav"))
    )
    #expect(
      t.lookup("alarm-clock-elapsed")
        == .file(tree.path("usr/freedesktop/stereo/alarm-clock-elapsed.oga")))
    #expect(t.lookup("device-removed") == .file(tree.path("hark/device-removed.oga")))
    #expect(t.lookup("no-such-sound") == .missing)
  }

  @Test func aUsersThemeOverridesTheSystemsAndDisabledMeansSilence() throws {
    let tree = try Tree([
      "usr/freedesktop/stereo/bell.oga": "",
      "usr/freedesktop/stereo/message.oga": "",
      "home/freedesktop/stereo/bell.ogg": "",
      "home/freedesktop/stereo/message.disabled": "",
    ])
    let t = theme(tree, "freedesktop")
    #expect(t.lookup("bell") == .file(tree.path("home/freedesktop/stereo/bell.ogg")))
    #expect(t.lookup("message") == .disabled)
  }

  @Test func aNameIsTruncatedAtDashesAndLocalesComeFirst() throws {
    let tree = try Tree([
      "usr/freedesktop/stereo/message.oga": "",
      "usr/freedesktop/stereo/de/message-new-instant.oga": "",
    ])
    #expect(
      theme(tree, "freedesktop", locale: "de_CH.UTF-8").lookup("message-new-instant")
        == .file(tree.path("usr/freedesktop/stereo/de/message-new-instant.oga")))
    #expect(
      theme(tree, "freedesktop", locale: "fr_FR.UTF-8").lookup("message-new-instant")
        == .file(tree.path("usr/freedesktop/stereo/message.oga")))
  }

  @Test func inheritanceLoopsEnd() throws {
    let tree = try Tree([
      "usr/a/index.theme": "[Sound Theme]\nInherits=b\n",
      "usr/b/index.theme": "[Sound Theme]\nInherits=a\n",
    ])
    #expect(theme(tree, "a").lookup("bell") == .missing)
  }

  @Test func truncationsAndLocaleVariants() {
    #expect(SoundTheme.truncations(of: "a-b-c") == ["a-b-c", "a-b", "a"])
    let t = SoundTheme(name: "x", baseDirectories: [], fallback: nil, locale: "sr_RS.UTF-8@latin")
    #expect(t.localeVariants == ["sr_RS@latin", "sr_RS", "sr", "C", ""])
  }
}
