# Shared by the end-to-end scripts: a private XDG_RUNTIME_DIR and HOME, the hark binary, waiting
# with deadlines, and cleanup of every process the test started, even on failure.
# HARK_E2E_KEEP=DIR: the test's folder (its recordings, logs and state) is copied to DIR at the
# end, passed or failed, to read a rare failure from what was heard.
# shellcheck shell=bash
set -euo pipefail

: "${HARK_BIN:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && swift build --show-bin-path)/hark}"
[ -x "$HARK_BIN" ] || { echo "no hark binary at '$HARK_BIN'; run 'swift build' first" >&2; exit 1; }
hark() { "$HARK_BIN" "$@"; }

# PulseAudio's daemon, for the scripts that start one: the installed package's, else one
# unpacked privately (installing the package would remove a PipeWire desktop's pipewire-alsa:
# scripts/private-pulseaudio). Before HOME and XDG_RUNTIME_DIR become the test's.
if PULSEAUDIO_BIN_DIR=$("$(dirname "${BASH_SOURCE[0]}")/../../scripts/private-pulseaudio"); then
  PATH="$PULSEAUDIO_BIN_DIR:$PATH"
fi

E2E_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hark-e2e.XXXXXX")
export XDG_RUNTIME_DIR="$E2E_DIR/run" HOME="$E2E_DIR/home" XDG_STATE_HOME="$E2E_DIR/home/.local/state"
mkdir -m 700 "$XDG_RUNTIME_DIR"
mkdir -p "$HOME"
unset XDG_CONFIG_HOME DBUS_SESSION_BUS_ADDRESS
# ALSA's `default` as a PulseAudio desktop has it (the pulseaudio package's 99-pulse.conf): the
# sound server's. The daemon here may be unpacked rather than installed, and then that file is
# not there and `default` is a sound card this machine may not have. Scripts that need another
# `default` (PipeWire's ALSA plugin, a plug of their own) write their own.
cat >"$HOME/.asoundrc" <<'ASOUND'
pcm.!default { type pulse }
ctl.!default { type pulse }
ASOUND
# Debian's python3 (the one the test packages install): another first on PATH, a pyenv shim
# say, costs 0.2 s a call where Debian's takes 0.02, and the checks and probes make hundreds.
if [ -x /usr/bin/python3 ]; then
  mkdir "$E2E_DIR/bin" && ln -s /usr/bin/python3 "$E2E_DIR/bin/python3"
  export PATH="$E2E_DIR/bin:$PATH"
fi
E2E_PIDS=()
E2E_NAME=$(basename "$0" .sh)

# Starts a command in the background with its output in $E2E_DIR/<name>.log; remembers its pid.
# `hark` is run as the binary itself, not the shell function, so $! is the app's own pid.
start() {
  local name=$1; shift
  [ "$1" = hark ] && set -- "$HARK_BIN" "${@:2}"
  "$@" >"$E2E_DIR/$name.log" 2>&1 &
  E2E_PIDS+=($!)
  eval "PID_$name=$!"
}

# alive PID: the process exists and is not a zombie.
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null | tr -d ' '); [ -n "$st" ] && [ "${st:0:1}" != Z ]; }

# The pid of the player an interface started (and plays on when detached), from its lock.
player_pid() { cat "$XDG_RUNTIME_DIR/hark/player.lock" 2>/dev/null | tr -d '[:space:]'; }

server_pid() { cat "$XDG_RUNTIME_DIR/hark/session.lock" 2>/dev/null | tr -d '[:space:]'; }

# hark_stacks: every thread's stack of each of this test's hark processes (its binary, with this
# test's XDG_RUNTIME_DIR: the lanes run other tests' beside it), by gdb where it is installed.
hark_stacks() {
  command -v gdb >/dev/null || { echo "no gdb: no stacks"; return 0; }
  local pid
  for pid in $(pgrep -f -- "^$HARK_BIN( |\$)" || true); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR" \
      || continue
    echo "=== pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
    timeout 30 gdb -p "$pid" -batch -nx -ex "set pagination off" -ex "thread apply all bt 25" \
      2>&1 | grep -E '^(Thread|#)' || true
  done
}

cleanup() {
  local status=$?
  # A failure that waited on a hark process which never answered (a player that never said it
  # paused) is read from where its threads were: their stacks, before anything is stopped.
  [ $status -eq 0 ] || hark_stacks >"$E2E_DIR/stacks.log" 2>&1 || true
  # Newest first (a recorder goes before the sound server it records from), each gone before
  # the next, and hark's session server last: an app still alive when its server went would
  # start another one (G16), which would outlive the test.
  local i pid n spid
  for ((i = ${#E2E_PIDS[@]} - 1; i >= 0; i--)); do
    pid=${E2E_PIDS[i]}
    kill "$pid" 2>/dev/null || true
    for ((n = 0; n < 40; n++)); do alive "$pid" || break; sleep 0.05; done
  done
  # The interface's players (their own processes, detached from any terminal), by what they
  # serve: this test's runtime folder. Before the session server, as every app is.
  for pid in $(pgrep -f -- "background-player --socket[= ]$XDG_RUNTIME_DIR/" || true); do
    kill "$pid" 2>/dev/null || true
    for ((n = 0; n < 60; n++)); do alive "$pid" || break; sleep 0.05; done
  done
  spid=$(server_pid || true)
  if [ -n "$spid" ]; then
    kill "$spid" 2>/dev/null || true
    # It logs its last lines as it goes; then the folder can go.
    for ((n = 0; n < 40; n++)); do alive "$spid" || break; sleep 0.05; done
  fi
  if [ $status -ne 0 ]; then
    echo "--- $E2E_NAME failed; logs:"
    for f in "$E2E_DIR"/*.log "$XDG_STATE_HOME"/hark/*.log; do
      [ -f "$f" ] && { echo "--- $f"; cat "$f"; }
    done
  fi
  [ -z "${HARK_E2E_KEEP:-}" ] || cp -r "$E2E_DIR" "$HARK_E2E_KEEP" || true
  rm -rf "$E2E_DIR" 2>/dev/null || { sleep 0.3; rm -rf "$E2E_DIR"; } || true
  exit $status
}
trap cleanup EXIT

fail() { echo "FAIL $E2E_NAME: $*" >&2; exit 1; }
pass() { echo "ok   $E2E_NAME: $* (${SECONDS}s)"; }

# start_xvfb: a virtual X server of the test's own, DISPLAY set to it; its screen (1024x768)
# is kept current in $E2E_DIR/fb/Xvfb_screen0 (an XWD file) to be read back (xwd_colour.py).
start_xvfb() {
  mkdir "$E2E_DIR/fb"
  start xvfb Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp -fbdir "$E2E_DIR/fb" \
    3>"$E2E_DIR/display"
  wait_for 10 "the virtual X server" test -s "$E2E_DIR/display"
  export DISPLAY=":$(head -1 "$E2E_DIR/display")"
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls every 50 ms until COMMAND succeeds.
wait_for() {
  local seconds=$1 what=$2; shift 2
  local deadline=$((SECONDS + ${seconds%.*} + 1))
  while ! "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $deadline ] && fail "timed out after ${seconds}s waiting for: $what"
    sleep 0.05
  done
}

# wait_until SECONDS DESCRIPTION 'SHELL CODE': like wait_for, but the code is evaluated afresh
# each time, so that "$(...)" in it is read again (wait_for's arguments are expanded once).
wait_until() { wait_for "$1" "$2" eval "$3"; }

# log_has NAME TEXT: the app's log has a line containing TEXT.
log_has() { grep -qF -- "$2" "$E2E_DIR/$1.log"; }

# expect_log NAME TEXT [SECONDS]
expect_log() { wait_for "${3:-5}" "'$2' in $1's output" log_has "$1" "$2"; }

# status_json PYTHON-EXPR: evaluates EXPR with `s` bound to `hark status --json`, prints it.
status_query() {
  hark status --json | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)"
}

# session NAME FIELD: a field of the session with that name (first match), as JSON.
session_field() {
  status_query "json.dumps(next((x for x in s['sessions'] if x['name']=='$1'), {}).get('$2'))"
}

check_field() { [ "$(session_field "$1" "$2")" = "$3" ]; }

# expect_field NAME FIELD JSON-VALUE [SECONDS]: waits until the session's field has that value.
expect_field() {
  wait_for "${4:-5}" "$1.$2 == $3 in 'hark status --json' (now: $(session_field "$1" "$2"))" \
    check_field "$1" "$2" "$3"
}

# start_pulse: a private PulseAudio daemon with two null sinks ("out", where hark plays, and
# "other"), and a recorder on out's monitor in $E2E_DIR/rec.raw (see audio_probe.py). The
# recorder's low latency also keeps the null sink from running at its 2 s default latency.
# $E2E_OUT_SINK_ARGS: more arguments for "out"'s module-null-sink (clicks.sh: norewinds=1).
PROBE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/audio_probe.py"
# Arguments are more modules to load ("-L 'module-null-sink sink_name=x'").
start_pulse() {
  start_pulse_server "$@"
  start_recorder out "$E2E_DIR/rec.raw"
}

# start_pulse_server: the same daemon and sinks, with nothing recording: with no client asking
# for a low latency, a null sink runs deeply buffered, as a Bluetooth or a timer-scheduled sink
# does.
start_pulse_server() {
  export PULSE_RUNTIME_PATH="$E2E_DIR/pulse" PULSE_STATE_PATH="$E2E_DIR/pulse-state"
  mkdir -p "$PULSE_RUNTIME_PATH" "$PULSE_STATE_PATH"
  pulseaudio -n --daemonize=no --exit-idle-time=-1 --use-pid-file=no \
    -L module-native-protocol-unix -L "module-null-sink sink_name=out ${E2E_OUT_SINK_ARGS:-}" \
    -L "module-null-sink sink_name=other" "$@" >"$E2E_DIR/pulseaudio.log" 2>&1 &
  E2E_PIDS+=($!)
  export PULSE_SERVER="unix:$PULSE_RUNTIME_PATH/native" PULSE_SINK=out
  wait_for 10 "the PulseAudio daemon" pactl info
}

# start_recorder SINK FILE [MS]: records SINK's monitor into FILE (and FILE.t0), at MS ms of
# latency (10 unless told; "default" for parec's own).
start_recorder() {
  RECORDER_STARTED=$EPOCHREALTIME RECORDER_WOKEN=0
  python3 "$PROBE" record "$1.monitor" "$2" "${3:-10}" &
  E2E_PIDS+=($!)
  wait_for 5 "the recorder of $1" recorder_started "$1" "$2" "${3:-10}"
}

# recorder_started SINK FILE MS: FILE's recorder has its first sound. Until then, on PulseAudio,
# the idle SINK is woken once the recorder is on it: a null sink renders in blocks of its
# latency, 2 s while nobody asks for less, and takes up the lower one a new recorder asks for
# only after the block it is in, so the recorder's first sound came 1.6 to 1.9 s after it
# connected (about 35 recorders in CI's timed scripts). Suspended and resumed, the sink starts
# a block at once, at the recorder's latency (70 ms). A sink that plays is left alone, and a
# recorder at the default latency wants the deep buffers (deep-buffers.sh).
recorder_started() {
  [ -s "$2.t0" ] && return 0
  [ "$3" != default ] && [ "$RECORDER_WOKEN" -lt 2 ] || return 1
  local waited_us=$((${EPOCHREALTIME/./} - ${RECORDER_STARTED/./}))
  [ "$waited_us" -gt $((200000 + 500000 * RECORDER_WOKEN)) ] || return 1
  RECORDER_WOKEN=$((RECORDER_WOKEN + 1))
  pactl info 2>/dev/null | grep -qx "Server Name: pulseaudio" || return 1
  [ "$(pactl list short sinks | awk -v s="$1" '$2 == s {print $NF}')" = IDLE ] || return 1
  local monitor
  monitor=$(pactl list short sources | awk -v s="$1.monitor" '$2 == s {print $1}')
  [ -n "$monitor" ] && pactl list short source-outputs | awk -v m="$monitor" '$2 == m {f = 1} END {exit !f}' \
    || return 1
  pactl suspend-sink "$1" 1 && pactl suspend-sink "$1" 0
  return 1
}

now() { echo "$EPOCHREALTIME"; }
# probe COMMAND T1 T2: measures the recording of "out"; probe_other measures "other"'s, once
# `start_recorder other "$E2E_DIR/rec-other.raw"` runs.
probe() { python3 "$PROBE" "$1" "$E2E_DIR/rec.raw" "${@:2}"; }
probe_other() { python3 "$PROBE" "$1" "$E2E_DIR/rec-other.raw" "${@:2}"; }
# ago SECONDS: the wall-clock time that many seconds ago.
ago() { python3 -c "print($(now) - $1)"; }
# Floating-point checks: `check "A <= B"` with python3 doing the arithmetic.
check() { python3 -c "import sys; sys.exit(0 if ($1) else 1)"; }
# playback FIELD: a field of hark's published playback state.
playback() { status_query "next((x['playback'] or {}).get('$1') for x in s['sessions'] if x['name']=='hark')"; }
position_at_least() { check "$(playback position) >= $1"; }
