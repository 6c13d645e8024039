import AudioCore
import FFmpegDecoder
import LibraryIndex
import Loudness
import LoudnessMeter
import MediaFiles
import PlayerEngine
import SndFileDecoder

/// Which decoder opens a file. libsndfile reads WAV, AIFF, FLAC, Ogg Vorbis, Opus and MP3 in
/// the player's own process, at no cost beyond itself; FFmpeg decodes the rest (AAC and ALAC in
/// .m4a, WavPack, WMA, ...) in the hark-ffmpeg helper process, so that a run that plays only
/// FLAC never loads FFmpeg and a crash or hang inside it cannot take the player down.
enum Decoders {
  /// Opens `path` with the decoder made for its format: FFmpeg's helper for the extensions only
  /// it reads; otherwise libsndfile, and FFmpeg's helper when libsndfile does not know the file
  /// (no extension, or a wrong one), with libsndfile's reason kept when neither reads it.
  ///
  /// With `replayGain` on, a track whose file has gain tags plays at that gain (`GainDecoder`),
  /// and one without them at the gain the library index measured for it (Sound Check for every
  /// file: `Library.measureLoudness`); streams play as they come.
  static func open(_ path: String, replayGain: ReplayGainSettings = ReplayGainSettings())
    throws(DecodeError) -> any AudioDecoder
  {
    // Internet radio, and any http(s) stream: FFmpeg's, in its helper.
    if QueueLoader.isStreamURL(path) { return try FFmpegStream(url: path) }
    // A track of a cue sheet: that stretch of the file the sheet names.
    let reference = CueSheet.Reference(path)
    let decoder: any AudioDecoder
    if let reference {
      decoder = try CueSheet.open(reference) { file throws(DecodeError) in try openFile(file) }
    } else {
      decoder = try openFile(path)
    }
    guard replayGain.mode != .off else { return decoder }
    var tags = reference.map(gainTags(of:)) ?? gainTags(of: decoder, path)
    if tags.isEmpty, let measured = measuredGains.gains(of: path) { tags = measured }
    guard let decibels = replayGain.decibels(for: tags) else { return decoder }
    return GainDecoder(decoder, decibels: decibels)
  }

  /// The index's measurements, read when a track without gain tags plays with ReplayGain on.
  static let measuredGains = MeasuredGains()

  /// The loudness of the track at `path` (a file or a cue sheet's track), decoded as the player
  /// decodes it, without a gain; nil when `shouldStop` said to stop.
  static func measureLoudness(_ path: String, shouldStop: () -> Bool = { false }) -> Measured? {
    let decoder: any AudioDecoder
    do { decoder = try open(path) } catch { return .failed(error.reason) }
    do {
      guard let loudness = try LoudnessMeter.measure(decoder, shouldStop: shouldStop) else {
        return nil
      }
      return .loudness(loudness)
    } catch {
      return .failed(error.reason)
    }
  }

  /// The gain tags of a file: FFmpeg's helper reports them with the other tags; for
  /// libsndfile's formats hark reads them itself.
  private static func gainTags(of decoder: any AudioDecoder, _ path: String) -> ReplayGainTags {
    if let ffmpeg = decoder as? FFmpegFile { return ReplayGainTags(tags: ffmpeg.tags) }
    return GainTagReader.read(path: path)
  }

  /// A cue sheet track's: the sheet's REM REPLAYGAIN lines (the track's over the album's),
  /// else those of the audio file it is cut from.
  private static func gainTags(of reference: CueSheet.Reference) -> ReplayGainTags {
    guard case .success(let sheet) = CueSheet.read(reference.sheet) else { return ReplayGainTags() }
    let own = ReplayGainTags(tags: sheet.gainTags(ofTrack: reference.track))
    if !own.isEmpty { return own }
    guard let file = sheet.tracks.first(where: { $0.number == reference.track })?.file else {
      return ReplayGainTags()
    }
    return GainTagReader.read(path: file)
  }

  /// Opens the audio file at `path` (no cue sheet track).
  private static func openFile(_ path: String) throws(DecodeError) -> any AudioDecoder {
    if QueueLoader.ffmpegExtensions.contains(QueueLoader.fileExtension(path)) {
      return try FFmpegFile(path: path)
    }
    do {
      return try SoundFile(path: path)
    } catch {
      guard error.kind == .unknownFormat, let file = try? FFmpegFile(path: path) else {
        throw error
      }
      return file
    }
  }

  /// The chapters of the file at `path`, for the player (on a thread of its own: it blocks
  /// for a few milliseconds). FFmpeg's helper reads them, from the files it decodes, and from
  /// those libsndfile plays only when hark's own tag reader finds chapters there (ID3v2's CHAP,
  /// Vorbis comments' CHAPTERxx): a run that plays only music in those formats never loads
  /// FFmpeg for it. None for a stream or a cue sheet's track (a sheet's tracks are its
  /// chapters already), and none when they cannot be read (said in hark's log).
  static func chapters(of path: String) -> [Chapter] {
    guard !QueueLoader.isStreamURL(path), CueSheet.Reference(path) == nil else { return [] }
    if !QueueLoader.ffmpegExtensions.contains(QueueLoader.fileExtension(path)) {
      let marks = GainTagReader.read(path: path) {
        $0 == GainTagReader.chaptersField || $0.hasPrefix("CHAPTER")
      }
      if marks.isEmpty { return [] }
    }
    do { return try FFmpegChapters.read(path: path) } catch {
      HarkLog.write("cannot read the chapters of '\(path)': \(error)")
      return []
    }
  }

  /// Title, artist, album and length for the library browser, without playing it.
  static func tags(_ path: String) -> (metadata: TrackMetadata, seconds: Double?)? {
    // Not a stream: reading its tags would connect to it.
    guard !QueueLoader.isStreamURL(path), let file = try? open(path) else { return nil }
    return (file.metadata, file.frameCount.map { file.format.seconds($0) })
  }
}
