#!/usr/bin/env bash
# Chapters and kept places, end to end, on a private PulseAudio: an M4B audiobook with three
# chapters made by ffmpeg shows them in the interface (tmux), ']' and '[' move between them
# (n and b stay the tracks'), the Chapters view lists them, 'hark ctl chapter next' moves on
# through the session server and is refused in the last chapter (G19); the speed asked for is
# kept for the book's file, not the folder it shares; the place the book was left at survives
# kill -9 of the player, and a new player goes on from there, 10 s back, at the book's speed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tmux.sh"
start_pulse
export XDG_CACHE_HOME="$E2E_DIR/cache"
book="$E2E_DIR/The Book.m4b"
cat >"$E2E_DIR/chapters.txt" <<'EOF'
;FFMETADATA1
title=The Book
artist=Reader
genre=Audiobook
[CHAPTER]
TIMEBASE=1/1000
START=0
END=20000
title=Opening
[CHAPTER]
TIMEBASE=1/1000
START=20000
END=40000
title=The Middle
[CHAPTER]
TIMEBASE=1/1000
START=40000
END=60000
title=The End
EOF
ffmpeg -nostdin -v error -f lavfi -i "sine=f=330:d=60" -i "$E2E_DIR/chapters.txt" \
  -map 0:a -map_metadata 1 -map_chapters 1 -c:a aac -b:a 64k "$book"

# The interface, playing the book: the chapter on the now-playing line, moved by ']' and '['.
tmux_start 100 24
keys "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR HOME=$HOME XDG_CACHE_HOME=$XDG_CACHE_HOME $HARK_BIN play --device pulse '$book'" Enter
expect_screen "ch 1/3 Opening" 10
keys ']'
expect_screen "ch 2/3 The Middle" 5
wait_until 5 "the player in the second chapter" "position_at_least 20"
keys '['
expect_screen "ch 1/3 Opening" 5
wait_until 5 "the player back in the first chapter" "! position_at_least 20"
keys 4
expect_screen "4 Chapters" 5
expect_screen "The Middle" 5
expect_screen "3 chapters" 5
screen_text >"$E2E_DIR/chapters-view.txt"
pass "the interface names the chapter heard, ] and [ move between them, 4 lists them"

# hark ctl, through the session server to the now-playing app.
hark ctl chapter next || fail "hark ctl chapter next failed"
expect_screen "ch 2/3 The Middle" 5
wait_until 5 "the chapter's end published" 'check "$(playback chapterEnd) == 40"'
hark ctl chapter next || fail "hark ctl chapter next (to the last) failed"
expect_screen "ch 3/3 The End" 5
if hark ctl chapter next 2>"$E2E_DIR/refused.txt"; then fail "a next chapter in the last one"; fi
grep -q "does not take .next chapter. right now" "$E2E_DIR/refused.txt" || fail "the refusal said: $(cat "$E2E_DIR/refused.txt")"
pass "hark ctl chapter next moves on, publishes chapterEnd, and is refused in the last chapter (G19)"

# The place kept survives kill -9: written every 5 s of play, synced.
# A book in one file keeps its own speed, by the file (not the folder it shares with others).
hark ctl rate 1.5 || fail "hark ctl rate 1.5 failed"
expect_screen "kept for 'The Book.m4b'" 5
pass "the book's speed is kept for the book: 'The Book.m4b', not its folder"

wait_until 12 "7 s heard in the last chapter" "position_at_least 47"
heard=$(playback position)
pid=$(player_pid)
[ -n "$pid" ] || fail "no player pid"
kill -9 "$pid"
wait_for 5 "the player gone" eval "! alive $pid"
hark library places >"$E2E_DIR/places.txt" || fail "hark library places failed"
grep -q "The Book.m4b" "$E2E_DIR/places.txt" || fail "no place kept: $(cat "$E2E_DIR/places.txt")"
keys q
start again hark play --no-ui --device pulse "$book"
expect_log again "goes on from" 10
wait_until 5 "the new player playing" 'test "$(playback state)" = playing'
resumed=$(playback position)
check "$resumed <= $heard and $resumed >= $heard - 15.5" \
  || fail "heard to ${heard}s before kill -9, went on at ${resumed}s"
wait_until 3 "the book at its 1.5x" 'check "$(playback rate) == 1.5"'
pass "the place kept survives kill -9: heard to ${heard}s, a new player goes on at ${resumed}s at the book's 1.5× ($(cut -f1 "$E2E_DIR/places.txt"))"
echo "--- the chapters view, as captured:"
cat "$E2E_DIR/chapters-view.txt"
