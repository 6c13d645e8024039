#!/usr/bin/env bash
# The recorder every sound check reads (audio_probe.py record): a wall-clock time finds the sound
# heard then, also after the recording lost sound. Beside busy cores a recorder fell behind and
# the sound server dropped what it could not hold (3 s of 170); read by its first sample's time
# alone, every window after the loss measured sound from 3 s later, and a duck that was heard
# whole read as none. Here parec is a stand-in that paces a known sound by the clock: a 440 Hz
# burst at 3.0-3.4 s, after 1 s of the recording dropped (1.0-2.0 s), or after the recorder was
# only late (it stalls 0.4 s, then hands over all it held).
source "$(dirname "$0")/lib.sh"

mkdir -p "$E2E_DIR/fake"
cat >"$E2E_DIR/fake/parec" <<'EOF'
#!/usr/bin/env python3
# parec's stand-in: s16le, 44.1 kHz, stereo, paced by the clock from its start; a 440 Hz burst at
# 3.0-3.4 s. FAKE_PAREC=drop: nothing is delivered for 1.0-2.0 s, and that sound is lost;
# stall: nothing is delivered for 1.0-1.4 s, then everything held is.
import math, os, struct, sys, time
mode = os.environ["FAKE_PAREC"]
rate, t0, written = 44100, time.time(), 0
def frame(i):
    t = i / rate
    v = int(0.3 * 32767 * math.sin(2 * math.pi * 440 * t)) if 3.0 <= t < 3.4 else 0
    return struct.pack("<hh", v, v)
while True:
    now = time.time() - t0
    if mode == "drop" and 1.0 <= now < 2.0:
        written = int(2.0 * rate)  # the second in between is never delivered
        time.sleep(0.005)
        continue
    if mode == "stall" and 1.0 <= now < 1.4:
        time.sleep(0.005)
        continue
    due = int(now * rate)
    if due > written:
        sys.stdout.buffer.write(b"".join(frame(i) for i in range(written, due)))
        sys.stdout.buffer.flush()
        written = due
    time.sleep(0.01)
EOF
chmod +x "$E2E_DIR/fake/parec"

for mode in drop stall; do
  rec="$E2E_DIR/rec-$mode.raw"
  FAKE_PAREC=$mode PATH="$E2E_DIR/fake:$PATH" python3 "$PROBE" record fake.monitor "$rec" &
  E2E_PIDS+=($!)
  recorder=$!
  wait_for 5 "the $mode recording's first sample" test -s "$rec.t0"
  start=$(cat "$rec.t0")
  # Past the burst, by the clock the stand-in paces by (the recording itself lost time).
  sleep "$(python3 -c "import time; print(max(0, $start + 4.0 - time.time()))")"
  kill "$recorder"
  wait_for 5 "the $mode recorder's end" eval '! alive "$recorder"'
  pieces=0
  [ ! -f "$rec.pieces" ] || pieces=$(wc -l <"$rec.pieces")
  burst=$(python3 "$PROBE" level "$rec" "$(python3 -c "print($start + 3.05)")" "$(python3 -c "print($start + 3.35)")")
  before=$(python3 "$PROBE" level "$rec" "$(python3 -c "print($start + 2.5)")" "$(python3 -c "print($start + 2.9)")")
  first=$(python3 "$PROBE" first-sound "$rec" "$(python3 -c "print($start + 2.5)")" "$(python3 -c "print($start + 3.6)")")
  echo "     $mode: $pieces new piece(s); the burst at $burst dBFS, before it $before dBFS, first heard $first s after 2.5 s"
  check "$burst > -20" || fail "$mode: the burst at 3.0-3.4 s read as $burst dBFS (the recording's times are off)"
  check "$before < -60" || fail "$mode: 2.5-2.9 s, before the burst, read as $before dBFS (the recording's times are off)"
  check "abs($first - 0.5) < 0.04" || fail "$mode: the burst first heard $first s after 2.5 s, not 0.5"
  # (A recorder starved for long by a busy machine may begin a piece more, which its next reads
  # on time put back in place: the times above are what counts.)
  if [ "$mode" = drop ]; then
    [ "$pieces" -ge 1 ] || fail "drop: no new piece after a second was lost"
  fi
  pass "$mode: the burst found at its time ($first s after 2.5 s, $burst dBFS)"
done
