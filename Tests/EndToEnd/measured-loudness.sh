#!/usr/bin/env bash
# Sound Check for untagged files, end to end: a real scan measures files made by sox and ffmpeg
# in six formats (EBU R128 with libebur128), the figures beside ffmpeg's own ebur128 filter; EBU
# Tech 3341's sine at -23 dBFS reads -23.0 LUFS in stereo and mono; the measured gain is what is
# heard on a PulseAudio null sink; a rescan measures only the file that changed; and 'hark
# library tag-loudness' writes ReplayGain 2.0 tags changing nothing else (the audio's MD5 and
# every other tag the same), after which a scan finds the tags and measures nothing.
source "$(dirname "$0")/lib.sh"
start_pulse
export XDG_CACHE_HOME="$E2E_DIR/cache"
music="$E2E_DIR/music"
mkdir -p "$music/Band/Record" "$music/Other" "$HOME/.config/hark"
printf 'music_dir = "%s"\n' "$music" >"$HOME/.config/hark/config.toml"
# EBU Tech 3341 case 1, in stereo and in mono (heard from both speakers).
sox -n -r 48000 -c 2 -b 24 "$music/Other/tech3341-1.flac" synth 20 sine 1000 gain -23
sox -n -r 48000 -c 1 -b 24 "$music/Other/tech3341-1-mono.flac" synth 20 sine 1000 gain -23
# An album of three, of music-like noise at three levels, and other formats.
for n in 1 2 3; do
  sox -n -r 44100 -c 2 -b 16 "$E2E_DIR/$n.wav" synth 12 pinknoise gain "-$((6 * n + 4))" \
    tremolo 2 40
  ffmpeg -nostdin -v error -i "$E2E_DIR/$n.wav" -metadata artist=Band -metadata album=Record \
    -metadata "title=Track $n" -metadata "track=$n" "$music/Band/Record/0$n.flac"
done
ffmpeg -nostdin -v error -i "$E2E_DIR/1.wav" -c:a libmp3lame -b:a 192k -metadata title=Mp3 "$music/Other/mp3.mp3"
ffmpeg -nostdin -v error -i "$E2E_DIR/2.wav" -c:a libvorbis -metadata title=Vorbis "$music/Other/vorbis.ogg"
ffmpeg -nostdin -v error -i "$E2E_DIR/3.wav" -c:a libopus -b:a 128k -metadata title=Opus "$music/Other/opus.opus"
ffmpeg -nostdin -v error -i "$E2E_DIR/1.wav" -c:a aac -b:a 192k -metadata title=AAC "$music/Other/aac.m4a"
ffmpeg -nostdin -v error -i "$E2E_DIR/2.wav" -c:a wavpack -metadata title=WavPack "$music/Other/wavpack.wv"

hark library scan >"$E2E_DIR/scan.log" 2>&1 || fail "scan: $(cat "$E2E_DIR/scan.log")"
grep -q "measured the loudness of 10 tracks; 1 album gated as one" "$E2E_DIR/scan.log" \
  || fail "scan: $(cat "$E2E_DIR/scan.log")"
hark library loudness >"$E2E_DIR/loudness.txt"

# hark's figures beside ffmpeg's (dual mono, as hark measures mono).
python3 - "$E2E_DIR/loudness.txt" "$E2E_DIR/figures.txt" <<'PY' || fail "figures: $(cat "$E2E_DIR/figures.txt")"
import re, subprocess, sys
rows = {}
for line in open(sys.argv[1]):
    path, what = line.rstrip("\n").split("\t")
    m = re.match(r"([-+]\d+\.\d) LUFS, peak ([-+]\d+\.\d) dBTP", what)
    assert m, line
    rows[path] = (float(m.group(1)), float(m.group(2)))
out, bad = [], []
for path, (lufs, peak) in sorted(rows.items()):
    err = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-i", path, "-af",
                          "ebur128=peak=true:dualmono=true", "-f", "null", "-"],
                         capture_output=True, text=True).stderr
    i = float(re.findall(r"I:\s+(-?\d+\.\d) LUFS", err)[-1])
    tp = float(re.findall(r"Peak:\s+(-?\d+\.\d) dBFS", err)[-1])
    out.append(f"{path.rsplit('/', 1)[1]:22} hark {lufs:6.1f} LUFS {peak:5.1f} dBTP   ffmpeg {i:6.1f} LUFS {tp:5.1f} dBTP")
    if abs(lufs - i) > 0.15:
        bad.append(path)
open(sys.argv[2], "w").write("\n".join(out) + "\n")
for p in ("tech3341-1.flac", "tech3341-1-mono.flac"):
    lufs = next(v[0] for k, v in rows.items() if k.endswith("/" + p))
    if abs(lufs + 23) > 0.1:
        bad.append(p)
sys.exit(1 if bad else 0)
PY
cat "$E2E_DIR/figures.txt"
pass "measured as ffmpeg's ebur128 measures (within 0.15 LU), and Tech 3341's -23 dBFS sine at -23.0 LUFS, stereo and mono"

# Heard: an untagged track, with replaygain = "track", moves by its measured gain.
stamp() { while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }
heard() {
  printf 'music_dir = "%s"\nreplaygain = "%s"\n' "$music" "$1" >"$HOME/.config/hark/config.toml"
  hark play --no-ui --device pulse "$music/Band/Record/01.flac" | stamp >"$E2E_DIR/play-$1.log"
  local t
  t=$(grep -F "playing 'Track 1'" "$E2E_DIR/play-$1.log" | head -1 | cut -d' ' -f1)
  [ -n "$t" ] || fail "no 'playing' line: $(cat "$E2E_DIR/play-$1.log")"
  probe level "$(python3 -c "print($t + 2)")" "$(python3 -c "print($t + 8)")"
}
plain=$(heard off)
gained=$(heard track)
gain=$(grep "/Band/Record/01.flac" "$E2E_DIR/loudness.txt" | sed -E 's/.*, gain ([-+][0-9.]+) dB;.*/\1/')
grep -qF "ReplayGain $gain dB" "$E2E_DIR/play-track.log" 2>/dev/null \
  || grep -q "ReplayGain" "$E2E_DIR/play-track.log" || fail "no gain said: $(cat "$E2E_DIR/play-track.log")"
moved=$(python3 -c "print(round($gained - $plain, 2))")
check "abs($moved - ($gain)) < 0.5" || fail "measured gain $gain dB; heard $moved dB"
pass "an untagged track is heard at its measured gain ($gain dB measured, $moved dB heard)"

# A rescan measures only the file that changed, and gates its album again.
ffmpeg -nostdin -v error -y -i "$E2E_DIR/3.wav" -metadata artist=Band -metadata album=Record \
  -metadata "title=Track 3 (edit)" -metadata track=3 -af volume=6dB "$music/Band/Record/03.flac"
hark library scan >"$E2E_DIR/rescan.log" 2>&1
grep -q "measured the loudness of 1 track; 1 album gated as one" "$E2E_DIR/rescan.log" \
  || fail "rescan: $(cat "$E2E_DIR/rescan.log")"
pass "a rescan measures only the changed file, and gates its album again"

# Written into the files only when asked, changing nothing else.
md5() { ffmpeg -nostdin -v error -i "$1" -map 0:a -f md5 - ; }
# Every tag but the gains, by name (Vorbis comments' names are case-insensitive, and TagLib
# writes them in upper case and in name order), with its value.
tags() {
  ffprobe -v error -show_entries format_tags:stream_tags -of compact "$1" | tr '|' '\n' \
    | grep '^tag:' | grep -vi 'replaygain\|r128' | awk -F= '{ k = tolower($1); sub(/^[^=]*=/, ""); print k "=" $0 }' | sort
}
for f in "$music"/Band/Record/*.flac "$music"/Other/*; do
  md5 "$f" >"$f.md5-before"; tags "$f" >"$f.tags-before"; stat -c %a "$f" >"$f.mode-before"
done
hark library tag-loudness --dry-run "$music" | grep -c "would tag" | grep -qx 10 || fail "dry run"
[ -z "$(ffprobe -v error -show_entries format_tags -of compact "$music/Band/Record/01.flac" | grep -i replaygain)" ] \
  || fail "the dry run wrote"
hark library tag-loudness "$music" >"$E2E_DIR/tag.log" 2>&1 || fail "tag-loudness: $(cat "$E2E_DIR/tag.log")"
grep -q "wrote ReplayGain tags into 10 of 10 files" "$E2E_DIR/tag.log" || fail "$(cat "$E2E_DIR/tag.log")"
for f in "$music"/Band/Record/*.flac "$music"/Other/*.flac "$music"/Other/*.mp3 "$music"/Other/*.ogg "$music"/Other/*.opus "$music"/Other/*.m4a "$music"/Other/*.wv; do
  [ "$(md5 "$f")" = "$(cat "$f.md5-before")" ] || fail "the audio of '$f' changed"
  [ "$(tags "$f")" = "$(cat "$f.tags-before")" ] || fail "other tags of '$f' changed: $(diff <(tags "$f") "$f.tags-before")"
  [ "$(stat -c %a "$f")" = "$(cat "$f.mode-before")" ] || fail "the mode of '$f' changed"
done
ffprobe -v error -show_entries format_tags -of compact "$music/Band/Record/01.flac" | grep -qi 'REPLAYGAIN_ALBUM_GAIN' \
  || fail "no album gain in the FLAC"
hark library scan >"$E2E_DIR/after.log" 2>&1
! grep -q "measured the loudness" "$E2E_DIR/after.log" || fail "measured again: $(cat "$E2E_DIR/after.log")"
grep -qF "tagged: ReplayGain $gain dB" <<<"$(hark library loudness "$music/Band/Record/01.flac")" \
  || fail "the tags read back: $(hark library loudness "$music/Band/Record/01.flac") (measured $gain)"
# Opus keeps its gain as R128_TRACK_GAIN (Q7.8 dB to -23 LUFS: steps of 1/256 dB), read back as
# the same gain but for that step, which can move the second decimal shown (19.527 reads 19.52)
# by one: 0.01 apart at most, compared with room for the binary fraction (19.51 - 19.50 is
# 0.0100000000000016 in a double, and failed a `<= 0.01`).
opus_gain=$(grep "/Other/opus.opus" "$E2E_DIR/loudness.txt" | sed -E 's/.*, gain ([-+][0-9.]+) dB.*/\1/')
opus_read=$(hark library loudness "$music/Other/opus.opus")
opus_tagged=$(sed -nE 's/.*tagged: ReplayGain ([-+][0-9.]+) dB.*/\1/p' <<<"$opus_read")
[ -n "$opus_tagged" ] && check "abs($opus_tagged - ($opus_gain)) <= 0.01 + 1e-9" \
  || fail "Opus: $opus_read (measured $opus_gain)"
if ls -a "$music/Band/Record" "$music/Other" | grep -q '^\.hark-gain'; then fail "a copy was left behind"; fi
pass "tag-loudness wrote ReplayGain 2.0 tags into 10 files in 6 formats; audio, other tags and modes unchanged; read back by a scan"
