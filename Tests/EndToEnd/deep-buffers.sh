#!/usr/bin/env bash
# A duck and its end never restart the stream (G9), on a sound server that buffers deeply. Through
# ALSA's pulse device on a private PulseAudio whose null sink first has nothing recording it (nobody
# asks for a low latency: it runs deeply buffered), then a recorder at parec's default latency, then
# one at 10 ms:
#   1. a 14 s track with three navigation prompts finishes within 0.5 s of the time it takes
#      alone (both timed from when it is first heard to the line saying the queue has ended,
#      the last of it heard), and the position
#      `hark status --json` publishes never moves back;
#   2. every part of the track is heard once, in order, at its length (the track is 56 tone
#      blocks of 250 ms; a restart repeated or dropped what the device held);
#   3. the duck is at least 12 dB down within 150 ms of the prompt's activation.
source "$(dirname "$0")/lib.sh"
start_pulse_server

media="$E2E_DIR/media"
mkdir -p "$media"
# 56 blocks of 250 ms at 300 + 60 k Hz: which block is heard, and for how long, tells any frame
# heard twice or never.
blocks=()
for k in $(seq 0 55); do blocks+=("$media/b$k.wav"); sox -n -r 44100 -c 2 "${blocks[-1]}" synth 0.25 sine $((300 + 60 * k)) vol 0.5; done
sox "${blocks[@]}" "$media/blocks.wav"
rm -f "${blocks[@]}"

stamp() { while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }

# play_timed NAME NAVS...: plays blocks.wav; NAVS are seconds after it says it plays at which
# a prompt of 1.5 s starts (on the other sink). Sets TOOK: the seconds from "playing" to "end
# of the queue".
# The published position is polled meanwhile; a step back fails the test.
play_timed() {
  local name=$1; shift
  ("$HARK_BIN" play --no-ui --device pulse "$media/blocks.wav" 2>&1 | stamp >"$E2E_DIR/$name.log"; echo "$EPOCHREALTIME" >"$E2E_DIR/$name.end") &
  local pid=$!
  E2E_PIDS+=($pid)
  wait_for 10 "$name to play" grep -qF "playing 'blocks'" "$E2E_DIR/$name.log"
  local t_play
  t_play=$(grep -F "playing 'blocks'" "$E2E_DIR/$name.log" | head -1 | cut -d' ' -f1)
  python3 - "$HARK_BIN" "$E2E_DIR/$name.positions" <<'PY' &
import json, subprocess, sys, time
hark, out = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    while True:
        r = subprocess.run([hark, "status", "--json"], capture_output=True, text=True)
        try:
            s = json.loads(r.stdout)
        except ValueError:
            break
        p = next((x.get("playback") for x in s["sessions"] if x["name"] == "hark"), None)
        if not p:
            break
        f.write(f"{time.time():.3f} {p.get('state')} {p.get('position')}\n")
        f.flush()
        time.sleep(0.05)
PY
  E2E_PIDS+=($!)
  local n=0
  for at in "$@"; do
    n=$((n + 1))
    while check "$(now) < $t_play + $at"; do sleep 0.02; done
    (env PULSE_SINK=other "$HARK_BIN" simulate nav --seconds 1.5 "Turn left" | stamp >"$E2E_DIR/$name-nav$n.log") &
    E2E_PIDS+=($!)
  done
  wait_for 30 "$name to finish" test -s "$E2E_DIR/$name.end"
  # To the line saying the last of the queue was heard: the process winding down after it (the
  # session's goodbye, a loaded machine's scheduling) is no part of the track's time.
  local t_end t_heard
  t_end=$(grep -F "end of the queue" "$E2E_DIR/$name.log" | head -1 | cut -d' ' -f1)
  [ -n "$t_end" ] || fail "$name: no 'end of the queue' line: $(cat "$E2E_DIR/$name.log")"
  # From when it was first heard, not from the line: a sound server that buffers deeply
  # starts a new stream when its sink next wakes (PulseAudio's null sink, with nobody asking
  # for a low latency, mixes seconds at a time and takes back less), 0.4 to 1.8 s after the
  # stream is ready, at random: that is no part of the track's time, and made two runs differ
  # by more than a restart would. The start is the published position's origin (the time of
  # a reading less the position read, the least of the first seconds' readings: a reading
  # only comes later), which the position makes wait for the sound server's start.
  t_heard=$(python3 - "$E2E_DIR/$name.positions" <<'PY'
import sys
starts = []
for line in open(sys.argv[1]):
    t, state, pos = line.split()
    if state == "playing" and pos != "None" and 0.3 <= float(pos) <= 3:
        starts.append(float(t) - float(pos))
print(min(starts) if starts else "")
PY
)
  [ -n "$t_heard" ] || fail "$name: no published position between 0.3 and 3 s: $(head -c 2000 "$E2E_DIR/$name.positions")"
  TOOK=$(python3 -c "print(round($t_end - $t_heard, 2))")
  STARTED_AFTER=$(python3 -c "print(round($t_heard - $t_play, 2))")
  # Never back: each position at least the one before (stopped at the end aside).
  python3 - "$E2E_DIR/$name.positions" <<'PY' || fail "$name: the published position went back: $(cat "$E2E_DIR/$name.back")"
import sys
last = None
back = []
prev = []
for line in open(sys.argv[1]):
    prev = (prev + [line.split()[2]])[-4:]
    t, state, pos = line.split()
    if state != "playing" or pos == "None":
        continue
    pos = float(pos)
    if last is not None and pos < last - 0.001:
        back.append(f"{last} -> {pos} at {t} (after {prev})")
    last = pos
open(sys.argv[1].replace(".positions", ".back"), "w").write("; ".join(back))
sys.exit(1 if back else 0)
PY
}

# 1. Nothing recording: deep buffers.
play_timed alone
alone=$TOOK alone_start=$STARTED_AFTER
play_timed with 3 7 10
with=$TOOK with_start=$STARTED_AFTER
check "abs($with - $alone) <= 0.5" \
  || fail "with three prompts the track took ${with} s, alone ${alone} s (limit: 0.5 s more; first heard ${with_start} and ${alone_start} s after the line saying it plays)"
for n in 1 2 3; do grep -qF "done" "$E2E_DIR/with-nav$n.log" || fail "prompt $n did not finish: $(cat "$E2E_DIR/with-nav$n.log")"; done
pass "deep buffers: the 14 s track took ${alone} s alone and ${with} s with three prompts, from first heard (${alone_start} and ${with_start} s after the line saying it plays); the published position never went back"

# 2. A recorder at parec's default latency: every block heard once, in order, 250 ms each.
start_recorder out "$E2E_DIR/rec.raw" default
t1=$(now)
play_timed heard 3 7 10
took=$TOOK
sleep 1
probe blocks "$t1" "$(now)" 300 60 >"$E2E_DIR/blocks.txt"
python3 - "$E2E_DIR/blocks.txt" <<'PY' || fail "not every block was heard once at its length: $(tr '\n' ' ' <"$E2E_DIR/blocks.txt")"
import sys
runs = [(int(k), float(s)) for k, s in (l.split() for l in open(sys.argv[1]))]
# Runs of a window or two are the edges between blocks.
runs = [r for r in runs if r[1] >= 0.06]
ks = [k for k, _ in runs]
if ks != list(range(56)):
    print("blocks heard:", ks, file=sys.stderr)
    sys.exit(1)
bad = [(k, s) for k, s in runs[1:-1] if abs(s - 0.25) > 0.045]
if bad:
    print("blocks of the wrong length:", bad, file=sys.stderr)
    sys.exit(1)
PY
pass "with a default-latency recorder: all 56 blocks heard once, in order, at 250 ms (±45 ms) through three prompts (${took} s)"

# 3. A recorder at 10 ms: the duck is 12 dB down within 150 ms of the prompt's activation.
# This test's own recorder only: another test may be recording its own "out" meanwhile.
pkill -f "audio_probe.py record out.monitor $E2E_DIR/rec.raw" || true
start_recorder out "$E2E_DIR/rec10.raw"
sox -n -r 44100 -c 2 "$media/steady.wav" synth 30 sine 440 vol 0.5
start steady hark play --no-ui --device pulse "$media/steady.wav"
wait_for 10 "steady playing" position_at_least 1.5
before=$(python3 "$PROBE" level "$E2E_DIR/rec10.raw" "$(ago 0.8)" "$(ago 0.1)")
(env PULSE_SINK=other "$HARK_BIN" simulate nav --seconds 1.5 "Turn left" | stamp >"$E2E_DIR/nav.log") &
E2E_PIDS+=($!)
wait_for 10 "the prompt" grep -qF "done" "$E2E_DIR/nav.log"
t_act=$(grep -F "speaking" "$E2E_DIR/nav.log" | head -1 | cut -d' ' -f1)
sleep 0.5
ducked=$(python3 "$PROBE" level "$E2E_DIR/rec10.raw" "$(python3 -c "print($t_act + 0.15)")" "$(python3 -c "print($t_act + 0.4)")")
check "$ducked <= $before - 12" \
  || fail "${before} dBFS before the prompt, ${ducked} from 150 ms after its activation (limit: 12 dB lower)"
pass "the duck: ${before} dBFS before, ${ducked} dBFS from 150 ms after the prompt's activation"
