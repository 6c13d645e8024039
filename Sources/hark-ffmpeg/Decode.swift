import CFFmpeg
import Glibc
import Platform

/// Decodes `request.path` to stdout: the header, then the frames from `request.startFrame` to
/// the end. Throws when the file will not open, or when decoding fails midway (the frames
/// written by then are good).
func decode(_ request: Request) throws(Failure) {
  var input = try AudioInput(path: request.path)
  let rate = input.rate
  let length = input.length()
  var header = [
    "hark-ffmpeg 1", "rate \(rate)", "channels \(input.channels)",
  ]
  if let length { header.append("frames \(length.frames)") }
  header.append("seekable \(input.isSeekable ? 1 : 0)")
  header.append("codec \(input.codecName)")
  for (key, value) in input.tags() { header.append("\(key) \(value)") }
  let writer = FrameWriter(rate: rate, channels: input.channels)
  try writer.writeHeader(header)

  let start = request.startFrame
  // The stream's frame at the start of `input.frame`, counted as a decode from the start
  // counts them.
  var position = 0
  var more: Bool
  let landing: AudioInput.Landing =
    start > 0 && input.isSeekable ? try input.seek(toFrame: start) : .atStart
  switch landing {
  case .atStart:
    more = try input.nextFrame()
  case .at(let frame):
    position = frame
    more = true
  case .end:
    position = start
    more = false
  case .lost:
    input = try AudioInput(path: request.path)
    more = try input.nextFrame()
  }
  let end = input.exactEnd() ?? Int.max
  while more && position < end {
    let frame = input.frame
    let count = Int(frame.pointee.nb_samples)
    let frameRate = Int(frame.pointee.sample_rate)
    if frameRate == rate {
      let from = max(0, start - position)
      let to = min(count, end - position)
      try writer.write(frame, from: from, to: to)
      position += count
    } else {
      // The stream changed its rate midway (a damaged or chained stream): resampled to the
      // header's; positions go on in the header's frames, to within a frame.
      let resampled = count * rate / max(1, frameRate)
      if position + resampled > start { try writer.write(frame, from: 0, to: count) }
      position += resampled
    }
    more = try input.nextFrame()
  }
  try writer.finish()

  // The end of what decodes, short of the length the file declares (not a guess from the bit
  // rate): cut short. The leeway as SoundFile's: 2 %, at least a tenth of a second.
  if !more, landing.counted, let length, !length.estimated,
    position < length.frames - max(length.frames / 50, rate / 10)
  {
    throw Failure(
      .damaged,
      reason: "the file is cut short after \(seconds(position, rate)) of "
        + "\(seconds(length.frames, rate))")
  }
}

extension AudioInput.Landing {
  /// Whether the position after it counts real frames (not the end of a seek past the end).
  var counted: Bool {
    switch self {
    case .atStart, .at, .lost: true
    case .end: false
    }
  }
}

/// "12.3 s".
private func seconds(_ frames: Int, _ rate: Int) -> String {
  let tenths = Int((Double(frames) / Double(rate) * 10).rounded())
  return "\(tenths / 10).\(tenths % 10) s"
}

/// Decodes the stream at the URL `request.path` to stdout until it ends or the connection
/// drops: the header (with `live 1` when it has no length, and the station's name), then the
/// frames as they come, each decoded frame written at once. What the stream says as it goes
/// (its ICY title blocks, an Ogg chain's next tags) goes to descriptor 3 as event lines, when
/// the parent opened it (see main.swift).
func decodeStream(_ request: Request) throws(Failure) {
  let input = try AudioInput(path: request.path, stream: true)
  let rate = input.rate
  let length = input.length()
  var header = ["hark-ffmpeg 1", "rate \(rate)", "channels \(input.channels)"]
  let exact = length.flatMap { $0.estimated ? nil : $0.frames }
  if let exact { header.append("frames \(exact)") }
  header += ["seekable 0", "live \(exact == nil ? 1 : 0)"]
  header.append("codec \(input.codecName)")
  let icy = input.icyHeaders()
  if let name = icy["icy-name"], !name.isEmpty { header.append("station \(oneLine(name))") }
  var tags = input.tags()
  if !tags.contains(where: { $0.key == "genre" }), let genre = icy["icy-genre"] {
    tags.append(("genre", oneLine(genre)))
  }
  for (key, value) in tags { header.append("\(key) \(value)") }
  let writer = FrameWriter(rate: rate, channels: input.channels)
  try writer.writeHeader(header)

  let events = EventLines()
  var lastPacket: [UInt8]?
  _ = input.updatedTags()  // what opening set: the header has said it
  while try input.nextFrame() {
    let frame = input.frame
    try writer.write(frame, from: 0, to: Int(frame.pointee.nb_samples))
    try writer.flush()
    if let packet = input.icyPacket(), packet != lastPacket {
      lastPacket = packet
      events.send(Array("icy ".utf8) + packet.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 })
    }
    // (FFmpeg also flags an ICY block as an update, with no tags in it: the block says it.)
    if let updated = input.updatedTags(), !updated.isEmpty {
      let fields = updated.map { "\($0.key)=\($0.value.replacingTabs())" }
      events.send(Array(("tags\t" + fields.joined(separator: "\t")).utf8))
    }
  }
  try writer.finish()
}

/// Lines to descriptor 3, when it is open; nothing otherwise (the helper run by hand).
final class EventLines {
  private let open = fcntl(3, F_GETFD) >= 0

  func send(_ line: [UInt8]) {
    guard open else { return }
    try? writeAll(3, line + [0x0A])
  }
}

/// Line breaks as spaces.
private func oneLine(_ text: String) -> String {
  String(text.map { $0.isNewline ? " " : $0 })
}

extension String {
  fileprivate func replacingTabs() -> String {
    String(map { $0 == "\t" || $0.isNewline ? " " : $0 })
  }
}
