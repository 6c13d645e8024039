#!/usr/bin/env bash
# The terminal interface, driven like a user would in tmux, playing to a PulseAudio null sink: play,
# pause, a call named and resumed from, headphones unplugged, the route picker, resizing, the help,
# q, Ctrl-C, Ctrl-Z, the saved queue, a damaged state file, bad files in the queue (scenario 8),
# idle CPU while paused, and (in a terminal emulated here, as tmux cannot) the kitty keyboard
# protocol's media keys.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tmux.sh"
HERE="$(cd "$(dirname "$0")" && pwd)"
start_pulse
export LANG=C.UTF-8


music="$E2E_DIR/music"
mkdir -p "$music"
sox -n -r 44100 -c 2 "$music/01 Alpha.wav" synth 40 sine 440 vol 0.3
sox -n -r 44100 -c 2 "$music/02 Beta.flac" synth 40 sine 550 vol 0.3
sox -n -r 48000 -c 1 "$music/03 夜行列車.flac" synth 40 sine 660 vol 0.3

hark_pid() {
  local shell_pid
  shell_pid=$(tmux_ list-panes -t "$SESSION" -F '#{pane_pid}')
  pgrep -P "$shell_pid" -x hark | head -1
}
# ui_switches PID: how often the interface's own thread ("hark-ui") has been woken so far.
ui_switches() {
  local t
  for t in /proc/"$1"/task/*; do
    if [ "$(cat "$t/comm")" = hark-ui ]; then
      awk '/^voluntary_ctxt_switches|^nonvoluntary_ctxt_switches/ {n += $2} END {print n}' "$t/status"
      return
    fi
  done
  echo "no hark-ui thread in $1" >&2
  return 1
}
# cpu_seconds PID: user + system time so far.
cpu_seconds() {
  python3 -c "
import os
f = open('/proc/$1/stat').read().rsplit(')', 1)[1].split()
print((int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK'))"
}

# A shell in tmux, as a user has; hark runs in it, and the shell must work after hark.
tmux_start 100 30
keys "clear; '$HARK_BIN' --device pulse '$music'; echo \"hark-exit=\$?\"" Enter

# --- Start on a folder: the library lists it with columns, paused until the user plays.
expect_screen "Library"
expect_screen "Alpha"
expect_screen "夜行列車"
expect_screen "Stopped"
expect_screen "0:40"  # durations read from the files, off the UI thread
pass "the interface opens on the folder, its songs listed with their lengths"

# --- Space plays; the progress moves; space pauses and it stands still.
keys Space
expect_screen "▶ Playing"
start_at=$(elapsed)
wait_for 6 "the elapsed time to move past ${start_at}s" elapsed_beyond "$((start_at + 1))"
pass "space plays, and the progress moves ($start_at s -> $(elapsed) s)"
keys Space
expect_screen "⏸ Paused"
paused_at=$(elapsed)
sleep 1.2
[ "$(elapsed)" = "$paused_at" ] || fail "the time moved while paused ($paused_at -> $(elapsed))"
pass "space pauses; the time stands at $paused_at s"

# --- Idle CPU: paused, the interface makes no wake-ups; measured from /proc for 10 s, once the
# status line is clear: a line there ("Library indexed: 6 tracks" from the index scan at start)
# ends on a timer, and that one wake is the line going, not an idle timer.
status_line_clear() { [ -z "$(screen_text | sed -n 29p | tr -d ' ')" ]; }
wait_for 8 "the status line to clear" status_line_clear
pid=$(hark_pid)
[ -n "$pid" ] || fail "cannot find hark's pid"
before=$(cpu_seconds "$pid")
woken_before=$(ui_switches "$pid")
sleep 10
after=$(cpu_seconds "$pid")
woken=$(($(ui_switches "$pid") - woken_before))
idle=$(python3 -c "print(round($after - $before, 3))")
echo "     idle CPU while paused: ${idle} s in 10 s (pid $pid, all threads); UI thread woken $woken times"
check "$idle < 0.2" || fail "hark used ${idle} s of CPU in 10 s while paused"
# Paused, the interface has no timer: nothing at all should wake its thread.
[ "$woken" -le 1 ] || fail "the UI thread was woken $woken times in 10 s while paused"
pass "idle while paused: ${idle} s of CPU in 10 s, the UI thread woken $woken times"

# --- A call from another shell: the status line names it, and playing resumes after it.
keys Space
expect_screen "▶ Playing"
start call hark call --ring 1 --talk 2
expect_screen "Paused (call)" 5
expect_screen "call in progress"
during=$(elapsed)
expect_log call "hung up" 8
expect_screen "▶ Playing" 3
wait_for 4 "the time to move on after the call" elapsed_beyond "$during"
pass "a call pauses with the reason on screen, and playing resumes after it ($during s)"

# --- Headphones: plugged, shown as the route; unplugged, paused and named (G5).
hark route plug headphones >/dev/null
expect_screen "headphones"
hark route unplug headphones >/dev/null
expect_screen "Paused (headphones unplugged)"
screen_has "went away" || screen_has "headphones unplugged" || fail "no reason in the status line"
pass "unplugging the headphones pauses, and the screen says so"

# --- The route picker: another output while playing, and it goes on playing (G6).
keys Space
expect_screen "▶ Playing"
keys o
expect_screen "Output — now 'pulse'"
expect_screen "● pulse"
expect_screen "○ default"
keys g Enter
expect_screen "Playing on 'default'"
expect_screen_not "Output — now"
screen_has "▶ Playing" || fail "not playing after picking an output"
[ "$(playback state)" = playing ] || fail "hark says '$(playback state)' after picking an output"
at=$(elapsed)
wait_for 5 "the time to move on the new output" elapsed_beyond "$at"
pass "the route picker moved playback to 'default' without a pause"
keys o
expect_screen "● default"
keys Escape
expect_screen_not "Output — now"

# --- Resize to 60x20 and back: redrawn to the new size, nothing left of the old one.
# tmux clips the old frame to the new size at once (the bar's right part goes with it, and rows
# from the top), so the new frame is waited for by its own layout: the tab bar on top, the
# now-playing bar and the key hints where a screen of that many rows has them.
laid_out() {
  local text
  text=$(screen_text)
  [ "$(printf '%s\n' "$text" | wc -l)" -eq "$1" ] \
    && printf '%s\n' "$text" | sed -n 1p | grep -q "^ hark " \
    && printf '%s\n' "$text" | sed -n "$(($1 - 3))p" | grep -q "Playing" \
    && printf '%s\n' "$text" | sed -n "$1p" | grep -q "^ space play/pause"
}
tmux_ resize-window -t "$SESSION" -x 60 -y 20
# (Up to 5 s; the checks below say what is wrong if it never comes.)
for _ in $(seq 100); do laid_out 20 && break; sleep 0.05; done
text=$(screen_text)
lines=$(printf '%s\n' "$text" | wc -l)
[ "$lines" -eq 20 ] || fail "$lines rows after resizing to 20"
printf '%s\n' "$text" | sed -n 1p | grep -q "^ hark " || fail "the tab bar is not on top: $text"
printf '%s\n' "$text" | sed -n 20p | grep -q "^ space play/pause" || fail "no key hints at the bottom: $text"
printf '%s\n' "$text" | sed -n 17p | grep -q "Playing" || fail "no now-playing bar above the status line: $text"
! grep -qF "shuffle off · repeat off" <<<"$text" || fail "the 100-column bar's right part is left: $text"
tmux_ resize-window -t "$SESSION" -x 100 -y 30
expect_screen "shuffle off · repeat off"
for _ in $(seq 100); do laid_out 30 && break; sleep 0.05; done
text=$(screen_text)
printf '%s\n' "$text" | sed -n 30p | grep -q "^ space play/pause" || fail "no key hints at the bottom: $text"
pass "resized to 60x20 and back to 100x30, redrawn to fit each time"

# --- ? shows every binding; Esc closes it.
keys "?"
expect_screen "play_pause"
expect_screen "route_picker"
expect_screen "Keys —"
keys Escape
expect_screen_not "Keys —"
pass "? shows the key bindings"

# --- C starts a call from inside the interface.
keys C
expect_screen "Paused (call)" 6
expect_screen "▶ Playing" 10
pass "C simulates a call: named on screen, then playing again"

# --- q quits with 0, saves the queue, and the shell works after it.
keys q
expect_screen "hark-exit=0"
keys "echo ok-after-$$" Enter
expect_screen "ok-after-$$"
state="$XDG_STATE_HOME/hark/state.json"
[ -f "$state" ] || fail "q did not save $state"
python3 - "$state" "$music" <<'PY' || fail "state.json: $(cat "$state")"
import json, sys
s = json.load(open(sys.argv[1]))
assert [p.rsplit("/", 1)[1] for p in s["queue"]] == ["01 Alpha.wav", "02 Beta.flac", "03 夜行列車.flac"], s
assert s["current"] == 0 and s["position"] > 1 and s["repeat"] == "off", s
PY
saved=$(python3 -c "import json; print(int(json.load(open('$state'))['position']))")
pass "q exits 0, the shell works after it, and state.json holds the queue at $saved s"

# --- Started with no path: the saved queue comes back, paused where it was.
keys "clear; '$HARK_BIN' --device pulse; echo \"hark-exit=\$?\"" Enter
expect_screen "Alpha"
expect_screen "⏸ Paused"
restored=$(elapsed)
check "abs($restored - $saved) <= 1" || fail "restored at $restored s, saved at $saved s"
keys Space
expect_screen "▶ Playing"
keys q
expect_screen "hark-exit=0"
pass "no path: the saved queue is back, paused at $restored s, and plays from there"

# --- Ctrl-Z suspends and gives the shell back; fg redraws; Ctrl-C quits with 130. (No
# "; echo" after hark here: bash would run it as soon as hark stops.)
keys "clear; '$HARK_BIN' --device pulse '$music'" Enter
expect_screen "Library"
keys C-z
# The shell's job line, not the interface's own "■ Stopped".
expect_screen "+  Stopped"
expect_screen_not "Library"
keys "echo suspended-$$" Enter
expect_screen "suspended-$$"
keys "fg" Enter
expect_screen "Library"
expect_screen "Alpha"
keys C-c
expect_screen_not "Library"
keys "echo \"after-fg=\$?\"" Enter
expect_screen "after-fg=130"
pass "Ctrl-Z gives the shell back, fg redraws, Ctrl-C quits (130) leaving a working shell"

# --- Ctrl-Z before the terminal has answered the queries (a slow terminal, ssh): the answer
# is not typed into the shell, the interface stops once and stays stopped until fg.
python3 "$HERE/late_answers.py" "$HARK_BIN" --device pulse "$music" || fail "Ctrl-Z with the terminal's answers late"
pass "Ctrl-Z before the terminal answered: nothing typed into the shell, stopped until fg, Ctrl-C quits (130)"

# --- Keys rebound in the config: the key works, the old one does not, and the help and the
# hints show the live table.
mkdir -p "$HOME/.config/hark"
printf '[keys]\nplay_pause = ["p"]\n' >"$HOME/.config/hark/config.toml"
keys "clear; '$HARK_BIN' --device pulse '$music'; echo \"hark-exit=\$?\"" Enter
expect_screen "Library"
expect_screen " p play/pause"
keys "?"
expect_screen "Keys —"
screen_text | grep -E "│ p +play_pause" >/dev/null || fail "the help does not show p for play_pause: $(screen_text)"
keys Escape
expect_screen_not "Keys —"
keys Space
sleep 0.5
screen_has "▶ Playing" && fail "space still plays after play_pause was rebound to p"
keys p
expect_screen "▶ Playing"
keys q
expect_screen "hark-exit=0"
rm "$HOME/.config/hark/config.toml"
pass "play_pause rebound to p in config.toml: p plays, space does not, ? and the hints show p"

# --- A music_dir that is not a folder: said at start, not silently replaced by another.
printf 'music_dir = "/nonexistent/dir"\n' >"$HOME/.config/hark/config.toml"
keys "clear; '$HARK_BIN' --device pulse; echo \"hark-exit=\$?\"" Enter
expect_screen "The config's music_dir '/nonexistent/dir' is not a folder; showing"
grep -q "music_dir '/nonexistent/dir' is not a folder" "$XDG_STATE_HOME/hark/hark.log" ||
  fail "the log does not say the music_dir is not a folder"
keys q
expect_screen "hark-exit=0"
rm "$HOME/.config/hark/config.toml"
pass "a music_dir that is not a folder is said on screen and in hark.log"

# --- A damaged state file: named, left alone, set aside when q saves.
printf '{ "version": 1, "queue": [' >"$state"
keys "clear; '$HARK_BIN' --device pulse; echo \"hark-exit=\$?\"" Enter
expect_screen "damaged"
[ "$(cat "$state")" = '{ "version": 1, "queue": [' ] || fail "the damaged file was changed at start"
keys q
expect_screen "hark-exit=0"
[ "$(cat "$state.damaged")" = '{ "version": 1, "queue": [' ] || fail "the damaged file was not kept"
python3 -c "import json; json.load(open('$state'))" || fail "no valid state.json after q"
grep -q "damaged" "$XDG_STATE_HOME/hark/hark.log" || fail "the log does not mention the damaged file"
pass "a damaged state.json is named on screen and in the log, kept aside, not deleted"

# --- A state folder the queue cannot be saved in is said at start, and a quit that could not save
# exits 1 and says what to do.
keys "clear; XDG_STATE_HOME=/dev/null/state '$HARK_BIN' --device pulse '$music'; echo \"hark-exit=\$?\"" Enter
expect_screen "is not writable"
keys q
expect_screen "hark-exit=1"
# The shell's line wraps at the pane's width (where depends on the pid in it): read it joined.
joined_has() { tmux_ capture-pane -p -J -t "$SESSION" | grep -qF -- "$1"; }
wait_for 5 "'the queue was not saved' after q" joined_has "the queue was not saved"
pass "an unwritable state folder: said on screen at start; q says the queue was not saved and exits 1"

# --- Scenario 8: a corrupt, a truncated, an empty and a non-audio file before a good one: each
# gets a one-line reason (on the status line as it happens, marked in the queue, in the log),
# the good one plays, nothing crashes.
mixed="$E2E_DIR/mixed"
mkdir -p "$mixed"
head -c 3000 /dev/urandom >"$mixed/01 Corrupt.flac"
sox -n -r 44100 -c 2 "$E2E_DIR/whole.wav" synth 5 sine 440 vol 0.3
head -c 20000 "$E2E_DIR/whole.wav" >"$mixed/02 Cut.wav"
: >"$mixed/03 Empty.ogg"
printf 'not audio at all\n' >"$mixed/04 Notes.mp3"
sox -n -r 44100 -c 2 "$mixed/05 Good.wav" synth 20 sine 550 vol 0.3
# A queue of these files alone (hark PATH adds them to the queue saved before, if any).
rm -f "$state"
keys "clear; '$HARK_BIN' --device pulse '$mixed'; echo \"hark-exit=\$?\"" Enter
expect_screen "Library"
expect_screen "Good"
keys Space
playing_good() { screen_text | grep -E "▶ Playing +05 Good" >/dev/null; }
wait_for 8 "the good file to play" playing_good
# The line for the last file skipped stays up while the good one plays.
expect_screen "Could not play 04 Notes.mp3: not an audio file"
shown=$(screen_text | grep -o "Could not play 04.*" | head -1 | sed 's/ *$//')
keys 2
# "Queue" is in the tab bar of either view: what says the queue is shown is its marks.
all_marked() {
  local f
  for f in "01 Corrupt" "02 Cut" "03 Empty" "04 Notes"; do
    screen_text | grep -E "✗ .*$f" >/dev/null || return 1
  done
}
wait_for 5 "the queue, with the four bad files marked ✗" all_marked
log="$XDG_STATE_HOME/hark/hark.log"
for f in "01 Corrupt.flac" "02 Cut.wav" "03 Empty.ogg" "04 Notes.mp3"; do
  [ "$(grep -c "cannot play '$mixed/$f': " "$log")" -eq 1 ] || fail "the log does not name '$f' once: $(tail -20 "$log")"
done
grep -q "cannot play '$mixed/02 Cut.wav': the file is cut short" "$log" || fail "no reason for the cut file"
grep -q "cannot play '$mixed/03 Empty.ogg': the file is empty" "$log" || fail "no reason for the empty file"
at=$(elapsed)
wait_for 5 "the good file's time to move on" elapsed_beyond "$at"
# Played to the end of the queue, then played again: the device drained at the end is ready
# for it (it was taken for a device gone: "Paused: 'pulse' went away").
keys : 18 Enter
expect_screen "End of the queue" 10
keys Space
wait_for 8 "the good file to play again after the end of the queue" playing_good
! screen_text | grep -E "went away|gone" || fail "played after the end of the queue: $(screen_text)"
keys q
expect_screen "hark-exit=0"
pass "scenario 8: four bad files each named with a reason (on screen: '$shown'), marked ✗ in the queue, the good one played, q exits 0"

# --- Without a terminal: one line, a suggestion, exit 1.
set +e
"$HARK_BIN" "$music" </dev/null >"$E2E_DIR/notty.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "without a terminal: exit $rc, expected 1"
[ "$(wc -l <"$E2E_DIR/notty.out")" -eq 1 ] || fail "more than one line: $(cat "$E2E_DIR/notty.out")"
grep -q "hark play --no-ui" "$E2E_DIR/notty.out" || fail "no suggestion: $(cat "$E2E_DIR/notty.out")"
pass "without a terminal: '$(cat "$E2E_DIR/notty.out")' and exit 1"

# --- The kitty keyboard protocol, in a terminal emulated by kitty_terminal.py: turned on when
# the terminal answers, media keys become remote commands, popped on exit.
mkfifo "$E2E_DIR/kitty.ctl"
: >"$E2E_DIR/kitty.events"
python3 "$HERE/kitty_terminal.py" "$E2E_DIR/kitty.ctl" "$E2E_DIR/kitty.events" -- \
  "$HARK_BIN" --device pulse "$music/01 Alpha.wav" "$music/02 Beta.flac" &
E2E_PIDS+=($!)
kitty_has() { grep -qx -- "$1" "$E2E_DIR/kitty.events"; }
kitty_send() { printf 'send %s\n' "$1" >"$E2E_DIR/kitty.ctl"; }
wait_for 5 "the kitty protocol pushed" kitty_has pushed
kitty_send '\x1b[57430u'  # MEDIA_PLAY_PAUSE
wait_until 5 "MEDIA_PLAY_PAUSE to play" '[ "$(playback state)" = playing ]'
kitty_send '\x1b[57435u'  # MEDIA_TRACK_NEXT
wait_until 5 "MEDIA_TRACK_NEXT to go to Beta" '[ "$(playback title)" = "02 Beta" ]'
kitty_send '\x1b[57435u'  # at the last track: disabled, and nothing else is done (G19)
sleep 0.5
[ "$(playback title)" = "02 Beta" ] || fail "next at the last track changed the track"
[ "$(playback state)" = playing ] || fail "next at the last track changed the state"
kitty_send '\x1b[57429u'  # MEDIA_PAUSE
wait_until 5 "MEDIA_PAUSE to pause" '[ "$(playback state)" = paused ]'
kitty_send '\x1b[57428u'  # MEDIA_PLAY
wait_until 5 "MEDIA_PLAY to play" '[ "$(playback state)" = playing ]'
kitty_send '\x1b[113u'  # q as a kitty key
wait_for 5 "hark to quit" kitty_has "exit 0"
kitty_has popped || fail "the kitty protocol was never popped"
kitty_has order-ok || fail "the protocol was popped after leaving the alternate screen"
pass "kitty protocol: pushed when answered; media play/pause/next/play work, next at the end is ignored; popped on exit"
