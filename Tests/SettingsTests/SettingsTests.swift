import Platform
import Testing

@testable import Settings

@Suite(.timeLimit(.minutes(2))) struct SettingsTests {
  @Test func anEmptyFileGivesTheDefaults() {
    let (settings, problems) = Settings.parse("")
    #expect(settings == Settings())
    #expect(problems.isEmpty)
    #expect(settings.device == "default")
    #expect(settings.duckLevelDecibels == -20)
    #expect(!settings.resumeOnReconnect)
  }

  @Test func everySettingIsRead() {
    let text = """
      # hark's settings
      device = "pulse"   # the sound server
      music_dir = '/srv/music'
      duck_level_db = -12.5
      resume_on_reconnect = true
      sound_theme = "ocean"
      spoken_dirs = ["/srv/podcasts", "/srv/books"]
      shuffle = true
      repeat = "all"
      start_view = "queue"
      replaygain = "album"
      replaygain_preamp_db = 3.5
      replaygain_clip = false
      cover_art = false
      detach_on_hangup = false

      [keys]
      play_pause = ["space", "p"]
      next = "n"
      """
    let (settings, problems) = Settings.parse(text)
    #expect(problems.isEmpty)
    #expect(settings.device == "pulse")
    #expect(settings.musicDirectory == "/srv/music")
    #expect(settings.duckLevelDecibels == -12.5)
    #expect(settings.resumeOnReconnect)
    #expect(settings.soundTheme == "ocean")
    #expect(settings.spokenFolders == ["/srv/podcasts", "/srv/books"])
    #expect(settings.shuffle)
    #expect(settings.repeatMode == "all")
    #expect(settings.startView == "queue")
    #expect(settings.replayGain == "album")
    #expect(settings.replayGainPreampDecibels == 3.5)
    #expect(!settings.replayGainPreventClipping)
    #expect(Settings().replayGain == "off" && Settings().replayGainPreventClipping)
    #expect(!settings.coverArt && Settings().coverArt)
    #expect(!settings.detachOnHangup && Settings().detachOnHangup)
    #expect(
      Settings.parse("detach_on_hangup = 1").1.first?.message.contains("true or false") == true)
    #expect(Settings.parse("replaygain = \"loud\"").1.first?.message.contains("\"album\"") == true)
    #expect(
      Settings.parse("replaygain_preamp_db = 20").1.first?.message.contains("-15 to 15") == true)
    #expect(Settings.parse("repeat = \"twice\"").1.first?.message.contains("\"off\"") == true)
    #expect(Settings.parse("keys = \"cmus\"").0.keyPreset == "cmus")
    #expect(Settings.parse("[keys]\npreset = \"cmus\"\nnext = \"n\"").0.keyPreset == "cmus")
    #expect(Settings.parse("keys = \"vim\"").1.count == 1)
    #expect(Settings.parse("spoken_dirs = '/srv/talks'").0.spokenFolders == ["/srv/talks"])
    #expect(Settings.parse("spoken_dirs = 3").1.count == 1)
    #expect(Settings().longRecordingMinutes == 20)
    #expect(Settings.parse("long_recording_minutes = 45").0.longRecordingMinutes == 45)
    #expect(
      Settings.parse("long_recording_minutes = 0").1.first?.message.contains("1 to 1440") == true)
    #expect(settings.keys == ["play_pause": ["space", "p"], "next": ["n"]])
  }

  @Test func loudnessLyricsAndListensAreRead() {
    let text = """
      measure_loudness = false
      lyrics_beside = true
      scrobble_spoken_word = true

      [listenbrainz]
      token = "0123-abcd"
      url = "http://127.0.0.1:8080"

      [lastfm]
      api_key = "k3y"
      api_secret = "s3cret"
      url = "https://libre.fm/2.0/"
      auth_url = "https://libre.fm/api/auth/"
      """
    let (settings, problems) = Settings.parse(text)
    #expect(problems.isEmpty)
    #expect(!settings.measureLoudness && Settings().measureLoudness)
    #expect(settings.lyricsBeside && !Settings().lyricsBeside)
    #expect(settings.scrobbleSpokenWord && !Settings().scrobbleSpokenWord)
    #expect(settings.listenBrainzToken == "0123-abcd")
    #expect(settings.listenBrainzURL == "http://127.0.0.1:8080")
    #expect(settings.lastFMAPIKey == "k3y" && settings.lastFMAPISecret == "s3cret")
    #expect(settings.lastFMURL == "https://libre.fm/2.0/")
    #expect(settings.lastFMAuthURL == "https://libre.fm/api/auth/")
    #expect(Settings().listenBrainzToken == nil)
    #expect(Settings().listenBrainzURL == "https://api.listenbrainz.org")
    #expect(Settings.parse("[listenbrainz]\ntoken = \"a b\"").1.count == 1)
    #expect(Settings.parse("[lastfm]\nurl = \"ftp://x\"").1.first?.message.contains("http") == true)
  }

  /// Bad input: each bad line is named, its default stands, the good lines still count.
  @Test func badEntriesAreNamedWithTheirLineAndTheRestCounts() {
    let text = """
      device = pulse
      duck_level_db = -90
      resume_on_reconnect = "yes"
      volume = 50
      [keys
      music_dir = "/m"
      music_dir = "/n"
      sound_theme = "a/b"
      device2 = "x" extra
      title = "unclosed
      """
    let (settings, problems) = Settings.parse(text)
    #expect(settings.musicDirectory == "/m")
    #expect(settings.device == "default")
    #expect(settings.duckLevelDecibels == -20)
    #expect(problems.map(\.line) == [1, 5, 7, 9, 10, 2, 3, 4, 8])
    #expect(problems[0].description == "line 1: 'pulse' is not a value; strings need quotes")
    #expect(problems[5].description == "line 2: 'duck_level_db' must be from -60 to 0, not -90")
    #expect(
      problems[6].description
        == "line 3: 'resume_on_reconnect' must be true or false, not a string (\"yes\")")
    #expect(problems[7].description == "line 4: unknown setting 'volume'")
    #expect(problems[2].message == "'music_dir' is set twice; the first one counts")
  }

  @Test func aMusicFolderUnderHomeIsExpanded() throws {
    let home = try #require(environment("HOME"))
    #expect(Settings.parse("music_dir = \"~/Music\"").0.musicDirectory == home + "/Music")
    #expect(Settings.parse("music_dir = \"/srv/~x\"").0.musicDirectory == "/srv/~x")
  }

  @Test func stringsKeepTheirEscapes() {
    let (settings, problems) = Settings.parse(#"music_dir = "/m/\"x\"\t\u00e9\\""#)
    #expect(problems.isEmpty)
    #expect(settings.musicDirectory == "/m/\"x\"\té\\")
  }

  @Test func windowsLineEndingsAndIntegersWork() {
    let (settings, problems) = Settings.parse("duck_level_db = -6\r\ndevice = \"hw:1,0\"\r\n")
    #expect(problems.isEmpty)
    #expect(settings.duckLevelDecibels == -6)
    #expect(settings.device == "hw:1,0")
  }

  @Test func aMissingFileIsNoProblemAndAnUnreadableOneIsOne() throws {
    let (missing, none) = Settings.load(from: "/nonexistent/hark/config.toml")
    #expect(missing == Settings())
    #expect(none.isEmpty)
    let (folder, problems) = Settings.load(from: "/")
    #expect(folder == Settings())
    #expect(problems.count == 1)
  }
}
