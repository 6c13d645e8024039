import AudioCore
import FFmpegDecoder
import Loudness
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
  /// With `replayGain` on, a track whose file has gain tags plays at that gain (`GainDecoder`);
  /// streams play as they come.
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
    let tags = reference.map(gainTags(of:)) ?? gainTags(of: decoder, path)
    guard let decibels = replayGain.decibels(for: tags) else { return decoder }
    return GainDecoder(decoder, decibels: decibels)
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
      guard error.reason == SoundFile.unknownFormat, let file = try? FFmpegFile(path: path) else {
        throw error
      }
      return file
    }
  }

  /// Title, artist, album and length for the library browser, without playing it.
  static func tags(_ path: String) -> (metadata: TrackMetadata, seconds: Double?)? {
    // Not a stream: reading its tags would connect to it.
    guard !QueueLoader.isStreamURL(path), let file = try? open(path) else { return nil }
    return (file.metadata, file.frameCount.map { file.format.seconds($0) })
  }
}
