#include "TagLibBridge.h"

#include <aifffile.h>
#include <apefile.h>
#include <apetag.h>
#include <fileref.h>
#include <flacfile.h>
#include <id3v2tag.h>
#include <mp4file.h>
#include <mp4tag.h>
#include <mpcfile.h>
#include <mpegfile.h>
#include <opusfile.h>
#include <speexfile.h>
#include <synchronizedlyricsframe.h>
#include <textidentificationframe.h>
#include <tpropertymap.h>
#include <unsynchronizedlyricsframe.h>
#include <vorbisfile.h>
#include <oggflacfile.h>
#include <wavfile.h>
#include <wavpackfile.h>
#include <xiphcomment.h>

#include <cstdlib>
#include <cstring>
#include <string>

using namespace TagLib;

namespace {

/* The ID3v2 tag of the formats that keep one, without making one. */
ID3v2::Tag *id3v2(File *file) {
  if (auto *f = dynamic_cast<MPEG::File *>(file)) return f->hasID3v2Tag() ? f->ID3v2Tag() : nullptr;
  if (auto *f = dynamic_cast<RIFF::WAV::File *>(file))
    return f->hasID3v2Tag() ? f->ID3v2Tag() : nullptr;
  if (auto *f = dynamic_cast<RIFF::AIFF::File *>(file)) return f->hasID3v2Tag() ? f->tag() : nullptr;
  if (auto *f = dynamic_cast<FLAC::File *>(file)) return f->hasID3v2Tag() ? f->ID3v2Tag() : nullptr;
  return nullptr;
}

}  // namespace

extern "C" int htl_read_lyrics(const char *path, void *context, htl_text_fn text,
                               htl_synced_fn synced) {
  FileRef ref(path, true, AudioProperties::Fast);
  if (ref.isNull() || !ref.file()->isValid()) return -1;
  File *file = ref.file();
  if (ID3v2::Tag *tag = id3v2(file)) {
    // ID3v2: each USLT frame (several languages or descriptions may be there), then SYLT.
    for (ID3v2::Frame *frame : tag->frameListMap()["USLT"]) {
      if (auto *f = dynamic_cast<ID3v2::UnsynchronizedLyricsFrame *>(frame)) {
        text(context, "USLT", f->text().toCString(true));
      }
    }
    int rate = file->audioProperties() ? file->audioProperties()->sampleRate() : 0;
    for (ID3v2::Frame *frame : tag->frameListMap()["SYLT"]) {
      auto *f = dynamic_cast<ID3v2::SynchronizedLyricsFrame *>(frame);
      if (!f || f->synchedText().isEmpty()) continue;
      bool frames = f->timestampFormat() == ID3v2::SynchronizedLyricsFrame::AbsoluteMpegFrames;
      if (frames && rate <= 0) continue;
      for (const auto &entry : f->synchedText()) {
        // MPEG frames of 1152 samples (Layer II and III, as SYLT's writers mean them).
        unsigned ms = frames ? (unsigned)((double)entry.time * 1152 * 1000 / rate) : entry.time;
        synced(context, ms, entry.text.toCString(true));
      }
      break;
    }
    return 0;
  }
  // The rest through the property map: Vorbis comments' LYRICS and UNSYNCEDLYRICS, MP4's ©lyr,
  // APEv2's and ASF's lyrics all come out as LYRICS (or their own name).
  PropertyMap properties = file->properties();
  for (const auto &entry : properties) {
    std::string key = entry.first.upper().to8Bit(true);
    if (key.rfind("LYRICS", 0) != 0 && key.rfind("UNSYNCEDLYRICS", 0) != 0 &&
        key.rfind("UNSYNCED LYRICS", 0) != 0)
      continue;
    const char *kind = dynamic_cast<MP4::File *>(file) ? "\xC2\xA9lyr" : key.c_str();
    for (const auto &value : entry.second) text(context, kind, value.toCString(true));
  }
  return 0;
}

namespace {

void setTXXX(ID3v2::Tag *tag, const char *name, const char *value) {
  if (!value) return;
  // The frame of that description replaced, any other left as it is.
  for (ID3v2::Frame *frame : tag->frameListMap()["TXXX"]) {
    auto *f = dynamic_cast<ID3v2::UserTextIdentificationFrame *>(frame);
    if (f && f->description().upper() == String(name).upper()) {
      tag->removeFrame(f);
      break;
    }
  }
  auto *frame = new ID3v2::UserTextIdentificationFrame(String::UTF8);
  frame->setDescription(name);
  frame->setText(String(value, String::UTF8));
  tag->addFrame(frame);
}

void setXiph(Ogg::XiphComment *c, const char *name, const char *value) {
  if (value) c->addField(name, String(value, String::UTF8), true);
}

void setAPE(APE::Tag *t, const char *name, const char *value) {
  if (value) t->addValue(name, String(value, String::UTF8), true);
}

void setMP4(MP4::Tag *t, const char *name, const char *value) {
  // As foobar2000, rsgain and iTunes's own scanners name them: lower case, iTunes's mean.
  if (value) t->setItem(std::string("----:com.apple.iTunes:") + name, StringList(String(value)));
}

void setID3(ID3v2::Tag *tag, const htl_gains *g) {
  setTXXX(tag, "REPLAYGAIN_TRACK_GAIN", g->track_gain);
  setTXXX(tag, "REPLAYGAIN_TRACK_PEAK", g->track_peak);
  setTXXX(tag, "REPLAYGAIN_ALBUM_GAIN", g->album_gain);
  setTXXX(tag, "REPLAYGAIN_ALBUM_PEAK", g->album_peak);
}

void setVorbis(Ogg::XiphComment *c, const htl_gains *g) {
  setXiph(c, "REPLAYGAIN_TRACK_GAIN", g->track_gain);
  setXiph(c, "REPLAYGAIN_TRACK_PEAK", g->track_peak);
  setXiph(c, "REPLAYGAIN_ALBUM_GAIN", g->album_gain);
  setXiph(c, "REPLAYGAIN_ALBUM_PEAK", g->album_peak);
}

void setApe(APE::Tag *t, const htl_gains *g) {
  setAPE(t, "REPLAYGAIN_TRACK_GAIN", g->track_gain);
  setAPE(t, "REPLAYGAIN_TRACK_PEAK", g->track_peak);
  setAPE(t, "REPLAYGAIN_ALBUM_GAIN", g->album_gain);
  setAPE(t, "REPLAYGAIN_ALBUM_PEAK", g->album_peak);
}

}  // namespace

extern "C" const char *htl_write_gains(const char *path, const htl_gains *g) {
  FileRef ref(path, false);
  if (ref.isNull() || !ref.file()->isValid()) return "TagLib cannot read it";
  File *file = ref.file();
  if (file->readOnly()) return "it cannot be written";
  if (auto *f = dynamic_cast<MPEG::File *>(file)) {
    // In the ID3v2 tag, of the version the file has (2.3 stays 2.3), and no other tag touched:
    // no ID3v1 or APE tag made or dropped.
    int version = f->hasID3v2Tag() ? f->ID3v2Tag()->header()->majorVersion() : 4;
    setID3(f->ID3v2Tag(true), g);
    return f->save(MPEG::File::ID3v2, File::StripNone, version == 3 ? ID3v2::v3 : ID3v2::v4,
                   File::DoNotDuplicate)
               ? nullptr
               : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<FLAC::File *>(file)) {
    setVorbis(f->xiphComment(true), g);
    return f->save() ? nullptr : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<Ogg::Opus::File *>(file)) {
    // Opus's own (RFC 7845): whole 1/256 dB to -23 LUFS; REPLAYGAIN_ tags are not Opus's.
    Ogg::XiphComment *c = f->tag();
    c->addField("R128_TRACK_GAIN", String::number(g->opus_track_q78), true);
    if (g->has_opus_album) c->addField("R128_ALBUM_GAIN", String::number(g->opus_album_q78), true);
    return f->save() ? nullptr : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<Ogg::Vorbis::File *>(file)) {
    setVorbis(f->tag(), g);
    return f->save() ? nullptr : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<Ogg::FLAC::File *>(file)) {
    setVorbis(f->tag(), g);
    return f->save() ? nullptr : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<MP4::File *>(file)) {
    MP4::Tag *t = f->tag();
    if (!t) return "its MP4 tags cannot be read";
    setMP4(t, "replaygain_track_gain", g->track_gain);
    setMP4(t, "replaygain_track_peak", g->track_peak);
    setMP4(t, "replaygain_album_gain", g->album_gain);
    setMP4(t, "replaygain_album_peak", g->album_peak);
    return f->save() ? nullptr : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<WavPack::File *>(file)) {
    setApe(f->APETag(true), g);
    return f->save() ? nullptr : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<MPC::File *>(file)) {
    setApe(f->APETag(true), g);
    return f->save() ? nullptr : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<APE::File *>(file)) {
    setApe(f->APETag(true), g);
    return f->save() ? nullptr : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<RIFF::WAV::File *>(file)) {
    int version = f->hasID3v2Tag() ? f->ID3v2Tag()->header()->majorVersion() : 4;
    setID3(f->ID3v2Tag(), g);
    // Both tags kept as they are (a WAV's RIFF INFO too); none stripped.
    return f->save(RIFF::WAV::File::AllTags, File::StripNone, version == 3 ? ID3v2::v3 : ID3v2::v4)
               ? nullptr
               : "TagLib could not save it";
  }
  if (auto *f = dynamic_cast<RIFF::AIFF::File *>(file)) {
    setID3(f->tag(), g);
    return f->save() ? nullptr : "TagLib could not save it";
  }
  return "hark does not write ReplayGain tags to this format";
}

extern "C" char *htl_properties(const char *path) {
  FileRef ref(path, false);
  if (ref.isNull() || !ref.file()->isValid()) return nullptr;
  PropertyMap properties = ref.file()->properties();
  std::string out;
  for (const auto &entry : properties) {
    for (const auto &value : entry.second) {
      out += entry.first.to8Bit(true) + "=" + value.to8Bit(true) + "\n";
    }
  }
  for (const auto &key : properties.unsupportedData()) out += "?" + key.to8Bit(true) + "\n";
  return strdup(out.c_str());
}

namespace {

/* An MP4 tag's ReplayGain freeform atoms, as "REPLAYGAIN_…=value" lines. */
std::string mp4Gains(MP4::Tag *tag) {
  std::string out;
  for (const auto &item : tag->itemMap()) {
    std::string name = item.first.to8Bit(true);
    size_t colon = name.rfind(':');
    std::string key = String(colon == std::string::npos ? name : name.substr(colon + 1), String::UTF8).upper().to8Bit(true);
    if (name.rfind("----:", 0) != 0 || key.rfind("REPLAYGAIN_", 0) != 0) continue;
    StringList values = item.second.toStringList();
    if (!values.isEmpty()) out += key + "=" + values.front().to8Bit(true) + "\n";
  }
  return out;
}

}  // namespace

extern "C" char *htl_mp4_gains(const char *path) {
  MP4::File file(path, false);
  if (!file.isValid() || !file.tag()) return nullptr;
  return strdup(mp4Gains(file.tag()).c_str());
}

extern "C" int htl_read_tags(const char *path, htl_tags *out) {
  *out = htl_tags{};
  // As TagLib's C binding opens a file (taglib_file_new): its properties read, Average.
  FileRef ref(path, true, AudioProperties::Average);
  if (ref.isNull() || !ref.file()->isValid()) return -1;
  static thread_local std::string strings[5];
  if (Tag *tag = ref.tag()) {
    const String fields[] = {tag->title(), tag->artist(), tag->album(), tag->genre()};
    const char **to[] = {&out->title, &out->artist, &out->album, &out->genre};
    for (int i = 0; i < 4; i++) {
      if (fields[i].isEmpty()) continue;
      strings[i] = fields[i].to8Bit(true);
      *to[i] = strings[i].c_str();
    }
    out->year = tag->year();
    out->track = tag->track();
  }
  if (AudioProperties *properties = ref.audioProperties()) out->seconds = properties->lengthInSeconds();
  if (auto *mp4 = dynamic_cast<MP4::File *>(ref.file())) {
    if (mp4->tag()) {
      strings[4] = mp4Gains(mp4->tag());
      if (!strings[4].empty()) out->mp4_gains = strings[4].c_str();
    }
  }
  return 0;
}
