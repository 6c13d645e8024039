/// A chapter of a recording, as its file marks it: an audiobook's (an M4B's chapter track), a
/// podcast's (ID3 CHAP frames), Vorbis comments' CHAPTERxx, Matroska's chapters.
public struct Chapter: Hashable, Sendable, Codable {
  /// Seconds from the start of the track.
  public var start: Double
  /// Seconds from the start of the track, when the file says (Vorbis comments give only
  /// starts): otherwise the next chapter's start, or the track's end.
  public var end: Double?
  public var title: String?

  public init(start: Double, end: Double? = nil, title: String? = nil) {
    self.start = start
    self.end = end
    self.title = title
  }

  /// How far before a chapter's start a position still counts as in it: a seek to a start may
  /// land a sample short of it, and a position read back rounds.
  public static let startTolerance = 0.05

  /// Chapters as a file gives them, made fit to follow: in the order of their starts, none
  /// before 0, each ending where it says or else where the next starts (the last at its own
  /// end, or the track's), with no end before its start. Titles are kept as they are.
  public static func ordered(_ chapters: [Chapter]) -> [Chapter] {
    var list = chapters.filter { $0.start.isFinite }.map { c -> Chapter in
      var c = c
      c.start = max(0, c.start)
      if let e = c.end, !e.isFinite || e <= c.start { c.end = nil }
      return c
    }
    list.sort { $0.start < $1.start }
    // Two at the same start: the later one in the file is the one heard from there.
    var unique: [Chapter] = []
    for c in list {
      if let last = unique.last, abs(last.start - c.start) < startTolerance {
        unique[unique.count - 1] = c
      } else {
        unique.append(c)
      }
    }
    return unique
  }

  /// Which of `chapters` (ordered) is heard at `position`: the last that starts at or before
  /// it; nil before the first.
  public static func index(in chapters: [Chapter], at position: Double) -> Int? {
    // Binary search: an audiobook can have hundreds, and this runs at every snapshot.
    var low = 0
    var high = chapters.count
    while low < high {
      let mid = (low + high) / 2
      if chapters[mid].start <= position + startTolerance { low = mid + 1 } else { high = mid }
    }
    return low == 0 ? nil : low - 1
  }

  /// Where chapter `i` of `chapters` (ordered) ends: the next one's start, else its own end,
  /// else `duration`.
  public static func end(of i: Int, in chapters: [Chapter], duration: Double?) -> Double? {
    guard chapters.indices.contains(i) else { return nil }
    if i + 1 < chapters.count { return chapters[i + 1].start }
    return chapters[i].end ?? duration
  }
}
