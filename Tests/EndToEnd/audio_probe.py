#!/usr/bin/env python3
"""Records what a PulseAudio sink actually played, and measures it.

  audio_probe.py record SOURCE OUT [MS]     record SOURCE (s16le, 44.1 kHz, stereo) into OUT,
                                            and OUT.t0: the wall-clock time of its first sample;
                                            at MS ms of latency (default 10; "default": parec's
                                            own, which leaves a null sink deeply buffered)
  audio_probe.py last-sound OUT T1 T2       the end of the last 10 ms window louder than -50 dBFS
                                            in [T1, T2], as seconds after T1 (or "none")
  audio_probe.py first-sound OUT T1 T2      the start of the first loud window in [T1, T2]
  audio_probe.py level OUT T1 T2            RMS level in dBFS over [T1, T2]
  audio_probe.py freq OUT T1 T2             frequency in Hz over [T1, T2], by zero crossings
  audio_probe.py first-above OUT T1 T2 DB   the start of the first 20 ms window at DB dBFS or
                                            louder in [T1, T2], as seconds after T1 (or "none")
  audio_probe.py longest-silence OUT T1 T2  the longest run of quiet 10 ms windows in [T1, T2],
                                            in seconds (a gap in what should be continuous)
  audio_probe.py blocks OUT T1 T2 BASE STEP the tone blocks heard in [T1, T2] (a track made of
                                            blocks at BASE + k * STEP Hz, see deep-buffers.sh):
                                            one line "k seconds" per run of 20 ms windows at one
                                            block's frequency (loud windows only)

Times are wall-clock seconds (bash's $EPOCHREALTIME). Pure Python: a fresh machine has no numpy.
"""
import array
import math
import os
import signal
import subprocess
import sys
import time

RATE = 44100
CHANNELS = 2
BYTES_PER_FRAME = 2 * CHANNELS
WINDOW = RATE // 100  # 10 ms
LOUD_DBFS = -50.0


def record(source, out, latency="10"):
    low = [] if latency == "default" else [f"--latency-msec={latency}"]
    parec = subprocess.Popen(
        ["parec", "-d", source, *low, "--format=s16le",
         f"--rate={RATE}", f"--channels={CHANNELS}", "--raw"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    stop = False

    def on_term(*_):
        nonlocal stop
        stop = True
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    received = 0
    t0 = None
    last_saved = 0.0
    with open(out, "wb") as f:
        while not stop:
            chunk = os.read(parec.stdout.fileno(), 4096)
            if not chunk:
                break
            now = time.time()
            f.write(chunk)
            received += len(chunk)
            # The first sample's time: the earliest estimate of "now minus what has arrived".
            estimate = now - received / (RATE * BYTES_PER_FRAME)
            if t0 is None or estimate < t0:
                t0 = estimate
            if now - last_saved > 0.2:
                f.flush()
                save_t0(out, t0)
                last_saved = now
    parec.terminate()
    parec.wait()
    save_t0(out, t0 or 0)


def save_t0(out, t0):
    """Replaces OUT.t0 in one step, so a reader never sees it empty or half written."""
    with open(out + ".t0.new", "w") as t:
        t.write(f"{t0:.6f}\n")
    os.replace(out + ".t0.new", out + ".t0")


def load(out, t1, t2):
    """Mono samples (left channel) between wall-clock times t1 and t2."""
    with open(out + ".t0") as t:
        t0 = float(t.read())
    first = max(0, int((t1 - t0) * RATE))
    last = max(first, int((t2 - t0) * RATE))
    with open(out, "rb") as f:
        f.seek(first * BYTES_PER_FRAME)
        data = f.read((last - first) * BYTES_PER_FRAME)
    samples = array.array("h")
    samples.frombytes(data[: len(data) // BYTES_PER_FRAME * BYTES_PER_FRAME])
    return samples[0::CHANNELS], t0 + first / RATE


def dbfs(samples):
    if not samples:
        return -200.0
    power = sum(s * s for s in samples) / len(samples)
    return 10 * math.log10(power / (32768.0 ** 2)) if power > 0 else -200.0


def windows(samples):
    for i in range(0, len(samples) - WINDOW + 1, WINDOW):
        yield i, dbfs(samples[i:i + WINDOW])


def main(argv):
    command = argv[1]
    if command == "record":
        record(argv[2], argv[3], *argv[4:5])
        return
    out, t1, t2 = argv[2], float(argv[3]), float(argv[4])
    samples, start = load(out, t1, t2)
    offset = start - t1
    if command == "last-sound":
        loud = [i for i, level in windows(samples) if level > LOUD_DBFS]
        print("none" if not loud else f"{offset + (loud[-1] + WINDOW) / RATE:.3f}")
    elif command == "first-sound":
        loud = [i for i, level in windows(samples) if level > LOUD_DBFS]
        print("none" if not loud else f"{offset + loud[0] / RATE:.3f}")
    elif command == "first-above":
        threshold = float(argv[5])
        step = RATE // 50
        hit = next((i for i in range(0, len(samples) - step + 1, step)
                    if dbfs(samples[i:i + step]) >= threshold), None)
        print("none" if hit is None else f"{offset + hit / RATE:.3f}")
    elif command == "longest-silence":
        longest = run = 0
        for _, level in windows(samples):
            run = run + 1 if level <= LOUD_DBFS else 0
            longest = max(longest, run)
        print(f"{longest * WINDOW / RATE:.3f}")
    elif command == "blocks":
        base, step = float(argv[5]), float(argv[6])
        size = RATE // 50
        runs = []
        for i in range(0, len(samples) - size + 1, size):
            w = samples[i:i + size]
            if dbfs(w) < -40:
                k = None
            else:
                crossings = sum(1 for a, b in zip(w, w[1:]) if (a < 0) != (b < 0))
                k = round((crossings / 2 / (size / RATE) - base) / step)
            if runs and runs[-1][0] == k:
                runs[-1][1] += 1
            else:
                runs.append([k, 1])
        for k, n in runs:
            if k is not None:
                print(k, f"{n * size / RATE:.2f}")
    elif command == "level":
        print(f"{dbfs(samples):.2f}")
    elif command == "freq":
        crossings = sum(1 for a, b in zip(samples, samples[1:]) if (a < 0) != (b < 0))
        print(f"{crossings / 2 / (len(samples) / RATE):.1f}" if samples else "0")
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv)
