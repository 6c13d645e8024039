#!/usr/bin/env bash
# The seams between hark's processes as a user meets them: `hark PATH` and `hark play PATH` in a
# second terminal while a player runs open the interface on that player, with the files handed
# over and the first shown; two interfaces and a headless `hark play --no-ui` on one player; and
# `hark` right after a player was killed in its start, in its shutdown and in its save (its
# fsync held up), which waits for it to go or takes its place, and never fails for it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tmux.sh"
start_pulse_server
export LANG=C.UTF-8
command -v strace >/dev/null || fail "strace is not installed (scripts/packages.sh installs it)"

music="$E2E_DIR/music"
mkdir -p "$music" "$E2E_DIR/more"
for t in "01 One:440" "02 Two:550" "03 Three:660"; do
  sox -n -r 44100 -c 2 "$music/${t%%:*}.wav" synth 120 sine "${t##*:}" vol 0.2
done
for t in "Apple:330" "Banana:370" "Cherry:415"; do
  sox -n -r 44100 -c 2 "$E2E_DIR/more/${t%%:*}.wav" synth 120 sine "${t##*:}" vol 0.2
done
players() { status_query "sum(1 for x in s['sessions'] if x['name'] == 'hark')"; }
ui_pid() {  # the interface in window $1
  local shell_pid
  shell_pid=$(tmux_ list-panes -t "$SESSION:$1" -F '#{pane_pid}')
  pgrep -P "$shell_pid" -x hark | head -1
}
window() {
  tmux_ new-window -t "$SESSION" -n "$1" "bash --norc --noprofile"
  TARGET="$SESSION:$1"
  keys "PS1='$ '" Enter
}
# The row the queue view has selected (drawn in reverse video: tmux shows it with escapes).
# (grep -m1, not head -1: head leaving early would kill grep with SIGPIPE, a failure to pipefail.)
selected_row() { tmux_ capture-pane -e -p -t "${TARGET:-$SESSION}" | grep -m1 -F $'\e[7m'; }
# row_selected TEXT: the selected row shows TEXT (the interface draws a key's effect a frame later).
row_selected() { grep -qF -- "$1" <<<"$(selected_row)"; }

tmux_start 110 30
tmux_ rename-window -t "$SESSION" first
TARGET="$SESSION:first"
keys "clear; '$HARK_BIN' play --device pulse '$music'; echo \"hark-exit=\$?\"" Enter
expect_screen "One"
wait_until 10 "playing" 'test "$(playback state)" = playing'
player=$(player_pid)

# --- `hark PATH` in a second terminal: the interface, on the running player, the files added
# and the first of them shown and selected, and a status line that says so.
window second
keys "clear; cd '$E2E_DIR/more' && '$HARK_BIN' Banana.wav Cherry.wav; echo \"hark-exit=\$?\"" Enter
expect_screen "2 files added to the queue of the hark player already running (pid $player)"
expect_screen "Banana"
wait_for 5 "the first file handed over selected" row_selected Banana
[ "$(player_pid)" = "$player" ] || fail "a second player took the lock"
check "$(players) == 1" || fail "two players: $(hark status)"
test "$(playback state)" = playing || fail "handing files over changed the playing: $(hark status)"
pass "hark PATH beside a running player: the interface on it, files added, the first selected"

# The same files, the same queue, in the first interface; Q here leaves the player as it is.
TARGET="$SESSION:first"
keys 2
expect_screen "Cherry"
TARGET="$SESSION:second"
keys Q
expect_screen "hark-exit=0"

# --- `hark play PATH` beside it: played now, after the track playing, and shown.
keys "clear; '$HARK_BIN' play '$E2E_DIR/more/Apple.wav'; echo \"hark-exit=\$?\"" Enter
expect_screen "Playing 'Apple.wav' in the hark player already running (pid $player)"
wait_until 5 "Apple playing" 'test "$(playback title)" = Apple'
wait_for 5 "the file played now selected" row_selected Apple
pass "hark play PATH beside a running player: played now, and shown"

# --- Two interfaces and a headless `hark play --no-ui` on one player: the headless one hands
# its file over and ends; both interfaces show what plays; q in one stops the player, and the
# other says so and gives the shell back.
out=$(hark play --no-ui "$music/03 Three.wav") || fail "hark play --no-ui beside the player failed"
[ "$out" = "playing '03 Three.wav' in the hark player already running" ] || fail "it said: $out"
wait_until 5 "Three playing" 'test "$(playback title)" = "03 Three"'
TARGET="$SESSION:first" expect_screen "▶ Playing   03 Three"
TARGET="$SESSION:second" expect_screen "▶ Playing   03 Three"
check "$(players) == 1" || fail "two players: $(hark status)"
TARGET="$SESSION:second"
keys q
expect_screen "hark-exit=0"
TARGET="$SESSION:first"
expect_screen "hark-exit=" 10
wait_until 10 "the player gone" '! alive "$player"'
pass "two interfaces and a headless hark play on one player; q in one ends it for both"

# --- A player killed in its start: `hark` takes its place.
keys "clear; '$HARK_BIN' --device pulse; echo \"hark-exit=\$?\"" Enter
wait_until 10 "a new player's lock" \
  '[ -n "$(player_pid)" ] && [ "$(player_pid)" != "$player" ] && alive "$(player_pid)"'
player=$(player_pid)
kill -9 "$player"
# The interface that started it says it went, and gives the shell back; a new `hark` starts
# another at once.
expect_screen "hark-exit=" 10
keys "clear; '$HARK_BIN' --device pulse; echo \"hark-exit=\$?\"" Enter
expect_screen "Queue" 10
wait_until 10 "a new player" \
  '[ -n "$(player_pid)" ] && [ "$(player_pid)" != "$player" ] && alive "$(player_pid)"'
pass "a player killed as it started: the next hark starts another"

# --- Killed in its shutdown: q, the player killed as it ends, `hark` at once.
player=$(player_pid)
keys q
kill -9 "$player" 2>/dev/null || true
expect_screen "hark-exit=" 10
keys "clear; '$HARK_BIN' --device pulse; echo \"hark-exit=\$?\"" Enter
expect_screen "Queue" 10
wait_until 10 "a new player" \
  '[ -n "$(player_pid)" ] && [ "$(player_pid)" != "$player" ] && alive "$(player_pid)"'
pass "a player killed in its shutdown: the next hark starts another"

# --- Held up in its save: each fsync of the player's takes 3 s (strace injects the delay), as
# on a disk that stalls. q: while it saves, a `hark` in the second terminal waits for it, then
# starts a new player on the queue it saved (paused where it was, G1), and says nothing failed.
player=$(player_pid)
hark ctl play >/dev/null && hark ctl next >/dev/null || fail "hark ctl play, next failed"
wait_until 10 "02 Two playing" 'test "$(playback title)" = "02 Two"'
start strace strace -f -qq -e trace=fsync -e inject=fsync:delay_enter=3000000 -p "$player"
wait_until 5 "strace attached" 'grep -q TracerPid:.[1-9] /proc/'"$player"'/status'
keys q
TARGET="$SESSION:second"
wait_until 5 "the player saving (its socket gone, its lock held)" \
  '[ ! -S "$XDG_RUNTIME_DIR/hark/player.sock" ] && [ -n "$(player_pid)" ]'
keys "clear; '$HARK_BIN' --device pulse; echo \"hark-exit=\$?\"" Enter
wait_until 15 "the saving player gone" '! alive "$player"'
expect_screen "⏸ Paused   02 Two" 15
wait_until 10 "the next player" '[ -n "$(player_pid)" ] && [ "$(player_pid)" != "$player" ]'
! screen_has "cannot reach" || fail "hark failed for the player that was saving: $(screen_text)"
pass "a player held up in its save: the next hark waits for it and starts on what it saved"

# --- Killed inside its save: the queue before it is there, whole; `hark` starts at once.
player=$(player_pid)
start strace2 strace -f -qq -e trace=fsync -e inject=fsync:delay_enter=3000000 -p "$player"
wait_until 5 "strace attached" 'grep -q TracerPid:.[1-9] /proc/'"$player"'/status'
keys q
wait_until 5 "the player saving" '[ ! -S "$XDG_RUNTIME_DIR/hark/player.sock" ] && [ -n "$(player_pid)" ]'
kill -9 "$player"
keys "clear; '$HARK_BIN' --device pulse; echo \"hark-exit=\$?\"" Enter
expect_screen "⏸ Paused   02 Two" 15
wait_until 10 "the next player" '[ -n "$(player_pid)" ] && [ "$(player_pid)" != "$player" ]'
! screen_has "cannot reach" || fail "hark failed for the killed player: $(screen_text)"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$XDG_STATE_HOME/hark/state.json" \
  || fail "the saved queue is damaged"
pass "a player killed in its save: the saved queue is whole, and the next hark starts"

# --- `hark PATH` with no player running: the saved queue comes back (paused where it was, G1)
# and the files join it, the first shown: what the user had is never replaced behind their back.
before=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['queue']))" \
  "$XDG_STATE_HOME/hark/state.json")
keys q
expect_screen "hark-exit=" 10
wait_until 10 "no player" '! alive "$(player_pid)"'
keys "clear; '$HARK_BIN' --device pulse '$E2E_DIR/more/Cherry.wav'; echo \"hark-exit=\$?\"" Enter
expect_screen "Queue ($((before + 1)))" 10
# Nothing was playing: the file named is current, ready to play (space plays it).
expect_screen "⏸ Paused   Cherry"
keys 2
wait_for 5 "the file named selected" row_selected Cherry
pass "hark PATH with no player running: the saved queue back, the file added, current and selected"

# --- Killed while it plays (a crash, the out-of-memory killer, kill -9): what it had a few
# seconds before is on disk already, not only what the last quit saved. A file added and play,
# then the player killed: the next `hark` starts on that queue, at that entry, paused (G1).
player=$(player_pid)
state="$XDG_STATE_HOME/hark/state.json"
# The file named as the player started (its request held while the saved queue came back) is
# saved with no other change.
wait_until 10 "the file named saved, current" "python3 - '$state' <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if len(s['queue']) == $((before + 1)) and s['queue'][s['current']].endswith('/Cherry.wav') else 1)
PY"
hark add "$E2E_DIR/more/Apple.wav" >/dev/null || fail "hark add failed"
hark ctl play >/dev/null || fail "hark ctl play failed"
expect_screen "Queue ($((before + 2)))"
wait_until 10 "the queue saved while playing" "python3 - '$state' <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s['queue'][-1].endswith('/Apple.wav') and s['queue'][s['current']].endswith('/Cherry.wav') else 1)
PY"
kill -9 "$player"
expect_screen "hark-exit=" 10
keys "clear; '$HARK_BIN' --device pulse; echo \"hark-exit=\$?\"" Enter
expect_screen "Queue ($((before + 2)))" 10
expect_screen "⏸ Paused   Cherry"
wait_until 10 "a new player" '[ -n "$(player_pid)" ] && [ "$(player_pid)" != "$player" ]'
pass "a player killed while it played: the next hark starts on the queue it had, paused at its entry"
