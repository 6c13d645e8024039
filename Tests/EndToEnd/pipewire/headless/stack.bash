# shellcheck shell=bash
# A desktop's PipeWire stack, headless, for the end-to-end tests: a private D-Bus session bus
# (WirePlumber exits without one: "Error acquiring bus address"), PipeWire, WirePlumber (the
# session manager: linking, default nodes, restore-stream) and PipeWire's PulseAudio service
# (`pipewire -c pipewire-pulse.conf`), all in DIR, no systemd. Sourced after lib.sh or alone.
#
#   start_pipewire_stack DIR   DIR/run is $XDG_RUNTIME_DIR (mode 700), DIR/home is $HOME
#                              (lib.sh's own layout when DIR is $E2E_DIR); starts the stack,
#                              adds its pids to E2E_PIDS, exports PULSE_SERVER,
#                              PIPEWIRE_RUNTIME_DIR, PIPEWIRE_REMOTE, DBUS_SESSION_BUS_ADDRESS,
#                              writes $HOME/.asoundrc (`pipewire` and `default` = PipeWire),
#                              creates the null sinks "out" (the default sink) and "other", and
#                              returns once the pulse service answers and WirePlumber has linked
#                              a test stream to "out".
#   stop_pipewire_stack        stops it (WirePlumber's saved state stays in DIR/home), newest
#                              first; start_pipewire_stack DIR again is a server restart.
#   pw_null_sink ARGS...       module-null-sink through the pulse service; prints its index.
#   pw_bluetooth_sink [NAME]   a sink standing for a Bluetooth headset (device.bus=bluetooth,
#                              "Bluetooth headset"), default name bluez_sink.hark_test.
#
# Needs (Debian 12): pipewire pipewire-bin wireplumber libpipewire-0.3-modules
# libspa-0.2-modules dbus-daemon pulseaudio-utils python3, and the ALSA plugin of pipewire-alsa,
# which conflicts with pulseaudio: it is unpacked from the package (`apt-get download`,
# `dpkg-deb -x`), once, into $PW_ALSA_DIR (see pw_alsa_plugin_dir).

PW_STACK_CONF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${PW_ALSA_DIR:=${TMPDIR:-/tmp}/hark-pipewire-alsa-0.3}"
E2E_PIDS=("${E2E_PIDS[@]}")
PW_STACK_PIDS=()

_pw_fail() {
  if declare -F fail >/dev/null; then fail "$*"; fi
  echo "start_pipewire_stack: $*" >&2
  return 1
}

# _pw_wait SECONDS WHAT COMMAND...: polls COMMAND every 50 ms until it succeeds.
_pw_wait() {
  local seconds=$1 what=$2; shift 2
  local deadline
  deadline=$(python3 -c "import time; print(time.monotonic() + $seconds)")
  until "$@" >/dev/null 2>&1; do
    python3 -c "import time,sys; sys.exit(time.monotonic() > $deadline)" \
      || { _pw_fail "timed out after ${seconds}s waiting for: $what (logs in $PW_STACK_DIR)"; return 1; }
    sleep 0.05
  done
}

_pw_bg() { # _pw_bg LOG COMMAND...: starts COMMAND in the background, remembers its pid.
  local log=$1; shift
  "$@" >>"$log" 2>&1 &
  PW_STACK_PIDS+=($!)
  E2E_PIDS+=($!)
}

# The directory holding libasound_module_pcm_pipewire.so and 50-pipewire.conf, from Debian's
# pipewire-alsa package matching the installed pipewire (unpacked once).
pw_alsa_plugin_dir() {
  local lib
  lib=$(find "$PW_ALSA_DIR" -name libasound_module_pcm_pipewire.so 2>/dev/null | head -1)
  if [ -z "$lib" ]; then
    local version tmp
    version=$(dpkg-query -W -f='${Version}' pipewire)
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/pw-alsa-deb.XXXXXX")
    (cd "$tmp" && apt-get download "pipewire-alsa=$version") >"$tmp/log" 2>&1 \
      || { cat "$tmp/log" >&2; rm -rf "$tmp"; _pw_fail "apt-get download pipewire-alsa=$version failed"; return 1; }
    mkdir -p "$PW_ALSA_DIR"
    dpkg-deb -x "$tmp"/pipewire-alsa_*.deb "$PW_ALSA_DIR"
    rm -rf "$tmp"
    lib=$(find "$PW_ALSA_DIR" -name libasound_module_pcm_pipewire.so | head -1)
  fi
  [ -n "$lib" ] || { _pw_fail "no libasound_module_pcm_pipewire.so in $PW_ALSA_DIR"; return 1; }
  dirname "$lib"
}

_pw_write_asoundrc() {
  local libdir confdir
  libdir=$(pw_alsa_plugin_dir) || return 1
  confdir="$PW_ALSA_DIR/usr/share/alsa/alsa.conf.d"
  sed -e "s|@LIBDIR@|$libdir|g" -e "s|@CONFDIR@|$confdir|g" -e "s|@DIR@|$PW_STACK_CONF|g" \
    "$PW_STACK_CONF/asoundrc.in" >"$HOME/.asoundrc"
}

# A test stream (1 s of silence, looped by pw-play's 30 s file) named hark-stack-probe: linked
# once WirePlumber has put links from its ports to a sink's.
_pw_probe_linked() { pw-link -l 2>/dev/null | grep -q '|<- hark-stack-probe:output_'; }

start_pipewire_stack() {
  local dir=${1:?start_pipewire_stack DIR}
  mkdir -p "$dir"
  PW_STACK_DIR=$(cd "$dir" && pwd)
  export XDG_RUNTIME_DIR="$PW_STACK_DIR/run" HOME="$PW_STACK_DIR/home"
  export XDG_STATE_HOME="$HOME/.local/state"
  mkdir -p "$XDG_RUNTIME_DIR" "$HOME"
  chmod 700 "$XDG_RUNTIME_DIR"
  unset XDG_CONFIG_HOME PULSE_RUNTIME_PATH PULSE_SINK PIPEWIRE_NODE PIPEWIRE_PROPS
  export PIPEWIRE_RUNTIME_DIR="$XDG_RUNTIME_DIR" PIPEWIRE_REMOTE=pipewire-0
  export PULSE_SERVER="unix:$XDG_RUNTIME_DIR/pulse/native"
  local logs="$PW_STACK_DIR" t0=$EPOCHREALTIME
  PW_STACK_PIDS=()
  rm -f "$XDG_RUNTIME_DIR/bus"
  _pw_bg "$logs/dbus.log" dbus-daemon --session --nofork --nopidfile \
    --address="unix:path=$XDG_RUNTIME_DIR/bus"
  export DBUS_SESSION_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/bus"
  _pw_write_asoundrc || return 1
  _pw_wait 5 "the D-Bus session bus" test -S "$XDG_RUNTIME_DIR/bus" || return 1
  _pw_bg "$logs/pipewire.log" pipewire
  _pw_wait 5 "PipeWire's socket" test -S "$XDG_RUNTIME_DIR/pipewire-0" || return 1
  _pw_bg "$logs/wireplumber.log" wireplumber
  _pw_bg "$logs/pipewire-pulse.log" pipewire -c "$PW_STACK_CONF/pipewire-pulse.conf"
  _pw_wait 10 "PipeWire's pulse service (pactl info)" pactl info || return 1
  pw_null_sink sink_name=out >/dev/null || return 1
  pw_null_sink sink_name=other >/dev/null || return 1
  _pw_wait 5 "the sinks out and other" _pw_sinks_exist out other || return 1
  pactl set-default-sink out
  _pw_wait 5 "out as the default sink" _pw_default_sink_is out || return 1
  # WirePlumber links a stream: a test stream to out, ended as soon as it is linked.
  [ -f "$PW_STACK_DIR/silence.wav" ] || python3 -c "
import wave; w = wave.open('$PW_STACK_DIR/silence.wav', 'wb')
w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000); w.writeframes(bytes(4 * 48000 * 30))"
  pw-play --target=out -P '{ node.name = hark-stack-probe media.name = hark-stack-probe }' \
    "$PW_STACK_DIR/silence.wav" >>"$logs/probe.log" 2>&1 &
  local probe=$!
  _pw_wait 10 "WirePlumber linking a test stream" _pw_probe_linked || { kill "$probe"; return 1; }
  kill "$probe" 2>/dev/null; wait "$probe" 2>/dev/null || true
  PW_STACK_START_S=$(python3 -c "print(round($EPOCHREALTIME - $t0, 2))")
}

stop_pipewire_stack() {
  local i pid n keep=()
  for ((i = ${#PW_STACK_PIDS[@]} - 1; i >= 0; i--)); do
    pid=${PW_STACK_PIDS[i]}
    kill "$pid" 2>/dev/null || true
    for ((n = 0; n < 100; n++)); do
      kill -0 "$pid" 2>/dev/null || break
      [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = Z ] && break
      sleep 0.05
    done
    wait "$pid" 2>/dev/null || true
  done
  for pid in "${E2E_PIDS[@]}"; do
    [[ " ${PW_STACK_PIDS[*]} " == *" $pid "* ]] || keep+=("$pid")
  done
  E2E_PIDS=("${keep[@]}")
  PW_STACK_PIDS=()
}

_pw_sinks_exist() {
  local s sinks
  sinks=$(pactl list short sinks | cut -f2)
  for s in "$@"; do grep -qx "$s" <<<"$sinks" || return 1; done
}
_pw_default_sink_is() { [ "$(pactl get-default-sink)" = "$1" ]; }

pw_null_sink() { pactl load-module module-null-sink "$@"; }

pw_bluetooth_sink() {
  local name=${1:-bluez_sink.hark_test}
  pw_null_sink "sink_name=$name" \
    "sink_properties='device.description=\"Bluetooth headset\" device.bus=bluetooth'"
}
