#!/usr/bin/env bash
# Issue 10 on PipeWire as desktops run it: PipeWire, WirePlumber (restore-stream remembers a
# stream's mute and volume) and PipeWire's PulseAudio service, started headless here (see
# pipewire/stack.bash), with null sinks for the speakers ("out"), another output ("other")
# and a Bluetooth headset. The scenarios of desktop/scenarios.bash through ALSA's `pulse`
# device (libpulse to PipeWire's pulse service) and through `default` going to PipeWire's own
# ALSA plugin, as on PipeWire desktops: a stream that carries no pid of its own (it is on its
# client), with the role hark gives it through PIPEWIRE_ALSA. hark's session server watches
# through the pulse service either way.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/desktop/scenarios.bash"
source "$(dirname "$0")/pipewire/stack.bash"
STACK=pipewire
generation=0

start_desktop_pipewire() {
  generation=$((generation + 1))
  start_pipewire_stack
  pw_null_sink sink_name=out sink_properties=device.description=Speakers
  pw_null_sink sink_name=other
  wait_for 5 "the speakers sink" sink_exists out
  pactl set-default-sink out
  start_recorders "$generation"
}

restart_sound_server() {
  stop_pipewire_stack
  start_desktop_pipewire
  local t0
  t0=$(now)
  wait_until 2.5 "hark's session server back on the sound server (within its 2 s retry)" \
    'pactl list clients | grep -q "hark session server"'
  echo "$STACK reconnected_after_s=$(python3 -c "print(round($(now) - $t0, 2))")" >>"$E2E_DIR/figures.txt"
}

# Another program's call: pw-play, a native PipeWire client, with PipeWire's name for the role.
phone_stream() { pw-play --media-role=Communication --target=out "$1"; }

start_desktop_pipewire
# hark's session server, watching PipeWire's pulse service; the players below find it running.
start sessionserver hark session-server --persist
wait_until 5 "hark's session server on the sound server" \
  'pactl list clients | grep -q "hark session server"'

unset PLAYER_ENV
run_desktop_scenarios pulse

# `default` is PipeWire's ALSA plugin here, as on PipeWire desktops; libasound2-plugins' hook
# would make it the pulse plugin for a process that sees a pulse server, so the player is not
# told where that is (it needs it not: the session server watches).
PLAYER_ENV=(-u PULSE_SERVER -u PULSE_RUNTIME_PATH)
run_desktop_scenarios default
sed 's/^/figures: /' "$E2E_DIR/figures.txt"
