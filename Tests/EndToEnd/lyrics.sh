#!/usr/bin/env bash
# Lyrics, end to end: a 60 s track made by ffmpeg with an LRC file beside it (a byte-order mark,
# CRLF, stamps out of order, an offset, enhanced word stamps); 'hark lyrics' of the file and of
# the track the running player plays, '--now' following the song; the interface in tmux,
# attached to that player: the lyrics view (3) following the song, Enter on a line picked by
# hand going there in the song; a file with lyrics in its tags (MP4's ©lyr).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tmux.sh"
start_pulse
export XDG_CACHE_HOME="$E2E_DIR/cache"
music="$E2E_DIR/music"
mkdir -p "$music"
ffmpeg -nostdin -v error -f lavfi -i "sine=f=330:d=60" -ac 2 -metadata artist=Singer \
  -metadata title=Song "$music/song.flac"
# The offset (+500 ms) brings every stamp half a second sooner.
printf '\xef\xbb\xbf[ti:Song]\r\n[offset:+500]\r\n[00:20.50]Third line\r\n[00:04.50]First line\r\n[00:12.50]<00:12.50>Second <00:13.50>line <00:14.50>sung\r\n[00:40.50]\r\n[00:45.50][00:50.50]Last line\r\n' >"$music/song.lrc"
ffmpeg -nostdin -v error -f lavfi -i "sine=d=2" -c:a aac -metadata "lyrics=Tagged words
in MP4" "$music/tagged.m4a"

# Of a file.
[ "$(hark lyrics "$music/song.flac")" = "$(printf 'First line\nSecond line sung\nThird line\n\nLast line\nLast line')" ] \
  || fail "hark lyrics FILE: $(hark lyrics "$music/song.flac")"
# Read whole first: grep -q leaves at its match, and hark, still writing, would die of SIGPIPE
# (which pipefail counts as a failure).
lrc=$(hark lyrics --lrc "$music/song.flac")
grep -qx '\[00:12.00\]<00:12.00>Second <00:13.00>line <00:14.00>sung' <<<"$lrc" || fail "--lrc: $lrc"
[ "$(hark lyrics "$music/tagged.m4a")" = "$(printf 'Tagged words\nin MP4')" ] \
  || fail "the MP4's ©lyr: $(hark lyrics "$music/tagged.m4a")"
if hark lyrics "$E2E_DIR/none.flac" 2>/dev/null; then fail "a missing file had lyrics"; fi
pass "hark lyrics FILE: an .lrc with a BOM, CRLF, an offset and word stamps; MP4's ©lyr"

# Of the track playing, following it.
start player hark play --no-ui --device pulse "$music/song.flac"
expect_log player "playing 'Song'"
wait_until 10 "the first line sung" "[ \"\$(hark lyrics --now)\" = 'First line' ]"
wait_until 15 "the second line sung" "[ \"\$(hark lyrics --now)\" = 'Second line sung' ]"
all=$(hark lyrics)
[ "${all%%$'\n'*}" = "First line" ] || fail "hark lyrics: $all"
pass "hark lyrics and --now follow the track the running player plays"

# The interface, attached to that player: the lyrics view follows the song.
tmux_start 80 24
keys "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR HOME=$HOME XDG_CACHE_HOME=$XDG_CACHE_HOME $HARK_BIN" Enter
expect_screen "Back with the hark player"
keys 3
expect_screen "3 Lyrics" 5
expect_screen "synced lyrics from song.lrc" 5
expect_screen "Third line" 15
screen_text >"$E2E_DIR/lyrics-view.txt"
# Pick the first line by hand and go there: the song goes back to 0:04.
keys g Enter
wait_until 5 "the player at the first line" "position_at_least 4 && ! position_at_least 10"
pass "the lyrics view follows the song, and Enter on a line picked goes there ($(playback position) s)"
echo "--- the lyrics view, as captured:"
cat "$E2E_DIR/lyrics-view.txt"
