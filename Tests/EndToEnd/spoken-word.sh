#!/usr/bin/env bash
# Spoken word: a podcast (genre "Podcast") tells the session server it is spoken audio; a navigation
# prompt then pauses it instead of ducking it (words over words are lost), says why, and resumes it
# when the prompt ends, two seconds back so the sentence cut is heard whole. Measured on the sink's
# recording: a sweep whose frequency tells the position.
source "$(dirname "$0")/lib.sh"
start_pulse
other() { env PULSE_SINK=other "$HARK_BIN" "$@"; }
# Rising 100 Hz a second from 200 Hz, tagged as a podcast.
sox -n --comment "GENRE=Podcast" -r 44100 -c 2 "$E2E_DIR/episode.flac" synth 40 sine 200:4200 vol 0.5
freq_at() { probe freq "$(python3 -c "print($1 - 0.05)")" "$(python3 -c "print($1 + 0.05)")"; }
position_of() { python3 -c "print(round(($1 - 200) / 100, 3))"; }
stamp() { while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }
line_time() { grep -F -- "$2" "$1" | head -1 | cut -d' ' -f1; }

start player hark play --no-ui --device pulse "$E2E_DIR/episode.flac"
wait_for 10 "the podcast playing" position_at_least 4
wait_until 5 "the session says spoken audio" 'test "$(session_field hark mode)" = \"spokenAudio\"'
pass "a track whose genre is Podcast makes the session spokenAudio"

(other simulate nav --seconds 2 "Turn left" | stamp >"$E2E_DIR/nav.log") &
E2E_PIDS+=($!)
expect_log nav "speaking" 5
t_nav=$(line_time "$E2E_DIR/nav.log" "speaking")
expect_log player "paused for 'nav'; resumes after" 5
wait_until 3 "paused by the interruption" 'test "$(playback pausedBy)" = interruption'
# Silent within 150 ms of the prompt (whose line is printed after it is active), and silent,
# not ducked, while it speaks.
gone=$(probe last-sound "$(python3 -c "print($t_nav - 1)")" "$(python3 -c "print($t_nav + 1.5)")")
gone=$(python3 -c "print(round($gone - 1, 3))")
check "$gone <= 0.15" || fail "the podcast went on ${gone}s after the prompt began"
heard_before=$(position_of "$(freq_at "$(python3 -c "print($t_nav + $gone - 0.06)")")")
quiet=$(probe level "$(python3 -c "print($t_nav + 0.4)")" "$(python3 -c "print($t_nav + 1.4)")")
check "$quiet < -90" || fail "the podcast was heard under the prompt: $quiet dBFS (ducked, not paused)"
pass "the prompt pauses the podcast ${gone}s after it began and it stays silent under it ($quiet dBFS)"

expect_log nav "done" 5
t_done=$(line_time "$E2E_DIR/nav.log" "done")
wait_until 3 "playing again" 'test "$(playback state)" = playing'
sleep 0.6
back=$(probe first-sound "$t_done" "$(python3 -c "print($t_done + 1.5)")")
[ "$back" != none ] || fail "nothing heard after the prompt ended"
heard_after=$(position_of "$(freq_at "$(python3 -c "print($t_done + $back + 0.06)")")")
step=$(python3 -c "print(round($heard_before + 0.12 - $heard_after, 3))")
check "abs($step - 2) <= 0.25" || fail "paused at ${heard_before}s, resumed at ${heard_after}s (a step of ${step}s, not 2)"
pass "when the prompt ends it resumes ${step}s back (2 s wanted), so the sentence cut is heard whole"
