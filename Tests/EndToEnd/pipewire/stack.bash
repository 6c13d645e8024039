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
# What runs: Debian's PipeWire and WirePlumber, or a stack use_desktop_stack chose.
# version_of PROGRAM LIBRARY: the version of LIBRARY PROGRAM --version says it runs with.
version_of() { "$1" --version 2>/dev/null | sed -n "s/.*$2 \([0-9.]*\).*/\1/p" | tail -1; }
PW_WIREPLUMBER_VERSION=$(version_of wireplumber libwireplumber)
PW_STACK_NAME="debian pipewire $(version_of pipewire libpipewire) wireplumber $PW_WIREPLUMBER_VERSION"
# More WirePlumber configuration (wireplumber.conf.d/*.conf under it; WirePlumber 0.5 only).
PW_EXTRA_CONF=

# use_desktop_stack DIR: from here on, the PipeWire and WirePlumber built by
# scripts/desktop-stacks in DIR (a WirePlumber prefix; DIR/pipewire-prefix names its
# PipeWire's) run instead of Debian's in /usr, which stay as they are, and so does PipeWire's
# ALSA plugin of that build. Their rpaths point into the build; the library path, module and
# plugin folders make sure that nothing loads Debian's 0.3.65 beside them. Without
# WIREPLUMBER_DATA_DIR and WIREPLUMBER_CONFIG_DIR, WirePlumber 0.5 reads Debian 0.4.13's files
# in /usr/share/wireplumber first ($XDG_DATA_DIRS comes before its own data folder).
use_desktop_stack() {
  local wp=$1 pw
  [ -f "$wp/pipewire-prefix" ] && [ -x "$wp/bin/wireplumber" ] \
    || fail "'$wp' is not a stack built by scripts/desktop-stacks"
  pw=$(cat "$wp/pipewire-prefix")
  export PATH="$wp/bin:$pw/bin:$PATH"
  export LD_LIBRARY_PATH="$wp/lib:$pw/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export SPA_PLUGIN_DIR="$pw/lib/spa-0.2" PIPEWIRE_MODULE_DIR="$pw/lib/pipewire-0.3"
  export WIREPLUMBER_MODULE_DIR="$wp/lib/wireplumber-0.5" WIREPLUMBER_DATA_DIR="$wp/share/wireplumber"
  PW_WP_CONFIG_DIRS="$wp/etc/wireplumber:$wp/share/wireplumber"
  export WIREPLUMBER_CONFIG_DIR="$PW_WP_CONFIG_DIRS"
  PIPEWIRE_ALSA_DIR="$pw/lib/alsa-lib"
  PW_WIREPLUMBER_VERSION=$(cat "$wp/version")
  PW_STACK_NAME="pipewire $(version_of pipewire libpipewire) wireplumber $PW_WIREPLUMBER_VERSION"
}

# wireplumber_conf NAME TEXT: a WirePlumber 0.5 configuration fragment, read at its next start.
wireplumber_conf() {
  [ -n "${PW_WP_CONFIG_DIRS:-}" ] || fail "WirePlumber fragments need a stack from use_desktop_stack"
  PW_EXTRA_CONF="$E2E_DIR/wireplumber-extra"
  mkdir -p "$PW_EXTRA_CONF/wireplumber.conf.d"
  printf '%s\n' "$2" >"$PW_EXTRA_CONF/wireplumber.conf.d/$1.conf"
  export WIREPLUMBER_CONFIG_DIR="$PW_EXTRA_CONF:$PW_WP_CONFIG_DIRS"
}

# use_role_policy: WirePlumber's role-based policy, as desktops that enable it do: its example
# media-role-nodes.conf (a loopback sink per role; Multimedia mixes, Navigation ducks,
# Communication, Assistant and Alert cork what is below them), without its
# node.stream.default-media-role (which would send the recorders' monitor streams through the
# loopbacks too).
use_role_policy() {
  local example
  example=$(find "$(dirname "$WIREPLUMBER_DATA_DIR")" -name media-role-nodes.conf 2>/dev/null | head -1)
  [ -n "$example" ] || example=$(find "$WIREPLUMBER_DATA_DIR/.." -path "*examples*" -name media-role-nodes.conf 2>/dev/null | head -1)
  [ -n "$example" ] || fail "no media-role-nodes.conf example in this WirePlumber's install"
  wireplumber_conf media-role-nodes "$(sed 's/^\( *\)node.stream.default-media-role/\1#node.stream.default-media-role/' "$example")"
}

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

# start_pipewire_stack [MAKE_SINKS]: starts the stack, calling the function MAKE_SINKS (if
# given) once the pulse service answers and before WirePlumber starts; PW_PIDS holds its pids
# (PipeWire, the pulse service, WirePlumber), also in E2E_PIDS for the cleanup. Exports
# PULSE_SERVER for pactl, parec and hark's libpulse clients, and writes $HOME/.asoundrc.
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
  pipewire -c "$PIPEWIRE_DIR/pipewire-pulse.conf" >>"$E2E_DIR/pipewire-pulse.log" 2>&1 &
  PW_PIDS+=($!)
  E2E_PIDS+=($!)
  wait_for 10 "PipeWire's pulse service" pactl info
  # The sinks before WirePlumber: WirePlumber 0.5's role policy, started before them, picked a
  # role loopback as the best target and corked every role stream (see use_role_policy).
  [ -z "${1:-}" ] || "$1"
  wireplumber >>"$E2E_DIR/wireplumber.log" 2>&1 &
  PW_PIDS+=($!)
  E2E_PIDS+=($!)
  # WirePlumber is up once it has made a default sink, as its default-nodes script does.
  wait_for 10 "WirePlumber's default sink" eval 'pactl info | grep -q "^Default Sink: [^@]"'
  # Who set the default sink and the user's choice of it, and when: for a failure's log.
  pw-metadata -m -n default 2>&1 | while IFS= read -r line; do
    printf '%s %s\n' "$EPOCHREALTIME" "$line"
  done >>"$E2E_DIR/metadata.log" &
  E2E_PIDS+=($!)
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

# A null sink on PipeWire, through its pulse service (module-null-sink's arguments; see
# load_module in desktop/scenarios.bash).
pw_null_sink() { load_module module-null-sink "$@" >/dev/null; }
