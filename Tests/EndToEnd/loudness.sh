#!/usr/bin/env bash
# ReplayGain (loudness like the phone's Sound Check), heard on a real sink: two sines of the same
# level, the first tagged REPLAYGAIN_TRACK_GAIN −12 dB (album −6 dB), the second MP3 with an ID3v2
# tag of +3 dB and a peak of 1.0. With replaygain = "track" in the config the first is heard 12 dB
# below the second, which clipping prevention holds at 0 dB; "album" takes the album's −6 dB; "off"
# plays both as they are. The sink's volume (the system's, G3) is never touched. And a FLAC tagged
# by metaflac --add-replay-gain is heard at the gain metaflac computed.
source "$(dirname "$0")/lib.sh"
start_pulse
sox -n --comment "REPLAYGAIN_TRACK_GAIN=-12.00 dB" --comment "REPLAYGAIN_ALBUM_GAIN=-6.00 dB" \
  --comment "REPLAYGAIN_TRACK_PEAK=0.25" -r 44100 -c 2 "$E2E_DIR/tagged.flac" synth 3 sine 440 vol 0.25
sox -n -r 44100 -c 2 "$E2E_DIR/loud.wav" synth 3 sine 880 vol 0.25
ffmpeg -nostdin -v error -i "$E2E_DIR/loud.wav" -c:a libmp3lame -b:a 192k \
  -metadata "REPLAYGAIN_TRACK_GAIN=+3.00 dB" -metadata "REPLAYGAIN_TRACK_PEAK=1.0" "$E2E_DIR/loud.mp3"
mkdir -p "$HOME/.config/hark"
stamp() { while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }
line_time() { grep -F -- "$2" "$1" | head -1 | cut -d' ' -f1; }
sink_volume() { pactl get-sink-volume out | head -1; }
volume_before=$(sink_volume)

# play MODE: plays both with `replaygain = MODE`; sets level1 and level2 (dBFS, the middle
# second of each as heard) and leaves the output in $E2E_DIR/MODE.log.
play() {
  printf 'replaygain = "%s"\n' "$1" >"$HOME/.config/hark/config.toml"
  hark play --no-ui --device pulse "$E2E_DIR/tagged.flac" "$E2E_DIR/loud.mp3" | stamp >"$E2E_DIR/$1.log"
  local t1 t2
  t1=$(line_time "$E2E_DIR/$1.log" "playing 'tagged'")
  t2=$(line_time "$E2E_DIR/$1.log" "playing 'loud'")
  [ -n "$t1" ] && [ -n "$t2" ] || fail "$1: no 'playing' lines: $(cat "$E2E_DIR/$1.log")"
  level1=$(probe level "$(python3 -c "print($t1 + 1)")" "$(python3 -c "print($t1 + 2)")")
  level2=$(probe level "$(python3 -c "print($t2 + 1)")" "$(python3 -c "print($t2 + 2)")")
}

play off
check "abs($level1 - $level2) < 1" || fail "off: the two were heard at $level1 and $level2 dBFS"
grep -q "ReplayGain" "$E2E_DIR/off.log" && fail "off: a gain was applied: $(cat "$E2E_DIR/off.log")"
off1=$level1
pass "replaygain off: both heard as they are ($level1 and $level2 dBFS)"

play track
grep -qF "playing 'tagged' (1/2, ReplayGain -12.0 dB)" "$E2E_DIR/track.log" || fail "track: $(cat "$E2E_DIR/track.log")"
grep -qF "playing 'loud' (2/2, ReplayGain +0.0 dB)" "$E2E_DIR/track.log" || fail "track: clipping prevention: $(cat "$E2E_DIR/track.log")"
drop=$(python3 -c "print(round($off1 - $level1, 2))")
check "abs($drop - 12) < 0.5" || fail "track: the tagged track was lowered by $drop dB, not 12"
check "abs($level2 - $off1) < 1" || fail "track: the +3 dB track clipped or moved: $level2 dBFS (peak 1.0 holds it at 0 dB)"
pass "replaygain track: the −12 dB track is heard ${drop} dB lower; the +3 dB one held at 0 dB by its peak"

play album
drop=$(python3 -c "print(round($off1 - $level1, 2))")
check "abs($drop - 6) < 0.5" || fail "album: the tagged track was lowered by $drop dB, not its album's 6"
pass "replaygain album: the album's −6 dB is heard ($drop dB)"

[ "$(sink_volume)" = "$volume_before" ] || fail "G3: the sink's volume changed: $volume_before → $(sink_volume)"
pass "G3: the gain is the tracks' own; the system volume is untouched"

# Tags as a real tagger writes them: metaflac computes a track's ReplayGain itself; the track
# is heard that many dB from where it is heard with replaygain off.
sox -n -r 44100 -c 2 "$E2E_DIR/real.flac" synth 3 sine 660 vol 0.5
metaflac --add-replay-gain "$E2E_DIR/real.flac"
tagged=$(metaflac --show-tag=REPLAYGAIN_TRACK_GAIN "$E2E_DIR/real.flac" | sed 's/.*=//; s/ dB//')
measure_real() {
  printf 'replaygain = "%s"\n' "$1" >"$HOME/.config/hark/config.toml"
  hark play --no-ui --device pulse "$E2E_DIR/real.flac" | stamp >"$E2E_DIR/real-$1.log"
  local t
  t=$(line_time "$E2E_DIR/real-$1.log" "playing 'real'")
  probe level "$(python3 -c "print($t + 1)")" "$(python3 -c "print($t + 2)")"
}
plain=$(measure_real off)
gained=$(measure_real track)
moved=$(python3 -c "print(round($gained - $plain, 2))")
check "abs($moved - ($tagged)) < 0.5" || fail "metaflac's gain is $tagged dB; the track moved $moved dB"
pass "metaflac's own ReplayGain ($tagged dB) is what is heard ($moved dB)"
