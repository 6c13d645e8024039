#!/usr/bin/env bash
# The bundled assets that scripts/make-assets synthesises: every file under assets/ decodes with
# libsndfile, to the end, at the format, rate, channel count and length it was made with; its tags
# read back; nothing unexpected is there; the folder stays small; and hark plays the demo music
# from first track to last.
# Needs a C compiler (gcc) and libsndfile1-dev to build a tiny libsndfile client.
source "$(dirname "$0")/lib.sh"
assets="$(cd "$(dirname "$0")/../.." && pwd)/assets"
[ -d "$assets" ] || fail "no assets/ folder; make it with scripts/make-assets"
# Any C compiler does: gcc from Debian, or the clang that comes with the Swift toolchain.
cc=$(command -v gcc || command -v cc || command -v clang) ||
  fail "no C compiler to build the libsndfile checker with (apt-get install gcc)"

# Prints "<format>, <rate> Hz, <channels> ch, <frames> frames|title|artist|album|track number"
# after decoding every frame; notes a header that promised another length; exits 1 on an error.
"$cc" -std=c99 -Wall -o "$E2E_DIR/sfcheck" -x c - -lsndfile <<'C' ||
#include <sndfile.h>
#include <stdio.h>

static const char *format_name(int format) {
  switch (format & (SF_FORMAT_TYPEMASK | SF_FORMAT_SUBMASK)) {
  case SF_FORMAT_WAV | SF_FORMAT_PCM_16: return "WAV 16-bit";
  case SF_FORMAT_FLAC | SF_FORMAT_PCM_16: return "FLAC 16-bit";
  case SF_FORMAT_OGG | SF_FORMAT_VORBIS: return "Ogg Vorbis";
  case SF_FORMAT_OGG | SF_FORMAT_OPUS: return "Ogg Opus";
  case SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III: return "MP3";
  }
  return NULL;
}

static const char *tag(SNDFILE *file, int kind) {
  const char *text = sf_get_string(file, kind);
  return text ? text : "-";
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  SF_INFO info = {0};
  SNDFILE *file = sf_open(argv[1], SFM_READ, &info);
  if (!file) {
    printf("cannot open: %s\n", sf_strerror(NULL));
    return 1;
  }
  static float buffer[8192];
  sf_count_t got, frames = 0;
  while ((got = sf_readf_float(file, buffer, 8192 / info.channels)) > 0) frames += got;
  if (sf_error(file)) {
    printf("decoding stopped after %lld frames: %s\n", (long long)frames, sf_strerror(file));
    return 1;
  }
  const char *name = format_name(info.format);
  if (name) printf("%s", name); else printf("format 0x%08x", info.format);
  printf(", %d Hz, %d ch, %lld frames", info.samplerate, info.channels, (long long)frames);
  if (frames != info.frames) printf(" (the header says %lld)", (long long)info.frames);
  printf("|%s|%s|%s|%s\n", tag(file, SF_STR_TITLE), tag(file, SF_STR_ARTIST),
         tag(file, SF_STR_ALBUM), tag(file, SF_STR_TRACKNUMBER));
  sf_close(file);
  return 0;
}
C
  fail "cannot build the libsndfile checker (needs libsndfile1-dev)"

# What scripts/make-assets makes: file|format|rate|channels|frames|title|track number. Lengths
# are exact: the script makes the same bytes each run. Music is by "hark demo" on the album
# "hark demo tracks"; the sounds are by "hark", on no album.
expected=$(cat <<'EOF'
music/01 Morning Light.flac|FLAC 16-bit|44100|2|973076|Morning Light|1
music/02 Paper Boats.ogg|Ogg Vorbis|48000|2|1555200|Paper Boats|2
music/03 Lanterns.mp3|MP3|44100|2|1385668|Lanterns|3
music/04 Tin Robot Waltz.wav|WAV 16-bit|22050|1|452025|Tin Robot Waltz|4
music/05 Night Train.opus|Ogg Opus|48000|2|1481142|Night Train|5
sounds/phone-incoming-call.oga|Ogg Vorbis|48000|2|144000|Incoming call|-
sounds/alarm-clock-elapsed.oga|Ogg Vorbis|48000|2|96000|Alarm|-
sounds/message-new-instant.oga|Ogg Vorbis|48000|2|43200|New message|-
sounds/device-added.oga|Ogg Vorbis|48000|2|14400|Device added|-
sounds/device-removed.oga|Ogg Vorbis|48000|2|14400|Device removed|-
sounds/bell.oga|Ogg Vorbis|48000|2|38400|Bell|-
sounds/audio-volume-change.oga|Ogg Vorbis|48000|2|2880|Volume change|-
EOF
)

checked=0
while IFS='|' read -r file format rate channels frames title track; do
  case $file in
    music/*) by="hark demo|hark demo tracks" ;;
    *) by="hark|-" ;;
  esac
  want="$format, $rate Hz, $channels ch, $frames frames|$title|$by|$track"
  [ -f "$assets/$file" ] || fail "assets/$file is missing; run scripts/make-assets"
  # libmpg123 writes its complaints to stderr; any of them is a failure too.
  got=$("$E2E_DIR/sfcheck" "$assets/$file" 2>&1) || fail "assets/$file: $got"
  [ "$got" = "$want" ] || fail "assets/$file: expected '$want', libsndfile reads '$got'"
  checked=$((checked + 1))
done <<<"$expected"
pass "all $checked files decode to the end with the expected format, length and tags"

# Anything else in assets/ (besides its README) is an asset nobody checks.
while IFS= read -r path; do
  file=${path#"$assets"/}
  [ "$file" = README.md ] && continue
  grep -qF -- "$file|" <<<"$expected" || fail "assets/$file is not made by scripts/make-assets"
done < <(find "$assets" -type f)
bytes=$(find "$assets" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
[ "$bytes" -le 3145728 ] || fail "assets/ holds $bytes bytes; keep it under 3 MiB"
pass "nothing else is in assets/, and it holds $bytes bytes"

# The quick start's music: the null device plays unpaced, so the whole folder takes a moment.
# hark exits 0 even when some (not all) tracks fail, so its output must be quiet too: nothing but
# the "playing" lines it prints when a track is under way at one of its ticks, and the end.
status=0
timeout 60 "$HARK_BIN" play --no-ui --device null "$assets/music" >"$E2E_DIR/play.log" 2>&1 ||
  status=$?
[ $status -eq 0 ] || fail "'hark play --no-ui --device null assets/music' exited $status"
quiet='^hark: (playing .*|end of the queue)$'
if grep -vE "$quiet" "$E2E_DIR/play.log" | grep -q .; then
  fail "hark play complained: $(grep -vE "$quiet" "$E2E_DIR/play.log")"
fi
[ "$(tail -1 "$E2E_DIR/play.log")" = "hark: end of the queue" ] || fail "it did not say the queue ended"
pass "hark play --no-ui --device null assets/music plays the folder and exits 0, quietly"
