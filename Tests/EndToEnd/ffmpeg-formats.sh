#!/usr/bin/env bash
# What libsndfile cannot read, through FFmpeg in the hark-ffmpeg helper: AAC and ALAC in .m4a,
# WavPack and raw AAC play through ALSA's pulse device and are heard, with their tags; a folder of
# them is queued whole; a damaged one is named with its reason and the next plays; the helper killed
# mid-track ends that track, not the player; a FLAC-only run never loads FFmpeg. And a concert
# ripped to one file with its cue sheet plays as its tracks, named, without a gap between them, each
# seekable within itself.
source "$(dirname "$0")/lib.sh"
start_pulse
media="$E2E_DIR/media"
mkdir -p "$media/album"
tone() { ffmpeg -v error -y -f lavfi -i "sine=f=$1:d=$2:r=44100" -ac 2 "${@:3}"; }
tone 440 2 -c:a aac -metadata title="Song in AAC" -metadata artist="Tester" "$media/album/01 aac.m4a"
tone 660 2 -c:a alac "$media/album/02 alac.m4a"
tone 880 2 -c:a wavpack "$media/album/03 wavpack.wv"
tone 550 2 -c:a aac -f adts "$media/album/04 raw.aac"
head -c 20000 /dev/urandom >"$media/damaged.m4a"
tone 330 60 -c:a aac "$media/long.m4a"
sox -n -r 44100 -c 2 "$media/tone.flac" synth 3 sine 300 vol 0.3

# --- A folder of them, queued whole, each heard, tags read.
t0=$(now)
start player hark play --no-ui --device pulse "$media/album" "$media/damaged.m4a" "$media/tone.flac"
expect_log player "playing 'Song in AAC' (1/6)" 10
expect_log player "playing '02 alac' (2/6)" 10
expect_log player "playing '03 wavpack' (3/6)" 10
expect_log player "playing '04 raw' (4/6)" 10
expect_log player "cannot play '$media/damaged.m4a': not an audio file FFmpeg can read" 10
expect_log player "playing 'tone' (6/6)" 10
wait_for 10 "the player done" bash -c "! kill -0 $PID_player 2>/dev/null"
wait "$PID_player" || fail "the player exited $? ($(cat "$E2E_DIR/player.log"))"
# The runs were done by the workers of one hark-ffmpeg --serve, which ended with the player (its
# children too): nothing of FFmpeg's outlives it.
ours() {
  for p in $(pgrep -f hark-ffmpeg); do
    grep -qz "^XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR\$" "/proc/$p/environ" 2>/dev/null && echo "$p"
  done
  return 0
}
none_left() { [ -z "$(ours)" ]; }
wait_for 5 "no hark-ffmpeg of this test left after the player" none_left
# Blocks of 110 Hz steps from 110 Hz: k = 3 (440 Hz, AAC), 5 (ALAC), 7 (WavPack), 4 (raw AAC).
probe blocks "$t0" "$(now)" 110 110 >"$E2E_DIR/blocks.txt"
for k in 3 5 7 4; do
  heard=$(awk -v k="$k" '$1 == k { s += $2 } END { print s + 0 }' "$E2E_DIR/blocks.txt")
  check "$heard >= 1.5" || fail "block $k ($((k * 110 + 110)) Hz) heard for ${heard}s of 2 s: $(cat "$E2E_DIR/blocks.txt")"
done
pass "AAC and ALAC in .m4a, WavPack and raw AAC are queued from a folder, heard and named by their tags"
pass "a damaged .m4a is named with its reason and the queue goes on"

# --- The helper killed mid-track (a crash inside FFmpeg): that track ends with a reason, the
# player goes on with the next one.
start second hark play --no-ui --device pulse "$media/long.m4a" "$media/tone.flac"
expect_log second "playing 'long' (1/2)" 10
# Its helper is a worker of the player's hark-ffmpeg --serve (a fork of it, so named like it):
# the one that has the file open (another may wait idle there, having read its chapters).
decoding() {
  local p found=()
  for p in $(pgrep -P "$(pgrep -P "$PID_second" -f "hark-ffmpeg --serve")"); do
    ls -l "/proc/$p/fd" 2>/dev/null | grep -q "long.m4a" && found+=("$p")
  done
  [ ${#found[@]} -eq 1 ] && echo "${found[0]}"
}
wait_for 5 "a helper running" decoding
kill -KILL "$(decoding)"
expect_log second "cannot play '$media/long.m4a': FFmpeg crashed on it (signal 9)" 10
expect_log second "playing 'tone' (2/2)" 10
wait_for 10 "the second player done" bash -c "! kill -0 $PID_second 2>/dev/null"
pass "the FFmpeg helper killed mid-track ends that track only"

# --- A FLAC-only run never maps FFmpeg's libraries.
start flac hark play --no-ui --device pulse "$media/tone.flac"
expect_log flac "playing 'tone' (1/1)" 10
maps=$(cat "/proc/$PID_flac/maps")
! grep -q "libavformat\|libavcodec" <<<"$maps" || fail "a FLAC-only player mapped FFmpeg"
none_left || fail "a FLAC-only player started the FFmpeg helper"
pass "a FLAC-only run maps no FFmpeg library and starts no helper"
wait_for 10 "the FLAC-only player done" bash -c "! kill -0 $PID_flac 2>/dev/null"

# --- A cue sheet: one FLAC of three 2 s tones (330, 550, 770 Hz), cut into three tracks.
mkdir "$media/live"
for f in 330 550 770; do sox -n -r 44100 -c 2 "$media/live/$f.wav" synth 2 sine $f vol 0.3; done
sox "$media/live/330.wav" "$media/live/550.wav" "$media/live/770.wav" "$media/live/Live.flac"
rm "$media/live/"*.wav
cat >"$media/live/Live.cue" <<'CUE'
PERFORMER "The Band"
TITLE "Live at Home"
FILE "Live.wav" WAVE
  TRACK 01 AUDIO
    TITLE "Opening"
    INDEX 01 00:00:00
  TRACK 02 AUDIO
    TITLE "Middle"
    INDEX 01 00:02:00
  TRACK 03 AUDIO
    TITLE "Encore"
    INDEX 01 00:04:00
CUE
t0=$(now)
start live hark play --no-ui --device pulse "$media/live"
expect_log live "playing 'Opening' (1/3)" 10
expect_log live "playing 'Middle' (2/3)" 10
expect_log live "playing 'Encore' (3/3)" 10
wait_for 10 "the cue sheet played" bash -c "! kill -0 $PID_live 2>/dev/null"
# Gapless between the tracks: no silence longer than 20 ms from the first sound to the last.
first=$(probe first-sound "$t0" "$(now)")
last=$(probe last-sound "$t0" "$(now)")
gap=$(probe longest-silence "$(python3 -c "print($t0 + $first + 0.05)")" "$(python3 -c "print($t0 + $last - 0.05)")")
check "$gap <= 0.02" || fail "a gap of ${gap}s between the cue sheet's tracks"
probe blocks "$t0" "$(now)" 110 110 >"$E2E_DIR/live-blocks.txt"
for k in 2 4 6; do
  heard=$(awk -v k="$k" '$1 == k { s += $2 } END { print s + 0 }' "$E2E_DIR/live-blocks.txt")
  check "$heard >= 1.8" || fail "block $k heard for ${heard}s of 2: $(cat "$E2E_DIR/live-blocks.txt")"
done
pass "a cue sheet plays as its named tracks, every one heard, without a gap (longest ${gap}s)"

# Each track is seekable within itself, and is as long as its stretch of the file (paused
# first, so that the seek is not raced by the track's end).
start live2 hark play --no-ui --device pulse "$media/live/Live.cue#2" "$media/live/Live.cue#3"
expect_log live2 "playing 'Middle' (1/2)" 10
hark ctl pause || fail "pause failed"
wait_until 5 "the track's length published" 'check "$(playback duration) == 2"'
hark ctl position 1.5 || fail "a seek within the cue track failed"
expect_log live2 "at 0:01" 5
t_play=$(now)
hark ctl play || fail "play failed"
expect_log live2 "playing 'Encore' (2/2)" 10
sleep 0.3
# The half second of 'Middle' left after the seek, measured from when it is heard again (a
# window that ran on into 'Encore' once read 578 Hz).
back=$(probe first-sound "$t_play" "$(python3 -c "print($t_play + 2)")")
[ "$back" != none ] || fail "nothing heard after the seek"
f=$(probe freq "$(python3 -c "print($t_play + $back + 0.05)")" "$(python3 -c "print($t_play + $back + 0.3)")")
check "abs($f - 550) < 20" || fail "after the seek within 'Middle', $f Hz was heard, not 550"
wait_for 10 "the second cue run done" bash -c "! kill -0 $PID_live2 2>/dev/null"
pass "a cue track is 2 s long and seeks within itself ($f Hz after the seek)"
