import AudioTestSupport
import Platform
import Testing

@testable import MediaFiles

/// The walk's compact list of files: what a scan compares the index with.
struct StampedFilesTests {
  /// Paths as a library has them: nested, long and short, not all ASCII, one with a byte that
  /// is not UTF-8 (escaped as `FileName` escapes it), one that is a prefix of another.
  static func paths(_ count: Int, seed: UInt64) -> [String] {
    var random = SeededRandom(seed: seed)
    let words = ["Zoë", "Björk", "坂本", "Кино", "a", "Live", "01 Intro", "x", "Sigur Rós", ""]
    var out = Set<String>()
    while out.count < count {
      var path = "/music"
      for _ in 0..<(1 + Int(random.next() % 4)) {
        path += "/" + words[Int(random.next() % UInt64(words.count))]
        path += String(random.next() % 1000)
      }
      if random.next() % 10 == 0 { path += FileName.string([0xE9, 0x2E]) + "mp3" }
      out.insert(path + (random.next() % 2 == 0 ? ".flac" : ""))
    }
    return Array(out)
  }

  /// 10,000 paths fill more than one block of bytes; the last path is longer than a block.
  @Test(arguments: [0, 1, 7, 10_000])
  func everyPathIsFoundByItsBytesWithItsStamp(count: Int) {
    var paths = Self.paths(count, seed: UInt64(count))
    if count > 1 {
      paths[count - 1] = "/long/" + String(repeating: "é", count: StampedFiles.blockSize)
    }
    let set = Set(paths)
    var files = StampedFiles()
    for (i, path) in paths.enumerated() { files.append(path: path, size: i, mtime: 10 * i) }
    #expect(files.count == paths.count)
    let lookup = files.lookup()
    for (i, path) in paths.enumerated() {
      #expect(files[i] == (path, i, 10 * i))
      var bytes = path
      let found = bytes.withUTF8 { lookup.find(UnsafeRawBufferPointer($0)) }
      #expect(found == i, "\(path)")
      // A path that is not there: one byte longer, one byte shorter.
      for other in [path + "x", String(path.dropLast())] where !set.contains(other) {
        var o = other
        #expect(o.withUTF8 { lookup.find(UnsafeRawBufferPointer($0)) } == nil, "\(other)")
      }
    }
  }

  @Test func partsJoinedKeepEveryFileAndItsStamp() {
    let paths = Self.paths(300, seed: 3)
    var parts = [StampedFiles(), StampedFiles(), StampedFiles()]
    for (i, path) in paths.enumerated() { parts[i % 3].append(path: path, size: i, mtime: -i) }
    let joined = StampedFiles(joining: parts)
    #expect(joined.count == 300)
    let byPath = Dictionary(uniqueKeysWithValues: joined.map { ($0.path, $0) })
    for (i, path) in paths.enumerated() {
      #expect(byPath[path]?.size == i)
      #expect(byPath[path]?.mtime == -i)
    }
    #expect(StampedFiles(joining: []).isEmpty)
  }

  @Test func sortedByPathIsTheOrderOfThePathsBytes() {
    let paths = Self.paths(500, seed: 9) + ["/m", "/m/", "/m/a", "/mü", "/m0"]
    var files = StampedFiles()
    for path in paths { files.append(path: path, size: 0, mtime: 0) }
    let sorted = files.sortedByPath(Array(files.indices)).map { files.path($0) }
    #expect(sorted == paths.sorted { PathKey($0) < PathKey($1) })
    #expect(files.sortedByPath([]) == [])
  }
}
