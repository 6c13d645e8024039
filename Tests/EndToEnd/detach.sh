#!/usr/bin/env bash
# Playing on with the interface closed. The interface is a client of the player's own process: Q
# detaches and the music goes on without a gap, still a full session client (a call pauses and
# resumes it, `playerctl next` reaches it over MPRIS); `hark` in a second window attaches to it and
# shows the track and position it is at; q there stops it. The terminal closing (SIGHUP) while it
# plays leaves it playing, while paused stops it, and with detach_on_hangup = false stops it either
# way.
if [ -z "${HARK_E2E_IN_DBUS:-}" ]; then
  HARK_E2E_IN_DBUS=1 exec dbus-run-session -- bash "$0" "$@"
fi
bus=$DBUS_SESSION_BUS_ADDRESS
source "$(dirname "$0")/lib.sh"  # which unsets the bus address, for the other tests' sake
export DBUS_SESSION_BUS_ADDRESS=$bus
source "$(dirname "$0")/tmux.sh"
start_pulse
export LANG=C.UTF-8

music="$E2E_DIR/music"
mkdir -p "$music"
sox -n -r 44100 -c 2 "$music/01 One.wav" synth 120 sine 440 vol 0.3
sox -n -r 44100 -c 2 "$music/02 Two.flac" synth 120 sine 550 vol 0.3
sox -n -r 44100 -c 2 "$music/03 Three.flac" synth 120 sine 660 vol 0.3
pc() { playerctl -p hark "$@"; }
state() { playback state; }
playing() { [ "$(state)" = playing ]; }
ui_pid() {  # the interface in window $1
  local shell_pid
  shell_pid=$(tmux_ list-panes -t "$SESSION:$1" -F '#{pane_pid}')
  pgrep -P "$shell_pid" -x hark | head -1
}
# window NAME: a new window with a plain shell, which the helpers then read and type into.
window() {
  tmux_ new-window -t "$SESSION" -n "$1" "bash --norc --noprofile"
  TARGET="$SESSION:$1"
  keys "PS1='$ '" Enter
}

tmux_start 100 30
tmux_ rename-window -t "$SESSION" first
TARGET="$SESSION:first"
# (--duck with a negative value reaches the player's process whole.)
keys "clear; '$HARK_BIN' play --device pulse --duck -12 '$music'; echo \"hark-exit=\$?\"" Enter
expect_screen "One"
wait_for 10 "playing" playing
wait_until 5 "the player's lock" '[ -n "$(player_pid)" ]'
player=$(player_pid)
ui=$(ui_pid first)
[ -n "$ui" ] && [ "$ui" != "$player" ] || fail "the interface ($ui) is not a process apart from the player ($player)"
alive "$player" || fail "no player process $player"
pass "the interface (pid $ui) plays through a player process of its own (pid $player)"

# --- Q: the interface goes, the music does not stop for a moment.
wait_until 5 "a few seconds played" 'position_at_least 2'
t_before=$(now)
keys Q
expect_screen "hark-exit=0"
expect_screen "the player is playing on in the background (pid $player)"
alive "$player" || fail "the player ended with the interface"
wait_until 5 "the position moving on after Q" "position_at_least $(playback position | cut -d. -f1).9"
sleep 1  # (the recording needs a second after the detach to look at; nothing is waited for)
t_after=$(now)
gap=$(probe longest-silence "$t_before" "$t_after")
check "$gap < 0.05" || fail "a silence of $gap s around the detach"
playing || fail "not playing after Q: $(state)"
pass "Q: the shell is back, the player plays on (longest silence around it ${gap} s)"

# --- Detached, still a session client: a call pauses it and its end resumes it (G11, G14).
start call hark call --ring 1 --talk 1
wait_until 5 "paused by the call" '[ "$(state)" = paused ] && [ "$(playback pausedBy)" = interruption ]'
wait_until 10 "playing again after the call" playing
pass "detached: a call paused it and its end resumed it"

# --- Detached: the media keys reach it (MPRIS; G17).
wait_until 10 "the MPRIS name" 'playerctl -l 2>/dev/null | grep -qx hark'
[ "$(pc metadata xesam:title)" = "01 One" ] || fail "title over MPRIS: $(pc metadata xesam:title)"
pc next
wait_until 5 "the next track over MPRIS" '[ "$(pc metadata xesam:title)" = "02 Two" ]'
wait_until 5 "playing the next track" 'playing && position_at_least 3'
pass "detached: playerctl next moved it to '02 Two'"

# --- Attach from a second window: the track and position it is at, the same player.
window second
keys "clear; '$HARK_BIN'; echo \"hark-exit=\$?\"" Enter
expect_screen "Back with the hark player playing on (pid $player)"
expect_screen "Two"
heard=$(playback position)
shown=$(elapsed)
check "abs($shown - $heard) <= 2" || fail "the attached interface shows $shown s; the player is at $heard s"
[ "$(ui_pid second)" != "$player" ] || fail "the second interface is the player"
pass "attached again: '02 Two' at ${shown} s on screen (the player at ${heard} s), pid $player"

# --- A second interface at once sees the same player; q in one stops it, and the other says so.
# (This one names an output: not the running player's business, and it says so.)
window third
keys "clear; '$HARK_BIN' open --device null; echo \"hark-exit=\$?\"" Enter
expect_screen "--device 'null' not used: the hark player (pid $player) already runs, on 'pulse'"
TARGET="$SESSION:second"
keys q
expect_screen "hark-exit=0"
wait_for 5 "the player gone after q" eval '! alive "$player"'
TARGET="$SESSION:third"
expect_screen "hark-exit=1"
expect_screen "was quit from another interface"
state_file="$XDG_STATE_HOME/hark/state.json"
python3 - "$state_file" <<'PY' || fail "state.json after q: $(cat "$state_file")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["current"] == 1 and s["position"] > 3, s
PY
pass "q from the attached interface stopped the player and saved '02 Two' at its position; the other interface said why"

# --- The terminal closes while playing: the music goes on (SIGHUP, detach_on_hangup default).
keys "clear; '$HARK_BIN'" Enter
expect_screen "Two"
keys Space
wait_for 10 "playing" playing
player=$(player_pid)
ui=$(ui_pid third)
tmux_ kill-window -t "$SESSION:third"
wait_for 5 "the interface gone with its terminal" eval '! alive "$ui"'
# The interface has done what it does at a hangup before it ends: the player is left playing.
alive "$player" || fail "the player stopped with its terminal"
wait_until 5 "still playing after the terminal closed" "playing && position_at_least $(playback position | cut -d. -f1).9"
pass "the terminal closed while playing: the player (pid $player) plays on"

# --- Closed while paused: the player stops, as q.
window fourth
keys "clear; '$HARK_BIN'" Enter
expect_screen "Back with the hark player"
keys Space
wait_until 5 "paused" '[ "$(state)" = paused ]'
tmux_ kill-window -t "$SESSION:fourth"
wait_for 10 "the player stopped with its terminal, paused" eval '! alive "$player"'
pass "the terminal closed while paused: the player stopped"

# --- Q while paused: the player stays in the background paused, and Q says so (not "playing on").
window qpaused
keys "clear; '$HARK_BIN'; echo \"hark-exit=\$?\"" Enter
expect_screen "Two"
keys Space
wait_for 10 "playing" playing
player=$(player_pid)
keys Space
wait_until 5 "paused" '[ "$(state)" = paused ]'
keys Q
expect_screen "hark-exit=0"
expect_screen "the player is paused in the background (pid $player)"
[ "$(state)" = paused ] || fail "Q on a paused player: $(state)"
kill "$player"
wait_for 10 "the paused player gone" eval '! alive "$player"'
pass "Q while paused: the player stays paused in the background, and the shell says so"

# --- detach_on_hangup = false: closing the terminal stops it even while playing.
mkdir -p "$HOME/.config/hark"
echo "detach_on_hangup = false" >"$HOME/.config/hark/config.toml"
window fifth
keys "clear; '$HARK_BIN'" Enter
expect_screen "Two"
keys Space
wait_for 10 "playing" playing
player=$(player_pid)
tmux_ kill-window -t "$SESSION:fifth"
wait_for 10 "the player stopped with its terminal" eval '! alive "$player"'
pass "detach_on_hangup = false: the terminal closed while playing stopped the player"

# --- One program: `hark` attaches to a headless player (`hark play --no-ui`) as well; a key
# there reaches it, and q there ends it (exit 0, saying so).
start headless hark play --no-ui --device pulse "$music/01 One.wav" "$music/03 Three.flac"
expect_log headless "playing '01 One'" 10
window sixth
keys "clear; '$HARK_BIN'; echo \"hark-exit=\$?\"" Enter
expect_screen "Back with the hark player playing on (pid $PID_headless)"
expect_screen "One"
keys n
expect_log headless "playing '03 Three'"
expect_screen "Three"
keys q
expect_screen "hark-exit=0"
wait_for 10 "the headless player ended" eval '! alive "$PID_headless"'
wait "$PID_headless" || fail "the headless player exited $? after q from the interface"
log_has headless "hark: quit from the interface" || fail "the headless player did not say why it ended"
pass "hark attached to a headless 'hark play --no-ui': n reached it, q ended it (exit 0)"

# --- A player that was never given a queue (its interface died before handing one over)
# leaves the saved queue as it was; one that restored it saves it back.
cp "$state_file" "$E2E_DIR/state.before"
start lone "$HARK_BIN" background-player --socket="$XDG_RUNTIME_DIR/hark/lone.sock" --device=null
wait_for 10 "the lone player's socket" test -S "$XDG_RUNTIME_DIR/hark/lone.sock"
kill "$PID_lone"
wait_for 10 "the lone player gone" eval '! alive "$PID_lone"'
cmp -s "$state_file" "$E2E_DIR/state.before" || fail "a player given no queue rewrote state.json: $(cat "$state_file")"
pass "a player that was given no queue leaves state.json as it was"

# --- A player of its own (--new) never saves over the user's queue: quitting it, with or without
# paths named, leaves state.json as the user's player saved it.
window seventh
for args in "'$music/02 Two.flac'" ""; do
  keys "clear; '$HARK_BIN' --new $args; echo \"hark-exit=\$?\"" Enter
  expect_screen "Queue ("
  keys q
  expect_screen "hark-exit=0"
  cmp -s "$state_file" "$E2E_DIR/state.before" ||
    fail "quitting 'hark --new $args' rewrote state.json: $(cat "$state_file")"
done
pass "quitting a --new interface, with a path named or none, leaves state.json as it was"

# --- q in one window and `hark` in another while the first player is on its way out: the
# second does not attach to it; it gets a player of its own with the saved queue, once the
# first has gone. (Started before the player has read the q, the second attaches to a player
# that is not going yet, and is then rightly told it was quit: the test waits for the q to be
# taken, which the socket's going shows.)
window eighth
keys "clear; '$HARK_BIN'; echo \"hark-exit=\$?\"" Enter
expect_screen "Queue (3)" 10
first=$(player_pid)
window ninth
TARGET="$SESSION:eighth"
keys q
wait_for 10 "the first player to take the q (its socket gone)" \
  eval '! test -S "$XDG_RUNTIME_DIR/hark/player.sock"'
TARGET="$SESSION:ninth"
keys "clear; '$HARK_BIN'; echo \"hark-exit=\$?\"" Enter
expect_screen "Queue (3)" 15
screen_has "hark-exit" && fail "the second interface ended: $(screen_text)"
wait_until 5 "another player" '[ "$(player_pid)" != "$first" ]'
alive "$(player_pid)" || fail "no player serves the second interface"
keys q
expect_screen "hark-exit=0"
pass "hark while the player q ended is on its way out: the second interface got a player of its own, the queue restored"

# --- A queue the user cleared comes back empty, with its shuffle and repeat: not replaced by
# the music folder with the config's modes (a user's report: X, r, q, hark gave 36 tracks,
# repeat off).
window tenth
printf '{"version": 1, "queue": [], "position": 0, "shuffle": false, "repeat": "all"}\n' \
  >"$state_file"
keys "clear; cd '$music'; '$HARK_BIN'; echo \"hark-exit=\$?\"" Enter
expect_screen "Queue (0)" 10
expect_screen "repeat all"
screen_has "Queue (3)" && fail "the cleared queue was replaced: $(screen_text)"
keys q
expect_screen "hark-exit=0"
pass "an empty saved queue comes back empty, with repeat all"
