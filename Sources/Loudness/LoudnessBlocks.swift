import Glibc

/// The loudness of a track's gating blocks (ITU-R BS.1770-4: 400 ms of K-weighted sound every
/// 100 ms), counted in bins of 0.1 LU from the absolute gate (−70 LUFS) up, as libebur128's
/// histogram mode counts them: enough to gate any set of tracks together again without their
/// sound. An album's loudness is its tracks' blocks gated as one programme (BS.1770's integrated
/// loudness over the whole album, not a mean of its tracks'), so a rescan that measures one
/// changed track gets the album's anew from the others' blocks kept in the index.
public struct LoudnessBlocks: Hashable, Sendable {
  /// Blocks per bin: bin `i` holds blocks from −70 + i/10 LUFS up to the next bin.
  public private(set) var counts: [UInt32]

  /// Bins from −70 to +30 LUFS; louder blocks count in the last one (full-scale square waves
  /// on every channel of 5.1 reach about +13).
  public static let binCount = 1000
  static let floor = -70.0

  public init() { counts = [] }

  /// Counts a block of this loudness (LUFS); one below the absolute gate, or silence (−∞),
  /// is left out, as gating leaves it out.
  public mutating func add(blockLoudness lufs: Double) {
    guard lufs >= Self.floor, !lufs.isNaN else { return }
    let bin = min(Self.binCount - 1, Int(((lufs - Self.floor) * 10).rounded(.down)))
    if counts.count <= bin { counts += repeatElement(0, count: bin + 1 - counts.count) }
    counts[bin] &+= 1
  }

  /// These blocks and `other`'s together: an album of both.
  public mutating func merge(_ other: LoudnessBlocks) {
    if counts.count < other.counts.count {
      counts += repeatElement(0, count: other.counts.count - counts.count)
    }
    for (i, n) in other.counts.enumerated() { counts[i] &+= n }
  }

  /// How many blocks pass the absolute gate.
  public var blockCount: Int { counts.reduce(0) { $0 + Int($1) } }

  /// The integrated loudness of these blocks, LUFS (BS.1770-4, 2.8): the mean energy of the
  /// blocks above the absolute gate, less 10 LU, is the relative gate; the mean energy of the
  /// blocks above both is the loudness. Each bin's blocks count at its middle's energy, as in
  /// libebur128's histogram mode (within 0.05 LU of counting each block). Nil when no block
  /// passes: silence, or less than 400 ms.
  public var integratedLoudness: Double? {
    var energy = 0.0
    var blocks = 0.0
    for (i, n) in counts.enumerated() where n > 0 {
      energy += Double(n) * Self.energy(ofBin: i)
      blocks += Double(n)
    }
    guard blocks > 0 else { return nil }
    let relativeGate = Self.loudness(ofEnergy: energy / blocks) - 10
    // A bin counts when its middle is at or above the gate, as its blocks are taken to be there
    // (libebur128's rule, so that one track's loudness reads the same both ways).
    energy = 0
    blocks = 0
    for (i, n) in counts.enumerated() where n > 0 {
      let middle = Self.floor + (Double(i) + 0.5) / 10
      guard middle >= relativeGate else { continue }
      energy += Double(n) * Self.energy(ofBin: i)
      blocks += Double(n)
    }
    guard blocks > 0 else { return nil }
    return Self.loudness(ofEnergy: energy / blocks)
  }

  /// A block's mean square energy at its bin's middle, K-weighted and summed over channels.
  static func energy(ofBin i: Int) -> Double {
    pow(10, (floor + (Double(i) + 0.5) / 10 + 0.691) / 10)
  }

  /// BS.1770's loudness of an energy: −0.691 + 10·log10(energy).
  public static func loudness(ofEnergy e: Double) -> Double { -0.691 + 10 * log10(e) }

  // MARK: Kept in the index

  /// A few hundred bytes: the first bin with blocks, then each count up to the last with
  /// blocks, every number as an unsigned LEB128 varint (most counts fit one byte).
  public var encoded: [UInt8] {
    guard let first = counts.firstIndex(where: { $0 > 0 }),
      let last = counts.lastIndex(where: { $0 > 0 })
    else { return [] }
    var out: [UInt8] = []
    out.reserveCapacity(last - first + 3)
    func put(_ value: UInt32) {
      var v = value
      while v >= 0x80 {
        out.append(UInt8(v & 0x7F) | 0x80)
        v >>= 7
      }
      out.append(UInt8(v))
    }
    put(UInt32(first))
    for n in counts[first...last] { put(n) }
    return out
  }

  /// Reads `encoded`'s bytes; nil when they are not such (damaged, or of another version).
  public init?(encoded bytes: some Collection<UInt8>) {
    counts = []
    var values: [UInt32] = []
    var value: UInt32 = 0
    var shift: UInt32 = 0
    for b in bytes {
      guard shift < 32 else { return nil }
      value |= UInt32(b & 0x7F) << shift
      if b & 0x80 == 0 {
        values.append(value)
        value = 0
        shift = 0
      } else {
        shift += 7
      }
    }
    guard shift == 0 else { return nil }
    guard let first = values.first else { return }
    guard Int(first) + values.count - 1 <= Self.binCount else { return nil }
    counts = Array(repeating: 0, count: Int(first)) + values.dropFirst()
  }
}

/// What a measurement of one track found.
public struct TrackLoudness: Hashable, Sendable {
  /// Integrated loudness (BS.1770-4), LUFS; nil for silence or less than 400 ms of sound.
  public var integrated: Double?
  /// The highest true peak of any channel (BS.1770-4 annex 2: 4× oversampled), linear: 1.0 is
  /// full scale.
  public var truePeak: Double
  public var blocks: LoudnessBlocks
  public var seconds: Double

  public init(integrated: Double?, truePeak: Double, blocks: LoudnessBlocks, seconds: Double) {
    self.integrated = integrated
    self.truePeak = truePeak
    self.blocks = blocks
    self.seconds = seconds
  }

  /// ReplayGain 2.0's reference: a track this loud plays at 0 dB.
  public static let referenceLUFS = -18.0

  /// The ReplayGain 2.0 gain for this loudness: the reference less it, in dB.
  public static func gain(forLoudness lufs: Double) -> Double { referenceLUFS - lufs }
}
