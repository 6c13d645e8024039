#!/usr/bin/env bash
# The rules of docs/MANNERS.md through real processes: a crashed call (G14), refusal during a
# call (G10), a navigation prompt ducking (G9, G13), alarm and assistant (G13), silent mode
# (G2), routes (G4–G6).
source "$(dirname "$0")/lib.sh"

# --- G14: a call that crashes mid-call. The music is told, stays paused, and can play again.
start music hark simulate music --seconds 30
expect_field music active true
start call hark call --ring 30
expect_log music "interruption began: call from 'call'"
expect_field music interrupted true

# G10: while the call lasts, another app may not start, and says why.
set +e
out=$("$HARK_BIN" simulate alarm --seconds 1 2>&1); rc=$?
set -e
[ $rc -eq 1 ] || fail "an alarm started during a call (exit $rc)"
grep -q "alarm: cannot start: a call is in progress" <<<"$out" || fail "refusal not explained: $out"
pass "G10: during a call another app's activation is refused with the reason"

{ kill -9 "$PID_call"; wait "$PID_call"; } 2>/dev/null || true
expect_log music "interruption ended, should not resume (the interrupting app exited without ending it)"
expect_log music "stays paused"
expect_field music interrupted false
[ "$(status_query "[x['name'] for x in s['sessions']]")" = "['music']" ] || fail "the dead call is still listed"
pass "G14: a crashed call ends the interruption without resume, telling why"
# G18: nothing else took the listener, so the user's play still reaches the music.
hark ctl play >"$E2E_DIR/ctl.out" 2>&1 || fail "after the crashed call 'hark ctl play' failed: $(cat "$E2E_DIR/ctl.out")"
expect_field music active true
pass "G18: after the crashed call 'hark ctl play' reached the paused music, which plays again"

# --- G9/G13: a navigation prompt ducks the music, which keeps playing, then lifts.
start music2 hark simulate music --seconds 30
wait_for 5 "music2 active" bash -c "\"$HARK_BIN\" status --json | python3 -c 'import json,sys; s=json.load(sys.stdin); sys.exit(0 if [x for x in s[\"sessions\"] if x[\"pid\"]==$PID_music2 and x[\"active\"]] else 1)'"
start nav hark simulate nav "Turn left" --seconds 1.5
expect_log music2 "ducked (another app is speaking)"
log_has music2 "interruption began" && fail "the prompt interrupted the music instead of ducking it"
expect_log nav "done" 5
expect_log music2 "no longer ducked"
pass "G9: a navigation prompt ducks the playing music without interrupting it, and the duck lifts"

# --- G13: an alarm is resumable; a voice assistant is not.
# Each says what it is, and the music hears so (the reason its pause gives).
"$HARK_BIN" simulate alarm --seconds 0.5 >"$E2E_DIR/alarm.log"
expect_log music2 "interruption began: alarm 'alarm'"
expect_log music2 "interruption ended, should resume"
expect_log music2 "resumed"
"$HARK_BIN" simulate assistant --seconds 0.5 >"$E2E_DIR/assistant.log"
expect_log music2 "interruption began: assistant 'assistant'"
expect_log music2 "interruption ended, should not resume"
pass "G13: after an alarm the music resumes; after a voice assistant it stays paused"
hark ctl play >"$E2E_DIR/ctl.out" 2>&1 || fail "after the assistant 'hark ctl play' failed: $(cat "$E2E_DIR/ctl.out")"
wait_for 5 "music2 active again" bash -c "\"$HARK_BIN\" status --json | python3 -c 'import json,sys; s=json.load(sys.stdin); sys.exit(0 if [x for x in s[\"sessions\"] if x[\"pid\"]==$PID_music2 and x[\"active\"]] else 1)'"
pass "G18: after the assistant 'hark ctl play' reached the paused music, which plays again"

# --- G2: silent mode mutes a game (soloAmbient) but never the music (playback).
kill -INT "$PID_music" "$PID_music2"; wait "$PID_music" "$PID_music2" || true
grep -q "silent mode on" <<<"$(hark silent on)"
start game hark simulate game --seconds 30
expect_field game category '"soloAmbient"'
expect_field game muted true
expect_log game "silent mode on (mutes this app)"
start music3 hark simulate music --seconds 30
wait_for 5 "music3 registered" bash -c "\"$HARK_BIN\" status --json | grep -q '\"pid\":$PID_music3'"
[ "$(status_query "[x['muted'] for x in s['sessions'] if x['pid']==$PID_music3][0]")" = False ] \
  || fail "silent mode muted playback"
grep -q "silent mode is on" <<<"$(hark silent)"
hark silent off >/dev/null
expect_log game "silent mode off"
expect_field game muted false
pass "G2: silent mode muted the game and not the music; turning it off unmuted the game"
kill -INT "$PID_game"; wait "$PID_game" || true

# --- G4/G5/G6: simulated routes reach every session as real ones will.
grep -q "output is now Headphones" <<<"$(hark route plug headphones)"
expect_log music3 "route changed: Speakers -> Headphones (newDeviceAvailable)"
grep -q '^\* Headphones (headphones)' <<<"$(hark route list)"
hark route unplug headphones >/dev/null
expect_log music3 "route changed: Headphones -> Speakers (oldDeviceUnavailable)"
expect_log music3 "paused: 'Headphones' went away"
hark route plug bluetooth >/dev/null
hark route select speakers >/dev/null
expect_log music3 "route changed: Bluetooth headset -> Speakers (override)"
set +e
out=$("$HARK_BIN" route select Moon 2>&1); rc=$?
set -e
[ $rc -eq 1 ] && grep -q "no output named 'Moon'; the outputs are: Speakers, Bluetooth headset" <<<"$out" \
  || fail "selecting a missing output: exit $rc: $out"
[ "$(status_query "s['route']['name']")" = Speakers ] || fail "route is not Speakers"
pass "routes: plug (newDeviceAvailable), unplug (oldDeviceUnavailable, the music paused), select (override), bad names"
