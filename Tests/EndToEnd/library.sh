#!/usr/bin/env bash
# The library index, as a user meets it: a generated library of tagged FLAC, MP3 and M4A files (3
# artists × 2 albums × 3 tracks, nested Artist/Album folders) indexed with `hark library scan` (read
# by TagLib in hark-tags); a rescan reads nothing; one changed file is all a rescan reads; `hark
# library search` folds case and accents. Then the real interface in tmux on it: the music folder
# leads to Artists → an artist's albums by year → the album's tracks in order; `/` from deep inside
# a view searches the whole library ("zoe" finds Zoë Keating's six tracks), and Enter plays the one
# chosen, heard on the sink. The Playlists view ("playlists (M3U/M3U8/PLS files in the music folder
# and hark's own)", "save as M3U8 (named; appears among playlists), load a playlist"): the music
# folder's listed by their paths relative to it, the queue saved with w listed at once, and Enter on
# it makes it the queue.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/tmux.sh"
start_pulse
export LANG=C.UTF-8
# hark's own playlists are kept here (not in the XDG_DATA_HOME of whoever runs the test).
export XDG_DATA_HOME="$HOME/.local/share"

# expect_header TEXT: waits for the header line (which names the view shown) to hold TEXT.
header_is() { tmux_ capture-pane -p -t "$SESSION" | head -1 | grep -qF -- "$1"; }
expect_header() { wait_for "${2:-5}" "the view '$1'" header_is "$1"; }

music="$E2E_DIR/music"
i=0
for artist in "Sigur Rós" "Zoë Keating" "Daft Punk"; do
  for album in 1 2; do
    folder="$music/$artist/$((2000 + album)) Album $album"
    mkdir -p "$folder"
    for track in 3 1 2; do  # made out of order: the index orders by the tags
      i=$((i + 1))
      case $((i % 3)) in 0) ext=flac codec=flac ;; 1) ext=mp3 codec=libmp3lame ;; 2) ext=m4a codec=aac ;; esac
      ffmpeg -nostdin -v error -f lavfi -i "sine=f=$((300 + 20 * i)):d=3" -ac 2 -c:a $codec \
        -metadata title="$artist $album.$track" -metadata artist="$artist" \
        -metadata album="$artist Album $album" -metadata date=$((2000 + album)) \
        -metadata track=$track -metadata genre="Genre $album" "$folder/$track.$ext"
    done
  done
done

hark library scan "$music" >"$E2E_DIR/scan1.txt" 2>"$E2E_DIR/scan1.err"
grep -qF "indexed '$music': 18 tracks (18 read, 0 removed)" "$E2E_DIR/scan1.txt" \
  || fail "first scan: $(cat "$E2E_DIR/scan1.txt" "$E2E_DIR/scan1.err")"
grep -qF "indexing: 18 of 18 files read" "$E2E_DIR/scan1.err" || fail "no progress: $(cat "$E2E_DIR/scan1.err")"
[ -s "$HOME/.cache/hark/library.sqlite3" ] || fail "no index in \$XDG_CACHE_HOME/hark"
grep -qF "18 tracks (0 read, 0 removed)" <<<"$(hark library scan "$music")" || fail "a rescan read files again"
changed=$(ls "$music/Daft Punk/2002 Album 2/3."*)
ffmpeg -nostdin -v error -y -i "$changed" -c copy -map_metadata 0 -metadata title="Retitled" \
  "$E2E_DIR/retagged.${changed##*.}"
mv "$E2E_DIR/retagged.${changed##*.}" "$changed"
grep -qF "18 tracks (1 read, 0 removed)" <<<"$(hark library scan "$music")" || fail "a changed file was not all a rescan read"
hark library search ZOE 2002 >"$E2E_DIR/search.txt"
[ "$(wc -l <"$E2E_DIR/search.txt")" -eq 3 ] || fail "search 'ZOE 2002': $(cat "$E2E_DIR/search.txt")"
grep -q "^Zoë Keating — Zoë Keating 2.1 — Zoë Keating Album 2 (2002)" "$E2E_DIR/search.txt" \
  || fail "search lines: $(cat "$E2E_DIR/search.txt")"
[ "$(hark library search retitled | wc -l)" -eq 1 ] || fail "the retagged title is not what the index says"
[ -z "$(hark library search sigur ros retitled 2>/dev/null)" ] || fail "a search that matches nothing found something"
out=$(hark library scan "$changed" 2>&1) && fail "a file given to library scan was scanned: $out"
[ "$out" = "hark: cannot index '$changed': not a folder" ] || fail "a file given to library scan: $out"
out=$(hark library scan "$music/nowhere" 2>&1) && fail "a missing folder was scanned: $out"
[ "$out" = "hark: cannot index '$music/nowhere': no such folder" ] || fail "a missing folder: $out"
# A folder indexed, then deleted: scanned again, its tracks leave the index.
mkdir -p "$E2E_DIR/other"
ffmpeg -nostdin -v error -f lavfi -i "sine=d=1" -c:a flac -metadata title="Elsewhere Song" \
  "$E2E_DIR/other/1.flac"
hark library scan "$E2E_DIR/other" >/dev/null 2>&1 || fail "scanning a second folder failed"
[ "$(hark library search elsewhere song | wc -l)" -eq 1 ] || fail "the second folder's track is not indexed"
rm -r "$E2E_DIR/other"
out=$(hark library scan "$E2E_DIR/other" 2>/dev/null) || fail "a deleted folder could not be scanned: $out"
grep -qF "0 tracks (0 read, 1 removed)" <<<"$out" || fail "scanning a deleted folder said: $out"
[ -z "$(hark library search elsewhere song 2>/dev/null)" ] || fail "a deleted folder's track is still indexed"
pass "hark library scan indexes 18 tagged FLAC/MP3/M4A files, a rescan reads none, a changed one is read again, a deleted folder leaves; search folds case and accents"

# Two playlists of one name in the music folder (told apart in the Playlists view by their
# folders), with entries relative to them; one names a file that is not there, which playing
# it leaves out and says.
dp_tracks=$(cd "$music/Daft Punk/2001 Album 1" && ls | head -2)
sed 's|^|2001 Album 1/|' <<<"$dp_tracks"$'\ngone.flac' >"$music/Daft Punk/favourites.m3u"
printf '#EXTM3U\n2001 Album 1/%s\n' "$(cd "$music/Sigur Rós/2001 Album 1" && ls | head -1)" \
  >"$music/Sigur Rós/favourites.M3U"

# A file touched since the scan: the interface's own scan at start reads it, and says so (an
# unchanged library gets no line).
touch "$changed"
tmux_ new-session -d -s "$SESSION" -x 110 -y 30 \
  "env XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' HOME='$HOME' XDG_DATA_HOME='$XDG_DATA_HOME' PULSE_SERVER='$PULSE_SERVER' PULSE_SINK=out LANG=C.UTF-8 '$HARK_BIN' --device pulse '$music'"
expect_screen "Library indexed: 18 tracks (1 read, 0 gone)" 20
expect_screen "Artists/"
tmux_ send-keys -t "$SESSION" Down Enter
expect_header "Artists"
expect_screen "Zoë Keating/"
grep -A3 -F "../" <<<"$(screen_text)" | grep -qF "Daft Punk/" || fail "artists A–Z: $(screen_text)"
tmux_ send-keys -t "$SESSION" Down Down Enter
expect_screen "Artists › Sigur Rós"
expect_screen "2001  Sigur Rós Album 1/"
tmux_ send-keys -t "$SESSION" Down Enter
expect_screen "Sigur Rós › Sigur Rós Album 1"
# Tracks in their order (1, 2, 3), though the files were made 3, 1, 2.
order=$(screen_text | grep -oE "Sigur Rós 1\.[123]" | tr '\n' ' ')
[ "$order" = "Sigur Rós 1.1 Sigur Rós 1.2 Sigur Rós 1.3 " ] || fail "the album's tracks in order: '$order'"
pass "the interface leads from the music folder to Artists, an artist's albums by year and the album's tracks in order"

tmux_ send-keys -t "$SESSION" / z o e
expect_screen "Zoë Keating 2.3"
[ "$(screen_text | grep -cF "Zoë Keating ")" -ge 6 ] || fail "'zoe' from inside an album: $(screen_text)"
tmux_ send-keys -t "$SESSION" Enter Down Down Enter
expect_screen "Playing" 10
wait_until 10 "Zoë's track heard" 'check "$(probe level "$(ago 1)" "$(now)") > -40"'
pass "/ searches the whole library from inside a view ('zoe' finds Zoë Keating's six tracks), and Enter plays one, heard"

# A new album copied in while the interface is open: inotify sees it, the index takes it, and
# the Artists view (reopened) lists its artist, with no restart.
tmux_ send-keys -t "$SESSION" Escape
mkdir -p "$E2E_DIR/incoming"
for track in 1 2; do
  ffmpeg -nostdin -v error -f lavfi -i "sine=d=2" -ac 2 -c:a flac -metadata title="New $track" \
    -metadata artist="Aphex Twin" -metadata album="Late Arrival" -metadata track=$track \
    "$E2E_DIR/incoming/$track.flac"
done
mv "$E2E_DIR/incoming" "$music/Aphex Twin"
wait_until 15 "the new album in the index" 'grep -q "New 2" <<<"$(hark library search late arrival)"'
tmux_ send-keys -t "$SESSION" Escape
tmux_ send-keys -t "$SESSION" 1
tmux_ send-keys -t "$SESSION" BSpace BSpace BSpace
expect_header "$music"
expect_screen "Artists/"
tmux_ send-keys -t "$SESSION" g Down Enter
expect_header "Artists"
expect_screen "Aphex Twin/" 10
pass "an album copied in while the interface is open is indexed (inotify) and listed, no restart"

# `a` on an artist adds their tracks from the index (a row of a view is what it lists, as a folder's
# row is its files); the first artist A–Z is Aphex Twin, with two.
before=$(screen_text | head -1 | grep -oE "Queue \([0-9]+\)" | grep -oE "[0-9]+")
tmux_ send-keys -t "$SESSION" g Down a
expect_screen "Added 2 tracks to the queue"
expect_screen "Queue ($((before + 2)))"
pass "a on an artist of the Artists view adds their tracks"

# A search being typed when the index changes (a rescan ends, an album is copied in) is kept,
# and searched again: what was typed is not lost, and the new album is among the results.
tmux_ send-keys -t "$SESSION" / l a t e
expect_screen "New 2"
mkdir -p "$E2E_DIR/incoming"
ffmpeg -nostdin -v error -f lavfi -i "sine=d=2" -ac 2 -c:a flac -metadata title="Bloom 1" \
  -metadata artist="Boards of Canada" -metadata album="Late Bloomer" -metadata track=1 \
  "$E2E_DIR/incoming/1.flac"
mv "$E2E_DIR/incoming" "$music/Boards of Canada"
expect_screen "Bloom 1" 15
expect_screen "/late▏"
tmux_ send-keys -t "$SESSION" r
expect_screen "/later▏"
pass "a search being typed when an album is copied in is kept and searched again: the new album is found"
tmux_ send-keys -t "$SESSION" Escape

# A file retagged while its row is shown (search results): the row shows the new title, read
# again from the index (it kept the title read before).
# (The Escape above taken alone first: a / right behind it is read as Alt-/.)
expect_screen_not "later"
tmux_ send-keys -t "$SESSION" / b l o o m e r Enter
expect_screen "Bloom 1"
bloom="$music/Boards of Canada/1.flac"
ffmpeg -nostdin -v error -y -i "$bloom" -c copy -map_metadata 0 -metadata title="Blossom 1" \
  "$E2E_DIR/blossom.flac"
mv "$E2E_DIR/blossom.flac" "$bloom"
expect_screen "Blossom 1" 15
expect_screen_not "Bloom 1"
pass "a file retagged while shown in the search results shows its new title"
tmux_ send-keys -t "$SESSION" Escape

# The Playlists view: the music folder's two "favourites" by their relative paths; the queue
# saved with w from inside the view is listed at once; Enter on a playlist makes it the queue.
# playlist_row NAME: a playlist row (marker, name, "playlist") names NAME.
playlist_row() { screen_text | grep -qE -- "≡ +$1 +playlist"; }
queue_count() { screen_text | head -1 | grep -oE "Queue \([0-9]+\)"; }
saved_queue=$(queue_count)
case $saved_queue in "Queue (0)" | "Queue (2)") fail "the queue to save: $saved_queue" ;; esac
tmux_ send-keys -t "$SESSION" Escape 1 BSpace
expect_header "$music"
expect_screen "Playlists/"
tmux_ send-keys -t "$SESSION" g Down Down Down Down Enter
expect_header "Playlists"
wait_for 10 "the music folder's playlists listed" playlist_row "Daft Punk/favourites\.m3u"
playlist_row "Sigur Rós/favourites\.M3U" || fail "the second 'favourites' by its folder: $(screen_text)"
! playlist_row "Road trip" || fail "a playlist listed before it was saved: $(screen_text)"
tmux_ send-keys -t "$SESSION" w
tmux_ send-keys -t "$SESSION" -l "Road trip"
tmux_ send-keys -t "$SESSION" Enter
expect_screen "Saved the queue as '$XDG_DATA_HOME/hark/playlists/Road trip.m3u8'"
wait_for 5 "the saved playlist listed in the view" playlist_row "Road trip"
[ -s "$XDG_DATA_HOME/hark/playlists/Road trip.m3u8" ] || fail "no playlist file in \$XDG_DATA_HOME/hark/playlists"
# The same name again: hark asks before it replaces the user's playlist. n goes back to the
# name, Esc saves nothing, y replaces it.
# save_again: w, the name of the playlist just saved, Enter: hark asks before replacing it.
save_again() {
  tmux_ send-keys -t "$SESSION" w
  tmux_ send-keys -t "$SESSION" -l "Road trip"
  tmux_ send-keys -t "$SESSION" Enter
  expect_screen "Replace the playlist 'Road trip' with the queue?"
}
save_again
tmux_ send-keys -t "$SESSION" n
expect_screen "Save the queue as: Road trip"
tmux_ send-keys -t "$SESSION" Enter
expect_screen "Replace the playlist 'Road trip' with the queue?"
touch -d @1000000000 "$XDG_DATA_HOME/hark/playlists/Road trip.m3u8"
tmux_ send-keys -t "$SESSION" Escape
expect_screen "The queue is not saved; the playlist 'Road trip' is as it was"
[ "$(stat -c %Y "$XDG_DATA_HOME/hark/playlists/Road trip.m3u8")" = 1000000000 ] ||
  fail "the playlist was written though the user said Esc"
save_again
tmux_ send-keys -t "$SESSION" y
expect_screen "Replaced the playlist '$XDG_DATA_HOME/hark/playlists/Road trip.m3u8' with the queue"
[ "$(stat -c %Y "$XDG_DATA_HOME/hark/playlists/Road trip.m3u8")" != 1000000000 ] ||
  fail "y did not write the playlist"
pass "w with the name of a playlist hark has asks first: n renames, Esc keeps it, y replaces it"
# hark's own first: .., Road trip, Daft Punk/favourites.m3u, Sigur Rós/favourites.M3U.
tmux_ send-keys -t "$SESSION" g Down Down Enter
expect_screen "Queue (2)" 10
expect_screen "u brings them back); left out: cannot play '"
tmux_ send-keys -t "$SESSION" g Down Enter
expect_screen "$saved_queue" 10
tmux_ send-keys -t "$SESSION" 2
expect_screen "Zoë Keating 2.3"
expect_screen_not "Daft Punk 1."
pass "Playlists lists the music folder's by their relative paths and the queue saved with w at once; Enter on one makes it the queue, leaving out and naming an entry that is not there"
# Queue edits, each said with the key that undoes it; news a later edit makes untrue goes.
n=$(queue_count | tr -dc 0-9)
tmux_ send-keys -t "$SESSION" g d
expect_screen "' (u brings it back)"
expect_screen "Removed '"
expect_screen "Queue ($((n - 1)))"
tmux_ send-keys -t "$SESSION" u
expect_screen "Queue ($n)"
expect_screen "The queue is back as it was: $n tracks"
tmux_ send-keys -t "$SESSION" J
expect_screen_not "The queue is back as it was" 2
tmux_ send-keys -t "$SESSION" S
expect_screen "Shuffled the queue (u brings its order back)"
tmux_ send-keys -t "$SESSION" u
expect_screen "The queue is back as it was: $n tracks"
pass "in the queue, d removes and says u brings it back; u does; a move drops news it made untrue; S shuffles, u unshuffles"
tmux_ send-keys -t "$SESSION" 1
tmux_ send-keys -t "$SESSION" q

# A damaged index when the interface opens (the user's notes written over it, say): set aside
# under a name of its own, said on the status line and in hark.log, and built again. The
# interface's readers, which open it first, used to set it aside without a word.
wait_for 10 "the interface gone" eval '! tmux_ has-session -t "$SESSION" 2>/dev/null'
index="$HOME/.cache/hark/library.sqlite3"
index_open() { find /proc/[0-9]*/fd -lname "$index*" 2>/dev/null | grep -q .; }
wait_for 10 "the index closed by the player and the interface" eval '! index_open'
rm -f "$index-wal" "$index-shm"
echo "not a database, my notes" >"$index"
tmux_ new-session -d -s "$SESSION" -x 110 -y 30 \
  "env XDG_RUNTIME_DIR='$XDG_RUNTIME_DIR' HOME='$HOME' XDG_DATA_HOME='$XDG_DATA_HOME' PULSE_SERVER='$PULSE_SERVER' PULSE_SINK=out LANG=C.UTF-8 '$HARK_BIN' --device pulse '$music'"
expect_screen "was set aside as" 10
# Built again: the ways into the index come back (the scan's own lines wait behind the warning).
expect_screen "Artists/" 30
wait_for 30 "the rebuilt index to find Zoë Keating's six tracks" \
  eval '[ "$(hark library search zoe 2>/dev/null | wc -l)" -eq 6 ]'
aside=$(ls "$index".broken-*) || fail "no index set aside beside '$index'"
grep -qx "not a database, my notes" "$aside" || fail "'$aside' is not the damaged index: $(head -c 200 "$aside")"
log="$XDG_STATE_HOME/hark/hark.log"
grep -q "was set aside as '$aside'" "$log" || fail "hark.log does not say it: $(tail -5 "$log")"
pass "a damaged index at the interface's start is set aside as '$(basename "$aside")', said on screen and in hark.log, and built again"
tmux_ send-keys -t "$SESSION" q
