import Platform
import Glibc

/// The sound track's own length in an MP4 (.m4a), read from its boxes: the track header's
/// duration (mdhd, counted in the track's time scale, which is its sample rate) less the edit
/// list's start (elst's media time: the encoder's delay). The edit list's own length is counted
/// in the movie's time scale, which FFmpeg's muxer sets to milliseconds, so it can fall up to a
/// millisecond short of the samples the track really has (15 samples lost at every boundary of
/// an album cut at no whole millisecond: gapless.sh found it); the track header has them all.
///
/// A bounded, careful reader: boxes whose sizes do not fit are ignored, the moov box is read
/// only when it is under 64 MB, and anything unexpected gives nil.
struct MP4Lengths {
  /// The movie's time scale (mvhd).
  var movieTimeScale: Int
  /// The sound track's time scale and duration (mdhd).
  var trackTimeScale: Int
  var trackDuration: Int
  /// The first edit's start in the track (elst media time): the encoder's delay.
  var editStart: Int

  /// The samples the sound track holds after its delay, in its own time scale.
  var samples: Int { trackDuration - editStart }

  /// The lengths in the file at `path`, or nil.
  static func read(_ path: String) -> MP4Lengths? {
    guard let f = fopen(FileName.c(path), "rb") else { return nil }
    defer { fclose(f) }
    // The top-level boxes, to find moov (at the start or, often, the end).
    var offset: Int64 = 0
    while true {
      guard fseeko(f, off_t(offset), SEEK_SET) == 0, let header = readBytes(f, 16) else {
        return nil
      }
      var size = Int64(be32(header, 0))
      let type = String(decoding: header[4..<8], as: UTF8.self)
      var headerSize: Int64 = 8
      if size == 1 {
        size = Int64(bitPattern: be64(header, 8))
        headerSize = 16
      } else if size == 0 {
        return nil  // "to the end of the file": never moov in practice
      }
      guard size >= headerSize else { return nil }
      if type == "moov" {
        guard size - headerSize < 64 << 20,
          fseeko(f, off_t(offset + headerSize), SEEK_SET) == 0,
          let body = readBytes(f, Int(size - headerSize))
        else { return nil }
        return parseMoov(body[...])
      }
      // A size that runs past any file is a damaged one: stop, do not overflow.
      let (next, overflow) = offset.addingReportingOverflow(size)
      guard !overflow else { return nil }
      offset = next
    }
  }

  private static func parseMoov(_ moov: ArraySlice<UInt8>) -> MP4Lengths? {
    var movieScale: Int?
    var found: MP4Lengths?
    for (type, body) in boxes(moov) {
      if type == "mvhd", let b = body.first {
        let at = body.startIndex + (b == 1 ? 20 : 12)
        guard body.endIndex >= at + 4 else { return nil }
        movieScale = Int(be32(body, at))
      } else if type == "trak", found == nil {
        found = parseTrak(body)
      }
    }
    guard var lengths = found, let movieScale, movieScale > 0 else { return nil }
    lengths.movieTimeScale = movieScale
    return lengths
  }

  /// The track's lengths if it is the sound track.
  private static func parseTrak(_ trak: ArraySlice<UInt8>) -> MP4Lengths? {
    var start: Int?
    var scale: Int?
    var duration: Int?
    var isSound = false
    for (type, body) in boxes(trak) {
      if type == "edts" {
        for (inner, elst) in boxes(body) where inner == "elst" {
          start = firstEditStart(elst)
        }
      } else if type == "mdia" {
        for (inner, box) in boxes(body) {
          if inner == "hdlr", box.count >= 12 {
            isSound =
              String(decoding: box[(box.startIndex + 8)..<(box.startIndex + 12)], as: UTF8.self)
              == "soun"
          } else if inner == "mdhd", let version = box.first {
            let at = box.startIndex + (version == 1 ? 20 : 12)
            guard box.endIndex >= at + (version == 1 ? 12 : 8) else { return nil }
            scale = Int(be32(box, at))
            duration = version == 1 ? Int(clamping: be64(box, at + 4)) : Int(be32(box, at + 4))
          }
        }
      }
    }
    guard isSound, let scale, scale > 0, let duration, duration > 0, (start ?? 0) <= duration
    else { return nil }
    return MP4Lengths(
      movieTimeScale: 0, trackTimeScale: scale, trackDuration: duration, editStart: start ?? 0)
  }

  /// The media time of the first edit that is not empty (an empty edit's media time is -1).
  private static func firstEditStart(_ elst: ArraySlice<UInt8>) -> Int? {
    guard elst.count >= 8, let version = elst.first else { return nil }
    let count = Int(be32(elst, elst.startIndex + 4))
    let entry = version == 1 ? 20 : 12
    var at = elst.startIndex + 8
    for _ in 0..<min(count, 1_000) {
      guard elst.endIndex >= at + entry else { return nil }
      let media =
        version == 1
        ? Int64(bitPattern: be64(elst, at + 8)) : Int64(Int32(bitPattern: be32(elst, at + 4)))
      if media >= 0 { return Int(media) }
      at += entry
    }
    return nil
  }

  /// The boxes directly inside `data`: (type, body).
  private static func boxes(_ data: ArraySlice<UInt8>) -> [(String, ArraySlice<UInt8>)] {
    var out: [(String, ArraySlice<UInt8>)] = []
    var at = data.startIndex
    while data.endIndex - at >= 8 {
      var size = Int(be32(data, at))
      let type = String(decoding: data[(at + 4)..<(at + 8)], as: UTF8.self)
      var header = 8
      if size == 1 {
        guard data.endIndex - at >= 16 else { break }
        size = Int(clamping: be64(data, at + 8))
        header = 16
      } else if size == 0 {
        size = data.endIndex - at
      }
      guard size >= header, size <= data.endIndex - at else { break }
      out.append((type, data[(at + header)..<(at + size)]))
      at += size
    }
    return out
  }

  private static func readBytes(_ f: UnsafeMutablePointer<FILE>, _ count: Int) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    let n = fread(&bytes, 1, count, f)
    return n == count
      ? bytes
      : (count == 16 && n >= 8 ? Array(bytes[0..<n]) + [UInt8](repeating: 0, count: 16 - n) : nil)
  }
}

private func be32<C: Collection<UInt8>>(_ b: C, _ at: C.Index) -> UInt32 where C.Index == Int {
  (UInt32(b[at]) << 24) | (UInt32(b[at + 1]) << 16) | (UInt32(b[at + 2]) << 8) | UInt32(b[at + 3])
}

private func be64<C: Collection<UInt8>>(_ b: C, _ at: C.Index) -> UInt64 where C.Index == Int {
  (UInt64(be32(b, at)) << 32) | UInt64(be32(b, at + 4))
}
