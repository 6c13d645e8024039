#!/usr/bin/env bash
# Listens counted and sent, end to end: the real player (hark play --no-ui) on a PulseAudio null
# sink, ListenBrainz and Last.fm played by listening_services.py on loopback (their request forms
# and Last.fm's signatures checked as the services check them). Last.fm's desktop login; now
# playing; a listen at half a 31 s track (15.5 s heard); an outage (ListenBrainz answering 503,
# Last.fm not answering at all) that keeps the listens on disk and a service that comes back
# and gets them from the running player, in order, once each; a player killed with SIGKILL
# with a listen waiting, sent later by 'hark scrobble send'; a refused token that keeps its
# listens and says so; every listen counted in the library's plays.
source "$(dirname "$0")/lib.sh"
start_pulse
export XDG_CACHE_HOME="$E2E_DIR/cache" HARK_SCROBBLE_TIMEOUT=2
services="$E2E_DIR/services"
mkdir -p "$services" "$HOME/.config/hark"
start services python3 "$(dirname "$0")/listening_services.py" "$services" lb-token fm-key fm-secret
wait_for 5 "the services' port" test -s "$services/port"
port=$(cat "$services/port")
base="http://127.0.0.1:$port"
control() { curl -fsS "$base/control?$1" >/dev/null; }
cat >"$HOME/.config/hark/config.toml" <<EOF
[listenbrainz]
token = "lb-token"
url = "$base"
[lastfm]
api_key = "fm-key"
api_secret = "fm-secret"
url = "$base/2.0/"
auth_url = "$base/api/auth/"
EOF
for name in a b c; do
  ffmpeg -nostdin -v error -f lavfi -i "sine=f=440:d=31" -ac 2 -metadata "artist=Artist $name" \
    -metadata "title=Song $name" -metadata "album=Record" "$E2E_DIR/$name.flac"
done
taken() { python3 -c "
import json, sys
rows = [json.loads(l) for l in open('$services/taken.jsonl')] if __import__('os').path.exists('$services/taken.jsonl') else []
print(' '.join(r['service'] + ':' + r['track'] for r in rows))"; }
waiting() { python3 -c "
import json, os
p = '$XDG_STATE_HOME/hark/listens-queue.json'
q = json.load(open(p)) if os.path.exists(p) else {'listens': []}
print(' '.join(l['listen']['track']['title'] + ':' + ','.join(l['services']) for l in q['listens']))"; }

# Last.fm's desktop auth: a token, the page the user opens to allow hark, the session.
start login hark scrobble login lastfm --wait 20
wait_until 10 "the page to allow hark" "grep -q '/api/auth/?api_key=fm-key&token=' '$E2E_DIR/login.log'"
curl -fsS "$(grep -o 'http://[^ ]*/api/auth/[^ ]*' "$E2E_DIR/login.log")" >/dev/null
expect_log login "logged in to Last.fm as tester" 10
[ "$(stat -c %a "$XDG_STATE_HOME/hark/lastfm-session.json")" = 600 ] || fail "the session key is not the user's only"
pass "Last.fm's desktop login: token, the page allowed, the session key kept (0600)"

# An outage: ListenBrainz answers 503, Last.fm does not answer. The same track twice.
control "lb=down&fm=hang"
start player1 hark play --no-ui --device pulse "$E2E_DIR/a.flac" "$E2E_DIR/a.flac"
wait_until 30 "the first listen kept for both services" \
  "[ \"\$(waiting)\" = 'Song a:listenbrainz,lastfm' ]"
wait_until 10 "a failed try said by status" \
  "hark scrobble status | grep -q 'ListenBrainz: sending to $base; 1 listen waiting; last try: ListenBrainz answered HTTP 503'"
wait_until 10 "Last.fm's timeout said by status" \
  "hark scrobble status | grep -q 'Last.fm: sending to $base/2.0/ as tester; 1 listen waiting; last try: Timeout was reached'"
[ -z "$(taken)" ] || fail "taken during the outage: $(taken)"
grep -q '"listen_type": "playing_now"' "$services/requests.jsonl" || fail "no playing_now sent"
grep -q '"method": "track.updateNowPlaying"' "$services/requests.jsonl" || fail "no track.updateNowPlaying sent"
pass "during the outage: now playing told, the listen kept on disk, the failures said"

# The service comes back: the running player's next try (15 s after the first failure) sends
# what waited, then the second play's listen as it counts.
control "lb=ok&fm=ok"
wait_until 40 "both listens taken by both services" \
  "[ \"\$(taken)\" = 'listenbrainz:Song a lastfm:Song a listenbrainz:Song a lastfm:Song a' ]"
wait_for 30 "the player's end" sh -c "! kill -0 $PID_player1 2>/dev/null"
[ -z "$(waiting)" ] || fail "still waiting: $(waiting)"
python3 - "$services/taken.jsonl" <<'PY' || fail "timestamps: $(cat "$services/taken.jsonl")"
import json, sys, time
rows = [json.loads(l) for l in open(sys.argv[1])]
for s in ("listenbrainz", "lastfm"):
    stamps = [r["listened_at"] for r in rows if r["service"] == s]
    assert len(stamps) == len(set(stamps)) == 2, stamps
    # The second play began 31 s after the first.
    assert 29 <= stamps[1] - stamps[0] <= 34, stamps
    assert time.time() - 120 < stamps[0] < time.time(), stamps
assert all(r["album"] == "Record" and r["artist"] == "Artist a" for r in rows), rows
PY
pass "the service came back: the waiting listen sent by the running player, then the next, in order, once each"

# A crash with a listen waiting: SIGKILL; 'hark scrobble send' sends it later, once.
control "lb=down&fm=down"
start player2 hark play --no-ui --device pulse "$E2E_DIR/b.flac"
wait_until 30 "b's listen kept" "[ \"\$(waiting)\" = 'Song b:listenbrainz,lastfm' ]"
kill -9 "$PID_player2"
[ "$(waiting)" = "Song b:listenbrainz,lastfm" ] || fail "after SIGKILL: $(waiting)"
control "lb=ok&fm=ok"
hark scrobble send >"$E2E_DIR/send.log" || fail "send: $(cat "$E2E_DIR/send.log")"
grep -q "ListenBrainz: 1 sent" "$E2E_DIR/send.log" && grep -q "Last.fm: 1 sent" "$E2E_DIR/send.log" \
  || fail "send: $(cat "$E2E_DIR/send.log")"
grep -q "no listens waiting" <<<"$(hark scrobble send)" || fail "sent twice?"
[ "$(taken | grep -o 'Song b' | wc -l)" = 2 ] || fail "b taken: $(taken)"
pass "a player killed with a listen waiting: kept on disk, sent later by hark scrobble send, once"

# A refused token: ListenBrainz 401; Last.fm takes it; ListenBrainz's is kept and said.
control "lb=refuse"
start player3 hark play --no-ui --device pulse "$E2E_DIR/c.flac"
wait_until 30 "c taken by Last.fm" "taken | grep -q 'lastfm:Song c'"
wait_until 10 "the refusal said" \
  "hark scrobble status | grep -q 'ListenBrainz refused the token (Invalid authorization token.) (not tried again until the config or the login changes)'"
[ "$(waiting)" = "Song c:listenbrainz" ] || fail "after the refusal: $(waiting)"
if hark scrobble send >"$E2E_DIR/send2.log"; then fail "send said all went with a refused token"; fi
grep -q "ListenBrainz: 0 sent, 1 kept: ListenBrainz refused the token" "$E2E_DIR/send2.log" \
  || fail "send: $(cat "$E2E_DIR/send2.log")"
pass "a refused token keeps its listens, and status and send say why"

# Every listen counted in the library's plays, and in the log.
wait_for 30 "the third player's end" sh -c "! kill -0 $PID_player3 2>/dev/null"
grep -q "plays counted in the library: 4" <<<"$(hark scrobble status)" || fail "plays: $(hark scrobble status)"
[ "$(wc -l <"$XDG_STATE_HOME/hark/listens.log")" = 4 ] || fail "log: $(cat "$XDG_STATE_HOME/hark/listens.log")"
pass "every listen counted in the library's plays and written to listens.log"

# The library's views of the plays: Most played, with the counts, and Recently played.
source "$(dirname "$0")/tmux.sh"
# (Before the tables: a key after [lastfm] would be the table's.)
{ printf 'music_dir = "%s"\n' "$E2E_DIR"; cat "$HOME/.config/hark/config.toml"; } >"$E2E_DIR/config"
mv "$E2E_DIR/config" "$HOME/.config/hark/config.toml"
hark library scan --no-measure "$E2E_DIR" >/dev/null
tmux_start 100 24
keys "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR HOME=$HOME XDG_CACHE_HOME=$XDG_CACHE_HOME $HARK_BIN --device null" Enter
expect_screen "Most played/" 10
expect_screen "library: your plays,"
# The music folder lists "Most played/", "Recently played/" and the songs as well: each view is
# waited for by what only it shows (its rows below '../', nothing of the folder's), not by its
# name (found at once on the folder, before the key had been read: a clean-clone run failed so).
view_rows() { screen_text | sed -n '/\.\.\//,$p' | grep -E 'Song [abc]|/ *$|library:' || true; }
keys j j j j j Enter
wait_until 5 "the Most played view" '! view_rows | grep -q "library:"'
view_rows | grep -E ' 2 +Song a' >/dev/null || fail "Most played: $(screen_text)"
view_rows | grep -E ' 1 +Song b' >/dev/null || fail "Most played: $(screen_text)"
keys BSpace
expect_screen "library: your plays," 5
keys j Enter
wait_until 5 "the Recently played view" '! view_rows | grep -q "library:"'
[ "$(view_rows | grep -o 'Song [abc]' | head -1)" = "Song c" ] || fail "Recently played: $(screen_text)"
keys q
pass "Most played lists the plays with their counts, Recently played the latest first"
