#!/usr/bin/env bash
# The album's cover as a sixel picture, in a real xterm that draws sixels (as a VT340: its device
# attributes then name feature 4), on a virtual X server, read back from the screen: its own colour,
# square, at the bottom right. Sixels are pixels in the terminal's cells, so what curses draws must
# not leave copies of the picture behind nor wipe part of it: after the list beside it scrolls down
# and back, after the help is shown over it and closed, and after the window is narrowed (no room:
# no picture) and widened, there is exactly one picture, whole. TERM stays xterm's own (8 colours,
# too few for coloured blocks): the picture does not need a palette.
source "$(dirname "$0")/lib.sh"
for tool in xterm Xvfb xdotool; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/packages.sh installs it)"
done
start_xvfb

mkdir "$E2E_DIR/music"
sox -n -r 44100 -c 2 "$E2E_DIR/music/01 Alpha.wav" synth 30 sine 330 vol 0.2
# Enough rows to scroll the list beside the picture.
for n in $(seq 2 60); do
  ln "$E2E_DIR/music/01 Alpha.wav" "$E2E_DIR/music/$(printf %02d "$n") Song number $n.wav"
done
# A flat colour no palette has: a sixel picture keeps it (chafa's palette is the picture's own).
ffmpeg -nostdin -v error -f lavfi -i "color=c=0x22cc44:size=300x300:rate=1" -frames:v 1 \
  "$E2E_DIR/music/cover.png"
# A wide border: xterm counts it in the window's size in pixels and does not answer CSI 16 t,
# so hark's idea of a cell is 1.5 pixels too tall, and what the picture puts below its cells
# must be wiped. A scalable font, to change.
start xterm xterm -ti vt340 -b 30 -fa "DejaVu Sans Mono" -fs 10 -geometry 120x40 \
  -e "$HARK_BIN" --device null "$E2E_DIR/music"
win=$(xdotool search --sync --class xterm | head -1)
xdotool windowfocus --sync "$win"
key() { xdotool key --clearmodifiers "$@"; }

cover_box() { python3 "$(dirname "$0")/xwd_colour.py" "$E2E_DIR/fb/Xvfb_screen0" 22cc44 6; }
no_picture() { [ "$(cover_box | cut -d' ' -f1)" -eq 0 ]; }
# The picture as first drawn, and nothing else of its colour anywhere.
first=""
the_picture() { [ -n "$first" ] && [ "$(cover_box)" = "$first" ]; }
# Drawn, and the same on a second look (not read while xterm is still drawing it).
picture_settled() {
  local seen
  seen=$(cover_box)
  [ "$(cut -d' ' -f1 <<<"$seen")" -gt 5000 ] && sleep 0.2 && [ "$(cover_box)" = "$seen" ]
}
wait_for 10 "the cover drawn as a sixel picture" picture_settled
first=$(cover_box)
read -r count x0 y0 x1 y1 <<<"$first"
w=$((x1 - x0 + 1)) h=$((y1 - y0 + 1))
geometry=$(xdotool getwindowgeometry "$win" | awk '/Geometry/ {print $2}')
ww=${geometry%x*} wh=${geometry#*x}
check "abs($w - $h) <= 0.1 * $h" || fail "the cover is not square: ${w}x${h}"
check "$count == $w * $h" || fail "the cover's box is not filled by it: $count of ${w}x${h}"
check "$x0 > $ww / 2 and $y0 > $wh / 3" || fail "the cover is not at the bottom right: at $x0,$y0"
# The now-playing bar (cyan) starts below the picture: a picture made for cells a pixel too
# tall would lie over its top.
bar_top() {
  python3 "$(dirname "$0")/xwd_colour.py" "$E2E_DIR/fb/Xvfb_screen0" 00cdcd 0 \
    "0,$1,$(($2 - 1)),767" | cut -d' ' -f3
}
top=$(bar_top "$y0" "$x0")
check "$top > $y1" || fail "the picture (down to $y1) lies over the now-playing bar (from $top)"
pass "xterm draws the cover as a sixel picture, in its own colour: ${w}x${h} px at $x0,$y0, above the bar"

# Down to the end of the list and back: every row beside the picture changes, and curses would
# scroll them, picture and all. Where the selection is, from the screen: the selected row is
# drawn in reverse, a black bar left of the picture.
bar_at_bottom() {
  [ "$(python3 "$(dirname "$0")/xwd_colour.py" "$E2E_DIR/fb/Xvfb_screen0" 000000 0 \
    "0,$((y1 - 10)),$((x0 - 8)),$y1" | cut -d' ' -f1)" -gt 3000 ]
}
bar_elsewhere() { ! bar_at_bottom; }
bar_at_bottom && fail "the selection is at the bottom before the list has moved"
# Each run of keys ends with one whose effect hark publishes (n, b: the track), so that the
# picture is looked at once all of them have been taken.
for _ in $(seq 60); do key j; done
key G n
wait_until 10 "the keys taken: next track" 'test "$(playback title)" = "02 Song number 2"'
bar_at_bottom || fail "the selection is not at the end of the list"
wait_for 5 "one picture, whole, after the list scrolled down" the_picture
for _ in $(seq 60); do key k; done
key g b
wait_until 10 "the keys taken: previous track" 'test "$(playback title)" = "01 Alpha"'
bar_elsewhere || fail "the selection is still at the bottom"
wait_for 5 "one picture, whole, after the list scrolled back" the_picture
pass "the list scrolls beside the picture and back: one picture, whole, no copies left"

key question
wait_for 5 "the picture gone under the help" no_picture
key Escape
wait_for 5 "the picture back when the help closes" the_picture
pass "the help takes the picture away, all of it; closed, the picture is back"

xdotool windowsize "$win" 400 530
wait_for 10 "the picture to go from a narrow window" no_picture
xdotool windowsize "$win" "$ww" "$wh"
wait_for 10 "the picture back in a wide window" the_picture
pass "too narrow a window takes the picture away; widened, it is back as it was"

# A smaller font (xterm keeps 120x40 cells, in a smaller window): the picture made for the old
# cells is not drawn; one for the new cells is, smaller, whole, above the bar, and nothing of
# the old one is left.
key shift+KP_Subtract
smaller() {
  picture_settled || return 1
  read -r count x0 y0 x1 y1 <<<"$(cover_box)"
  [ $((y1 - y0 + 1)) -lt "$h" ] && [ "$count" -eq $(((x1 - x0 + 1) * (y1 - y0 + 1))) ]
}
wait_for 10 "a smaller picture, alone, for the smaller font" smaller
top=$(bar_top "$y0" "$x0")
check "$top > $y1" || fail "after the font change the picture (down to $y1) lies over the bar (from $top)"
pass "a smaller font: the picture is made again for the new cells, whole and alone"
