#ifndef TAGLIB_BRIDGE_H
#define TAGLIB_BRIDGE_H
/* What hark-tags needs of TagLib beyond its C binding (tag_c.h), which reaches neither lyrics
   nor ReplayGain tags: TagLib's C++ API behind C functions (bridge.cpp). Only hark-tags links
   it, so a crash in TagLib costs the helper, never the player. */
#ifdef __cplusplus
extern "C" {
#endif

/* Called for each lyrics tag: `kind` names it ("USLT", "LYRICS", "UNSYNCEDLYRICS", "©lyr"…),
   `text` is UTF-8. */
typedef void (*htl_text_fn)(void *context, const char *kind, const char *text);
/* Called for each entry of an ID3v2 SYLT frame, in the frame's order: milliseconds, UTF-8. */
typedef void (*htl_synced_fn)(void *context, unsigned int milliseconds, const char *text);

/* Reads the lyrics of the file at `path`: every unsynced lyrics tag, then the entries of the
   first SYLT frame that has any. Returns 0, or -1 when TagLib cannot open the file. */
int htl_read_lyrics(const char *path, void *context, htl_text_fn text, htl_synced_fn synced);

/* ReplayGain 2.0 tags to write; NULL leaves a value out (an album value without an album). */
typedef struct {
  const char *track_gain; /* "-6.54 dB" */
  const char *track_peak; /* "0.987654" */
  const char *album_gain;
  const char *album_peak;
  int opus_track_q78; /* Opus: R128_TRACK_GAIN, Q7.8 dB to -23 LUFS */
  int opus_album_q78;
  int has_opus_album;
} htl_gains;

/* Writes `gains` into the file at `path` as its format keeps ReplayGain (Vorbis comments in
   FLAC and Ogg, R128 gains in Opus, ID3v2 TXXX frames in MP3, WAV and AIFF, the freeform
   iTunes atoms in MP4, APEv2 in WavPack, Musepack and Monkey's Audio), changing no other tag
   and keeping an MP3's ID3v2 version. Returns NULL, or why not (a static string). */
const char *htl_write_gains(const char *path, const htl_gains *gains);

/* An MP4 file's ReplayGain, from its freeform iTunes atoms (----:com.apple.iTunes:replaygain_…,
   any case), as "REPLAYGAIN_…=value" lines; the caller frees it. NULL for another format. */
char *htl_mp4_gains(const char *path);

/* What the library index reads of a file through TagLib, from one opening of it: its tags'
   title, artist, album and genre (UTF-8; NULL when empty), year and track (0 when none), its
   length in whole seconds, and for MP4 its ReplayGain lines (`htl_mp4_gains`'s; NULL when none
   or another format). The strings stay valid until the next call on the same thread. */
typedef struct {
  const char *title;
  const char *artist;
  const char *album;
  const char *genre;
  unsigned int year;
  unsigned int track;
  int seconds;
  const char *mp4_gains;
} htl_tags;

/* Fills `tags` for the file at `path`. Returns 0, or -1 when TagLib cannot read the file. */
int htl_read_tags(const char *path, htl_tags *tags);

/* Every tag of the file as "KEY=value" lines (TagLib's property map, sorted), for checking
   that writing changed nothing else; the caller frees it. NULL when it cannot be read. */
char *htl_properties(const char *path);

#ifdef __cplusplus
}
#endif
#endif
