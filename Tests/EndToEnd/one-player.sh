#!/usr/bin/env bash
# One player per user: `hark play`, `hark add` and `hark PATH…` from other terminals hand what they
# name to the hark player already running, through the session server, instead of starting a second
# player that takes over from it; `--new` starts another. `hark ctl --player hark` reaches hark's
# player even when it is not the now-playing app, while plain `hark ctl` (like the media keys) keeps
# G18 exactly.
source "$(dirname "$0")/lib.sh"
start_pulse_server
for f in a:440 b:550 c:660 d:770 e:880; do
  sox -n -r 44100 -c 2 "$E2E_DIR/${f%%:*}.wav" synth 60 sine "${f##*:}" vol 0.3
done
now_playing() { status_query "next((x['name'] for x in s['sessions'] if x['nowPlaying']), None)"; }
players() { status_query "sum(1 for x in s['sessions'] if x['name'] == 'hark')"; }

# `hark play`'s command line is read without ArgumentParser where it can be (docs/PERFORMANCE.md,
# "`hark play` read without ArgumentParser"); every mistake in it still exits 2 with the reason,
# and nothing plays.
for bad in "--duck 5" "--duck nan" "--duck=-61" "--devic pulse" "--device"; do
  # shellcheck disable=SC2086 # the words of $bad are separate arguments
  out=$(hark play --no-ui $bad "$E2E_DIR/a.wav" 2>&1 </dev/null) && fail "'play $bad' was taken"
  status=$?
  [ "$status" = 2 ] || fail "'play $bad' exited $status: $out"
  case "$out" in
    "hark: --duck must be from -60 to 0 dB"* | "hark: Unknown option '--devic'"* \
      | "hark: Missing expected argument"* | "hark: Missing value for '--device"*) ;;
    *) fail "'play $bad' said: $out" ;;
  esac
done
pass "mistakes on play's command line exit 2 with the reason"

start player hark play --no-ui --device=pulse "$E2E_DIR/a.wav" "$E2E_DIR/b.wav"
expect_log player "playing 'a' (1/2)" 10
# It plays at once while the session server it started comes up, and registers (saying it
# takes files) a moment later: what is handed over waits for that, not for the sound.
wait_until 10 "the player registered with the session server" 'test "$(players)" = 1'

# `hark play FILE` elsewhere (another folder, a relative path): the running player plays it
# now, after the track it was playing, and keeps the rest of its queue.
out=$(cd "$E2E_DIR" && hark play c.wav) || fail "hark play with a player running failed: $out"
[ "$out" = "playing 'c.wav' in the hark player already running" ] || fail "it said: '$out'"
expect_log player "playing 'c' (2/3)"
check "$(players) == 1" || fail "a second player started: $(hark status)"
pass "hark play with a player running hands the file over; one player, queue kept"

# `hark add --next` twice: they play next, in the order added; `hark add` goes to the end.
hark add --next "$E2E_DIR/d.wav" >/dev/null || fail "hark add --next d failed"
hark add --next "$E2E_DIR/e.wav" >/dev/null || fail "hark add --next e failed"
out=$(hark add "$E2E_DIR/a.wav") || fail "hark add failed"
[ "$out" = "'a.wav' added to the queue of the hark player already running" ] || fail "add said '$out'"
expect_log player "'d.wav' to play next"
expect_log player "'a.wav' added to the queue"
hark ctl next || fail "next failed"
expect_log player "playing 'd' (3/6)"
hark ctl next || fail "next failed"
expect_log player "playing 'e' (4/6)"
hark ctl next || fail "next failed"
expect_log player "playing 'b' (5/6)"
hark ctl next || fail "next failed"
expect_log player "playing 'a' (6/6)"
pass "hark add --next plays next in the order added; hark add appends"

# A folder and a missing file handed over together: the folder's files go, the missing one is
# said in the terminal that named it.
mkdir "$E2E_DIR/album" && cp "$E2E_DIR/b.wav" "$E2E_DIR/c.wav" "$E2E_DIR/album/"
hark add "$E2E_DIR/album" "$E2E_DIR/missing.wav" >"$E2E_DIR/add.out" 2>"$E2E_DIR/add.err" \
  || fail "hark add of a folder failed: $(cat "$E2E_DIR/add.err")"
grep -qx "2 files added to the queue of the hark player already running" "$E2E_DIR/add.out" \
  || fail "add of a folder said: $(cat "$E2E_DIR/add.out")"
grep -q "cannot play '$E2E_DIR/missing.wav': no such file or directory" "$E2E_DIR/add.err" \
  || fail "the missing file was not said: $(cat "$E2E_DIR/add.err")"
expect_log player "2 files added to the queue"
pass "a folder is handed over whole; a missing file is said where it was named"

# A playlist naming a file that is not there: counted without it, and it is said.
printf 'album/b.wav\nalbum/gone.wav\nalbum/c.wav\n' >"$E2E_DIR/list.m3u"
hark add "$E2E_DIR/list.m3u" >"$E2E_DIR/list.out" 2>"$E2E_DIR/list.err" \
  || fail "hark add of a playlist failed: $(cat "$E2E_DIR/list.err")"
grep -qx "2 files added to the queue of the hark player already running" "$E2E_DIR/list.out" \
  || fail "add of a playlist said: $(cat "$E2E_DIR/list.out")"
grep -q "cannot play '$E2E_DIR/album/gone.wav': no such file or directory" "$E2E_DIR/list.err" \
  || fail "the playlist's missing entry was not said: $(cat "$E2E_DIR/list.err")"
wait_for 5 "the player to add the playlist's two files" \
  eval '[ "$(grep -c "2 files added to the queue" "$E2E_DIR/player.log")" -ge 2 ]'
pass "a playlist naming a missing file: the others are added and counted, the missing one said"

# Nothing playable named, with no terminal: the reason, not the interface's need of one.
status=0
hark play "$E2E_DIR/missing.wav" </dev/null >"$E2E_DIR/play.out" 2>&1 || status=$?
[ "$status" = 1 ] || fail "hark play of a missing file exited $status: $(cat "$E2E_DIR/play.out")"
[ "$(cat "$E2E_DIR/play.out")" = "hark: cannot play '$E2E_DIR/missing.wav': no such file or directory
hark: nothing to play in '$E2E_DIR/missing.wav'" ] || fail "hark play of a missing file said: $(cat "$E2E_DIR/play.out")"
pass "hark play of a missing file, no terminal: the file and the reason, exit 1"

# The interface with no PATH attaches to the running player (detach.sh shows it in a
# terminal, headless players included); with PATHs they join its queue.
out=$(hark "$E2E_DIR/d.wav") || fail "hark PATH with a player running failed"
[ "$out" = "'d.wav' added to the queue of the hark player already running" ] || fail "hark PATH said '$out'"
check "$(players) == 1" || fail "hark PATH started a second player: $(hark status)"
pass "hark PATH joins the running queue"

# Another music app takes over (G13): hark is paused, and the music app is the now-playing
# app, which plain `hark ctl` (like the media keys, G18) reaches; naming hark reaches hark.
start music hark simulate music --seconds 60 --device pulse
expect_log player "paused: 'music' is playing" 5
wait_until 5 "music is the now-playing app" 'test "$(now_playing)" = music'
hark ctl pause || fail "plain hark ctl pause failed"
expect_log music "remote command 'pause'" 5
test "$(playback state)" = paused || fail "plain ctl reached hark: $(hark status)"
hark ctl --player hark play || fail "hark ctl --player hark play failed"
wait_until 5 "hark playing again" 'test "$(playback state)" = playing'
pass "plain ctl reaches the now-playing app (G18); hark ctl --player hark reaches hark's player"
kill "$PID_music"
# Times as people type them: minutes:seconds, and relative.
hark ctl --player hark position 0:30 || fail "position 0:30 failed"
wait_until 5 "at 0:30" 'position_at_least 30'
hark ctl --player hark seek -0:20 || fail "seek -0:20 failed"
wait_until 5 "back at about 0:10" 'check "$(playback position) < 15"'
pass "hark ctl position 0:30 and seek -0:20 take times as people type them"
hark ctl -p hark next >/dev/null 2>&1 || true
if err=$(hark ctl --player nobody pause 2>&1); then fail "a command to nobody succeeded"; fi
case $err in *"no app named 'nobody' is connected"*) ;; *) fail "ctl to nobody said: $err" ;; esac

# --new starts a second player on purpose.
start second hark play --new --no-ui --device pulse "$E2E_DIR/e.wav"
expect_log second "playing 'e' (1/1)" 10
check "$(players) == 2" || fail "--new did not start a second player: $(hark status)"
pass "hark play --new starts a second player"
# What is handed over still goes to the user's player, not to the one started with --new (the
# newer of the two): a --new player is one of its own.
out=$(hark add "$E2E_DIR/c.wav") || fail "hark add beside a --new player failed: $out"
expect_log player "'c.wav' added to the queue"
! log_has second "added to the queue" || fail "hark add went to the --new player: $(cat "$E2E_DIR/second.log")"
pass "hark add beside a --new player goes to the user's player"

# The main thread drains the main queue itself (Sources/CHarkMain): it lives on, a thread of its
# own takes the signals, and they act as before: SIGHUP ends a headless player (129), SIGTERM
# stops it cleanly (143).
[ "$(cut -d' ' -f3 "/proc/$PID_second/task/$PID_second/stat")" != Z ] || fail "the main thread has ended"
grep -qx "hark-signals" /proc/"$PID_second"/task/*/comm || fail "no thread takes the signals"
# SQLite and ncurses are loaded by what reads the index or draws, not by a player
# (docs/PERFORMANCE.md, "Libraries opened on first use").
! grep -E 'libsqlite3|libncursesw|libtinfo' /proc/"$PID_second"/maps ||
  fail "the headless player mapped SQLite or ncurses"
kill -HUP "$PID_second"
status=0; wait "$PID_second" || status=$?
[ "$status" = 129 ] || fail "SIGHUP: the headless player exited $status"
kill -TERM "$PID_player"
status=0; wait "$PID_player" || status=$?
[ "$status" = 143 ] || fail "SIGTERM: the headless player exited $status"
pass "a headless player maps neither SQLite nor ncurses; its main thread lives; SIGHUP ends it (129), SIGTERM stops it (143)"
if err=$(hark add "$E2E_DIR/a.wav" 2>&1); then fail "hark add with no player succeeded"; fi
[ "$err" = "hark: no hark player is running; 'hark play PATH…' starts one" ] || fail "add said: $err"
pass "hark add with no player running says so"

# A mistyped command is said as one, not opened as a path.
if err=$(hark stauts 2>&1); then fail "hark stauts succeeded"; else status=$?; fi
[ "$status" = 2 ] || fail "hark stauts exited $status"
[ "$err" = "hark: no command or file 'stauts'; did you mean 'hark status'?" ] || fail "it said: $err"
pass "a mistyped command says which one was meant"
