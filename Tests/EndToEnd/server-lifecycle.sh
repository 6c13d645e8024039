#!/usr/bin/env bash
# The session server's life: refusing a bad $XDG_RUNTIME_DIR, autospawn races ending with one
# server, full detachment, idle exit, --stop, and clients surviving a server crash (G16).
source "$(dirname "$0")/lib.sh"

# --- A clear one-line error when $XDG_RUNTIME_DIR is missing or unusable.
set +e
out=$(env -u XDG_RUNTIME_DIR "$HARK_BIN" status 2>&1); rc=$?
set -e
[ $rc -eq 1 ] || fail "missing XDG_RUNTIME_DIR: exit $rc, expected 1"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "missing XDG_RUNTIME_DIR: more than one line: $out"
grep -q '^hark: $XDG_RUNTIME_DIR is not set' <<<"$out" || fail "unclear error: $out"
set +e
out=$(XDG_RUNTIME_DIR=/etc/passwd "$HARK_BIN" call 2>&1); rc=$?
set -e
[ $rc -eq 1 ] && grep -q "'/etc/passwd' is not a directory" <<<"$out" \
  || fail "a file as XDG_RUNTIME_DIR: exit $rc: $out"
# Where scripts/quickstart put the player's server (no login gave a runtime directory), a
# second terminal is told exactly what to export.
export TMPDIR="$E2E_DIR"
quick="$E2E_DIR/hark-runtime-$(id -u)"
mkdir -m 700 "$quick"
XDG_RUNTIME_DIR="$quick" "$HARK_BIN" status >/dev/null  # autospawns a server there
set +e
out=$(env -u XDG_RUNTIME_DIR "$HARK_BIN" call 2>&1); rc=$?
set -e
XDG_RUNTIME_DIR="$quick" "$HARK_BIN" session-server --stop >/dev/null
[ $rc -eq 1 ] && [ "$out" = "hark: \$XDG_RUNTIME_DIR is not set; hark's session server runs under '$quick': export XDG_RUNTIME_DIR=$quick" ] \
  || fail "no XDG_RUNTIME_DIR, a server under $quick: exit $rc: $out"
unset TMPDIR
pass "a missing or unusable XDG_RUNTIME_DIR gets a one-line error (naming the directory to export where a server runs)"

# --- Bad usage: "hark: ..." on stderr and exit status 2 (docs/HACKING.md, "Messages for people").
set +e
out=$("$HARK_BIN" call --ring soon 2>&1); rc=$?
set -e
[ $rc -eq 2 ] || fail "bad usage exited $rc, expected 2: $out"
printf '%s' "$out" | head -1 | grep -q "^hark: .*--ring" || fail "bad usage message: $out"
pass "bad usage says 'hark: ...' and exits 2"

# --- Eight clients racing to start a server end with exactly one.
# Counted by executable and arguments, not by command line: the server runs /proc/self/exe, so
# its command line spells the binary's real path, whatever symlink $HARK_BIN goes through.
hark_exe=$(readlink -f "$HARK_BIN")
our_servers() {
  local n=0 p
  for p in $(pgrep -f -- " session-server" || true); do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$hark_exe" ] || continue
    tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qx session-server || continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR" && n=$((n + 1))
  done
  echo $n
}
one_server() { [ "$(our_servers)" -eq 1 ]; }
pids=()
for i in 1 2 3 4 5 6 7 8; do "$HARK_BIN" status --json >"$E2E_DIR/race$i.out" 2>&1 & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || fail "a racing client failed: $(cat "$E2E_DIR"/race*.out)"; done
wait_for 3 "exactly one server after the race (now $(our_servers))" one_server
[ "$(cat "$E2E_DIR"/race*.out | python3 -c 'import sys,json; print(len({json.loads(l)["serverPid"] for l in sys.stdin}))')" = 1 ] \
  || fail "the racing clients talked to different servers"
pass "eight clients racing to start the server ended with one server"

# --- Fully detached: its own session, stdin /dev/null, stdout/stderr its log, nothing else.
spid=$(server_pid)
[ "$(ps -o sid= -p "$spid" | tr -d ' ')" = "$spid" ] || fail "the server is not in a session of its own"
[ "$(ps -o tty= -p "$spid" | tr -d ' ')" = "?" ] || fail "the server has a controlling terminal"
[ "$(readlink "/proc/$spid/fd/0")" = /dev/null ] || fail "the server's stdin is $(readlink /proc/$spid/fd/0)"
[ "$(readlink "/proc/$spid/fd/1")" = "$XDG_STATE_HOME/hark/session-server.log" ] \
  || fail "the server's stdout is $(readlink /proc/$spid/fd/1)"
# Its own signal self-pipe has both ends in the server; a pipe with one end there is someone's.
links=$(for fd in /proc/"$spid"/fd/*; do readlink "$fd"; done)
printf '%s\n' "$links" | grep -E '^(/dev/pts/|/dev/tty)' && fail "the server holds a terminal open"
foreign=$(printf '%s\n' "$links" | grep '^pipe:' | sort | uniq -u)
[ -z "$foreign" ] || fail "the server holds someone's pipe open: $foreign"
[ "$(stat -c %a "$XDG_RUNTIME_DIR/hark")" = 700 ] || fail "runtime directory is not 0700"
[ "$(stat -c %a "$XDG_RUNTIME_DIR/hark/session.sock")" = 600 ] || fail "socket is not 0600"
pass "the server is detached (own session, no terminal, no pipes) and its files are private"

# --- --stop stops it, and says so when there is none.
grep -q "stopped the session server (pid $spid)" <<<"$("$HARK_BIN" session-server --stop)" || fail "--stop"
alive "$spid" && fail "the server is still alive after --stop"
grep -q "no session server is running" <<<"$("$HARK_BIN" session-server --stop)" || fail "--stop with none"
pass "'session-server --stop' stops the server, and is harmless when none runs"

# --- A pipeline whose first command autospawns the server still ends: the server holds no pipe.
timeout 10 bash -c "\"$HARK_BIN\" status | cat >/dev/null" || fail "the autospawned server held the pipe open"
pass "a pipeline through an autospawning client ends"
"$HARK_BIN" session-server --stop >/dev/null

# --- Idle exit: a while after the last client leaves, the server goes away by itself.
HARK_SESSION_IDLE_EXIT=1 "$HARK_BIN" status >/dev/null
spid=$(server_pid)
no_server() { ! alive "$spid"; }
wait_for 5 "the idle server (pid $spid) to exit" no_server
[ -e "$XDG_RUNTIME_DIR/hark/session.sock" ] && fail "the idle server left its socket behind"
pass "an idle server exits by itself and removes its socket"

# --- G16: the server crashes; clients see media services reset, respawn it, re-register.
start music hark simulate music --seconds 20
expect_field music active true
old=$(server_pid)
kill -9 "$old"
expect_log music "media services were reset; registered again"
new=$(server_pid)
[ -n "$new" ] && [ "$new" != "$old" ] || fail "no new server after the crash"
expect_field music active true
expect_field music category '"playback"'
status_query "[x['playback']['title'] for x in s['sessions'] if x['name']=='music']" | grep -q "Simulated music" \
  || fail "the now-playing info was not published again"
pass "G16: after a server crash the music app respawned it and re-registered (active, category, now playing)"

# --- A player with no server running plays at once and starts one server, not a second one
# that finds the first running and gives up: its start-up was CPU taken from the first sound.
kill "$PID_music"
music_gone() { ! alive "$PID_music"; }
wait_for 5 "the music app to stop" music_gone
"$HARK_BIN" session-server --stop >/dev/null
start_pulse_server
sox -n -r 44100 -c 2 "$E2E_DIR/tone.wav" synth 20 sine 440 vol 0.3
log="$XDG_STATE_HOME/hark/session-server.log"
lines_before=$(wc -l <"$log")
start player hark play --no-ui --device pulse "$E2E_DIR/tone.wav"
# Watched in the server's log: `hark status` would start a server of its own if none answered.
player_registered() { tail -n +"$((lines_before + 1))" "$log" | grep -q "hark (pid $PID_player) registered"; }
wait_for 10 "the player to register with the server it started" player_registered
since=$(tail -n +"$((lines_before + 1))" "$log")
grep -qF "already running" <<<"$since" && fail "the player's cold start spawned a second server: $since"
check "$(grep -c " serving" <<<"$since" || true) == 1" || fail "not one server start in the log: $since"
kill "$PID_player"
player_gone() { ! alive "$PID_player"; }
wait_for 5 "the player to stop" player_gone
"$HARK_BIN" session-server --stop >/dev/null
pass "a player's cold start spawns one server"
