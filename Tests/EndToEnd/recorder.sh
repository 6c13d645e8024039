#!/usr/bin/env bash
# Recording (G12): `hark simulate recorder` records for real from a sound server's source (here a
# null sink's monitor into which a 660 Hz tone plays), with the record category active only while it
# records; meanwhile hark's music is interrupted as for a call and resumes after it, an alarm may
# not sound into the recording, and a play is refused with the reason. The WAV file it writes holds
# the tone.
source "$(dirname "$0")/lib.sh"
# The tone goes into a sink of its own, "mic", whose monitor the recorder is told to record
# (making it the default source would move the test's own recorder of "out" there too).
start_pulse -L "module-null-sink sink_name=mic"
sox -n -r 44100 -c 1 "$E2E_DIR/voice.wav" synth 30 sine 660 vol 0.5
env PULSE_SINK=mic paplay "$E2E_DIR/voice.wav" &
E2E_PIDS+=($!)
sox -n -r 44100 -c 2 "$E2E_DIR/music.wav" synth 60 sine 440 vol 0.3
stamp() { while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }
line_time() { grep -F -- "$2" "$1" | head -1 | cut -d' ' -f1; }

start player hark play --no-ui --device pulse "$E2E_DIR/music.wav"
wait_for 10 "hark playing" position_at_least 1
(hark simulate recorder --seconds 3 --source mic.monitor --out "$E2E_DIR/memo.wav" \
  | stamp >"$E2E_DIR/rec-app.log") &
E2E_PIDS+=($!)
expect_log rec-app "recording for 3 s" 5
t_rec=$(line_time "$E2E_DIR/rec-app.log" "recording for")
expect_log player "paused: 'recorder' is recording (will resume)" 3
[ "$(session_field recorder active)" = true ] || fail "the recorder is not active while recording"

# Nothing else may sound into the recording: an alarm is refused, and so is a play.
if out=$(env PULSE_SINK=other "$HARK_BIN" simulate alarm --seconds 1 2>&1); then
  fail "an alarm sounded during the recording: $out"
fi
case $out in *"cannot start: a recording is in progress"*) ;; *) fail "the alarm said: $out" ;; esac
hark ctl play >/dev/null 2>&1 || true
expect_log player "cannot play now: a recording is in progress" 3
quiet=$(probe level "$(python3 -c "print($t_rec + 0.3)")" "$(python3 -c "print($t_rec + 2.5)")")
check "$quiet < -90" || fail "music was heard during the recording: $quiet dBFS"
pass "while it records, hark is paused ($quiet dBFS), an alarm and a play are refused with the reason"

expect_log rec-app "saved '$E2E_DIR/memo.wav'" 8
expect_log player "resumed: 'recorder' ended" 3
wait_until 3 "hark playing again" 'test "$(playback state)" = playing'
[ "$(session_field recorder active)" != true ] || fail "the recorder is still active after recording"
pass "when the recording ends the recorder deactivates and hark resumes (G14)"

# The memo holds what the source heard: the 660 Hz tone, most of the 3 s asked.
python3 - "$E2E_DIR/memo.wav" <<'PY' || fail "the memo does not hold the tone"
import sys, wave, array
w = wave.open(sys.argv[1])
rate, n = w.getframerate(), w.getnframes()
samples = array.array("h", w.readframes(n))
seconds = n / rate
crossings = sum(1 for a, b in zip(samples, samples[1:]) if (a < 0) != (b < 0))
hz = crossings / 2 / seconds if seconds else 0
loud = max(abs(s) for s in samples) if samples else 0
print(f"memo: {seconds:.2f} s, {hz:.0f} Hz, peak {loud}")
# 3 s asked, counted from the first samples (parec's own start, connecting and opening a stream
# on the source, once took nearly two seconds on a busy machine, and the memo held 1.1 s).
sys.exit(0 if 2.7 <= seconds <= 4 and abs(hz - 660) < 20 and loud > 5000 else 1)
PY
pass "the memo holds the tone played into the source: $(python3 - "$E2E_DIR/memo.wav" <<'PY'
import sys, wave
w = wave.open(sys.argv[1]); print(f"{w.getnframes() / w.getframerate():.2f} s")
PY
)"
