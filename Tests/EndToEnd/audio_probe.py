#!/usr/bin/env python3
"""Records what a PulseAudio sink actually played, and measures it.

  audio_probe.py record SOURCE OUT [MS]     record SOURCE (s16le, 44.1 kHz, stereo) into OUT,
                                            and OUT.t0: the wall-clock time of its first sample;
                                            at MS ms of latency (default 10; "default": parec's
                                            own, which leaves a null sink deeply buffered)
  audio_probe.py reaches OUT T              exit status 0 once the recording holds the sound
                                            heard at wall-clock time T
  audio_probe.py last-sound OUT T1 T2       the end of the last 10 ms window louder than -50 dBFS
                                            in [T1, T2], as seconds after T1 (or "none")
  audio_probe.py first-sound OUT T1 T2      the start of the first loud window in [T1, T2]
  audio_probe.py level OUT T1 T2            RMS level in dBFS over [T1, T2]
  audio_probe.py freq OUT T1 T2             frequency in Hz over [T1, T2], by zero crossings
  audio_probe.py fundamental OUT T1 T2 LO HI the fundamental frequency in Hz over [T1, T2],
                                            between LO and HI, by autocorrelation (a voice or a
                                            buzz: its harmonics do not fool it as they do
                                            zero crossings); "none" when nothing is periodic
  audio_probe.py click OUT T1 T2             the click where the sound stops (or starts) in
                                            [T1, T2]: "at DB RAMP HARD": where (seconds after
                                            T1), the energy above 2 kHz in the 10 ms around it
                                            in dB against the sound's own level before it, and
                                            the same for that sound cut with a 5 ms ramp and
                                            cut hard (made here, for comparison)
  audio_probe.py tone OUT T1 T2 FREQ        RMS level in dBFS of the FREQ Hz sine in [T1, T2]
                                            (least squares over each 100 ms, the median:
                                            another sound mixed in, a voice, a chime, or a
                                            hiccup of the stream hardly counts)
  audio_probe.py ducked OUT T1 T2 FREQ DB   when the FREQ Hz sine first came within 2 dB of DB
                                            dBFS in [T1, T2] (100 ms pieces), and how it was from
                                            there: "at median pieces" (at: seconds after T1;
                                            median: dBFS), or "none"
  audio_probe.py first-above OUT T1 T2 DB   the start of the first 20 ms window at DB dBFS or
                                            louder in [T1, T2], as seconds after T1 (or "none")
  audio_probe.py longest-silence OUT T1 T2  the longest run of quiet 10 ms windows in [T1, T2],
                                            in seconds (a gap in what should be continuous)
  audio_probe.py blocks OUT T1 T2 BASE STEP the tone blocks heard in [T1, T2] (a track made of
                                            blocks at BASE + k * STEP Hz, see deep-buffers.sh):
                                            one line "k seconds" per run of 20 ms windows at one
                                            block's frequency (loud windows only)
  audio_probe.py gaps OUT T1 T2             the silences between the first and the last sound in
                                            [T1, T2]: runs of over 1 ms of samples all quieter
                                            than -50 dBFS; one line "start length" each, in
                                            seconds (start: after the first sound)
  audio_probe.py gapless OUT T1 T2 FREQ PIECE COUNT
                                            a sine of FREQ Hz played as COUNT tracks of PIECE
                                            seconds each (a fraction: 58800/44100), heard in
                                            [T1, T2]: is it one continuous sine? Prints "key
                                            value..." lines (see `gapless` below)
  audio_probe.py delay FILE                 what an encoded file says of its encoder's delay and
                                            padding, which a gapless decoder removes: an MP3's
                                            LAME tag ("lame DELAY PADDING"), an MP4's edit list
                                            ("edit-list MEDIA_TIME", iTunSMPB's fields after it
                                            when there is one), an Ogg Opus stream's "pre-skip N";
                                            "none" when it says nothing

Times are wall-clock seconds (bash's $EPOCHREALTIME). Pure Python: a fresh machine has no numpy.
"""
import array
from fractions import Fraction
import math
import os
import signal
import subprocess
import sys
import time

RATE = 44100
CHANNELS = 2
BYTES_PER_FRAME = 2 * CHANNELS
BYTES_PER_SECOND = RATE * BYTES_PER_FRAME
WINDOW = RATE // 100  # 10 ms
# A recording's new piece (see record): its estimates of the time this much late, this long.
PIECE_LATE = 0.010
PIECE_CONFIRM = 0.25
LOUD_DBFS = -50.0


def record(source, out, latency="10"):
    low = [] if latency == "default" else [f"--latency-msec={latency}"]
    # Pinned to SOURCE: on PipeWire, WirePlumber (0.4 and 0.5) takes a stream whose target is
    # the default sink's monitor for one that follows the default, and moved the speakers'
    # recorder to a headset made the default (it heard the headset as the speakers).
    # node.dont-reconnect keeps it where it is; PulseAudio ignores the property.
    parec = subprocess.Popen(
        ["parec", "-d", source, *low, "--property=node.dont-reconnect=true", "--format=s16le",
         f"--rate={RATE}", f"--channels={CHANNELS}", "--raw"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    stop = False

    # parec is stopped too: on PipeWire 1.6 a recorder pinned to a sink that went gets nothing
    # more and no end, and the read it waits in is resumed after the handler (PEP 475): told
    # only to stop, it waited for good (the cleanup gave each 2 s, 124 s of CI's end-to-end
    # run, and it outlived the test). parec's end ends the read.
    def on_term(*_):
        nonlocal stop
        stop = True
        parec.terminate()
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    # The time of each sample: the first one's (OUT.t0), from the earliest estimate of "now
    # minus what has arrived", and, where the recording lost sound (beside busy cores a
    # recorder fell behind and the sound server dropped what it could not hold: 3 s went
    # missing from 170 s, and every time after it read sound from 3 s later), a new piece
    # from the sample after the loss, in OUT.pieces ("FRAME TIME" lines). A loss makes every
    # later estimate late by what was lost; a recorder that was only late catches up within a
    # few reads, so a piece begins when the estimates stay late for PIECE_CONFIRM.
    received = 0
    t0 = None
    pieces = []  # [frame, time] of each piece after the first
    piece_bytes, piece_t = 0, None  # the current piece: its first byte and that sample's time
    late_since = late_bytes = late_t = None
    last_saved = 0.0
    saved = None
    with open(out, "wb") as f:
        while not stop:
            chunk = os.read(parec.stdout.fileno(), 4096)
            if not chunk:
                break
            now = time.time()
            f.write(chunk)
            start = received
            received += len(chunk)
            estimate = now - (received - piece_bytes) / BYTES_PER_SECOND
            if piece_t is None or estimate < piece_t:
                piece_t = estimate
                late_since = None
                if pieces:
                    pieces[-1][1] = piece_t
                else:
                    t0 = piece_t
            elif estimate > piece_t + PIECE_LATE:
                if late_since is None:
                    late_since, late_bytes, late_t = now, start, None
                since_late = now - (received - late_bytes) / BYTES_PER_SECOND
                late_t = since_late if late_t is None else min(late_t, since_late)
                if now - late_since >= PIECE_CONFIRM:
                    piece_bytes, piece_t, late_since = late_bytes, late_t, None
                    pieces.append([late_bytes // BYTES_PER_FRAME, late_t])
            else:
                late_since = None
            # Written out every 50 ms: a reader waits for the file to reach its window's
            # end (load), so this is how late after it an answer comes.
            if now - last_saved > 0.05:
                f.flush()
                state = (t0, [tuple(p) for p in pieces])
                if state != saved:
                    save_t0(out, t0, pieces)
                    saved = state
                last_saved = now
    parec.terminate()
    parec.wait()
    save_t0(out, t0 or 0, pieces)


def save_t0(out, t0, pieces=()):
    """Replaces OUT.t0 (and OUT.pieces) in one step each, so that a reader never sees either
    empty or half written; the pieces first, so that a reader of the new t0 has them."""
    if pieces:
        with open(out + ".pieces.new", "w") as t:
            t.writelines(f"{frame} {when:.6f}\n" for frame, when in pieces)
        os.replace(out + ".pieces.new", out + ".pieces")
    with open(out + ".t0.new", "w") as t:
        t.write(f"{t0:.6f}\n")
    os.replace(out + ".t0.new", out + ".t0")


def timeline(out, t0):
    """The recording's pieces: (first frame, its time), the first one's at frame 0."""
    pieces = [(0, t0)]
    try:
        with open(out + ".pieces") as t:
            pieces += [(int(a), float(b)) for a, b in (line.split() for line in t if line.strip())]
    except FileNotFoundError:
        pass
    return pieces


def frame_at(pieces, when):
    """The frame heard at wall-clock time WHEN: in the last piece that began by then (a time
    lost between two pieces is the next one's first frame)."""
    k = 0
    for i, (_, start) in enumerate(pieces):
        if start > when:
            break
        k = i
    frame, start = pieces[k]
    index = frame + int((when - start) * RATE)
    if k + 1 < len(pieces):
        index = min(index, pieces[k + 1][0])
    return max(0, index)


def time_at(pieces, index):
    """The wall-clock time of frame INDEX."""
    frame, start = pieces[0]
    for f, t in pieces:
        if f > index:
            break
        frame, start = f, t
    return start + (index - frame) / RATE


def load(out, t1, t2):
    """Mono samples (left channel) between wall-clock times t1 and t2."""
    with open(out + ".t0") as t:
        t0 = float(t.read())
    pieces = timeline(out, t0)
    first = frame_at(pieces, t1)
    last = max(first, frame_at(pieces, t2))
    # The recorder writes as it goes (flushed every 50 ms): wait until it has reached t2, so
    # that a window ending a moment ago is measured whole. A window it never reaches is an
    # error, not silence: the level of nothing (-200 dBFS) would pass any "it was quiet" check.
    # (A file made whole beforehand, with its first sample at time 0, is read as it is.)
    deadline = time.time() + 10
    while t0 > 0 and os.path.getsize(out) < last * BYTES_PER_FRAME:
        if time.time() > deadline:
            sys.exit(f"audio_probe: the recording of {out} does not reach {t2:.3f} "
                     f"(it holds {os.path.getsize(out) / BYTES_PER_FRAME / RATE:.3f} s)")
        time.sleep(0.02)
        # A loss found meanwhile moves the window.
        pieces = timeline(out, t0)
        first = frame_at(pieces, t1)
        last = max(first, frame_at(pieces, t2))
    with open(out, "rb") as f:
        f.seek(first * BYTES_PER_FRAME)
        data = f.read((last - first) * BYTES_PER_FRAME)
    samples = array.array("h")
    samples.frombytes(data[: len(data) // BYTES_PER_FRAME * BYTES_PER_FRAME])
    return samples[0::CHANNELS], time_at(pieces, first)


def dbfs(samples):
    if not samples:
        return -200.0
    power = sum(s * s for s in samples) / len(samples)
    return 10 * math.log10(power / (32768.0 ** 2)) if power > 0 else -200.0


def windows(samples):
    for i in range(0, len(samples) - WINDOW + 1, WINDOW):
        yield i, dbfs(samples[i:i + WINDOW])


def encoder_delay(path):
    """See `delay` in the usage above."""
    with open(path, "rb") as f:
        data = f.read(1 << 20)
    if data[:4] == b"OggS" and b"OpusHead" in data[:512]:
        head = data.index(b"OpusHead")
        return f"pre-skip {int.from_bytes(data[head + 10:head + 12], 'little')}"
    if data[4:8] == b"ftyp":
        if b"elst" not in data:
            return "none"
        box = data.index(b"elst") + 4  # version, flags, entry count, then the entries
        version = data[box]
        entry = box + 8
        if version == 1:
            media_time = int.from_bytes(data[entry + 8:entry + 16], "big", signed=True)
        else:
            media_time = int.from_bytes(data[entry + 4:entry + 8], "big", signed=True)
        said = f"edit-list {media_time}"
        if b"iTunSMPB" in data:
            # ----, mean, name "iTunSMPB", then a data box whose text follows 8 bytes of flags.
            at = data.index(b"iTunSMPB")
            text_at = data.find(b"data", at) + 12
            said += " iTunSMPB" + data[text_at:text_at + 120].split(b"\0")[0].decode("latin-1")
        return said
    # MP3: past an ID3v2 tag, the first frame's Xing or Info tag, and LAME's extension 120
    # bytes after it (9 bytes of encoder name, ..., at 21: 12 bits of delay, 12 of padding).
    start = 0
    if data[:3] == b"ID3":
        start = 10 + sum((b & 0x7F) << (7 * (3 - i)) for i, b in enumerate(data[6:10]))
    first_frame = data[start:start + 200]
    for name in (b"Xing", b"Info"):
        at = first_frame.find(name)
        if at >= 0:
            lame = start + at + 120
            d = data[lame + 21:lame + 24]
            if len(d) == 3:
                return f"lame {(d[0] << 4) | (d[1] >> 4)} {((d[1] & 0x0F) << 8) | d[2]}"
    return "none"


def gaps(x, rate, min_ms=1.0):
    """The runs of samples quieter than LOUD_DBFS, longer than min_ms, between the first and the
    last louder sample: (start, length) in seconds, start from the first louder sample. A tone
    crosses zero in a sample or two; a stream that stops and starts again leaves a run of
    silence."""
    quiet = 32768 * 10 ** (LOUD_DBFS / 20)
    loud = [n for n in range(len(x)) if abs(x[n]) > quiet]
    found = []
    for a, b in zip(loud, loud[1:]):
        if b - a - 1 > rate * min_ms / 1000:
            found.append(((a + 1 - loud[0]) / rate, (b - a - 1) / rate))
    return found


def fit_sine(x, lo, hi, omega):
    """Least squares fit of a*sin(omega*n) + b*cos(omega*n) + c to x[lo:hi] (n the index in x).
    Returns (a, b, c)."""
    ss = sc = cc = s1 = c1 = xs = xc = x1 = 0.0
    for n in range(lo, hi):
        s, c, v = math.sin(omega * n), math.cos(omega * n), x[n]
        ss += s * s
        sc += s * c
        cc += c * c
        s1 += s
        c1 += c
        xs += v * s
        xc += v * c
        x1 += v
    m = [[ss, sc, s1, xs], [sc, cc, c1, xc], [s1, c1, float(hi - lo), x1]]
    for i in range(3):  # Gauss-Jordan on the 3x3 normal equations
        p = max(range(i, 3), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(3):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [a - f * b for a, b in zip(m[r], m[i])]
    return tuple(m[i][3] / m[i][i] for i in range(3))


def sine_residual(x, centre, omega, fit_half, half):
    """The sine of angular frequency omega (radians per sample) fitted over centre +- fit_half
    samples, subtracted from x: the largest |residual| within centre +- half, and where (an
    index in x). A gap, samples dropped or repeated, or a click there leave a residual as large
    as the step they make; a continuous sine leaves only what the codec added to it."""
    a, b, c = fit_sine(x, centre - fit_half, centre + fit_half, omega)
    peak, at = 0.0, centre
    for n in range(centre - half, centre + half):
        r = abs(x[n] - (a * math.sin(omega * n) + b * math.cos(omega * n) + c))
        if r > peak:
            peak, at = r, n
    return peak, at


def phase_step(x, centre, omega, fit_half, half):
    """The sine fitted just before centre (centre - fit_half to centre - half) against the one
    just after (centre + half to centre + fit_half): how far the second is shifted in time, in
    samples (within half a period either way). 0 for a continuous sine."""
    a1, b1, _ = fit_sine(x, centre - fit_half, centre - half, omega)
    a2, b2, _ = fit_sine(x, centre + half, centre + fit_half, omega)
    step = math.atan2(b1, a1) - math.atan2(b2, a2)  # phase lost; positive: the sound is late
    step = (step + math.pi) % (2 * math.pi) - math.pi
    return step / omega


def to_dbfs(peak):
    return 20 * math.log10(peak / 32768.0) if peak > 0 else -200.0


def gapless(x, rate, freq, piece, count, half_ms=10.0, fit_ms=250.0):
    """Measures a continuous sine of `freq` Hz played as `count` tracks of `piece` seconds each
    (x: mono samples, full scale 32768). Its start and end are where it first and last reaches
    5 % of its peak; the boundaries between the tracks are expected `piece` seconds of sound
    apart from its start. Yields (key, values...):

      amplitude DBFS          the sine's peak
      onset S                 its start, in seconds from the start of x
      length S                from its first to its last loud sample (count * piece if whole)
      silence S               the longest silence in it (see `gaps`; 0 when none)
      boundary K DBFS AT STEP the largest residual within +-half_ms of boundary K (1 ..
                              count - 1) once the sine fitted over +-fit_ms is subtracted; AT:
                              where it is, in ms from the expected boundary; STEP: the time
                              shift of the sine after the boundary against the one before, in
                              samples
      floor DBFS              the largest residual of the same measure at 1/4, 1/2 and 3/4 of
                              each track, away from any boundary: the codec's own noise
    """
    peak = max((abs(v) for v in x), default=0)
    if peak < 32768 * 10 ** (LOUD_DBFS / 20):
        yield ("amplitude", "none")
        return
    loud = [n for n in range(len(x)) if abs(x[n]) > 0.05 * peak] or [0]
    onset, end = loud[0], loud[-1]
    omega = 2 * math.pi * freq / rate
    half, fit_half = int(rate * half_ms / 1000), int(rate * fit_ms / 1000)
    yield ("amplitude", f"{to_dbfs(peak):.1f}")
    yield ("onset", f"{onset / rate:.4f}")
    yield ("length", f"{(end + 1 - onset) / rate:.4f}")
    yield ("silence", f"{max((n for _, n in gaps(x[onset:end + 1], rate)), default=0):.4f}")

    def measurable(centre):
        return centre - fit_half >= 0 and centre + fit_half <= len(x)

    for k in range(1, count):
        centre = onset + round(k * piece * rate)
        if not measurable(centre):
            yield ("boundary", k, "none")
            continue
        r, at = sine_residual(x, centre, omega, fit_half, half)
        step = phase_step(x, centre, omega, fit_half, half)
        yield ("boundary", k, f"{to_dbfs(r):.1f}", f"{(at - centre) * 1000 / rate:+.1f}",
               f"{step:+.1f}")
    floor = 0.0
    for k in range(count):
        for q in (0.25, 0.5, 0.75):
            centre = onset + round((k + q) * piece * rate)
            if measurable(centre):
                floor = max(floor, sine_residual(x, centre, omega, fit_half, half)[0])
    yield ("floor", f"{to_dbfs(floor):.1f}")


def fundamental(x, rate, lo, hi):
    """The fundamental of x in Hz between lo and hi: the lag of the highest normalised
    autocorrelation, refined by a parabola through its neighbours; None when nothing is
    periodic (no lag correlates at 0.5 or better)."""
    shortest, longest = int(rate / hi), int(rate / lo) + 1
    n = len(x) - longest
    if n <= 0:
        return None
    energy = sum(v * v for v in x[:n])
    if energy == 0:
        return None
    scores = {}
    for lag in range(shortest - 1, longest + 2):
        other = sum(v * v for v in x[lag:lag + n])
        c = sum(a * b for a, b in zip(x[:n], x[lag:lag + n]))
        scores[lag] = c / math.sqrt(energy * other) if other > 0 else 0.0
    best = max(range(shortest, longest + 1), key=lambda lag: scores[lag])
    if scores[best] < 0.5:
        return None
    a, b, c = scores[best - 1], scores[best], scores[best + 1]
    shift = 0.5 * (a - c) / (a - 2 * b + c) if a - 2 * b + c != 0 else 0.0
    return rate / (best + shift)


def highpass(x, rate, cutoff=2000.0):
    """x through a 4th-order Butterworth high-pass (two biquads): a 200 Hz tone is 80 dB down,
    what a cut adds above 2 kHz passes."""
    out = list(x)
    for q in (0.5412, 1.3066):
        w = 2 * math.pi * cutoff / rate
        alpha = math.sin(w) / (2 * q)
        cw = math.cos(w)
        b0, b1, b2 = (1 + cw) / 2, -(1 + cw), (1 + cw) / 2
        a0, a1, a2 = 1 + alpha, -2 * cw, 1 - alpha
        b0, b1, b2, a1, a2 = b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0
        x1 = x2 = y1 = y2 = 0.0
        for i, v in enumerate(out):
            y = b0 * v + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2, x1, y2, y1 = x1, v, y1, y
            out[i] = y
    return out


def click(x, rate):
    """(at, db, ramp, hard) for the edge of the sound in x (a stop, or a start), or None."""
    w = rate // 1000  # 1 ms windows
    levels = [dbfs(x[i:i + w]) for i in range(0, len(x) - w + 1, w)]
    loud = [lv > LOUD_DBFS for lv in levels]
    # An edge with 15 ms of the same on each side (less at the span's ends): on PipeWire a
    # graph that misses a cycle leaves a hole of one quantum (5 ms here) in what is recorded,
    # with or without hark (found while polling hark's status with nothing else going on);
    # hark's own stops and starts are 40 ms apart at the least (a seek's).
    hold = 15
    edge = next((i for i in range(1, len(loud)) if loud[i] != loud[i - 1]
                 and all(v == loud[i - 1] for v in loud[max(0, i - hold):i])
                 and all(v == loud[i] for v in loud[i:i + hold])), None)
    if edge is None:
        return None
    stopping = loud[edge - 1]
    # The exact sample: the last (first) one above a tenth of the sound's peak before (after)
    # the edge, looked for on the sound's side only, so that a sound back soon after a short
    # stop (a seek's) is not taken for the stop's end.
    lo, hi = max(0, (edge - 20) * w), min(len(x), (edge + 20) * w)
    peak = max(abs(v) for v in x[lo:hi]) or 1
    side = range(lo, min(hi, (edge + 1) * w)) if stopping else range(max(lo, (edge - 1) * w), hi)
    above = [i for i in side if abs(x[i]) > peak / 10]
    at = (above[-1] if stopping else above[0]) if above else edge * w
    # The sound's own level: 50 ms of it on the loud side.
    body = x[max(0, at - rate // 20):at] if stopping else x[at:at + rate // 20]
    level = math.sqrt(sum(v * v for v in body) / max(1, len(body))) or 1.0
    half = rate // 200  # 5 ms: the 10 ms around the edge

    def energy(y, c=None):
        hp = highpass(y, rate)
        c = len(y) // 2 if c is None else c
        seg = hp[max(0, c - half):c + half]  # what there is of it at a window's edge
        rms = math.sqrt(sum(v * v for v in seg) / max(1, len(seg)))
        return 20 * math.log10(rms / level) if rms > 0 else -200.0

    span = rate // 20
    around = x[max(0, at - span):at + span]  # the edge at at - max(0, at - span) in it
    # The same sound, continued as it went before the edge (a sine fitted to it), cut at the
    # edge hard and with a 5 ms raised-cosine ramp.
    src = x[max(0, at - span):at] if stopping else x[at:at + span]
    fitted = sine_model(src, rate)
    ramp_len = rate // 200
    made_hard, made_ramp = [], []
    for i in range(2 * span):
        t = i - span  # samples from the edge
        v = fitted(i if stopping else i - span)
        on = t < 0 if stopping else t >= 0
        made_hard.append(v if on else 0.0)
        if stopping:
            g = 1.0 if t < -ramp_len else (0.0 if t >= 0 else 0.5 - 0.5 * math.cos(math.pi * -t / ramp_len))
        else:
            g = 0.0 if t < 0 else (1.0 if t >= ramp_len else 0.5 - 0.5 * math.cos(math.pi * t / ramp_len))
        made_ramp.append(v * g)
    return (at / rate, energy(around, at - max(0, at - span)), energy(made_ramp),
            energy(made_hard))


def sine_model(src, rate):
    """The strongest sine in src (its frequency by zero crossings, fitted by least squares), as
    a function of the sample index counted from src's start."""
    crossings = sum(1 for a, b in zip(src, src[1:]) if (a < 0) != (b < 0))
    freq = max(1.0, crossings / 2 / (len(src) / rate))
    omega = 2 * math.pi * freq / rate
    a, b, c = fit_sine(src, 0, len(src), omega)
    return lambda i: a * math.sin(omega * i) + b * math.cos(omega * i) + c


def main(argv):
    command = argv[1]
    if command == "record":
        record(argv[2], argv[3], *argv[4:5])
        return
    if command == "delay":
        print(encoder_delay(argv[2]))
        return
    if command == "reaches":
        out, when = argv[2], float(argv[3])
        with open(out + ".t0") as t:
            t0 = float(t.read())
        frame = frame_at(timeline(out, t0), when)
        sys.exit(0 if os.path.getsize(out) >= frame * BYTES_PER_FRAME else 1)
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
    elif command == "gaps":
        for at, length in gaps(samples, RATE):
            print(f"{at:.4f} {length:.4f}")
    elif command == "gapless":
        freq, piece, count = float(argv[5]), float(Fraction(argv[6])), int(argv[7])
        for key, *values in gapless(samples, RATE, freq, piece, count):
            print(key, *values)
    elif command == "level":
        print(f"{dbfs(samples):.2f}")
    elif command == "tone":
        # Fitted over each 100 ms, the median: one sine over the whole span loses most of its
        # level to a phase jump in it (a stream's hiccup on a busy machine read 2 dB low).
        omega = 2 * math.pi * float(argv[5]) / RATE
        step = RATE // 10
        spans = [(lo, min(lo + step, len(samples))) for lo in range(0, len(samples), step)]
        spans = [s for s in spans if s[1] - s[0] >= step // 2] or [(0, len(samples))]
        levels = []
        for lo, hi in spans:
            a, b, _ = fit_sine(samples, lo, hi, omega) if hi > lo else (0.0, 0.0, 0.0)
            levels.append(math.sqrt((a * a + b * b) / 2))
        rms = sorted(levels)[len(levels) // 2]
        print(f"{20 * math.log10(rms / 32768.0) if rms > 0 else -200.0:.2f}")
    elif command == "ducked":
        # The first 100 ms piece whose FREQ Hz sine is within 2 dB of LEVEL, as seconds after T1,
        # and the median level of the pieces from there to T2 ("none" if no piece is).
        omega = 2 * math.pi * float(argv[5]) / RATE
        target = float(argv[6])
        step = RATE // 10
        levels = []
        for lo in range(0, len(samples) - step + 1, step):
            a, b, _ = fit_sine(samples, lo, lo + step, omega)
            rms = math.sqrt((a * a + b * b) / 2)
            levels.append(20 * math.log10(rms / 32768.0) if rms > 0 else -200.0)
        first = next((i for i, lv in enumerate(levels) if abs(lv - target) < 2), None)
        if first is None:
            print("none")
        else:
            rest = sorted(levels[first:])
            print(f"{offset + first * 0.1:.2f} {rest[len(rest) // 2]:.2f} {len(rest)}")
    elif command == "click":
        found = click(samples, RATE)
        print("none" if found is None else
              f"{offset + found[0]:.4f} {found[1]:.1f} {found[2]:.1f} {found[3]:.1f}")
    elif command == "fundamental":
        f0 = fundamental(samples, RATE, float(argv[5]), float(argv[6]))
        print("none" if f0 is None else f"{f0:.1f}")
    elif command == "freq":
        crossings = sum(1 for a, b in zip(samples, samples[1:]) if (a < 0) != (b < 0))
        print(f"{crossings / 2 / (len(samples) / RATE):.1f}" if samples else "0")
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv)
