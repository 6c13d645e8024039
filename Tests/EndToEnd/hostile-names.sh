#!/usr/bin/env bash
# Names reach the terminal escaped; hostile files do not hang the player and are skipped with their
# reason. A file whose name holds terminal escape sequences (retitle, clear the screen) and a
# newline plays, and every line hark prints about it shows them as \x1b, \n...: nothing raw reaches
# the user's terminal, and one line stays one line.
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

# A FIFO named in a playlist is refused with its kind before anything opens it (it hung 'hark play'
# for ever), and the next file plays.
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

# Many channels. A valid 9-channel WAV (it overflowed a heap buffer) plays; one of 40 is refused
# with the reason; the next file plays. Through the real decoder and ALSA's null.
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

# Files that decode to nothing. An Ogg cut before its first audio page and a FLAC cut inside its
# header open but hold no frame: each is skipped with its reason, and the track after each is
# announced as what plays (the one after the Ogg was never announced: it began where the cut file
# began). Through the real decoder and ALSA's null, which takes everything at once.
sox -n -r 44100 -c 2 "$dir/whole.ogg" synth 2 sine 440
sox -n -r 44100 -c 2 "$dir/whole.flac" synth 2 sine 440
head -c 4200 "$dir/whole.ogg" >"$dir/cut.ogg"
head -c 42 "$dir/whole.flac" >"$dir/cut.flac"
sox -n -r 44100 -c 2 "$dir/after-ogg.ogg" synth 0.3 sine 550
sox -n -r 44100 -c 2 "$dir/after-flac.ogg" synth 0.3 sine 660
set +e
timeout 20 "$HARK_BIN" play --no-ui --device null "$dir/cut.ogg" "$dir/after-ogg.ogg" \
  "$dir/cut.flac" "$dir/after-flac.ogg" >"$E2E_DIR/cut.txt" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || fail "files cut short: exit $rc: $(cat "$E2E_DIR/cut.txt")"
grep -qF "cut.ogg': no sound in it (empty, or cut short)" "$E2E_DIR/cut.txt" \
  || fail "the cut Ogg was not reported: $(cat "$E2E_DIR/cut.txt")"
grep -qF "cut.flac': " "$E2E_DIR/cut.txt" || fail "the cut FLAC was not reported: $(cat "$E2E_DIR/cut.txt")"
grep -qF "playing 'cut" "$E2E_DIR/cut.txt" && fail "a file with no sound was announced as playing: $(cat "$E2E_DIR/cut.txt")"
grep -qF "playing 'after-ogg' (2/4)" "$E2E_DIR/cut.txt" \
  || fail "the track after the cut Ogg was not announced: $(cat "$E2E_DIR/cut.txt")"
grep -qF "playing 'after-flac' (4/4)" "$E2E_DIR/cut.txt" \
  || fail "the track after the cut FLAC was not announced: $(cat "$E2E_DIR/cut.txt")"
pass "an Ogg and a FLAC cut short were skipped with their reasons and the track after each was announced: $(grep -F "cut.flac'" "$E2E_DIR/cut.txt")"

# Names as the file system has them. A folder and files named in Latin-1 (bytes that are not UTF-8,
# as an old disk or a zip from Windows has them) play from the folder, from the command line and
# from a playlist that names them in those bytes, and are shown with those bytes escaped (\xe9),
# never as U+FFFD, and never as "no such file".
latin="$E2E_DIR/"$'Bj\xf6rk'
mkdir -p "$latin"
sox -n -r 44100 -c 2 "$latin/"$'caf\xe9.wav' synth 0.3 sine 440
sox -n -r 44100 -c 2 "$latin/"$'J\xf3ga.flac' synth 0.3 sine 550
printf '%s\n' $'caf\xe9.wav' >"$latin/list.m3u"
set +e
hark play --no-ui --device null "$latin" "$latin/"$'J\xf3ga.flac' "$latin/list.m3u" >"$E2E_DIR/latin.txt" 2>&1
rc=$?
set -e
[ $rc -eq 0 ] || fail "Latin-1 names: exit $rc: $(cat -v "$E2E_DIR/latin.txt")"
grep -qF "playing 'caf\\xe9' (1/4)" "$E2E_DIR/latin.txt" || fail "the folder's Latin-1 file: $(cat -v "$E2E_DIR/latin.txt")"
grep -qF "playing 'J\\xf3ga' (2/4)" "$E2E_DIR/latin.txt" || fail "the folder's second: $(cat -v "$E2E_DIR/latin.txt")"
grep -qF "playing 'J\\xf3ga' (3/4)" "$E2E_DIR/latin.txt" || fail "the name as an argument: $(cat -v "$E2E_DIR/latin.txt")"
grep -qF "playing 'caf\\xe9' (4/4)" "$E2E_DIR/latin.txt" || fail "the name from the playlist: $(cat -v "$E2E_DIR/latin.txt")"
if grep -q "cannot play\|�" "$E2E_DIR/latin.txt"; then fail "a Latin-1 name was lost: $(cat -v "$E2E_DIR/latin.txt")"; fi
pass "Latin-1 names play from a folder, as an argument and from a playlist, shown as \\xe9 (4 of 4 played)"
