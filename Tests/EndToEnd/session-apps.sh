#!/usr/bin/env bash
# Sessions end to end: real hark processes against an autospawned session server.
#  - music A plays; a game launched then picks ambient and mixes (G8, G9): A keeps playing;
#  - music B takes over: A is interrupted, the game keeps playing (it mixes);
#  - a call interrupts B and the game (G11); on hang-up both get ended with shouldResume (G13)
#    and resume (G14, G15); A, still taken over by B, is not resumed by the call;
#  - B exits without notify: A's interruption ends without shouldResume and A stays paused;
#  - a second call dies mid-call: the game, which has no playback controls, resumes anyway (G15).
source "$(dirname "$0")/lib.sh"

start musicA hark simulate music --seconds 30
expect_log musicA "playing for 30 s"
[ -S "$XDG_RUNTIME_DIR/hark/session.sock" ] || fail "the first client did not autospawn a server"
expect_field music active true

start game hark simulate game --seconds 30
expect_log game "other audio is playing: ambient"
expect_field game category '"ambient"'
expect_field game active true
expect_field music active true   # G9: a mixable session interrupts nobody
pass "G8: the game saw other audio and chose ambient; the music kept playing"

start musicB hark simulate music --seconds 6
expect_log musicB "playing for 6 s"
expect_log musicA "interruption began: 'music' took the audio"
expect_log game "secondary audio hint: begin"
log_has game "interruption began" && fail "the game was interrupted by music it mixes with"
[ "$(status_query "[x['active'] for x in s['sessions'] if x['name']=='game'][0]")" = True ] \
  || fail "the game stopped playing when music B started"
pass "G9: music B took over from music A; the game kept playing"

start call hark call --ring 0.5 --talk 1
expect_log musicB "interruption began: call from 'call'"
expect_log game "interruption began: call from 'call'"
status_query "s['sessions']" >/dev/null
[ "$(status_query "sorted(x['name'] for x in s['sessions'] if x['active'])")" = "['call']" ] \
  || fail "during the call something else is active: $(hark status)"
pass "G11: the call interrupted both the music and the game"

expect_log call "hung up" 5
expect_log musicB "interruption ended, should resume"
expect_log game "interruption ended, should resume"
expect_log musicB "resumed"
expect_log game "resumed"
log_has musicA "interruption ended" && fail "music A's interruption ended while music B still held it"
pass "G13/G14/G15: both got ended with shouldResume when the call hung up, and resumed"

wait "$PID_call" || fail "hark call exited with $?"
expect_log musicB "exits" 8
expect_log musicA "interruption ended, should not resume"
expect_log musicA "stays paused"
expect_field music active false
status_query "[x['playback']['pausedBy'] for x in s['sessions'] if x['name']=='music']" | grep -q interruption \
  || fail "music A does not say it was paused by an interruption"
pass "G13: music B's takeover ended music A's interruption without shouldResume; A stays paused"

# The order of what music A printed is the rule itself: began, then ended without resume.
grep -n "interruption" "$E2E_DIR/musicA.log" | head -2 | tr '\n' ' ' | grep -q "began.*should not resume" \
  || fail "music A's events are out of order: $(cat "$E2E_DIR/musicA.log")"
# G15: an app without playback controls (the game) resumes after every interruption, with or
# without shouldResume: a second call killed mid-call ends its interruption without it (the
# interrupter exited), and the game plays again all the same.
start call2 hark call --ring 0.3 --talk 30
expect_log game "interruption began: call from 'call'" 5
wait_until 5 "the game interrupted a second time" '[ "$(grep -c "interruption began" "$E2E_DIR/game.log")" -ge 2 ]'
kill -KILL "$PID_call2"
wait_until 5 "the game's second interruption ended" '[ "$(grep -c "interruption ended" "$E2E_DIR/game.log")" -ge 2 ]'
grep "interruption ended" "$E2E_DIR/game.log" | tail -1 | grep -q "should not resume" \
  || fail "the killed call's interruption ended with shouldResume: $(tail -3 "$E2E_DIR/game.log")"
wait_until 5 "the game resumed without shouldResume" '[ "$(grep -c "^game: resumed" "$E2E_DIR/game.log")" -ge 2 ]'
expect_field game active true
pass "G15: the game resumed after a call that died mid-call (ended without shouldResume)"

kill -INT "$PID_game" "$PID_musicA"
wait "$PID_game" || fail "the game did not exit cleanly on Ctrl-C"
wait "$PID_musicA" || fail "music A did not exit cleanly on Ctrl-C"
pass "simulated apps end cleanly on Ctrl-C"
