#!/usr/bin/env bash
# hark's manners on PulseAudio 16 loaded as a desktop loads it: module-stream-restore (which would
# remember a mute under hark's name), module-role-cork, module-switch-on-connect,
# module-always-sink, null sinks for the speakers ("out"), another output ("other") and a
# Bluetooth headset. The scenarios of desktop/scenarios.bash through ALSA's `pulse` device
# (on PulseAudio, `default` is the same plugin), then `hark call` as a call for the other
# programs on the desktop: module-role-cork corks or mutes their music while it lasts. The G5
# cycles (HARK_DESKTOP_CYCLES, default 10) and a call on a Bluetooth headset as well.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/desktop/scenarios.bash"
STACK=pulseaudio
POLICY=default
export PULSE_RUNTIME_PATH="$E2E_DIR/pulse" PULSE_STATE_PATH="$E2E_DIR/pulse-state"
export PULSE_SERVER="unix:$PULSE_RUNTIME_PATH/native"
unset PULSE_SINK
mkdir -p "$PULSE_RUNTIME_PATH" "$PULSE_STATE_PATH"
generation=0

start_desktop_pulse() {
  generation=$((generation + 1))
  pulseaudio -n --daemonize=no --exit-idle-time=-1 --use-pid-file=no \
    -L module-device-restore -L module-stream-restore -L module-card-restore \
    -L module-native-protocol-unix -L module-switch-on-connect -L module-always-sink \
    -L module-role-cork \
    -L "module-null-sink sink_name=out sink_properties=device.description=Speakers" \
    -L "module-null-sink sink_name=other" \
    >>"$E2E_DIR/pulseaudio.log" 2>&1 &
  E2E_PIDS+=($!)
  PULSE_PID=$!
  wait_for 10 "the PulseAudio daemon" pactl info
  make_default out
  start_recorders "$generation"
}

restart_sound_server() {
  kill "$PULSE_PID"
  wait_for 10 "PulseAudio's exit (it saves stream-restore's memory)" eval '! alive "$PULSE_PID"'
  local t0
  start_desktop_pulse
  t0=$(now)  # the new server answers (and is recorded) from here
  # hark's session server looks for it again at most 2 s apart, and logs its loss and return.
  wait_until 2.5 "hark's session server back on the sound server (within its 2 s retry)" \
    'pactl list clients | grep -q "hark session server"'
  echo "$STACK reconnected_after_s=$(python3 -c "print(round($(now) - $t0, 2))")" >>"$E2E_DIR/figures.txt"
  grep -q "lost the sound server" "$SESSION_LOG" \
    || fail "the session server's log does not say the sound server went"
  [ "$(grep -c "sound server 'pulseaudio" "$SESSION_LOG")" -ge 2 ] \
    || fail "the session server's log does not say the sound server came back"
}

phone_stream() { paplay --device="${2:-out}" --property=media.role=phone "$1"; }

start_desktop_pulse
# hark's session server, its log lines stamped (g5_cycles reads when it told the player).
SESSION_LOG="$E2E_DIR/sessionserver.log"
HARK_LOG_LEVEL=${HARK_LOG_LEVEL:-debug} "$HARK_BIN" session-server --persist \
  > >(stamp >"$SESSION_LOG") 2>&1 &
E2E_PIDS+=($!)
wait_until 5 "hark's session server on the sound server" \
  'pactl list clients | grep -q "hark session server"'
run_desktop_scenarios pulse
g5_cycles "${HARK_DESKTOP_CYCLES:-10}"
stop_player
run_headset_call_scenarios

# --- hark call is a call for the other programs too: with module-role-cork, a music-role
# stream of another program on the same output is corked or muted while the call lasts.
paplay --device=out --property=media.role=music "$E2E_DIR/other-music.wav" &
E2E_PIDS+=($!)
PID_music=$!
music_input() { stream_of "$PID_music"; }
music_held() {
  pactl -f json list sink-inputs | python3 -c "
import json, sys
for s in json.load(sys.stdin):
    if str(s['index']) == '$(music_input)':
        sys.exit(0 if s['corked'] or s['mute'] else 1)
sys.exit(1)"
}
wait_until 5 "the other program's music stream" '[ -n "$(music_input)" ]'
music_held && fail "the other program's music is held before any call"
start call hark call --ring 1 --talk 2 --device pulse
wait_until 4 "the other program's music corked or muted by the call" music_held
expect_log call "call: hung up" 8
wait_until 3 "the other program's music back after the call" '! music_held'
pass "$STACK: 'hark call' is a call for other programs: module-role-cork held their music for its length"

DEVICE=pulse another_music_app_muted
[ ! -s "$E2E_DIR/figures.txt" ] || sed 's/^/figures: /' "$E2E_DIR/figures.txt"
