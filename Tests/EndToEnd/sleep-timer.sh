#!/usr/bin/env bash
# The desktop's sleep timer: `hark timer 3s --fade 2` fades out and pauses both hark's headless
# player (through its session) and an mpv playing with mpv-mpris (through MPRIS Pause) on a
# private session bus (dbus-run-session starts it for this script and stops it at the end).
# Each plays a tone to a null sink of its own, recorded: the fade is heard (the level falls
# through the fade's two seconds), then silence; hark says why (the reason `timer`, in
# `hark status --json` and over MPRIS), mpv's volume is put back as it was, and nothing
# resumes. Then a timer cancelled, an end of track, and bad arguments named.
if [ -z "${HARK_E2E_IN_DBUS:-}" ]; then
  HARK_E2E_IN_DBUS=1 exec dbus-run-session -- bash "$0" "$@"
fi
bus=$DBUS_SESSION_BUS_ADDRESS
source "$(dirname "$0")/lib.sh"  # which unsets the bus address, for the other tests' sake
export DBUS_SESSION_BUS_ADDRESS=$bus
source "$(dirname "$0")/tmux.sh"
command -v mpv >/dev/null || fail "no mpv (Debian: apt-get install mpv mpv-mpris)"
[ -e /etc/mpv/scripts/mpris.so ] || fail "no mpv-mpris (/etc/mpv/scripts/mpris.so; Debian: apt-get install mpv-mpris)"

start_pulse
start_recorder other "$E2E_DIR/rec-other.raw"
sox -n -r 44100 -c 2 "$E2E_DIR/a440.wav" synth 30 sine 440 vol 0.5
sox -n -r 44100 -c 2 "$E2E_DIR/e660.wav" synth 30 sine 660 vol 0.5

start player hark play --no-ui --device pulse "$E2E_DIR/a440.wav"
wait_until 10 "hark playing" 'test "$(playback state)" = playing'
# mpv at 80 % on the other sink: its volume must come back as it was.
start mpv mpv --no-video --no-terminal --ao=pulse --audio-device=pulse/other --volume=80 \
  "$E2E_DIR/e660.wav"
wait_until 10 "mpv on the bus, playing" 'test "$(playerctl -p mpv status 2>/dev/null)" = Playing'
wait_until 5 "both heard" \
  'check "$(probe level "$(ago 0.5)" "$(now)") > -20 and $(probe_other level "$(ago 0.5)" "$(now)") > -30"'

hark timer 3s --fade 2 >"$E2E_DIR/timer.out" || fail "hark timer 3s: $(cat "$E2E_DIR/timer.out")"
# When it ends, by the server's clock: the status's time left, from a moment before it was asked
# (what the status takes to start is a few tenths at most, and makes this a little early).
asked=$(now)
t=$(python3 -c "print($asked + $(status_query "s['timer']['remaining']") - 3)")
grep -q "^hark: sleep timer set: ends in 0:03 (at [0-9][0-9]:[0-9][0-9]); then what plays fades out over 2 s and pauses$" \
  "$E2E_DIR/timer.out" || fail "hark timer said: $(cat "$E2E_DIR/timer.out")"
[ "$(status_query "(s['timer']['state'], s['timer']['mode'], s['timer']['seconds'], s['timer']['fade']) == ('running', 'duration', 3, 2) and 0 < s['timer']['remaining'] <= 3")" \
  = True ] || fail "status --json: $(status_query "s['timer']")"
grep -q "^sleep timer: ends in 0:0[0-3] " <<<"$(hark status)" || fail "hark status: $(hark status)"
pass "hark timer 3s: set, in hark status and --json"

wait_until 8 "hark paused by the timer" 'test "$(playback reason)" = timer'
wait_until 4 "mpv paused" 'test "$(playerctl -p mpv status)" = Paused'
[ "$(playback pausedBy)" = timer ] || fail "pausedBy $(playback pausedBy)"
[ "$(playerctl -p hark metadata hark:pauseReason)" = timer ] \
  || fail "MPRIS says $(playerctl -p hark metadata hark:pauseReason)"
expect_log player "hark: paused: the sleep timer ended"
wait_until 3 "the timer ended" 'test "$(status_query "s['"'"'timer'"'"']['"'"'state'"'"']")" = ended'
[ "$(hark timer)" = "sleep timer: ended; it paused 'hark', 'mpv' (they stay paused)" ] \
  || fail "hark timer: $(hark timer)"
pass "hark and mpv paused, saying why (reason timer, hark:pauseReason timer): $(hark timer)"

# What was heard: the full tone until the timer's end at 3 s, falling through the fade, then
# silence. The windows allow for the moments the server, the players and the sound server take
# (a tenth or two each).
at() { python3 -c "print($t + $1)"; }
heard=""
for rec in probe probe_other; do
  before=$($rec level "$(at 1.5)" "$(at 2.8)")
  early=$($rec level "$(at 3.3)" "$(at 3.7)")
  late=$($rec level "$(at 4.2)" "$(at 4.6)")
  echo "$rec: full $before dBFS, fading $early then $late dBFS"
  heard+=" $before -> $early -> $late dBFS;"
  check "$before > -20" || fail "$rec: the tone was not heard before the timer ended ($before dBFS)"
  check "$early < $before - 0.5 and $late < $early - 3 and $late > -80" \
    || fail "$rec: no fade heard: $before, $early, $late dBFS"
  last=$($rec last-sound "$(at 5.8)" "$(now)")
  [ "$last" = none ] || fail "$rec: sound after the pause, until $last s after 5.8 s"
done
pass "the fade is heard on both sinks (hark, mpv:$heard), then silence"

[ "$(playerctl -p mpv volume)" = 0.800000 ] || fail "mpv's volume is $(playerctl -p mpv volume), not 0.8 as before"
pass "mpv's volume put back as it was (0.8)"

# Nothing resumes by itself: a while later both are still paused and nothing is heard.
sleep 1.5
[ "$(playback state)" = paused ] || fail "hark resumed: $(playback state)"
[ "$(playerctl -p mpv status)" = Paused ] || fail "mpv resumed"
[ "$(probe last-sound "$(at 5.8)" "$(now)")$(probe_other last-sound "$(at 5.8)" "$(now)")" = nonenone ] \
  || fail "something was heard after the pause"
pass "nothing resumes by itself"

# Cancelled before its end, nothing happens; cancelled twice, it says so.
hark ctl play >/dev/null
wait_until 5 "hark playing again" 'test "$(playback state)" = playing'
[ "$(hark timer 30m)" != "" ] || fail "hark timer 30m said nothing"
[ "$(hark timer cancel)" = "hark: sleep timer cancelled" ] || fail "cancel: $(hark timer cancel)"
[ "$(hark timer cancel)" = "hark: no sleep timer was running" ] || fail "cancel twice"
[ "$(status_query "s['timer']")" = None ] || fail "cancelled, status has $(status_query "s['timer']")"
[ "$(hark timer)" = "sleep timer: off" ] || fail "hark timer: $(hark timer)"
pass "cancel: off, and said so"

# The interface's key, on the same player (attached to it): z sets 15 min, again 30; the
# now-playing bar counts down; cancelled by `hark timer cancel`, the count goes.
tmux_start 100 30
keys "$HARK_BIN" Enter
expect_screen "a440" 10
keys z
expect_screen "Sleep timer: 15 min"
expect_screen "sleep 14:5"
screen_text | grep -F "sleep 14:5"  # the now-playing bar, for the log
[ "$(status_query "s['timer']['seconds']")" = 900 ] || fail "z set $(status_query "s['timer']")"
keys z
expect_screen "Sleep timer: 30 min"
expect_screen "sleep 29:5"
[ "$(status_query "s['timer']['seconds']")" = 1800 ] || fail "z z set $(status_query "s['timer']")"
hark timer cancel >/dev/null
expect_screen_not "sleep 29:"
keys Q
expect_screen "playing on in the background"
pass "the interface's z sets 15 min, then 30, shown counting down; cancelled, it goes"

# The end of the track: hark's position and duration say when; the pause falls just before it.
hark ctl position 26 >/dev/null
wait_until 3 "near the end" 'position_at_least 26'
# Heard there again (the published rate is 0 until then, and the end is not yet known).
wait_until 3 "playing on from 26 s" 'check "$(playback rate) > 0"'
hark timer end-of-track --fade 1 >"$E2E_DIR/eot.out"
grep -q "at the end of the track (its fade begins in 0:0[1-3] " "$E2E_DIR/eot.out" \
  || fail "end-of-track: $(cat "$E2E_DIR/eot.out")"
wait_until 6 "paused at the end of the track" 'test "$(playback reason)" = timer'
check "$(playback position) > 28.5 and $(playback position) < 30" \
  || fail "paused at $(playback position) s, not just before the end (30 s)"
pass "end-of-track: paused at $(playback position) s of 30"

# Bad input: one line naming it, status 2.
for bad in "abc" "0m" "30h" "5m --fade 90"; do
  # shellcheck disable=SC2086
  if "$HARK_BIN" timer $bad 2>"$E2E_DIR/bad.err"; then fail "hark timer $bad succeeded"; fi
  head -1 "$E2E_DIR/bad.err" | grep -q "^hark: .*\(abc\|0m\|30h\|90\)" \
    || fail "hark timer $bad said: $(cat "$E2E_DIR/bad.err")"
done
pass "bad timers are named: $(hark timer abc 2>&1 | head -1)"
