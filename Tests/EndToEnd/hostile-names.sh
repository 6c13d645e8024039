#!/usr/bin/env bash
# Issue 16: names reach the terminal escaped; hostile files do not hang the player. A file whose name holds terminal escape sequences
# (retitle, clear the screen) and a newline plays, and every line hark prints about it shows
# them as \x1b, \n...: nothing raw reaches the user's terminal, and one line stays one line.
source "$(dirname "$0")/lib.sh"
dir="$E2E_DIR/music"
mkdir -p "$dir"
name=$'\e]0;pwned\a\e[2J two\nlines'
sox -n -r 44100 -c 2 "$dir/$name.wav" synth 0.3 sine 440
: >"$dir/$name.flac"  # an empty file: its problem line names it too
set +e
hark play --no-ui --device null "$dir/$name.flac" "$dir/$name.wav" >"$E2E_DIR/out.txt" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || fail "hark play exited $rc: $(cat -v "$E2E_DIR/out.txt")"
if grep -q $'\e' "$E2E_DIR/out.txt"; then fail "a raw ESC reached the output: $(cat -v "$E2E_DIR/out.txt")"; fi
if grep -q $'\a' "$E2E_DIR/out.txt"; then fail "a raw BEL reached the output: $(cat -v "$E2E_DIR/out.txt")"; fi
grep -qF "playing '\\x1b]0;pwned\\x07\\x1b[2J two\\nlines'" "$E2E_DIR/out.txt" \
  || fail "the title is not shown escaped: $(cat -v "$E2E_DIR/out.txt")"
grep -F "cannot play" "$E2E_DIR/out.txt" | grep -qF '\x1b]0;pwned\x07' \
  || fail "the problem line does not name the file escaped: $(cat -v "$E2E_DIR/out.txt")"
[ "$(grep -c "lines'" "$E2E_DIR/out.txt")" -eq 1 ] && ! grep -q "^lines" "$E2E_DIR/out.txt" \
  || fail "a newline in the name split a line: $(cat -v "$E2E_DIR/out.txt")"
pass "a name with ESC ] 0 ;, ESC [ 2 J and a newline played and was printed escaped, one line each ($(grep -c . "$E2E_DIR/out.txt") lines)"

# Issue 11/16: a FIFO named in a playlist is refused with its kind before anything opens it (it
# hung 'hark play' for ever), and the next file plays.
mkfifo "$dir/pipe.wav"
sox -n -r 44100 -c 2 "$dir/good.wav" synth 0.3 sine 440
printf 'pipe.wav\ngood.wav\n' >"$dir/list.m3u"
set +e
timeout 20 "$HARK_BIN" play --no-ui --device null "$dir/list.m3u" >"$E2E_DIR/fifo.txt" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || fail "a FIFO in a playlist: exit $rc (124: it hung): $(cat "$E2E_DIR/fifo.txt")"
grep -qF "pipe.wav': it is a named pipe (FIFO), not a sound file" "$E2E_DIR/fifo.txt" \
  || fail "the FIFO was not named with its kind: $(cat "$E2E_DIR/fifo.txt")"
grep -qF "playing 'good'" "$E2E_DIR/fifo.txt" || fail "the next file did not play: $(cat "$E2E_DIR/fifo.txt")"
pass "a FIFO in a playlist was refused before it was opened ($(grep -F "pipe.wav" "$E2E_DIR/fifo.txt" | head -1)), and the next file played"

# Issue 11: many channels. A valid 9-channel WAV (it overflowed a heap buffer) plays; one of 40
# is refused with the reason; the next file plays. Through the real decoder and ALSA's null.
sox -n -r 44100 -c 9 -b 16 "$dir/nine.wav" synth 0.2 sine 440
sox -n -r 44100 -c 40 -b 16 "$dir/forty.wav" synth 0.2 sine 440
set +e
timeout 20 "$HARK_BIN" play --no-ui --device null "$dir/nine.wav" "$dir/forty.wav" "$dir/good.wav" \
  >"$E2E_DIR/channels.txt" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || fail "9 and 40 channels: exit $rc: $(cat "$E2E_DIR/channels.txt")"
grep -qF "playing 'nine'" "$E2E_DIR/channels.txt" || fail "the 9-channel file did not play: $(cat "$E2E_DIR/channels.txt")"
grep -qF "forty.wav': it has 40 channels; hark plays files of 1 to 32" "$E2E_DIR/channels.txt" \
  || fail "the 40-channel file was not refused with the reason: $(cat "$E2E_DIR/channels.txt")"
grep -qF "playing 'good'" "$E2E_DIR/channels.txt" || fail "the next file did not play: $(cat "$E2E_DIR/channels.txt")"
pass "a 9-channel WAV played; a 40-channel one was refused with the reason; the next file played"
