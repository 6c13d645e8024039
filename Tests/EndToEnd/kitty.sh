#!/usr/bin/env bash
# Media keys in a real terminal: the interface in kitty itself (Debian's, on a virtual X server with
# software rendering), the keys sent as a keyboard sends them (XTEST, through xdotool, to the
# focused window): kitty reports them with its keyboard protocol, which hark asks for, and each does
# its own command (G17, G19). And the album's cover drawn as a picture through kitty's graphics
# protocol, read back from the X server's screen: its own colour, square, at the bottom right; gone
# when the window is too narrow for it.
source "$(dirname "$0")/lib.sh"
for tool in kitty Xvfb xdotool; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/packages.sh installs it)"
done
start_pulse_server
start_xvfb

mkdir "$E2E_DIR/music"
for t in 1:Alpha:330 2:Beta:440 3:Gamma:550; do
  IFS=: read -r n name f <<<"$t"
  sox -n -r 44100 -c 2 "$E2E_DIR/music/0$n $name.wav" synth 60 sine "$f" vol 0.2
done
# A flat colour no terminal palette has: drawn as character cells it would come out as the
# nearest of the palette's 256, as a picture it is itself.
ffmpeg -nostdin -v error -f lavfi -i "color=c=0x22cc44:size=300x300:rate=1" -frames:v 1 \
  "$E2E_DIR/music/cover.png"
start kitty env LIBGL_ALWAYS_SOFTWARE=1 kitty --config NONE -o confirm_os_window_close=0 \
  -o initial_window_width=1000 -o initial_window_height=700 \
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
wait_until 5 "a few seconds into Alpha" 'position_at_least 3'
key XF86AudioStop
wait_until 5 "stop: stopped" 'test "$(playback state)" = stopped'
# Play after Stop: the track again from its start, and the player is still the now-playing app.
key XF86AudioPlay
wait_until 5 "play after stop: playing" 'test "$(playback state)" = playing'
test "$(title)" = "01 Alpha" || fail "play after stop played $(title)"
check "$(playback position) < 2" || fail "play after stop went on from $(playback position) s"
pass "in kitty, the media keys play, go to the next and the previous track, pause, stop and play again"

# --- The cover as a picture: the screen read back (Xvfb keeps it in $E2E_DIR/fb).
cover_box() { python3 "$(dirname "$0")/xwd_colour.py" "$E2E_DIR/fb/Xvfb_screen0" 22cc44 6; }
picture_shown() { [ "$(cover_box | cut -d' ' -f1)" -gt 10000 ]; }
no_picture() { [ "$(cover_box | cut -d' ' -f1)" -eq 0 ]; }
wait_for 10 "the cover drawn as a picture" picture_shown
read -r count x0 y0 x1 y1 <<<"$(cover_box)"
w=$((x1 - x0 + 1)) h=$((y1 - y0 + 1))
geometry=$(xdotool getwindowgeometry "$win" | awk '/Geometry/ {print $2}')
ww=${geometry%x*} wh=${geometry#*x}
check "abs($w - $h) <= 0.1 * $h" || fail "the cover is not square: ${w}x${h}"
check "$count >= 0.95 * $w * $h" || fail "the cover's box is not filled by it: $count of ${w}x${h}"
check "$x0 > $ww / 2 and $y0 > $wh / 3" || fail "the cover is not at the bottom right: at $x0,$y0"
pass "kitty draws the cover as a picture, in its own colour: ${w}x${h} px at $x0,$y0 of ${ww}x${wh}"
xdotool windowsize "$win" 560 700
wait_for 10 "the picture to go from a narrow window" no_picture
xdotool windowsize "$win" 1000 700
wait_for 10 "the picture back in a wide window" picture_shown
pass "too narrow a window takes the picture away; widened, it is back"
