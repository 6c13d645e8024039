#!/usr/bin/env bash
# The simulated apps make real sound through hark's engine, and event sounds obey silent mode (G2)
# while what the user asked for does not. Acceptance scenario 9: silent mode on, hark (playback)
# keeps playing and a game (ambient) is muted. Everything plays through ALSA's pulse device into a
# private PulseAudio daemon and is measured on the sinks' monitors.
source "$(dirname "$0")/lib.sh"
start_pulse
start_recorder other "$E2E_DIR/rec-other.raw"
# No system sound theme: the sounds come from hark's own assets/sounds (the fallback).
export XDG_DATA_DIRS="$E2E_DIR/no-themes" XDG_DATA_HOME="$E2E_DIR/no-themes"
loud() { check "$1 > -40"; }
silent() { check "$1 < -90"; }

# --- A call rings audibly; in silent mode it rings silently (a ring tone is an alert).
hark call --ring 1.5 --talk 0 --device pulse >"$E2E_DIR/call.log"
level=$(probe level "$(ago 1.6)" "$(ago 0.3)")
loud "$level" || fail "the ring tone was not heard: $level dBFS"
pass "hark call rings on the sink ($level dBFS)"

hark silent on >/dev/null
hark call --ring 1.5 --talk 0 --device pulse >"$E2E_DIR/call-silent.log"
grep -q "silently: silent mode is on" "$E2E_DIR/call-silent.log" || fail "the call did not say it rings silently"
level=$(probe level "$(ago 1.6)" "$(ago 0.3)")
silent "$level" || fail "in silent mode the ring tone was heard: $level dBFS"
pass "G2: in silent mode the call rings silently ($level dBFS)"

# --- An alarm the user set rings even in silent mode.
hark simulate alarm --seconds 1.5 --device pulse >"$E2E_DIR/alarm.log"
level=$(probe level "$(ago 1.6)" "$(ago 0.3)")
loud "$level" || fail "the alarm was not heard in silent mode: $level dBFS"
pass "G2: an alarm rings in silent mode ($level dBFS)"

# --- Scenario 9: hark keeps playing, the game is muted; silent mode off, the game is heard.
sox -n -r 44100 -c 2 "$E2E_DIR/steady.wav" synth 30 sine 440 vol 0.5
start player hark play --no-ui --device pulse "$E2E_DIR/steady.wav"
wait_for 10 "hark playing" position_at_least 1
start game env PULSE_SINK=other "$HARK_BIN" simulate game --seconds 30 --device pulse
expect_log game "playing for"
sleep 1.5
music=$(probe level "$(ago 1)" "$(now)")
game=$(probe_other level "$(ago 1)" "$(now)")
loud "$music" || fail "scenario 9: hark was not heard in silent mode: $music dBFS"
silent "$game" || fail "scenario 9: the game was heard in silent mode: $game dBFS"
[ "$(session_field game muted)" = true ] || fail "scenario 9: the server does not say the game is muted"
pass "scenario 9: silent mode on, hark plays ($music dBFS) and the game is muted ($game dBFS)"
hark silent off >/dev/null
expect_log game "silent mode off"
sleep 1
game=$(probe_other level "$(ago 0.8)" "$(now)")
check "$game > -60" || fail "silent mode off, the game is still not heard: $game dBFS"
pass "G2: silent mode off, the game's soundtrack is heard, quieted under the music ($game dBFS)"
kill -INT "$PID_game" "$PID_player"

# --- A navigation prompt speaks (espeak-ng when installed, else a chime) on its sink.
hark simulate nav "Turn left" --device pulse >"$E2E_DIR/nav.log"
level=$(probe level "$(ago 2)" "$(now)")
loud "$level" || fail "the navigation prompt was not heard: $level dBFS ($(cat "$E2E_DIR/nav.log"))"
pass "hark simulate nav is heard ($level dBFS): $(head -1 "$E2E_DIR/nav.log")"

# --- Another music app plays music.
hark simulate music --seconds 1.5 --device pulse >"$E2E_DIR/music.log"
level=$(probe level "$(ago 1.3)" "$(ago 0.3)")
loud "$level" || fail "hark simulate music was not heard: $level dBFS"
pass "hark simulate music is heard ($level dBFS)"
