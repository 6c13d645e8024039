#!/usr/bin/env bash
# Media keys in a real terminal (issue 14): the interface in kitty itself (Debian's, on a
# virtual X server with software rendering), the keys sent as a keyboard sends them (XTEST,
# through xdotool, to the focused window): kitty reports them with its keyboard protocol, which
# hark asks for, and each does its own command (G17, G19).
source "$(dirname "$0")/lib.sh"
for tool in kitty Xvfb xdotool; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/packages.sh installs it)"
done
start_pulse_server
start xvfb Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp 3>"$E2E_DIR/display"
wait_for 10 "the virtual X server" test -s "$E2E_DIR/display"
export DISPLAY=":$(head -1 "$E2E_DIR/display")"

mkdir "$E2E_DIR/music"
for t in 1:Alpha:330 2:Beta:440 3:Gamma:550; do
  IFS=: read -r n name f <<<"$t"
  sox -n -r 44100 -c 2 "$E2E_DIR/music/0$n $name.wav" synth 60 sine "$f" vol 0.2
done
start kitty env LIBGL_ALWAYS_SOFTWARE=1 kitty --config NONE -o confirm_os_window_close=0 \
  -e "$HARK_BIN" --device pulse "$E2E_DIR/music"
wait_until 20 "the interface's player registered" 'test "$(session_field hark name)" = \"hark\"'
win=$(xdotool search --sync --class kitty | head -1)
xdotool windowfocus --sync "$win"
key() { xdotool key --clearmodifiers "$1"; }
title() { playback title; }

key XF86AudioPlay
wait_until 5 "play: playing" 'test "$(playback state)" = playing'
key XF86AudioNext
wait_until 5 "next: Beta" 'test "$(title)" = "02 Beta"'
# The Pause key itself (keycode 209 in X's evdev map): for the keysym XF86AudioPause xdotool
# would press Shift+Play, the key's second level, which kitty reports as Shift+Play.
key 209
wait_until 5 "pause: paused" 'test "$(playback state)" = paused'
key XF86AudioPlay
wait_until 5 "play again" 'test "$(playback state)" = playing'
key XF86AudioPrev
wait_until 5 "previous: Alpha" 'test "$(title)" = "01 Alpha"'
key XF86AudioStop
wait_until 5 "stop: stopped" 'test "$(playback state)" = stopped'
pass "in kitty, the media keys play, go to the next and the previous track, pause and stop"
