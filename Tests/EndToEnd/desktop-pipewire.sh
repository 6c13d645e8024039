#!/usr/bin/env bash
# hark's manners on PipeWire as desktops run it: PipeWire, WirePlumber (restore-stream
# remembers a stream's mute and volume) and PipeWire's PulseAudio service, started headless here
# (see pipewire/stack.bash), with null sinks for the speakers ("out"), another output ("other")
# and a Bluetooth headset. The scenarios of desktop/scenarios.bash through ALSA's `pulse`
# device (libpulse to PipeWire's pulse service) and through `default` going to PipeWire's own
# ALSA plugin, as on PipeWire desktops: a stream that carries no pid of its own (it is on its
# client), with the role hark gives it through PIPEWIRE_ALSA. hark's session server watches
# through the pulse service either way.
#
# Which desktop, from the environment (scripts/test runs each):
#   HARK_DESKTOP_STACK    a PipeWire/WirePlumber stack built by scripts/desktop-stacks (a
#                         DIRECTORY its `list` prints); unset: Debian's own 0.3.65/0.4.13
#   HARK_DESKTOP_POLICY   default: WirePlumber's own settings (on 0.5.11+, pause-playback: MPRIS
#                         Pause to the players whose sink went); roles: its role policy
#                         (media-role-nodes) on top, with the role scenarios (WirePlumber 0.5)
#   HARK_DESKTOP_DEVICES  the ALSA devices hark plays through (default: "pulse default")
#   HARK_DESKTOP_CYCLES   how many times the G5 cycle runs on each device (default 10)
#   HARK_DESKTOP_SCENARIOS  which groups of desktop/scenarios.bash run (default: all of
#                         "basic muted-app cycles headset-call", and "roles" with the role
#                         policy)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/desktop/scenarios.bash"
source "$(dirname "$0")/pipewire/stack.bash"
[ -z "${HARK_DESKTOP_STACK:-}" ] || use_desktop_stack "$HARK_DESKTOP_STACK"
POLICY=${HARK_DESKTOP_POLICY:-default}
case "$POLICY" in
  default) ;;
  roles)
    [[ "$PW_WIREPLUMBER_VERSION" == 0.5.* ]] \
      || fail "the role policy leg needs WirePlumber 0.5 (HARK_DESKTOP_STACK), not $PW_STACK_NAME"
    use_role_policy
    ;;
  *) fail "HARK_DESKTOP_POLICY must be 'default' or 'roles', not '$POLICY'" ;;
esac
STACK=${PW_STACK_NAME// /-}
echo "desktop: $PW_STACK_NAME, WirePlumber's $POLICY policy"
generation=0

# The test's sinks, made before WirePlumber starts (see start_pipewire_stack): a session
# priority each, as real devices have (the speakers first), so that WirePlumber 0.5's role
# policy picks them, not a role loopback, as the default.
make_desktop_sinks() {
  pw_null_sink sink_name=out "sink_properties='device.description=Speakers priority.session=1000'"
  pw_null_sink sink_name=other "sink_properties='priority.session=900'"
}

start_desktop_pipewire() {
  generation=$((generation + 1))
  start_pipewire_stack make_desktop_sinks
  wait_for 5 "the speakers sink" sink_exists out
  make_default out
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
phone_stream() { pw-play --media-role=Communication --target="${2:-out}" "$1"; }

start_desktop_pipewire
# hark's session server, watching PipeWire's pulse service; the players below find it running.
SESSION_LOG="$E2E_DIR/sessionserver.log"
HARK_LOG_LEVEL=${HARK_LOG_LEVEL:-debug} "$HARK_BIN" session-server --persist > >(stamp >"$SESSION_LOG") 2>&1 &
E2E_PIDS+=($!)
wait_until 5 "hark's session server on the sound server" \
  'pactl list clients | grep -q "hark session server"'

for device in ${HARK_DESKTOP_DEVICES:-pulse default}; do
  case "$device" in
    pulse) unset PLAYER_ENV ;;
    # `default` is PipeWire's ALSA plugin here, as on PipeWire desktops; libasound2-plugins'
    # hook would make it the pulse plugin for a process that sees a pulse server, so the
    # player is not told where that is (it needs it not: the session server watches).
    default) PLAYER_ENV=(-u PULSE_SERVER -u PULSE_RUNTIME_PATH) ;;
    *) fail "HARK_DESKTOP_DEVICES: no device '$device' here (pulse, default)" ;;
  esac
  for group in ${HARK_DESKTOP_SCENARIOS:-basic muted-app cycles headset-call roles}; do
    case "$group" in
      basic) run_desktop_scenarios "$device" ;;
      muted-app) DEVICE=$device another_music_app_muted ;;
      cycles)
        export DEVICE=$device
        g5_cycles "${HARK_DESKTOP_CYCLES:-10}"
        stop_player
        ;;
      headset-call) DEVICE=$device run_headset_call_scenarios ;;
      roles) [ "$POLICY" != roles ] || DEVICE=$device run_role_scenarios ;;
      *) fail "HARK_DESKTOP_SCENARIOS: no group '$group' (basic, muted-app, cycles, headset-call, roles)" ;;
    esac
  done
done
[ ! -s "$E2E_DIR/figures.txt" ] || sed 's/^/figures: /' "$E2E_DIR/figures.txt"
