import Glibc
import Platform
import Testing

@testable import TerminalUI

/// The real hark-cover (built next to the test bundle) on files ffmpeg makes here: a cover embedded
/// in each container people rip to, one beside the music under the names players use, none, a
/// damaged one, a wide one, a folder whose name is not UTF-8.
@Suite(.timeLimit(.minutes(2))) final class CoverHelperTests {
  let folder: String = {
    var template = Array("/tmp/hark-cover-tests.XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer {
      $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } ?? "/tmp"
    }
  }()

  deinit { _ = system("rm -rf '\(folder)'") }

  private func sh(_ command: String) throws {
    try #require(system("cd '\(folder)' && " + command) == 0, "failed: \(command)")
  }

  /// A 300x300 test card (colour bars), and a second of sine.
  private func makeSources() throws {
    try sh(
      "ffmpeg -nostdin -v error -y -f lavfi -i testsrc=size=300x300:rate=1 -frames:v 1 card.png")
    try sh("ffmpeg -nostdin -v error -y -f lavfi -i sine=d=1 tone.wav")
  }

  private func cover(_ path: String, colors: Int = 256) -> CoverHelper.Outcome {
    CoverHelper.cover(of: folder + "/" + path, columns: 24, rows: 12, colors: colors)
  }

  @Test(arguments: [
    ("mp3", "-c:a libmp3lame -c:v mjpeg -id3v2_version 3"), ("flac", "-c:a flac -c:v png"),
    ("m4a", "-c:a aac -c:v mjpeg"),
  ])
  func anEmbeddedCoverIsDrawnInItsShape(ext: String, codecs: String) throws {
    try makeSources()
    try sh(
      "ffmpeg -nostdin -v error -y -i tone.wav -i card.png -map 0 -map 1 \(codecs) "
        + "-disposition:v attached_pic album.\(ext)")
    guard case .picture(let art) = cover("album.\(ext)") else {
      Issue.record("no picture: \(cover("album.\(ext)"))")
      return
    }
    #expect(art.source == "embedded")
    // Square, in cells twice as tall as wide: all the room there is.
    #expect(art.columns == 24 && art.rows == 12)
    // A test card has colour: many palette entries, none off it.
    let colours = Set(art.cells.flatMap { [$0.foreground, $0.background] })
    #expect(colours.count > 8, "only \(colours)")
    #expect(colours.allSatisfy { (-1...255).contains($0) })
  }

  @Test func aCoverBesideTheMusicIsFoundByTheNamesPlayersUse() throws {
    try makeSources()
    try sh("cp card.png Folder.PNG")
    guard case .picture(let first) = cover("tone.wav") else {
      Issue.record("Folder.PNG was not found")
      return
    }
    #expect(first.source == "Folder.PNG")
    // cover.* comes before folder.*, whatever the case of its name.
    try sh("ffmpeg -nostdin -v error -y -i card.png Cover.JPG")
    guard case .picture(let second) = cover("tone.wav") else {
      Issue.record("Cover.JPG was not drawn")
      return
    }
    #expect(second.source == "Cover.JPG")
  }

  @Test func noCoverIsNoneAndADamagedOneSaysWhy() throws {
    try makeSources()
    #expect(cover("tone.wav") == .none)
    try sh("echo 'not a picture' > cover.jpg")
    guard case .failed(let line) = cover("tone.wav") else {
      Issue.record("a damaged cover.jpg was not a failure: \(cover("tone.wav"))")
      return
    }
    #expect(line.contains("cover.jpg"), "'\(line)'")
    #expect(cover("no such file.flac") != .none)
  }

  @Test func aWidePictureKeepsItsShapeAndFewColoursStayInThePalette() throws {
    try makeSources()
    try sh(
      "ffmpeg -nostdin -v error -y -f lavfi -i testsrc=size=600x150:rate=1 -frames:v 1 cover.png")
    guard case .picture(let art) = cover("tone.wav", colors: 8) else {
      Issue.record("cover.png was not drawn")
      return
    }
    // 4:1 in cells twice as tall as wide: 24 across, 3 down.
    #expect(art.columns == 24)
    #expect(art.rows == 3)
    #expect(art.cells.allSatisfy { $0.foreground < 8 && $0.background < 8 })
  }

  /// For a terminal that draws pictures: the pixels too, the picture's shape kept within the
  /// pixels asked for, and the cells it covers counted in the window's own cell shape.
  @Test func picturePixelsForATerminalThatDrawsThem() throws {
    try makeSources()
    try sh(
      "ffmpeg -nostdin -v error -y -f lavfi -i testsrc=size=400x200:rate=1 -frames:v 1 cover.png")
    // Cells 10 pixels wide and 20 tall: 240 x 240 pixels for 24 x 12 cells.
    let outcome = CoverHelper.cover(
      of: folder + "/tone.wav", columns: 24, rows: 12, colors: 256, pixels: (240, 240))
    guard case .picture(let art) = outcome,
      case .rgba(let width, let height, let rgba)? = art.image?.form
    else {
      Issue.record("no pixels: \(outcome)")
      return
    }
    #expect(width == 240 && height == 120)
    #expect(rgba.count == 240 * 120 * 4)
    #expect(art.columns == 24 && art.rows == 6)
  }

  /// For a terminal that draws sixels: the picture as a sixel image in the cells' pixels, no
  /// larger than the cells it covers (its height whole sixel bands, rounded down, so that it
  /// never reaches the row below), in the picture's own colours, and the cell size it is for.
  @Test func aSixelPictureForATerminalThatDrawsThem() throws {
    try makeSources()
    try sh(
      "ffmpeg -nostdin -v error -y -f lavfi -i color=c=0x22cc44:size=300x300:rate=1 -frames:v 1 cover.png"
    )
    // Cells 10 pixels wide and 13 tall, 7 rows: the square picture is 91 pixels tall, not a
    // whole number of six-pixel bands.
    let outcome = CoverHelper.cover(
      of: folder + "/tone.wav", columns: 24, rows: 7, colors: 256, pixels: (240, 91),
      sixel: true)
    guard case .picture(let art) = outcome,
      case .sixel(let bytes, let cellWidth, let cellHeight)? = art.image?.form
    else {
      Issue.record("no sixel image: \(outcome)")
      return
    }
    #expect(cellWidth == 10 && cellHeight == 13)
    #expect(art.rows == 7)
    let text = String(decoding: bytes, as: UTF8.self)
    // Raster attributes: "Pan;Pad;Ph;Pv.
    let raster = try #require(text.firstMatch(of: /"1;1;(\d+);(\d+)/))
    let (w, h) = (Int(raster.1)!, Int(raster.2)!)
    #expect(w == art.columns * 10)
    #expect(h == 90, "91 pixels of cells hold 15 whole bands")
    #expect(abs(w - h) <= 10, "a square cover is square: \(w)x\(h)")
    // A colour register chafa defines (RGB in percent): 0x22cc44 is 13 %, 80 %, 27 %.
    let registers = text.matches(of: /#\d+;2;(\d+);(\d+);(\d+)/).map {
      (Int($0.1)!, Int($0.2)!, Int($0.3)!)
    }
    #expect(
      registers.contains { abs($0.0 - 13) <= 2 && abs($0.1 - 80) <= 2 && abs($0.2 - 27) <= 2 })
  }

  @Test func aFolderNameThatIsNotUTF8() throws {
    try makeSources()
    // "Caf\xE9" in Latin-1, as an old rip names it.
    try sh(
      "d=\"$(printf 'Caf\\351')\" && mkdir \"$d\" && cp tone.wav \"$d/\" && cp card.png \"$d/cover.png\""
    )
    let name = FileName.string([0x43, 0x61, 0x66, 0xE9])
    guard case .picture(let art) = cover(name + "/tone.wav") else {
      Issue.record("no cover in a Latin-1 folder: \(cover(name + "/tone.wav"))")
      return
    }
    #expect(art.source == "cover.png")
  }
}
