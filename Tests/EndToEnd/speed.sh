#!/usr/bin/env bash
# Speed, the pitch kept, as a phone's podcast app plays a long recording: a podcast's speed is
# its own (set once, with `hark ctl rate`, it is kept in the library index for the show's
# folder and its next episode starts at it, in a player started afresh), a 3-minute spoken-word
# file at 2× takes 90 s ± 1 s and its voice stays at the same pitch (the fundamental of a
# speech-like buzz, measured on the sink's recording), the position, the length shown and
# MPRIS's Position stay in the file's own time, and MPRIS's Rate is the speed heard, settable
# within its truthful MinimumRate and MaximumRate. Music in the same queue plays at 1×.
if [ -z "${HARK_E2E_IN_DBUS:-}" ]; then
  HARK_E2E_IN_DBUS=1 exec dbus-run-session -- bash "$0" "$@"
fi
bus=$DBUS_SESSION_BUS_ADDRESS
source "$(dirname "$0")/lib.sh"  # which unsets the bus address, for the other tests' sake
export DBUS_SESSION_BUS_ADDRESS=$bus
start_pulse
show="$E2E_DIR/podcasts/Lectures"
mkdir -p "$show" "$E2E_DIR/music"
# Speech-like: a 140 Hz glottal buzz (a sawtooth, its harmonics to 3 kHz), in syllables (4 Hz).
speech() {
  sox -n --comment "GENRE=Podcast" -r 44100 -c 2 "$1" synth "$2" sawtooth 140 \
    lowpass 3000 tremolo 4 90 vol 0.4 2>/dev/null
}
speech "$show/01 Trailer.flac" 6
speech "$show/02 Lecture.flac" 180
sox -n -r 44100 -c 2 "$E2E_DIR/music/song.flac" synth 3 sine 440 vol 0.4
f0() { probe fundamental "$1" "$2" 80 400; }
mpris() {
  dbus-send --session --print-reply --dest=org.mpris.MediaPlayer2.hark /org/mpris/MediaPlayer2 \
    "org.freedesktop.DBus.Properties.$1" string:org.mpris.MediaPlayer2.Player "${@:2}"
}
mpris_get() { mpris Get "string:$1" | awk '/double|int64/ {print $NF}'; }
has_name() { playerctl -l 2>/dev/null | grep -qx hark; }

# The trailer: its speed set with hark ctl, and kept for the show.
start player hark play --no-ui --device pulse "$show/01 Trailer.flac"
wait_for 10 "the MPRIS name" has_name
wait_for 10 "the trailer playing" position_at_least 0.5
[ "$(mpris_get MinimumRate)" = 0.5 ] && [ "$(mpris_get MaximumRate)" = 3 ] \
  || fail "MPRIS's rates: $(mpris_get MinimumRate) to $(mpris_get MaximumRate), not 0.5 to 3"
hark ctl rate 1.5
wait_until 3 "Rate 1.5 over MPRIS" 'test "$(mpris_get Rate)" = 1.5'
mpris Set string:Rate variant:double:2 >/dev/null
wait_until 3 "Rate 2 over MPRIS" 'test "$(mpris_get Rate)" = 2'
wait_until 3 "hark status says 2x" 'check "$(playback rate) == 2"'
hark ctl rate 4 2>"$E2E_DIR/bad.txt" && fail "hark ctl rate 4 was taken"
grep -q "speed '4' is too fast; 3× is the fastest" "$E2E_DIR/bad.txt" \
  || fail "hark ctl rate 4 said: $(cat "$E2E_DIR/bad.txt")"
mpris Set string:Rate variant:double:0 2>/dev/null && fail "MPRIS Rate 0 was taken"
pass "hark ctl rate and MPRIS's Rate set the speed; 4 and 0 are refused with the reason"
kill "$PID_player"
wait_until 5 "the player gone" '! alive "$PID_player"'

# The lecture, in a player started afresh: at the show's 2× from its start; its 180 s take
# 90 s. Then a song, at music's 1×.
start player hark play --no-ui --device pulse "$show/02 Lecture.flac"
t_start=$(now)
wait_for 10 "the MPRIS name" has_name
wait_until 5 "the lecture at 2x" 'check "$(playback rate) == 2"'
check "$(playback duration) == 180" || fail "the length shown is $(playback duration), not the file's 180 s"
# Twenty seconds of the file in, about ten heard: the position in hark status and in MPRIS's
# Position is the file's.
wait_for 15 "twenty seconds of the lecture" position_at_least 20
t_mid=$(now)
first=$(probe first-sound "$t_start" "$t_mid")
[ "$first" != none ] || fail "nothing heard"
t_first=$(python3 -c "print($t_start + $first)")
shown=$(playback position)
mpris_pos=$(mpris_get Position)
check "abs($shown - 2 * ($t_mid - $t_first)) < 1" \
  || fail "$(python3 -c "print(round($t_mid - $t_first, 2))") s heard at 2×, the position says $shown s"
check "abs($mpris_pos / 1e6 - $shown) < 1" || fail "MPRIS's Position $mpris_pos, hark's $shown s"
pass "the position is the file's: ${shown} s after $(python3 -c "print(round($t_mid - $t_first, 1))") s at 2× (MPRIS: $mpris_pos µs)"

pitch=$(f0 "$(python3 -c "print($t_mid - 2)")" "$(python3 -c "print($t_mid - 1.9)")")
check "abs($pitch - 140) <= 2.8" || fail "the voice's fundamental is $pitch Hz at 2×, not 140 Hz"
pass "at 2× the voice stays at its pitch: ${pitch} Hz (140 Hz recorded)"

wait_until 100 "the lecture's end" 'test "$(playback state)" != playing'
last=$(probe last-sound "$t_first" "$(now)")
took=$(python3 -c "print(round($last, 2))")
check "abs($took - 90) <= 1" || fail "180 s at 2× took ${took} s, not 90 ± 1"
pass "180 s of speech at 2× took ${took} s"

# The lecture was the queue: its player ended with it. A song, in a player of its own.
wait_until 5 "the lecture's player gone" '! alive "$PID_player"'
start song hark play --no-ui --device pulse "$E2E_DIR/music/song.flac"
wait_until 5 "the song" 'test "$(playback title)" = song && test "$(playback state)" = playing'
# The published rate is 0 until the song's first frames are heard (as after any start).
wait_until 3 "the song at 1×, music's own" 'check "$(playback rate) == 1"'
pass "music after the podcast plays at 1×"
