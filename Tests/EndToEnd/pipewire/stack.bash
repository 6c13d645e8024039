# shellcheck shell=bash
# A desktop's PipeWire, started headless by a test after lib.sh: PipeWire, WirePlumber (its
# session manager: linking, default nodes, restore-stream) and PipeWire's PulseAudio service,
# all on the test's private $XDG_RUNTIME_DIR, with a private D-Bus session bus. ALSA's
# `default` goes to PipeWire through its ALSA plugin (pipewire-alsa), as on a PipeWire desktop,
# for processes whose $HOME is the test's.
#
# Debian 12's pipewire-alsa package conflicts with pulseaudio, which the other tests need: its
# ALSA plugin is taken from the package without installing it (`apt-get download`, unpacked
# once into $PIPEWIRE_ALSA_DIR). The pulse service runs as `pipewire -c pipewire-pulse.conf`
# (its module is in libpipewire-0.3-modules) on the test's own socket.

PIPEWIRE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${PIPEWIRE_ALSA_DIR:=${TMPDIR:-/tmp}/hark-pipewire-alsa}"

# The ALSA plugin's files, unpacked from Debian's pipewire-alsa package (once per machine).
pipewire_alsa_plugin() {
  local lib
  lib=$(find "$PIPEWIRE_ALSA_DIR" -name libasound_module_pcm_pipewire.so 2>/dev/null | head -1)
  if [ -z "$lib" ]; then
    local download
    download=$(mktemp -d "${TMPDIR:-/tmp}/hark-pw-deb.XXXXXX")
    (cd "$download" && apt-get download pipewire-alsa >/dev/null 2>&1) \
      || { rm -rf "$download"; fail "cannot download Debian's pipewire-alsa package (apt-get download pipewire-alsa)"; }
    mkdir -p "$PIPEWIRE_ALSA_DIR"
    dpkg-deb -x "$download"/pipewire-alsa_*.deb "$PIPEWIRE_ALSA_DIR"
    rm -rf "$download"
    lib=$(find "$PIPEWIRE_ALSA_DIR" -name libasound_module_pcm_pipewire.so | head -1)
  fi
  [ -n "$lib" ] || fail "no libasound_module_pcm_pipewire.so in $PIPEWIRE_ALSA_DIR"
  echo "$lib"
}

# start_pipewire_stack: starts the stack; PW_PIDS holds its pids (PipeWire, WirePlumber, the
# pulse service), also in E2E_PIDS for the cleanup. Exports PULSE_SERVER for pactl, parec and
# hark's libpulse clients, and writes $HOME/.asoundrc.
start_pipewire_stack() {
  if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
    local bus
    bus=$(mktemp -u "$E2E_DIR/bus.XXXXXX")
    dbus-daemon --session --nofork --address="unix:path=$bus" >"$E2E_DIR/dbus.log" 2>&1 &
    E2E_PIDS+=($!)
    export DBUS_SESSION_BUS_ADDRESS="unix:path=$bus"
    wait_for 5 "the D-Bus session bus" test -S "$bus"
  fi
  export PULSE_RUNTIME_PATH="$E2E_DIR/pulse"
  export PULSE_SERVER="unix:$PULSE_RUNTIME_PATH/native"
  mkdir -p "$PULSE_RUNTIME_PATH"
  unset PIPEWIRE_REMOTE PIPEWIRE_RUNTIME_DIR
  PW_PIDS=()
  pipewire >>"$E2E_DIR/pipewire.log" 2>&1 &
  PW_PIDS+=($!)
  E2E_PIDS+=($!)
  wait_for 5 "PipeWire's socket" test -S "$XDG_RUNTIME_DIR/pipewire-0"
  wireplumber >>"$E2E_DIR/wireplumber.log" 2>&1 &
  PW_PIDS+=($!)
  E2E_PIDS+=($!)
  pipewire -c "$PIPEWIRE_DIR/pipewire-pulse.conf" >>"$E2E_DIR/pipewire-pulse.log" 2>&1 &
  PW_PIDS+=($!)
  E2E_PIDS+=($!)
  wait_for 10 "PipeWire's pulse service" pactl info
  local lib ctl
  lib=$(pipewire_alsa_plugin)
  ctl="$(dirname "$lib")/libasound_module_ctl_pipewire.so"
  # As pipewire-alsa's 50-pipewire.conf and 99-pipewire-default.conf make it, but from here.
  cat >"$HOME/.asoundrc" <<EOF
pcm_type.pipewire { lib "$lib" }
ctl_type.pipewire { lib "$ctl" }
pcm.pipewire { type pipewire playback_node "-1" capture_node "-1" hint { show on description "PipeWire Sound Server" } }
ctl.pipewire { type pipewire }
pcm.!default { type pipewire playback_node "-1" capture_node "-1" }
ctl.!default { type pipewire }
EOF
}

# stop_pipewire_stack: stops what start_pipewire_stack started (WirePlumber saves its state).
stop_pipewire_stack() {
  local i pid
  for ((i = ${#PW_PIDS[@]} - 1; i >= 0; i--)); do
    pid=${PW_PIDS[i]}
    kill "$pid" 2>/dev/null || true
    wait_for 10 "the exit of pid $pid" eval '! alive '"$pid"
  done
  PW_PIDS=()
}

# A null sink on PipeWire, through its pulse service (module-null-sink's arguments).
pw_null_sink() { pactl load-module module-null-sink "$@" >/dev/null; }
