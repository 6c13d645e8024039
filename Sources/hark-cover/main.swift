/*
 hark-cover — the cover of an audio file as coloured character cells, for the interface's
 now-playing picture. FFmpeg and chafa run here, never in hark: a picture that crashes a
 decoder costs a cover, not the player.

   hark-cover [--cells COLUMNSxROWS] [--colors 8|16|256] [--pixels WIDTHxHEIGHT [--sixel]] [--]
              FILE

 The picture: the one embedded in FILE (an MP3's APIC frame, a FLAC's PICTURE block, an MP4's
 covr atom), else one beside it named cover, folder, front, albumart or album (.jpg, .jpeg,
 .png, .webp, .bmp or .gif, any case), in that order. It is drawn in at most COLUMNS x ROWS
 cells (default 24x12), its shape kept for cells twice as tall as wide, in the palette of a
 terminal with that many colours (default 256). With --pixels (a terminal that draws pictures,
 kitty's graphics protocol, or sixels), the cells are those of a picture in at most WIDTH x
 HEIGHT pixels, the window's cells being WIDTH/COLUMNS by HEIGHT/ROWS pixels, and the picture
 follows them.

 stdout, on success (exit status 0):

   hark-cover 1          the protocol's version
   cells 24 12           the cells drawn: columns, rows
   source embedded       or the picture file's name
                         (an empty line)

 then one line per row: its cells separated by spaces, each "XXXX,F,B": the character (a block
 element or a space) as a hexadecimal Unicode scalar, and its foreground and background palette
 indexes (-1: the terminal's own colour). With --pixels, then a line "pixels W H" (at most the
 size asked for, the picture's shape kept) and W * H * 4 bytes: its RGBA pixels, row by row.
 With --sixel as well, instead a line "sixel N CW CH" and N bytes: the sixel image (a DCS
 sequence, chafa's palette and dithering) that draws the picture over the cells, no taller than
 they are, for cells CW x CH pixels (WIDTH/COLUMNS by HEIGHT/ROWS).

 No cover anywhere: exit status 3, "no cover" on stderr. A picture that is there but cannot be
 drawn: exit status 1 and the reason on stderr, one line. Bad usage: exit status 2.
*/
import CChafa
import Glibc
import Platform

struct Request {
  var path = ""
  var columns = 24
  var rows = 12
  var colors = 256
  /// The pixels the cells cover, for a terminal that draws pictures.
  var pixels: (width: Int, height: Int)?
  /// The picture as a sixel image rather than its pixels.
  var sixel = false
}

/// Writes all of `text` to `fd`.
func say(_ text: String, to fd: Int32 = 2) {
  try? writeAll(fd, text.utf8)
}

func usage(_ problem: String) -> Never {
  say(
    "hark-cover: \(problem)\n"
      + "usage: hark-cover [--cells COLUMNSxROWS] [--colors 8|16|256]"
      + " [--pixels WIDTHxHEIGHT [--sixel]] [--] FILE\n"
  )
  exit(2)
}

func parse(_ arguments: [String]) -> Request {
  var request = Request()
  var rest = arguments[...]
  var path: String?
  while let argument = rest.popFirst() {
    switch argument {
    case "--cells":
      let parts = (rest.popFirst() ?? "").split(separator: "x")
      guard parts.count == 2, let c = Int(parts[0]), let r = Int(parts[1]),
        (1...200).contains(c), (1...100).contains(r)
      else { usage("--cells wants COLUMNSxROWS, 1–200 by 1–100") }
      request.columns = c
      request.rows = r
    case "--pixels":
      let parts = (rest.popFirst() ?? "").split(separator: "x")
      guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
        (1...4096).contains(w), (1...4096).contains(h)
      else { usage("--pixels wants WIDTHxHEIGHT, 1–4096 each") }
      request.pixels = (w, h)
    case "--sixel":
      request.sixel = true
    case "--colors":
      guard let n = Int(rest.popFirst() ?? ""), [8, 16, 256].contains(n) else {
        usage("--colors wants 8, 16 or 256")
      }
      request.colors = n
    case "--":
      path = rest.popFirst()
      guard rest.isEmpty else { usage("one file only") }
    default:
      guard path == nil, !argument.hasPrefix("-") || argument == "-" else {
        usage("unknown option '\(argument)'")
      }
      path = argument
    }
  }
  guard let path, !path.isEmpty else { usage("no file named") }
  if request.sixel {
    guard let p = request.pixels else { usage("--sixel wants --pixels") }
    guard p.width >= request.columns, p.height >= request.rows else {
      usage("--sixel wants --pixels of a pixel or more a cell")
    }
  }
  request.path = path
  return request
}

/// The names a cover beside the music goes by, best first, each with any of `extensions`.
let names = ["cover", "folder", "front", "albumart", "album"]
let extensions = ["jpg", "jpeg", "png", "webp", "bmp", "gif"]

/// The picture file in `folder` a player would take for the album's cover, if any.
func coverBeside(_ folder: String) -> String? {
  guard let dir = opendir(FileName.c(folder)) else { return nil }
  defer { closedir(dir) }
  var best: (rank: Int, name: String)?
  while let entry = readdir(dir) {
    let name = withUnsafePointer(to: entry.pointee.d_name) {
      $0.withMemoryRebound(to: CChar.self, capacity: 256) { FileName.string(cString: $0) }
    }
    guard let dot = name.lastIndex(of: ".") else { continue }
    let stem = name[..<dot].lowercased()
    let ext = name[name.index(after: dot)...].lowercased()
    guard let n = names.firstIndex(of: stem), let e = extensions.firstIndex(of: ext) else {
      continue
    }
    let rank = n * extensions.count + e
    if best.map({ rank < $0.rank }) ?? true { best = (rank, name) }
  }
  return best.map { folder + "/" + $0.name }
}

func isRegularFile(_ path: String) -> Bool {
  var s = stat()
  return stat(FileName.c(path), &s) == 0 && (s.st_mode & S_IFMT) == S_IFREG
}

func fail(_ reason: String) -> Never {
  say("\(reason)\n")
  exit(1)
}

// From argv's bytes: a file name that is not UTF-8 keeps its bytes (CommandLine.arguments would
// repair it into a name that does not exist).
// A picture that would take more than 1 GiB (a decoder led astray by a hostile file) fails here
// rather than taking the machine's memory. Not under a sanitizer, whose shadow memory alone
// maps terabytes of address space.
if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil,
  dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") == nil
{
  var limit = rlimit(rlim_cur: 1 << 30, rlim_max: 1 << 30)
  setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit)
}
let request = parse(
  (1..<Int(CommandLine.argc)).compactMap {
    CommandLine.unsafeArgv[$0].map { FileName.string(cString: $0) }
  })
hc_quiet()
guard isRegularFile(request.path) else {
  fail("'\(request.path)' is not a file hark-cover can read")
}
// Pixels enough for chafa to choose each cell's block well (8 across and 16 down a cell), or
// the terminal's own, which it draws.
let maxWidth = request.pixels?.width ?? request.columns * 8
let maxHeight = request.pixels?.height ?? request.rows * 16
// How wide a cell is for its height: the window's own when known.
let fontRatio =
  request.pixels.map {
    Float($0.width) / Float(request.columns) / (Float($0.height) / Float(request.rows))
  } ?? 0.5
var pixels: UnsafeMutablePointer<UInt8>?
var width: Int32 = 0
var height: Int32 = 0
var source = "embedded"
var rc = hc_load_picture(
  FileName.c("file:" + request.path), 1, Int32(maxWidth), Int32(maxHeight), &pixels, &width,
  &height)
if rc != Int32(HC_OK) {
  let embedded = rc
  let slash = request.path.lastIndex(of: "/")
  let folder = slash.map { String(request.path[..<$0]) } ?? "."
  guard let picture = coverBeside(folder.isEmpty ? "/" : folder), isRegularFile(picture) else {
    // One embedded but not drawable is a failure with its reason, not "no cover".
    switch Int(embedded) {
    case Int(HC_TOO_LARGE): fail("the embedded cover is too large a picture")
    case Int(HC_CANNOT_DECODE): fail("the embedded cover is not a picture FFmpeg can decode")
    case Int(HC_NO_MEMORY): fail("out of memory")
    default:
      say("no cover\n")
      exit(3)
    }
  }
  source = picture.split(separator: "/").last.map(String.init) ?? picture
  rc = hc_load_picture(
    FileName.c("file:" + picture), 0, Int32(maxWidth), Int32(maxHeight), &pixels, &width,
    &height)
}
guard rc == Int32(HC_OK), let pixels else {
  switch Int(rc) {
  case Int(HC_TOO_LARGE): fail("the cover (\(source)) is too large a picture")
  case Int(HC_NO_MEMORY): fail("out of memory")
  default: fail("the cover (\(source)) is not a picture FFmpeg can decode")
  }
}
defer { hc_free(pixels) }

let cells = request.columns * request.rows
var chars = [UInt32](repeating: 0x20, count: cells)
var fg = [Int32](repeating: -1, count: cells)
var bg = [Int32](repeating: -1, count: cells)
var usedColumns: Int32 = 0
var usedRows: Int32 = 0
hc_render_cells(
  pixels, width, height, Int32(request.columns), Int32(request.rows), Int32(request.colors),
  fontRatio, &chars, &fg, &bg, &usedColumns, &usedRows)

var out = "hark-cover 1\ncells \(usedColumns) \(usedRows)\nsource \(source)\n\n"
for y in 0..<Int(usedRows) {
  var line: [String] = []
  for x in 0..<Int(usedColumns) {
    let i = y * Int(usedColumns) + x
    line.append(String(chars[i], radix: 16, uppercase: true) + ",\(fg[i]),\(bg[i])")
  }
  out += line.joined(separator: " ") + "\n"
}
say(out, to: 1)
if let cellPixels = request.pixels, request.sixel {
  var length = 0
  let (cellWidth, cellHeight) = (
    cellPixels.width / request.columns, cellPixels.height / request.rows
  )
  guard
    let sixel = hc_render_sixels(
      pixels, width, height, usedColumns, usedRows, Int32(cellWidth), Int32(cellHeight), &length)
  else { fail("chafa made no sixel image of the cover (\(source))") }
  say("sixel \(length) \(cellWidth) \(cellHeight)\n", to: 1)
  try? writeAll(1, UnsafeRawBufferPointer(start: sixel, count: length))
  hc_free_sixels(sixel)
} else if request.pixels != nil {
  say("pixels \(width) \(height)\n", to: 1)
  try? writeAll(1, UnsafeRawBufferPointer(start: pixels, count: Int(width) * Int(height) * 4))
}
exit(0)
