@testable import PlayerCore  // SplitMix64, the queue's seeded generator

/// Where a sound file's header integers and structure boundaries lie: RIFF/WAVE chunks and the
/// fmt fields, AIFF/AIFF-C chunks (COMM, SSND), FLAC metadata blocks (STREAMINFO's bit fields,
/// seek points, comments, pictures) and frame headers, Ogg pages with the Vorbis and Opus headers
/// and the first byte of each packet, MP3's ID3v2 tag, frame headers and Xing/Info/LAME fields.
/// Found leniently, in bytes that may already be damaged: whatever does not fit is left out.
struct AudioLayout {
  /// An unsigned integer of `width` bits (up to 64) at bit `bit` of the file, bits counted from
  /// the most significant of byte 0: big-endian; or little-endian, whole bytes.
  struct Field {
    var bit: Int
    var width: Int
    var littleEndian = false

    func read(_ b: [UInt8]) -> UInt64 {
      if littleEndian {
        var v: UInt64 = 0
        for i in 0..<width / 8 { v |= UInt64(b[bit / 8 + i]) << (8 * i) }
        return v
      }
      var v: UInt64 = 0
      for i in bit..<bit + width { v = v << 1 | UInt64(b[i / 8] >> (7 - i % 8) & 1) }
      return v
    }

    func write(_ value: UInt64, _ b: inout [UInt8]) {
      if littleEndian {
        for i in 0..<width / 8 { b[bit / 8 + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
        return
      }
      for i in 0..<width {
        let at = bit + width - 1 - i
        let mask = UInt8(1 << (7 - at % 8))
        if value >> i & 1 == 1 { b[at / 8] |= mask } else { b[at / 8] &= ~mask }
      }
    }
  }

  private(set) var fields: [Field] = []
  /// Offsets where a header, chunk, block, page, packet, frame or header field begins or ends.
  private(set) var boundaries: [Int] = []
  /// Whole chunks, blocks, pages and frames.
  private(set) var units: [Range<Int>] = []
  /// FLAC frames: where each begins and where its header's CRC-8 is.
  private(set) var flacFrames: [(start: Int, crc: Int)] = []
  /// Ogg pages that lie wholly in the file.
  private(set) var oggPages: [Range<Int>] = []

  private let b: [UInt8]
  private var n: Int { b.count }

  init(_ bytes: [UInt8]) {
    b = bytes
    if tag(0) == "RIFF" || tag(0) == "RIFX" || tag(0) == "RF64" {
      riff(bigEndian: tag(0) == "RIFX")
    } else if tag(0) == "FORM" {
      aiff()
    } else if tag(0) == "fLaC" {
      flac()
    } else if tag(0) == "OggS" {
      ogg()
    } else {
      mp3()
    }
    let count = bytes.count
    boundaries.removeAll { $0 <= 0 || $0 > count }
  }

  // MARK: Reading, within bounds

  private func tag(_ p: Int) -> String {
    guard p >= 0, p + 4 <= n else { return "" }
    return String(decoding: b[p..<p + 4], as: UTF8.self)
  }
  private func has(_ p: Int, _ s: StaticString) -> Bool {
    let count = s.utf8CodeUnitCount
    guard p >= 0, p + count <= n else { return false }
    return s.withUTF8Buffer { u in
      for i in 0..<count where b[p + i] != u[i] { return false }
      return true
    }
  }
  private func int(_ p: Int, _ bytes: Int, littleEndian: Bool) -> Int {
    guard p >= 0, p + bytes <= n else { return 0 }
    var v = 0
    for i in 0..<bytes {
      v |= Int(b[p + i]) << (8 * (littleEndian ? i : bytes - 1 - i))
    }
    return v
  }

  /// A field of whole bytes at `p`, and a boundary there.
  private mutating func add(_ p: Int, _ bytes: Int, littleEndian: Bool = false) {
    guard p >= 0, p + bytes <= n else { return }
    fields.append(Field(bit: p * 8, width: bytes * 8, littleEndian: littleEndian && bytes > 1))
    boundaries.append(p)
  }
  /// A big-endian bit field.
  private mutating func bits(_ bit: Int, _ width: Int) {
    guard bit >= 0, (bit + width + 7) / 8 <= n else { return }
    fields.append(Field(bit: bit, width: width))
  }

  // MARK: Formats

  private mutating func riff(bigEndian: Bool) {
    let le = !bigEndian
    add(4, 4, littleEndian: le)
    boundaries += [8, 12]
    var p = 12
    var count = 0
    while p + 8 <= n, count < 64 {
      count += 1
      let id = tag(p)
      let size = int(p + 4, 4, littleEndian: le)
      let end = min(n, p + 8 + size)
      boundaries += [p, p + 4, p + 8, end]
      add(p + 4, 4, littleEndian: le)
      units.append(p..<end)
      switch id {
      case "fmt ":
        // Tag, channels, rate (32), byte rate (32), block align, bits, cbSize, valid bits or
        // samples per block, channel mask (32), the sub-format's tag; ADPCM's coefficients.
        for o in stride(from: p + 8, to: min(end, p + 8 + 48), by: 2) {
          add(o, 2, littleEndian: le)
        }
        for o in [p + 12, p + 16, p + 28] { add(o, 4, littleEndian: le) }
      case "fact", "PEAK", "cue ", "smpl", "ds64":
        add(p + 8, 4, littleEndian: le)
        add(p + 12, 4, littleEndian: le)
        if id == "ds64" { for o in [p + 8, p + 16, p + 24] { add(o, 8, littleEndian: le) } }
      case "LIST":
        add(p + 16, 4, littleEndian: le)
      default: break
      }
      let next = p + 8 + size + (size & 1)
      guard next > p else { break }
      p = next
    }
  }

  private mutating func aiff() {
    add(4, 4)
    boundaries += [8, 12]
    var p = 12
    var count = 0
    while p + 8 <= n, count < 64 {
      count += 1
      let id = tag(p)
      let size = int(p + 4, 4, littleEndian: false)
      let end = min(n, p + 8 + size)
      boundaries += [p, p + 4, p + 8, end]
      add(p + 4, 4)
      units.append(p..<end)
      switch id {
      case "COMM":
        // Channels, frames, sample size, the 80-bit rate (exponent, mantissa), compression.
        add(p + 8, 2)
        add(p + 10, 4)
        add(p + 14, 2)
        add(p + 16, 2)
        add(p + 18, 4)
        add(p + 22, 4)
        add(p + 18, 8)
        add(p + 26, 4)
        boundaries.append(p + 26)
      case "SSND":
        add(p + 8, 4)
        add(p + 12, 4)
      case "FVER", "MARK", "INST", "COMT":
        add(p + 8, 4)
      default: break
      }
      let next = p + 8 + size + (size & 1)
      guard next > p else { break }
      p = next
    }
  }

  private mutating func flac() {
    boundaries.append(4)
    var p = 4
    var count = 0
    while p + 4 <= n, count < 32 {
      count += 1
      let last = b[p] & 0x80 != 0
      let type = b[p] & 0x7F
      let length = int(p + 1, 3, littleEndian: false)
      let q = p + 4
      let end = min(n, q + length)
      bits(p * 8, 1)
      bits(p * 8 + 1, 7)
      add(p + 1, 3)
      boundaries += [p, q, end]
      units.append(p..<end)
      switch type {
      case 0:
        // Min and max block size, min and max frame size, then 20 bits of sample rate, 3 of
        // channels - 1, 5 of bits per sample - 1, 36 of total samples.
        add(q, 2)
        add(q + 2, 2)
        add(q + 4, 3)
        add(q + 7, 3)
        bits((q + 10) * 8, 20)
        bits((q + 10) * 8 + 20, 3)
        bits((q + 10) * 8 + 23, 5)
        bits((q + 10) * 8 + 28, 36)
        boundaries += [q + 12, q + 13, q + 18, q + 34]
      case 3:
        for point in 0..<min(4, length / 18) {
          let s = q + 18 * point
          add(s, 8)
          add(s + 8, 8)
          add(s + 16, 2)
        }
      case 4:
        add(q, 4, littleEndian: true)
        let vendor = int(q, 4, littleEndian: true)
        add(q + 4 + vendor, 4, littleEndian: true)
        add(q + 8 + vendor, 4, littleEndian: true)
      case 6:
        add(q, 4)
        add(q + 4, 4)
        let mime = int(q + 4, 4, littleEndian: false)
        add(q + 8 + mime, 4)
        let description = int(q + 8 + mime, 4, littleEndian: false)
        for i in 0..<5 { add(q + 12 + mime + description + 4 * i, 4) }
      default: break
      }
      p = q + length
      if last { break }
    }
    flacAudio(from: min(p, n))
  }

  /// The frame header at `s`, if one parses: where its CRC-8 byte is.
  static func flacFrameHeader(_ b: [UInt8], at s: Int) -> Int? {
    guard s + 5 < b.count, b[s] == 0xFF, b[s + 1] & 0xFE == 0xF8 else { return nil }
    let blockCode = b[s + 2] >> 4
    let rateCode = b[s + 2] & 15
    guard blockCode != 0, rateCode != 15 else { return nil }
    var q = s + 4
    let first = b[q]
    let extra =
      first & 0x80 == 0
      ? 0
      : first & 0xE0 == 0xC0
        ? 1
        : first & 0xF0 == 0xE0
          ? 2 : first & 0xF8 == 0xF0 ? 3 : first & 0xFC == 0xF8 ? 4 : first & 0xFE == 0xFC ? 5 : -1
    guard extra >= 0 || first == 0xFE else { return nil }
    q += 1 + (first == 0xFE ? 6 : extra)
    if blockCode == 6 { q += 1 } else if blockCode == 7 { q += 2 }
    if rateCode == 12 { q += 1 } else if rateCode == 13 || rateCode == 14 { q += 2 }
    return q < b.count ? q : nil
  }

  private mutating func flacAudio(from start: Int) {
    let bytes = b
    let count = bytes.count
    var s = start
    while s + 1 < count, flacFrames.count < 64 {
      guard bytes[s] == 0xFF, let crc = Self.flacFrameHeader(bytes, at: s) else {
        s += 1
        continue
      }
      flacFrames.append((s, crc))
      // Blocking strategy, block size and rate codes, channel assignment, sample size, the
      // first byte of the frame number, and the first subframe's header.
      bits((s + 1) * 8 + 7, 1)
      bits((s + 2) * 8, 4)
      bits((s + 2) * 8 + 4, 4)
      bits((s + 3) * 8, 4)
      bits((s + 3) * 8 + 4, 3)
      add(s + 4, 1)
      if crc > s + 5 { add(s + 5, crc - s - 5 <= 2 ? crc - s - 5 : 1) }
      add(crc + 1, 1)
      boundaries += [s, s + 2, s + 4, crc, crc + 1, crc + 2]
      s = crc + 1
    }
    for (i, f) in flacFrames.enumerated() {
      units.append(f.start..<(i + 1 < flacFrames.count ? flacFrames[i + 1].start : n))
    }
  }

  private mutating func ogg() {
    var p = 0
    let count = n
    while p + 27 <= count, oggPages.count < 64 {
      guard b[p] == 0x4F, has(p, "OggS") else {
        p += 1
        continue
      }
      let segments = Int(b[p + 26])
      let body = p + 27 + segments
      guard body <= n else { break }
      let lacing = Array(b[p + 27..<body])
      let end = body + lacing.reduce(0) { $0 + Int($1) }
      // Version, header type, granule position (64), serial, sequence, segments, lacing.
      add(p + 4, 1)
      add(p + 5, 1)
      add(p + 6, 8, littleEndian: true)
      add(p + 6, 4, littleEndian: true)
      add(p + 14, 4, littleEndian: true)
      add(p + 18, 4, littleEndian: true)
      add(p + 26, 1)
      for i in [0, 1, segments / 2, segments - 1] where i >= 0 && i < segments {
        add(p + 27 + i, 1)
      }
      boundaries += [p, p + 6, p + 14, p + 27, body, end]
      // Packets: a lacing value under 255 ends one.
      var packet = body
      var at = body
      var packets = 0
      for l in lacing {
        at += Int(l)
        if l < 255 {
          if packets < 8 { oggPacket(packet) }
          packets += 1
          boundaries.append(at)
          packet = at
        }
      }
      units.append(p..<min(end, n))
      if end <= n { oggPages.append(p..<end) }
      p = end <= n ? end : p + 4
    }
  }

  private mutating func oggPacket(_ s: Int) {
    if has(s, "\u{1}vorbis") {
      // Version, channels, rate, the three bit rates, the two block sizes, framing.
      add(s + 7, 4, littleEndian: true)
      add(s + 11, 1)
      add(s + 12, 4, littleEndian: true)
      for o in [s + 16, s + 20, s + 24] { add(o, 4, littleEndian: true) }
      bits((s + 28) * 8, 4)
      bits((s + 28) * 8 + 4, 4)
      add(s + 29, 1)
    } else if has(s, "\u{3}vorbis") {
      add(s + 7, 4, littleEndian: true)
      add(s + 11 + int(s + 7, 4, littleEndian: true), 4, littleEndian: true)
    } else if has(s, "\u{5}vorbis") {
      // Codebook count - 1, then the first codebook: sync, dimensions, entries.
      add(s + 7, 1)
      add(s + 11, 2, littleEndian: true)
      add(s + 13, 3, littleEndian: true)
      add(s + 16, 1)
    } else if has(s, "OpusHead") {
      // Version, channels, pre-skip, input rate, gain, mapping family, streams, coupled,
      // the first entries of the channel mapping.
      add(s + 8, 1)
      add(s + 9, 1)
      add(s + 10, 2, littleEndian: true)
      add(s + 12, 4, littleEndian: true)
      add(s + 16, 2, littleEndian: true)
      for o in s + 18..<s + 23 { add(o, 1) }
    } else if has(s, "OpusTags") {
      add(s + 8, 4, littleEndian: true)
      add(s + 12 + int(s + 8, 4, littleEndian: true), 4, littleEndian: true)
    } else {
      // An audio packet: Opus's TOC (configuration, stereo, frame count code) or Vorbis's
      // packet type and mode.
      bits(s * 8, 5)
      bits(s * 8 + 5, 1)
      bits(s * 8 + 6, 2)
      add(s, 1)
      add(s + 1, 1)
    }
  }

  private static let mp3Rates = [
    [11025, 12000, 8000], [0, 0, 0], [22050, 24000, 16000], [44100, 48000, 32000],
  ]
  private static let mp3BitRates: [[Int]] = [
    [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],  // MPEG-1 layer I
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],  // MPEG-1 layer II
    [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],  // MPEG-1 layer III
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],  // MPEG-2 layer I
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],  // MPEG-2 layers II, III
  ]

  private mutating func mp3() {
    var p = 0
    if has(0, "ID3"), n >= 10 {
      // Version, flags, the size (four 7-bit bytes), and the size as one integer.
      add(3, 1)
      add(5, 1)
      add(6, 4)
      for o in 6..<10 { add(o, 1) }
      let size = (0..<4).reduce(0) { $0 << 7 | Int(b[6 + $1] & 0x7F) }
      p = 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)
      boundaries += [3, 6, 10, p]
      units.append(0..<min(p, n))
    }
    if n >= 128, has(n - 128, "TAG") { boundaries.append(n - 128) }
    var frames = 0
    let count = n
    while p + 4 <= count, frames < 128 {
      guard b[p] == 0xFF, b[p + 1] & 0xE0 == 0xE0 else {
        p += 1
        continue
      }
      let version = Int(b[p + 1] >> 3 & 3)
      let layer = Int(b[p + 1] >> 1 & 3)
      let rateIndex = Int(b[p + 2] >> 2 & 3)
      let bitRateIndex = Int(b[p + 2] >> 4)
      let padding = Int(b[p + 2] >> 1 & 1)
      guard version != 1, layer != 0, rateIndex != 3, bitRateIndex != 0, bitRateIndex != 15
      else {
        p += 1
        continue
      }
      let rate = Self.mp3Rates[version][rateIndex]
      let table = version == 3 ? 3 - layer : (layer == 3 ? 3 : 4)
      let kbps = Self.mp3BitRates[table][bitRateIndex]
      let length =
        layer == 3
        ? (12_000 * kbps / rate + padding) * 4
        : (layer == 1 && version != 3 ? 72_000 : 144_000) * kbps / rate + padding
      frames += 1
      // Version, layer, protection, bit rate, sample rate, padding, channel mode, mode
      // extension, emphasis; main_data_begin (the bit reservoir's back pointer).
      for (at, width) in [
        (11, 2), (13, 2), (15, 1), (16, 4), (20, 2), (22, 1), (24, 2), (26, 2), (30, 2),
      ] {
        bits(p * 8 + at, width)
      }
      let side = p + (b[p + 1] & 1 == 0 ? 6 : 4)
      bits(side * 8, version == 3 ? 9 : 8)
      boundaries += [p, p + 4, side, p + length]
      units.append(p..<min(n, p + length))
      if frames == 1 { xing(in: p..<min(n, p + length)) }
      p += max(length, 4)
    }
  }

  /// The Xing or Info header in the first frame: flags, frame and byte counts, the first entry
  /// of the table of contents, the quality, then LAME's encoder delay and padding.
  private mutating func xing(in frame: Range<Int>) {
    guard let x = frame.first(where: { has($0, "Xing") || has($0, "Info") }) else {
      if let v = frame.first(where: { has($0, "VBRI") }) {
        for o in [v + 4, v + 6, v + 8, v + 10, v + 14, v + 18, v + 20, v + 22, v + 24] {
          add(o, 2)
        }
        add(v + 10, 4)
        add(v + 14, 4)
      }
      return
    }
    add(x + 4, 4)
    let flags = int(x + 4, 4, littleEndian: false)
    var o = x + 8
    if flags & 1 != 0 {
      add(o, 4)
      o += 4
    }
    if flags & 2 != 0 {
      add(o, 4)
      o += 4
    }
    if flags & 4 != 0 {
      add(o, 1)
      add(o + 99, 1)
      o += 100
    }
    if flags & 8 != 0 {
      add(o, 4)
      o += 4
    }
    boundaries.append(o)
    bits((o + 21) * 8, 12)
    bits((o + 21) * 8 + 12, 12)
    add(o + 28, 4)
  }
}

/// The decoder fuzzer's mutations: the format-blind ones of `Mutations.generic`, and ones that
/// know the formats (through `AudioLayout`): a header integer rewritten with a boundary value,
/// a truncation at a header boundary, a whole chunk, block, page or frame cut out or repeated,
/// a chunk or page name planted at a boundary. Then, most of the time, the Ogg page CRCs and
/// the FLAC frame CRCs are made right again, so that what was changed reaches the decoders
/// behind them (libogg drops a page with a bad CRC, libFLAC a frame whose header's is bad).
enum AudioMutations {
  static func mutate(_ input: inout [UInt8], _ rng: inout SplitMix64, splice seeds: [[UInt8]]) {
    let which = rng.next() % 10
    if which < 4 {
      Mutations.generic(&input, &rng, splice: seeds)
    } else {
      let layout = AudioLayout(input)
      switch which {
      case 4..<7 where !layout.fields.isEmpty:
        let field = layout.fields[Int(rng.next() % UInt64(layout.fields.count))]
        field.write(boundaryValue(field, field.read(input), &rng), &input)
      case 7 where !layout.boundaries.isEmpty:
        let at = layout.boundaries[Int(rng.next() % UInt64(layout.boundaries.count))]
        let cut = at + [0, 0, 0, -1, 1][Int(rng.next() % 5)]
        if cut >= 0, cut < input.count { input.removeLast(input.count - cut) }
      case 8 where !layout.units.isEmpty:
        let unit = layout.units[Int(rng.next() % UInt64(layout.units.count))]
        if rng.next() % 2 == 0 {
          input.removeSubrange(unit)
        } else {
          input.insert(contentsOf: input[unit], at: unit.lowerBound)
        }
      case 9:
        let at =
          layout.boundaries.isEmpty
          ? Int(rng.next() % UInt64(input.count + 1))
          : layout.boundaries[Int(rng.next() % UInt64(layout.boundaries.count))]
        let name = names[Int(rng.next() % UInt64(names.count))]
        input.insert(contentsOf: name, at: min(at, input.count))
      default:
        Mutations.generic(&input, &rng, splice: seeds)
      }
    }
    if input.count > 1 << 16 { input.removeLast(input.count - (1 << 16)) }
    if rng.next() % 4 != 0 { fixChecksums(&input) }
  }

  /// What a lying header says: 0, 1, all ones, the sign bit, channel counts like 1024 and
  /// 65535, 2^31 - 1 and 2^32 - 1, and the value that was there give or take a little.
  static func boundaryValue(_ field: AudioLayout.Field, _ old: UInt64, _ rng: inout SplitMix64)
    -> UInt64
  {
    let ones: UInt64 = field.width >= 64 ? .max : (1 << field.width) - 1
    let top: UInt64 = 1 << (field.width - 1)
    let values: [UInt64] = [
      0, 1, 2, 3, 7, 8, 16, 255, 256, 1024, 4096, 65535, 65536, 0x7FFF_FFFF, 0x8000_0000,
      0xFFFF_FFFF, 0x1_0000_0000, ones, top, top - 1, old &+ 1, old &- 1, old &* 2, old / 2,
      old &* 1000, rng.next(),
    ]
    return values[Int(rng.next() % UInt64(values.count))] & ones
  }

  static let names: [[UInt8]] =
    [
      "RIFF", "WAVE", "fmt ", "data", "fact", "LIST", "FORM", "AIFF", "AIFC", "COMM", "SSND",
      "fLaC", "OggS", "\u{1}vorbis", "OpusHead", "ID3\u{4}\u{0}\u{0}", "Xing", "Info",
    ].map { Array($0.utf8) } + [[0xFF, 0xFB, 0x90, 0x64], [0xFF, 0xF8, 0x69, 0x08, 0x00]]

  static func fixChecksums(_ input: inout [UInt8]) {
    // Only Ogg and FLAC files have them (as AudioLayout finds formats: by their first bytes).
    guard input.count >= 4, input[0] == 0x4F || input[0] == 0x66 else { return }
    let layout = AudioLayout(input)
    for page in layout.oggPages where page.count >= 27 {
      for i in 22..<26 { input[page.lowerBound + i] = 0 }
      var crc: UInt32 = 0
      for byte in input[page] { crc = crc << 8 ^ oggTable[Int(UInt8(crc >> 24) ^ byte)] }
      for i in 0..<4 { input[page.lowerBound + 22 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
    }
    for (i, frame) in layout.flacFrames.enumerated() {
      var crc8: UInt8 = 0
      for byte in input[frame.start..<frame.crc] { crc8 = flacCRC8[Int(crc8 ^ byte)] }
      input[frame.crc] = crc8
      let end = i + 1 < layout.flacFrames.count ? layout.flacFrames[i + 1].start : input.count
      guard end - 2 > frame.crc else { continue }
      var crc16: UInt16 = 0
      for byte in input[frame.start..<end - 2] {
        crc16 = crc16 << 8 ^ flacCRC16[Int(UInt8(crc16 >> 8) ^ byte)]
      }
      input[end - 2] = UInt8(crc16 >> 8)
      input[end - 1] = UInt8(crc16 & 0xFF)
    }
  }

  /// CRC-32 with polynomial 0x04C11DB7, unreflected (Ogg's).
  private static let oggTable: [UInt32] = (0..<256).map { i in
    var r = UInt32(i) << 24
    for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? r << 1 ^ 0x04C1_1DB7 : r << 1 }
    return r
  }
  /// FLAC's CRC-8 (polynomial 0x07) and CRC-16 (0x8005), unreflected.
  private static let flacCRC8: [UInt8] = (0..<256).map { i in
    var r = UInt8(i)
    for _ in 0..<8 { r = r & 0x80 != 0 ? r << 1 ^ 0x07 : r << 1 }
    return r
  }
  private static let flacCRC16: [UInt16] = (0..<256).map { i in
    var r = UInt16(i) << 8
    for _ in 0..<8 { r = r & 0x8000 != 0 ? r << 1 ^ 0x8005 : r << 1 }
    return r
  }
}
