#!/usr/bin/env bash
# The playing album's cover in the interface, as a user sees it in tmux (256 colours): an MP3's
# embedded picture drawn bottom right, in colour, beside a narrowed list; the next track, in a
# folder with its own cover.jpg, shows that one; a track with no cover anywhere shows none; a window
# too narrow for it shows none and the list has its width back; cover_art = false in the config
# shows none at all; a damaged picture costs only the cover.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tmux.sh"
export LANG=C.UTF-8


music="$E2E_DIR/music"
mkdir -p "$music/A" "$music/B" "$music/C"
ffmpeg -nostdin -v error -f lavfi -i testsrc=size=300x300:rate=1 -frames:v 1 "$E2E_DIR/card.png"
ffmpeg -nostdin -v error -f lavfi -i "color=c=0xcc2222:size=200x200:rate=1" -frames:v 1 \
  "$music/B/cover.jpg"
ffmpeg -nostdin -v error -f lavfi -i sine=d=60 -i "$E2E_DIR/card.png" -map 0 -map 1 \
  -c:a libmp3lame -c:v mjpeg -id3v2_version 3 -disposition:v attached_pic \
  -metadata title=Embedded "$music/A/01 Embedded.mp3"
sox -n -r 44100 -c 2 "$music/B/02 Beside.flac" synth 60 sine 550 vol 0.3
sox -n -r 44100 -c 2 "$music/C/03 Bare.flac" synth 60 sine 660 vol 0.3
printf '%s\n' "$music/A/01 Embedded.mp3" "$music/B/02 Beside.flac" "$music/C/03 Bare.flac" \
  >"$E2E_DIR/list.m3u"

# picture ROWS: how many colour changes to the 256-colour palette's picture part (16-255) the
# first ROWS rows hold: the cover's cells (the rest of the interface uses the 8 basic colours).
# The interface runs with TERM=tmux-256color, which is right inside tmux, and has no "bce":
# with it, curses clears a run of same-coloured cells with one erase, which tmux's capture
# does not show.
picture() {
  tmux_ capture-pane -p -e -t "$SESSION" | python3 -c '
import re, sys
lines = sys.stdin.read().split("\n")
rows = int(sys.argv[1])
count = 0
for line in lines[:rows]:
    count += len(re.findall(r"\x1b\[[0-9;]*[34]8;5;(?:1[6-9]|[2-9][0-9]|1[0-9][0-9]|2[0-5][0-9])[0-9;]*m", line))
print(count)' "$1"
}
has_picture() { [ "$(picture 30)" -gt 20 ]; }
no_picture() { [ "$(picture 30)" -eq 0 ]; }

tmux_start 120 30
keys "clear; TERM=tmux-256color '$HARK_BIN' --device null '$E2E_DIR/list.m3u'; echo \"hark-exit=\$?\"" Enter
expect_screen "Embedded"
expect_screen "Stopped"
wait_for 10 "the embedded cover to be drawn" has_picture
embedded=$(picture 30)
pass "the MP3's embedded cover is drawn bottom right in 256 colours ($embedded coloured runs)"

# --- The next track: its folder's cover.jpg, a flat red (xterm colour 160 or thereabouts).
keys n
expect_screen "Beside"
red() { tmux_ capture-pane -p -e -t "$SESSION" | grep -Eq '\[[0-9;]*4?8;5;(124|160|161|166|196|167)m'; }
wait_for 10 "the red cover.jpg beside the second track" red
pass "the next track shows its folder's cover.jpg"

# --- No cover anywhere: none shown, the list has its width back.
keys n
expect_screen "Bare"
wait_for 10 "the picture to go" no_picture
pass "a track with no cover shows none"

# --- Back to the first: shown again; then a window too narrow for it: gone.
keys b b
expect_screen "Embedded"
wait_for 10 "the embedded cover again" has_picture
tmux_ resize-window -t "$SESSION" -x 72 -y 30
wait_for 10 "no picture at 72 columns" no_picture
tmux_ resize-window -t "$SESSION" -x 120 -y 30
wait_for 10 "the picture back at 120 columns" has_picture
pass "too narrow a window hides the cover; widened, it comes back"
keys q
expect_screen "hark-exit=0"

# --- A damaged picture: no cover, a line in hark.log, the interface goes on.
echo 'not a jpeg' >"$music/B/cover.jpg"
# (A queue of that folder alone: hark PATH adds to the queue saved before, if any.)
rm -f "$XDG_STATE_HOME/hark/state.json"
keys "clear; TERM=tmux-256color '$HARK_BIN' --device null '$music/B'; echo \"hark-exit=\$?\"" Enter
expect_screen "Beside"
wait_until 10 "hark.log to say why there is no cover" \
  "grep -q 'no cover for .*cover.jpg' '$XDG_STATE_HOME/hark/hark.log'"
no_picture || fail "a damaged cover.jpg drew something"
keys 2
expect_screen "Queue (1)"
pass "a damaged cover.jpg costs only the cover: $(grep -o 'no cover for.*' "$XDG_STATE_HOME/hark/hark.log" | tail -1)"
keys q
expect_screen "hark-exit=0"

# --- cover_art = false: no cover asked for, none drawn. A spy stands in for hark-cover; with
# the setting on, the same start calls it at once (the control).
cat >"$E2E_DIR/spy" <<SPY
#!/bin/sh
echo "\$@" >>"$E2E_DIR/spy.log"
exec "$(dirname "$HARK_BIN")/hark-cover" "\$@"
SPY
chmod +x "$E2E_DIR/spy"
run_spied() {
  keys "clear; HARK_COVER_HELPER='$E2E_DIR/spy' TERM=tmux-256color '$HARK_BIN' --device null '$E2E_DIR/list.m3u'; echo \"hark-exit=\$?\"" Enter
  expect_screen "Embedded"
}
run_spied
wait_for 10 "the spy to be asked for the cover" test -s "$E2E_DIR/spy.log"
wait_for 10 "the cover through the spy" has_picture
keys q
expect_screen "hark-exit=0"
rm "$E2E_DIR/spy.log"
mkdir -p "$HOME/.config/hark"
echo 'cover_art = false' >"$HOME/.config/hark/config.toml"
run_spied
keys n
# (Paused: the queue saved when the last run quit came back, and the playlist joined it.)
expect_screen "⏸ Paused   02 Beside"
sleep 1.5  # nothing to wait for: with the setting off nothing is asked for at all
[ ! -e "$E2E_DIR/spy.log" ] || fail "cover_art = false, yet hark-cover ran: $(cat "$E2E_DIR/spy.log")"
no_picture || fail "cover_art = false, yet a picture was drawn"
pass "cover_art = false: hark-cover is never run and no cover is drawn"
keys q
expect_screen "hark-exit=0"
