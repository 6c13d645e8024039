#!/usr/bin/env bash
# G17–G19 and acceptance scenario 7 through MPRIS: the real playerctl drives the real headless
# player on a private session bus (dbus-run-session starts it for this script and stops it at
# the end). At the last track CanGoNext is false and `playerctl next` changes nothing; Play after
# Stop starts the track again, and the bus name stays with the app that played until another
# app plays (G18).
if [ -z "${HARK_E2E_IN_DBUS:-}" ]; then
  HARK_E2E_IN_DBUS=1 exec dbus-run-session -- bash "$0" "$@"
fi
bus=$DBUS_SESSION_BUS_ADDRESS
source "$(dirname "$0")/lib.sh"  # which unsets the bus address, for the other tests' sake
export DBUS_SESSION_BUS_ADDRESS=$bus
start_pulse
for n in 1 2 3; do
  sox -n -r 44100 -c 2 "$E2E_DIR/track$n.wav" synth 30 sine $((300 * n)) vol 0.5
done
sox "$E2E_DIR/track1.wav" "$E2E_DIR/tagged.flac"
pc() { playerctl -p hark "$@"; }
has_name() { playerctl -l 2>/dev/null | grep -qx hark; }

start player hark play --no-ui --device pulse "$E2E_DIR/track1.wav" "$E2E_DIR/track2.wav" "$E2E_DIR/track3.wav"
wait_for 10 "the MPRIS name" has_name
wait_until 5 "Playing over MPRIS" 'test "$(pc status)" = Playing'
[ "$(pc metadata xesam:title)" = track1 ] || fail "title over MPRIS: $(pc metadata xesam:title)"
[ "$(pc metadata xesam:url)" = "file://$E2E_DIR/track1.wav" ] || fail "url: $(pc metadata xesam:url)"
[ "$(pc metadata mpris:length)" = 30000000 ] || fail "length: $(pc metadata mpris:length)"
pass "playerctl sees hark: Playing 'track1', 30 s, its file's URL"

pc play-pause
wait_until 3 "Paused" 'test "$(pc status)" = Paused'
[ "$(playback pausedBy)" = user ] || fail "play-pause over MPRIS: pausedBy $(playback pausedBy)"
pc play-pause
wait_until 3 "Playing" 'test "$(pc status)" = Playing'
pass "scenario 7: playerctl play-pause pauses and plays"

pc position 12
wait_until 3 "position 12" 'check "$(pc position) >= 12 and $(pc position) < 13.5"'
pc position 5-
wait_until 3 "position 7" 'check "$(pc position) >= 7 and $(pc position) < 8.5"'
pass "scenario 7: playerctl position 12, then 5- ($(pc position) s)"

pc next
wait_until 3 "track2" 'test "$(pc metadata xesam:title)" = track2'
pc next
wait_until 3 "track3" 'test "$(pc metadata xesam:title)" = track3'
can_next=$(dbus-send --session --print-reply=literal --dest=org.mpris.MediaPlayer2.hark \
  /org/mpris/MediaPlayer2 org.freedesktop.DBus.Properties.Get \
  string:org.mpris.MediaPlayer2.Player string:CanGoNext | awk '{print $NF}')
[ "$can_next" = false ] || fail "scenario 7: CanGoNext at the last track is $can_next"
pc next || true
# Past playerctl's own check: the method itself, straight over the bus, must change nothing.
dbus-send --session --dest=org.mpris.MediaPlayer2.hark /org/mpris/MediaPlayer2 \
  org.mpris.MediaPlayer2.Player.Next
sleep 0.5
[ "$(pc metadata xesam:title)" = track3 ] || fail "scenario 7: next at the last track went to $(pc metadata xesam:title)"
[ "$(pc status)" = Playing ] || fail "scenario 7: next at the last track made hark $(pc status)"
pass "scenario 7: at the last track CanGoNext is false and next changes nothing (G19)"

pc position 10
pc previous
wait_until 3 "back to 0 in track3" 'check "$(pc position) < 2"'
[ "$(pc metadata xesam:title)" = track3 ] || fail "previous after 3 s did not restart the track"
pc previous
wait_until 3 "track2" 'test "$(pc metadata xesam:title)" = track2'
pass "scenario 7: previous restarts the track past 3 s, else goes back"

pc volume 0.5 || true
pc shuffle On
wait_until 3 "shuffle" 'test "$(pc shuffle)" = On'
pc loop Playlist
wait_until 3 "loop" 'test "$(pc loop)" = Playlist'
pass "shuffle and loop follow playerctl"

# Stop, then Play: MPRIS says Play after Stop starts the track again, and the app that played
# stays the now-playing app until another plays (G18 as the phone does it): the name stays, and
# every source of Play reaches it.
pc position 9
pc stop
wait_until 3 "Stopped" 'test "$(pc status)" = Stopped'
[ "$(playback state)" = stopped ] || fail "after Stop: $(hark status)"
[ "$(playback pausedBy)" = user ] || fail "after Stop, the reason is $(playback pausedBy)"
[ "$(playback reason)" = user ] || fail "after Stop, status --json says $(playback reason)"
[ "$(pc metadata hark:pauseReason)" = user ] \
  || fail "after Stop, MPRIS says $(pc metadata hark:pauseReason)"
# Held for a second: anything that would take the name away (the server's word, the bridge's
# eligibility) follows the stop within milliseconds.
for _ in $(seq 20); do
  has_name || fail "G18: stopped, hark gave up its MPRIS name"
  sleep 0.05
done
[ "$(status_query "next(x['name'] for x in s['sessions'] if x['nowPlaying'])")" = hark ] \
  || fail "G18: stopped, hark is no longer the now-playing app: $(hark status)"
pc play
wait_until 3 "Playing after Stop" 'test "$(pc status)" = Playing'
[ "$(pc metadata xesam:title)" = track2 ] || fail "Play after Stop played $(pc metadata xesam:title)"
check "$(pc position) < 2" || fail "Play after Stop went on from $(pc position) s, not the start"
pc stop
wait_until 3 "Stopped again" 'test "$(pc status)" = Stopped'
hark ctl play || fail "hark ctl play after Stop failed"
wait_until 3 "Playing after hark ctl play" 'test "$(pc status)" = Playing'
pass "Stop then Play (playerctl, hark ctl) plays the track from its start; the name stays (G18)"
# An alarm: the reason for the pause is the alarm, in hark status --json and over MPRIS.
start alarm hark simulate alarm --seconds 1.5 --device pulse
wait_until 5 "paused for the alarm" 'test "$(playback reason)" = alarm'
[ "$(pc metadata hark:pauseReason)" = alarm ] \
  || fail "for the alarm, MPRIS says $(pc metadata hark:pauseReason)"
wait_until 5 "playing after the alarm" 'test "$(pc status)" = Playing'
[ -z "$(pc metadata hark:pauseReason 2>/dev/null)" ] || fail "playing, MPRIS still gives a reason"
pass "the reason for a pause (user, alarm) in hark status --json and hark:pauseReason over MPRIS"
# Another app plays: it is the now-playing app, and hark, stopped, gives up its name.
pc stop
wait_until 3 "Stopped" 'test "$(pc status)" = Stopped'
start music hark simulate music --seconds 30 --device pulse
wait_for 5 "the name released once another app plays (G18)" \
  bash -c "! playerctl -l 2>/dev/null | grep -qx hark"
pass "G18: stopped, hark gives up its MPRIS name when another app plays"
kill "$PID_music"
kill -TERM "$PID_player"; wait "$PID_player" || true

# Without a session bus hark plays on, and says so in its log, not on screen.
env -u DBUS_SESSION_BUS_ADDRESS "$HARK_BIN" play --no-ui --device null "$E2E_DIR/tagged.flac" \
  >"$E2E_DIR/nobus.log" 2>&1 || fail "without a bus: $(cat "$E2E_DIR/nobus.log")"
! grep -qi "mpris\|d-bus" "$E2E_DIR/nobus.log" || fail "without a bus it said on screen: $(cat "$E2E_DIR/nobus.log")"
grep -q "no MPRIS" "$XDG_STATE_HOME/hark/hark.log" || fail "without a bus nothing was logged"
pass "without a session bus hark plays on and logs it once: $(grep -o 'no MPRIS.*' "$XDG_STATE_HOME/hark/hark.log" | head -1)"
