#!/usr/bin/env bash
# What libsndfile cannot read, through FFmpeg in the hark-ffmpeg helper (issue 12): AAC and
# ALAC in .m4a, WavPack and raw AAC play through ALSA's pulse device and are heard, with their
# tags; a folder of them is queued whole; a damaged one is named with its reason and the next
# plays; the helper killed mid-track ends that track, not the player; a FLAC-only run never
# loads FFmpeg.
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
wait_for 5 "a helper running" pgrep -f "hark-ffmpeg.*long.m4a"
pkill -KILL -f "hark-ffmpeg.*long.m4a"
expect_log second "cannot play '$media/long.m4a': FFmpeg crashed on it (signal 9)" 10
expect_log second "playing 'tone' (2/2)" 10
wait_for 10 "the second player done" bash -c "! kill -0 $PID_second 2>/dev/null"
pass "the FFmpeg helper killed mid-track ends that track only"

# --- A FLAC-only run never maps FFmpeg's libraries.
start flac hark play --no-ui --device pulse "$media/tone.flac"
expect_log flac "playing 'tone' (1/1)" 10
maps=$(cat "/proc/$PID_flac/maps")
! grep -q "libavformat\|libavcodec" <<<"$maps" || fail "a FLAC-only player mapped FFmpeg"
! pgrep -f hark-ffmpeg >/dev/null || fail "a FLAC-only player started the FFmpeg helper"
pass "a FLAC-only run maps no FFmpeg library and starts no helper"
