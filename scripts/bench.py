#!/usr/bin/env python3
"""The measuring half of scripts/bench (standard library only: it must run on a fresh machine).

  bench.py signal --seconds N OUT.wav   writes the test signal
  bench.py run ...                      measures every player and prints the table
  bench.py run --manners ...            measures the manners instead: headset, call, MPRIS
                                        (a PulseAudio and a session bus of its own per check)
  bench.py run --library DIR ...        measures the library index at scale instead:
                                        makes DIR with scripts/make-library, hark beside MPD
                                        and cmus (no sound: no PulseAudio)

scripts/bench sets the stage first: a private PulseAudio daemon with a null sink named 'out'
(PULSE_SERVER and PULSE_SINK in the environment), private HOME and XDG_* directories, the
encoded test files, hark built in release mode and bench-decode compiled. This file starts and
stops every player itself and leaves nothing running when it returns, fails or is signalled.
"""

import argparse
import array
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import wave

RATE = 48000
CHANNELS = 2
# A millisecond of audio is "sound" when any sample in it is above -44 dBFS. The test signal
# never drops below about -20 dBFS in any millisecond, and a paused null sink gives exact zeros.
LOUD = 200
# The first sample of a player's sound: anything but digital silence. A start is timed to it
# (and to the first loud millisecond beside it): an MP3's encoder priming is the file's own
# near-silence, about 10 ms below LOUD at the start of the benchmark's file, not the player's
# delay.
FIRST_SAMPLE = 0
WINDOW = RATE // 1000
DEFAULT_FORMATS = ["wav", "flac", "ogg", "mp3", "opus"]
# AAC and ALAC in .m4a, measured when --formats names them: hark decodes them in its
# hark-ffmpeg helper, libsndfile cannot read them, and `ffmpeg -f null` is their floor.
M4A_FORMATS = ["m4a-aac", "m4a-alac"]
FORMATS = DEFAULT_FORMATS + M4A_FORMATS
FORMAT_NAMES = {"wav": "WAV", "flac": "FLAC", "ogg": "Ogg Vorbis", "mp3": "MP3", "opus": "Opus",
                "m4a-aac": "AAC .m4a", "m4a-alac": "ALAC .m4a"}
# The files scripts/bench makes: hark picks its decoder by the extension, so .m4a last.
FILE_NAMES = {**{f: f"music.{f}" for f in DEFAULT_FORMATS},
              "m4a-aac": "music.aac.m4a", "m4a-alac": "music.alac.m4a"}
# hark's decode time on the .m4a files at most this many times ffmpeg's (within 10 %: the helper
# process and its pipe should cost next to nothing beside FFmpeg's own decoding).
FFMPEG_WITHIN = 1.10
# How long to wait for a player's first sound and, after a pause command, for silence.
FIRST_SOUND_TIMEOUT = 5.0
AFTER_PAUSE = 1.5


def now():
  return time.monotonic()


def say(text):
  print(f"bench: {text}", file=sys.stderr, flush=True)


# MARK: The test signal


def write_signal(path, seconds):
  """Writes `seconds` of 48 kHz stereo 16-bit music-like signal, loud from the first sample.

  An 8 s pattern (a held chord on cosines, so sample 0 is already loud; a bass line; a
  sixteenth-note melody with harmonics; noise hi-hats), repeated. The noise and the changing
  notes keep lossy encoders at music-like bitrates; pure tones would make them unrealistically
  cheap to decode.
  """
  rng = random.Random(1)
  pattern_frames = 8 * RATE
  step = RATE // 8  # sixteenth notes at 120 bpm
  scale = [261.63, 293.66, 329.63, 392.00, 440.00, 523.25, 587.33, 659.25]
  chords = [(130.81, 164.81, 196.00), (110.00, 130.81, 164.81), (87.31, 110.00, 130.81),
            (98.00, 123.47, 146.83)]
  basses = [65.41, 55.00, 43.65, 49.00]
  melody = [rng.choice(scale) for _ in range(pattern_frames // step)]
  left = array.array("h", bytes(2 * pattern_frames))
  right = array.array("h", bytes(2 * pattern_frames))
  two_pi = 2 * math.pi
  for i in range(pattern_frames):
    t = i / RATE
    bar = i // (2 * RATE)
    s = i // step
    in_step = (i - s * step) / step
    chord = chords[bar % 4]
    pad = 0.09 * (math.cos(two_pi * chord[0] * t) + math.cos(two_pi * chord[1] * t)
                  + math.cos(two_pi * chord[2] * t))
    bass = 0.16 * math.sin(two_pi * basses[bar % 4] * t + 1.0)
    f = melody[s]
    env = 1.0 - 0.6 * in_step
    lead = env * 0.17 * (math.sin(two_pi * f * t + 0.5) + 0.5 * math.sin(two_pi * 2 * f * t)
                         + 0.25 * math.sin(two_pi * 3 * f * t))
    hat = 0.12 * max(0.0, 1.0 - 8 * in_step) * (rng.random() - 0.5) if s % 2 == 0 else 0.0
    l = pad + bass + 0.7 * lead + hat
    r = pad + bass + 0.5 * lead - hat
    left[i] = int(max(-1.0, min(1.0, l)) * 32000)
    right[i] = int(max(-1.0, min(1.0, r)) * 32000)
  frame = array.array("h", bytes(4 * pattern_frames))
  frame[0::2] = left
  frame[1::2] = right
  if sys.byteorder != "little":
    frame.byteswap()
  data = frame.tobytes()
  total = int(seconds * RATE)
  with wave.open(path, "wb") as w:
    w.setnchannels(CHANNELS)
    w.setsampwidth(2)
    w.setframerate(RATE)
    written = 0
    while written < total:
      n = min(pattern_frames, total - written)
      w.writeframes(data[: 4 * n])
      written += n


# MARK: Processes


class Processes:
  """Every process this run starts, so that all of them are stopped whatever happens."""

  def __init__(self):
    self.live = []
    self.cleanups = []

  def start(self, argv, **kw):
    kw.setdefault("stdin", subprocess.DEVNULL)
    kw.setdefault("stdout", subprocess.DEVNULL)
    kw.setdefault("stderr", subprocess.DEVNULL)
    p = subprocess.Popen(argv, **kw)
    self.live.append(p)
    return p

  def stop(self, p, grace=3.0):
    """SIGCONT (it may be stopped), SIGTERM, SIGKILL after `grace` seconds; reaps it."""
    if p.returncode is None:
      for sig in (signal.SIGCONT, signal.SIGTERM):
        try:
          os.kill(p.pid, sig)
        except ProcessLookupError:
          pass
      try:
        p.wait(grace)
      except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    if p in self.live:
      self.live.remove(p)

  def stop_all(self):
    for p in list(self.live):
      self.stop(p, grace=1.0)
    for cleanup in reversed(self.cleanups):
      try:
        cleanup()
      except Exception as e:  # cleanup goes on; say what could not be undone
        say(f"cleanup: {e}")
    self.cleanups = []


PROCS = Processes()
ARGS = None  # the command line of `bench.py run`


def run_rusage(argv, timeout):
  """Runs `argv` to its end (at most `timeout` s); returns (status, CPU seconds, peak RSS MB).

  Through bench-rusage, which forks the player from a small process and reports wait4's
  user+sys time and maximum resident set: exact, no sampling. A player still running after
  the timeout is stopped and reported as None.
  """
  out = os.path.join(ARGS.tmp, "rusage.txt")
  if os.path.exists(out):
    os.unlink(out)
  p = PROCS.start([ARGS.rusage, out, *argv])
  try:
    p.wait(timeout)
  except subprocess.TimeoutExpired:
    PROCS.stop(p)
    return None, None, None
  PROCS.live.remove(p)
  with open(out) as f:
    user, system, rss_kb, status = f.read().split()
  return int(status), float(user) + float(system), int(rss_kb) / 1024


def proc_cpu(pid):
  """User+sys CPU seconds of a running process, all its threads, from /proc/PID/stat."""
  with open(f"/proc/{pid}/stat") as f:
    fields = f.read().rsplit(")", 1)[1].split()
  return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hark_player_pid():
  """The pid of the player hark's interface started (its lock file holds it), or None."""
  try:
    with open(os.path.join(os.environ["XDG_RUNTIME_DIR"], "hark", "player.lock")) as f:
      pid = int(f.read().strip())
    return pid if alive(pid) else None
  except (OSError, ValueError):
    return None


def proc_hwm_mb(pid):
  """Peak resident set (VmHWM) of a running process, in MB."""
  with open(f"/proc/{pid}/status") as f:
    for line in f:
      if line.startswith("VmHWM:"):
        return int(line.split()[1]) / 1024
  return None


def alive(pid):
  try:
    with open(f"/proc/{pid}/stat") as f:
      return f.read().rsplit(")", 1)[1].split()[0] != "Z"
  except (FileNotFoundError, ProcessLookupError):
    return False


def wait_until(predicate, timeout, interval=0.01):
  deadline = now() + timeout
  while now() < deadline:
    if predicate():
      return True
    time.sleep(interval)
  return predicate()


def run_quiet(argv, timeout=10):
  return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL, timeout=timeout).returncode


# MARK: The sink's monitor


class Monitor:
  """Records the null sink's monitor with parec and says when sound started and stopped.

  Each chunk read from parec is stamped with the time it arrived; the earliest arrival relative
  to its position in the stream, min(arrival - frames/RATE), anchors the stream to the clock,
  so every frame gets a time (to within the sink's block, a millisecond or two at the
  latency asked for here).
  """

  def __init__(self, latency_ms=1, steady_anchor=False, device="out"):
    """`latency_ms`: what parec asks of the sink; None for parec's default, which leaves a null
    sink deeply buffered. `steady_anchor`: only the chunks of the steady stream anchor it: each
    at most 100 ms of audio and read at least 3 ms after the one before. A monitor holds back
    what the sink could still rewind (at the default latency, about 300 ms) and hands it over
    as the sink plays on; but when parec connects, and whenever a stream comes or goes on the
    sink, it hands over all it holds at once, that much early (and then nothing for a while):
    such a dump would date everything too early. `device`: the sink whose monitor to record."""
    self.chunks = []
    self.steady_anchor = steady_anchor
    latency = [] if latency_ms is None else [f"--latency-msec={latency_ms}"]
    self.proc = PROCS.start(
      ["parec", f"--device={device}.monitor", "--raw", "--format=s16le", f"--rate={RATE}",
       f"--channels={CHANNELS}", *latency], stdout=subprocess.PIPE)
    self.reader = threading.Thread(target=self._read, daemon=True)
    self.reader.start()
    if not wait_until(lambda: sum(len(c) for _, c in self.chunks) >= 4 * RATE // 10, 5):
      self.close()
      raise RuntimeError(f"parec delivered nothing from '{device}.monitor' in 5 s")

  def _read(self):
    fd = self.proc.stdout.fileno()
    while True:
      try:
        data = os.read(fd, 65536)
      except OSError:
        return
      if not data:
        return
      self.chunks.append((now(), data))

  def close(self):
    PROCS.stop(self.proc)
    self.reader.join(2)
    self.proc.stdout.close()

  def mark(self):
    """How many bytes have arrived so far: a place in the stream to search from."""
    return sum(len(c) for _, c in list(self.chunks))

  def _samples(self):
    chunks = list(self.chunks)
    data = b"".join(c for _, c in chunks)
    data = data[: len(data) - len(data) % 4]
    samples = array.array("h", data)
    if sys.byteorder != "little":
      samples.byteswap()
    offset = fallback = None
    end = 0
    before = None
    for t, c in chunks:
      end += len(c) // 4
      o = t - end / RATE
      fallback = o if fallback is None else min(fallback, o)
      steady = before is not None and t - before >= 0.003 and len(c) <= 4 * RATE // 10
      before = t
      if steady or not self.steady_anchor:
        offset = o if offset is None else min(offset, o)
    return samples, offset if offset is not None else fallback

  def first_sound_after(self, t, level=LOUD):
    """The time of the first sample above `level` (by default loud; FIRST_SAMPLE: any sample
    that is not silence) played at or after clock time `t`, or None."""
    samples, offset = self._samples()
    block = WINDOW * CHANNELS
    i = max(0, int((t - offset) * RATE) - WINDOW) * CHANNELS
    while i < len(samples):
      part = samples[i : i + block]
      if max(part) > level or -min(part) > level:
        for j, v in enumerate(part):
          if abs(v) > level:
            return offset + ((i + j) // CHANNELS) / RATE
      i += block
    return None

  def sound_now(self, window=0.02):
    """Whether the last `window` seconds that arrived hold sound."""
    samples, _ = self._samples()
    tail = samples[-int(window * RATE) * CHANNELS :]
    return len(tail) > 0 and max(max(tail), -min(tail)) > LOUD

  def end_time(self):
    """The clock time of the end of what has arrived so far (None before anything has)."""
    samples, offset = self._samples()
    return None if offset is None else offset + len(samples) / CHANNELS / RATE

  def levels(self, t1, t2, window=0.01):
    """RMS levels (dBFS, both channels) of consecutive `window`-second stretches of what was
    played from clock time `t1` to `t2`: a list of (start time, dBFS); -200 for digital
    silence. Only stretches the recording holds in full."""
    samples, offset = self._samples()
    n = int(window * RATE)
    first = max(0, math.ceil((t1 - offset) * RATE))
    last = min(len(samples) // CHANNELS, int((t2 - offset) * RATE))
    out = []
    for f in range(first, last - n + 1, n):
      part = samples[f * CHANNELS : (f + n) * CHANNELS]
      power = sum(v * v for v in part) / len(part)
      out.append((offset + f / RATE, 10 * math.log10(power / 32768.0**2) if power else -200.0))
    return out

  def tone_levels(self, t1, t2, freq, window=0.02):
    """The level (dBFS RMS, left channel) of a sine of `freq` Hz alone, in consecutive
    `window`-second stretches from clock time `t1` to `t2`: a list of (start time, dBFS). With a
    whole number of periods of `freq` and of another tone in each window, the other tone adds
    nothing (a 500 Hz player under a 1000 Hz call, in 20 ms windows)."""
    samples, offset = self._samples()
    if offset is None:
      return []
    n = int(window * RATE)
    first = max(0, math.ceil((t1 - offset) * RATE))
    last = min(len(samples) // CHANNELS, int((t2 - offset) * RATE))
    w = 2 * math.pi * freq / RATE
    sines = [math.sin(w * i) for i in range(n)]
    cosines = [math.cos(w * i) for i in range(n)]
    out = []
    for f in range(first, last - n + 1, n):
      part = samples[f * CHANNELS : (f + n) * CHANNELS : CHANNELS]
      a = sum(x * y for x, y in zip(part, sines))
      b = sum(x * y for x, y in zip(part, cosines))
      amp = 2 * math.hypot(a, b) / n
      out.append((offset + f / RATE,
                  20 * math.log10(amp / math.sqrt(2) / 32768.0) if amp > 0 else -200.0))
    return out

  def tone_db_since(self, mark, freq, window=0.02):
    """The median level (dBFS) of a sine of `freq` Hz in `window`-second stretches of what
    arrived after `mark` (a place from mark()), whatever its time; -200 if nothing did."""
    data = b"".join(c for _, c in list(self.chunks))[mark:]
    data = data[: len(data) - len(data) % 4]
    samples = array.array("h", data)
    if sys.byteorder != "little":
      samples.byteswap()
    left = samples[0::CHANNELS]
    n = int(window * RATE)
    w = 2 * math.pi * freq / RATE
    sines = [math.sin(w * i) for i in range(n)]
    cosines = [math.cos(w * i) for i in range(n)]
    levels = []
    for f in range(0, len(left) - n + 1, n):
      part = left[f : f + n]
      amp = 2 * math.hypot(sum(x * y for x, y in zip(part, sines)),
                           sum(x * y for x, y in zip(part, cosines))) / n
      levels.append(20 * math.log10(amp / math.sqrt(2) / 32768.0) if amp > 0 else -200.0)
    return statistics.median(levels) if levels else -200.0

  def last_sound(self):
    """(time just after the last loud sample, time the recording ends); (None, end) if none."""
    samples, offset = self._samples()
    end = offset + len(samples) / CHANNELS / RATE
    block = WINDOW * CHANNELS
    i = len(samples) - len(samples) % block
    while i >= 0:
      part = samples[i : i + block]
      if part and (max(part) > LOUD or -min(part) > LOUD):
        for j in range(len(part) - 1, -1, -1):
          if abs(part[j]) > LOUD:
            return offset + ((i + j) // CHANNELS + 1) / RATE, end
      i -= block
    return None, end


# MARK: Players


def start_figures(mon, t0, loud):
  """A start's figures from clock time `t0`: to the first sample that is not silence
  (start_ms, the one the target is about) and to the first loud one (start_loud_ms)."""
  sample = mon.first_sound_after(t0, FIRST_SAMPLE)
  first = loud if sample is None or sample > loud else sample
  return {"start_ms": (first - t0) * 1000, "start_loud_ms": (loud - t0) * 1000}


class Player:
  """One program under test. Subclasses say how to play, pause and decode to ALSA's null."""

  name = "?"
  formats = FORMATS
  pause_how = "n/a"
  start_note = ""  # how "start" is counted, when it is not from the process's exec

  def __init__(self, ctx):
    self.ctx = ctx

  def supports(self, fmt):
    return fmt in self.formats

  # Subclasses for programs that exit at the end of the file give play_argv; server-style
  # players override cpu_run and latency_run instead.
  def play_argv(self, path):
    raise NotImplementedError

  def decode_argv(self, paths):
    return None  # no way to send it to ALSA's null device

  def cpu_run(self, path, seconds):
    """Plays `path` to the end; returns CPU seconds, peak RSS MB and a note."""
    rc, cpu, rss = run_rusage(self.play_argv(path), seconds + 30)
    if rc is None:
      return {"error": f"still playing {seconds + 30:.0f} s after it started; killed"}
    if rc != 0:
      return {"error": f"exit status {rc}"}
    return {"cpu": cpu, "rss": rss}

  def latency_run(self, path, mon):
    """Start to first sound, then pause-to-silence; milliseconds."""
    out = {}
    t0 = now()
    p = self.spawn_for_latency(path)
    try:
      first = self.wait_first_sound(mon, t0, p)
      if first is None:
        return {"error": "no sound on the sink within 5 s"}
      out.update(start_figures(mon, t0, first))
      out.update(self.measure_pause(mon, p))
      return out
    finally:
      PROCS.stop(p)

  def spawn_for_latency(self, path):
    return PROCS.start(self.play_argv(path))

  def wait_first_sound(self, mon, t0, p=None):
    found = [None]

    def check():
      found[0] = mon.first_sound_after(t0)
      return found[0] is not None or (p is not None and p.poll() is not None)

    wait_until(check, FIRST_SOUND_TIMEOUT, interval=0.05)
    return found[0]

  def measure_pause(self, mon, p):
    if self.pause_how == "n/a":
      return {}
    time.sleep(1.0)  # well into steady playback
    if not mon.sound_now():
      return {"pause_error": "no sound just before the pause command"}
    tc = now()
    err = self.pause(p)
    if err:
      return {"pause_error": err}
    time.sleep(AFTER_PAUSE)
    last, end = mon.last_sound()
    if last is None or last < tc - 0.05:
      return {"pause_error": "sound had stopped before the command"}
    if end - last < 0.3:
      return {"pause_error": f"still sounding {AFTER_PAUSE:.1f} s after the command"}
    # The sink's clock is known to within a block (a millisecond or two), so a player that
    # stops at once can come out slightly negative; the raw figure stays in the JSON.
    out = {"pause_ms": max(0.0, last - tc) * 1000, "pause_raw_ms": (last - tc) * 1000}
    arrived = self.command_arrival(tc)
    if arrived is not None:
      out["pause_arrival_ms"] = max(0.0, last - arrived) * 1000
      out["pause_arrival_raw_ms"] = (last - arrived) * 1000
    return out

  def pause(self, p):
    """Sends the pause command to the running player; returns an error text or None."""
    os.kill(p.pid, signal.SIGSTOP)
    return None

  def command_arrival(self, sent):
    """When the pause command sent at clock time `sent` reached the player, where the player
    says so (hark's $HARK_COMMAND_TRACE); None where it does not."""
    return None


class Hark(Player):
  name = "hark"
  pause_how = "hark ctl pause"
  start_note = "cold: session server not running (autospawned)"

  def __init__(self, ctx):
    super().__init__(ctx)
    self.bin = ctx.args.hark

  def play_argv(self, path, device="pulse"):
    return [self.bin, "play", "--no-ui", "--device", device, path]

  def decode_argv(self, paths):
    return [self.bin, "play", "--no-ui", "--device", "null", *paths]

  def server_pid(self):
    try:
      with open(os.path.join(os.environ["XDG_RUNTIME_DIR"], "hark", "session.lock")) as f:
        pid = int(f.read().strip() or 0)
      return pid if pid and alive(pid) else None
    except (OSError, ValueError):
      return None

  def stop_server(self):
    run_quiet([self.bin, "session-server", "--stop"], timeout=10)
    pid = self.server_pid()
    if pid:
      os.kill(pid, signal.SIGTERM)
      wait_until(lambda: not alive(pid), 3)

  def cpu_run(self, path, seconds):
    # The session server is a separate process: start it first so its share can be reported
    # beside the player's (it is not added to hark's figure: every client shares it).
    run_quiet([self.bin, "status"])
    spid = self.server_pid()
    s0 = proc_cpu(spid) if spid else None
    out = super().cpu_run(path, seconds)
    if spid and alive(spid) and s0 is not None:
      out["server_cpu"] = proc_cpu(spid) - s0
    return out

  # Starts with the server up measured in each run: one start on a two-core machine varies by
  # several milliseconds, as much as the gap the target is about (15 ms with the server up);
  # the target is about the median of ten.
  WARM_STARTS = 10

  def latency_run(self, path, mon):
    self.stop_server()
    out = super().latency_run(path, mon)
    # Warm: the server is up (the cold run just started it); first sound only.
    warm, warm_loud = [], []
    for _ in range(self.WARM_STARTS):
      time.sleep(0.3)
      t0 = now()
      p = PROCS.start(self.play_argv(path))
      try:
        first = self.wait_first_sound(mon, t0, p)
        if first is not None:
          f = start_figures(mon, t0, first)
          warm.append(f["start_ms"])
          warm_loud.append(f["start_loud_ms"])
      finally:
        PROCS.stop(p)
    time.sleep(0.3)
    if warm:
      out["start_warm_ms"] = statistics.median(warm)
      out["start_warm_each_ms"] = warm
      out["start_warm_loud_each_ms"] = warm_loud
    return out

  def trace_path(self):
    return os.path.join(self.ctx.args.tmp, "hark-commands.txt")

  def spawn_for_latency(self, path):
    # The player notes when each remote command reaches it (SessionPort's CommandTrace): the
    # pause is timed from there too, without `hark ctl`'s own start.
    if os.path.exists(self.trace_path()):
      os.unlink(self.trace_path())
    return PROCS.start(self.play_argv(path), env={**os.environ,
                                                  "HARK_COMMAND_TRACE": self.trace_path()})

  def pause(self, p):
    r = subprocess.run([self.bin, "ctl", "pause"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=10)
    return None if r.returncode == 0 else f"'hark ctl pause' failed: {r.stderr.decode().strip()}"

  def command_arrival(self, sent):
    try:
      with open(self.trace_path()) as f:
        stamps = [int(line.split()[0]) / 1e9 for line in f if line.split()[1:2] == ["pause"]]
    except (OSError, ValueError, IndexError):
      return None
    stamps = [t for t in stamps if t >= sent]
    return stamps[0] if stamps else None


class Aplay(Player):
  name = "aplay"
  formats = ["wav"]
  pause_how = "SIGSTOP (aplay has no pause that drops)"

  def play_argv(self, path):
    return ["aplay", "-q", "-D", "pulse", path]

  def decode_argv(self, paths):
    return ["aplay", "-q", "-D", "null", *paths]


class Mpg123(Player):
  name = "mpg123"
  formats = ["mp3"]
  pause_how = "-R remote: PAUSE"

  def play_argv(self, path):
    return ["mpg123", "-q", "-o", "alsa", "-a", "pulse", path]

  def decode_argv(self, paths):
    return ["mpg123", "-q", "-o", "alsa", "-a", "null", *paths]

  def latency_run(self, path, mon):
    # First sound from the command line; the pause through the remote-control mode, which
    # needs its own process (with -R, mpg123 plays only what LOAD tells it).
    out = {}
    t0 = now()
    p = PROCS.start(self.play_argv(path))
    try:
      first = self.wait_first_sound(mon, t0, p)
      if first is None:
        return {"error": "no sound on the sink within 5 s"}
      out.update(start_figures(mon, t0, first))
    finally:
      PROCS.stop(p)
    time.sleep(0.3)
    r = PROCS.start(["mpg123", "-R", "-o", "alsa", "-a", "pulse"], stdin=subprocess.PIPE)
    try:
      r.stdin.write(f"SILENCE\nLOAD {path}\n".encode())
      r.stdin.flush()
      t1 = now()
      if self.wait_first_sound(mon, t1, r) is None:
        out["pause_error"] = "no sound after LOAD"
      else:
        out.update(self.measure_pause(mon, r))
    finally:
      try:
        r.stdin.close()
      except OSError:
        pass
      PROCS.stop(r)
    return out

  def pause(self, p):
    p.stdin.write(b"PAUSE\n")
    p.stdin.flush()
    return None


class Sox(Player):
  name = "sox play"
  formats = ["wav", "flac", "ogg", "mp3"]  # Debian's sox has no Opus reader
  pause_how = "SIGSTOP (play has no pause)"

  def play_argv(self, path):
    # The driver named explicitly: with libsox-fmt-pulse installed, play would otherwise pick
    # PulseAudio's own API and skip ALSA.
    return ["env", "AUDIODRIVER=alsa", "AUDIODEV=pulse", "play", "-q", path]

  def decode_argv(self, paths):
    return ["env", "AUDIODRIVER=alsa", "AUDIODEV=null", "play", "-q", *paths]


class Mpv(Player):
  name = "mpv"
  pause_how = "JSON IPC set_property pause"

  def base(self):
    return ["mpv", "--no-config", "--no-video", "--no-terminal", "--ao=alsa"]

  def play_argv(self, path, ipc=None):
    argv = self.base() + ["--audio-device=alsa/pulse"]
    if ipc:
      argv.append(f"--input-ipc-server={ipc}")
    return argv + [path]

  def decode_argv(self, paths):
    return self.base() + ["--audio-device=alsa/null", *paths]

  def spawn_for_latency(self, path):
    self.ipc = os.path.join(self.ctx.args.tmp, "mpv.sock")
    if os.path.exists(self.ipc):
      os.unlink(self.ipc)
    return PROCS.start(self.play_argv(path, self.ipc))

  def pause(self, p):
    s = socket.socket(socket.AF_UNIX)
    try:
      s.connect(self.ipc)
      s.sendall(b'{"command":["set_property","pause",true]}\n')
      time.sleep(0.05)
    except OSError as e:
      return f"mpv IPC: {e}"
    finally:
      s.close()
    return None


class Cmus(Player):
  """cmus needs a terminal: it runs in a private tmux server, driven by cmus-remote."""

  name = "cmus"
  formats = DEFAULT_FORMATS  # cmus's and MOC's FFmpeg plugins are packages of their own
  pause_how = "cmus-remote -u"
  start_note = "from 'cmus-remote -f', cmus already running"

  def __init__(self, ctx):
    super().__init__(ctx)
    self.sock = os.path.join(os.environ["XDG_RUNTIME_DIR"], "cmus.sock")
    self.tmux = ["tmux", "-L", ctx.args.tmux_socket, "-f", "/dev/null"]
    conf = os.path.join(os.environ["HOME"], ".config", "cmus")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "rc"), "w") as f:
      if getattr(ctx, "manners", False):
        # The manners (--manners): cmus as a desktop runs it, on its PulseAudio output (its
        # stream says media.role=music) and with its MPRIS on the private session bus; a
        # library of the files given, played in order to its end.
        f.write("set mpris=true\nset output_plugin=pulse\nset softvol=false\n"
                "set continue=true\nset repeat=false\nset shuffle=false\n"
                "set play_library=true\nset aaa_mode=all\n")
      else:
        # No D-Bus here: with MPRIS on, cmus stops at start-up to say so and waits for Enter.
        f.write("set mpris=false\nset output_plugin=alsa\nset dsp.alsa.device=pulse\n"
                "set softvol=false\nset continue=false\nset repeat=false\n")

  def remote(self, *words, capture=False):
    r = subprocess.run(["cmus-remote", "--server", self.sock, *words], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=5)
    if r.returncode != 0:
      raise RuntimeError(f"cmus-remote {' '.join(words)}: {r.stderr.decode().strip()}")
    return r.stdout.decode() if capture else None

  def start(self):
    if os.path.exists(self.sock):
      os.unlink(self.sock)
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in os.environ.items()
                   if k in ("HOME", "XDG_RUNTIME_DIR", "PULSE_SERVER", "PULSE_SINK",
                            "DBUS_SESSION_BUS_ADDRESS"))
    subprocess.run(self.tmux + ["new-session", "-d", "-x", "100", "-y", "30",
                                f"exec env {env} TERM=xterm cmus --listen {self.sock}"],
                   check=True, timeout=10)
    PROCS.cleanups.append(self.stop)
    out = subprocess.run(self.tmux + ["list-panes", "-F", "#{pane_pid}"], capture_output=True,
                         timeout=5).stdout.decode().split()
    self.pid = int(out[0])
    if not wait_until(lambda: os.path.exists(self.sock), 10):
      raise RuntimeError("cmus never opened its socket")
    wait_until(lambda: self.remote_ok(), 5, interval=0.05)
    time.sleep(0.5)  # let start-up (library load, first draw) settle before counting CPU

  def remote_ok(self):
    try:
      self.remote("-Q", capture=True)
      return True
    except (RuntimeError, subprocess.TimeoutExpired):
      return False

  def stop(self):
    if self.stop in PROCS.cleanups:
      PROCS.cleanups.remove(self.stop)
    try:
      self.remote("-C", "quit")
    except (RuntimeError, subprocess.TimeoutExpired):
      pass
    pid = getattr(self, "pid", None)
    if pid and not wait_until(lambda: not alive(pid), 3):
      os.kill(pid, signal.SIGKILL)
    run_quiet(self.tmux + ["kill-server"])

  def status(self):
    for line in self.remote("-Q", capture=True).splitlines():
      if line.startswith("status "):
        return line.split()[1]
    return "?"

  def play(self, path):
    self.remote("-f", path)

  def cpu_run(self, path, seconds):
    self.start()
    try:
      c0 = proc_cpu(self.pid)
      self.play(path)
      time.sleep(seconds)
      if not wait_until(lambda: self.status() == "stopped", 30, interval=0.5):
        return {"error": "still playing 30 s after the end"}
      return {"cpu": proc_cpu(self.pid) - c0, "rss": proc_hwm_mb(self.pid)}
    finally:
      self.stop()

  def latency_run(self, path, mon):
    self.start()
    try:
      t0 = now()
      self.play(path)
      first = self.wait_first_sound(mon, t0)
      if first is None:
        return {"error": "no sound on the sink within 5 s"}
      out = start_figures(mon, t0, first)
      out.update(self.measure_pause(mon, None))
      return out
    finally:
      self.stop()

  def pause(self, p):
    self.remote("-u")
    return None


class Moc(Cmus):
  """MOC's server (mocp -S) plays; the mocp client starts, pauses and stops it."""

  name = "MOC"
  pause_how = "mocp -G"
  start_note = "from 'mocp -l', MOC's server already running"

  def __init__(self, ctx):
    Player.__init__(self, ctx)
    self.dir = os.path.join(ctx.args.tmp, "moc")
    os.makedirs(self.dir, exist_ok=True)
    path = os.path.join(self.dir, "config")
    # MOC has no PulseAudio output: ALSA's pulse plugin is its way there (in the manners,
    # through ALSA's 'default', as a desktop routes it).
    device = "default" if getattr(ctx, "manners", False) else "pulse"
    with open(path, "w") as f:
      f.write(f"SoundDriver = ALSA\nALSADevice = {device}\nSoftmixer_SaveState = no\n")
    os.chmod(path, 0o600)  # MOC refuses a config file others may write

  def mocp(self, *words, capture=False):
    r = subprocess.run(["mocp", "-M", self.dir, *words], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=10)
    if r.returncode != 0:
      raise RuntimeError(f"mocp {' '.join(words)}: {r.stderr.decode().strip()}")
    return r.stdout.decode() if capture else None

  def start(self):
    self.mocp("-S")  # forks the server and returns once it answers
    PROCS.cleanups.append(self.stop)
    with open(os.path.join(self.dir, "pid")) as f:
      self.pid = int(f.read().strip())
    time.sleep(0.5)

  def stop(self):
    if self.stop in PROCS.cleanups:
      PROCS.cleanups.remove(self.stop)
    try:
      self.mocp("-x")
    except (RuntimeError, subprocess.TimeoutExpired):
      pass
    pid = getattr(self, "pid", None)
    if pid and not wait_until(lambda: not alive(pid), 3):
      os.kill(pid, signal.SIGKILL)

  def status(self):
    for line in self.mocp("-i", capture=True).splitlines():
      if line.startswith("State:"):
        return {"STOP": "stopped"}.get(line.split()[1], line.split()[1])
    return "?"

  def play(self, path):
    self.mocp("-l", path)

  def pause(self, p):
    self.mocp("-G")
    return None


PLAYERS = {"hark": Hark, "aplay": Aplay, "mpg123": Mpg123, "sox": Sox, "mpv": Mpv,
           "cmus": Cmus, "moc": Moc}


# MARK: Decode throughput


def wall(argv, timeout=600):
  """Runs `argv` to its end; returns its wall seconds and its CPU seconds (user+sys through
  bench-rusage: wait4 counts every process it reaped too, such as hark's hark-ffmpeg)."""
  out = os.path.join(ARGS.tmp, "rusage.txt")
  t0 = now()
  r = subprocess.run([ARGS.rusage, out, *argv], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
  t = now() - t0
  if r.returncode != 0:
    raise RuntimeError(f"exit status {r.returncode}: {r.stderr.decode().strip()[-200:]}")
  with open(out) as f:
    user, system = f.read().split()[:2]
  return t, float(user) + float(system)


def throughput(argv_for, path, seconds):
  """Real-time factor of decoding to ALSA's null device, start-up cost taken out.

  Times the player on the file once (median of 3) and on K copies queued in one process;
  (K-1) x duration / (t_K - t_1) is what each further file costs. K grows until the difference
  is at least a second, so short quick-run files are measured as well as full-length ones;
  then two more runs of K copies, and the median of the three. The same of CPU time: cpu_xrt.
  """
  ones = [wall(argv_for([path])) for _ in range(3)]
  one = statistics.median(t for t, _ in ones)
  one_cpu = statistics.median(c for _, c in ones)
  k = 4
  for _ in range(4):
    t, c = wall(argv_for([path] * k))
    extra, extra_cpu = t - one, c - one_cpu
    if extra >= 1.0 or k >= 4096:
      break
    per = max(extra / (k - 1), 1e-4)
    k = min(4096, max(2 * k, int(1.5 / per) + 2))
  runs = [(extra, extra_cpu)] + [(t - one, c - one_cpu)
                                 for t, c in (wall(argv_for([path] * k)) for _ in range(2))]
  extras = [x for x, _ in runs]
  extra_cpus = [x for _, x in runs]
  return {"xrt": (k - 1) * seconds / max(statistics.median(extras), 1e-6), "copies": k,
          "cpu_xrt": (k - 1) * seconds / max(statistics.median(extra_cpus), 1e-6),
          "one_s": one, "extra_s": extras, "one_cpu_s": one_cpu, "extra_cpu_s": extra_cpus}


def ffmpeg_argv(paths):
  """ffmpeg decoding the file len(paths) times in one process (-stream_loop: its start-up is
  taken out as every player's is) to interleaved float, what hark-ffmpeg writes to hark; the
  null muxer's default, 16-bit integers, would be a conversion hark does not make."""
  return ["ffmpeg", "-nostdin", "-v", "error", "-stream_loop", str(len(paths) - 1),
          "-i", paths[0], "-c:a", "pcm_f32le", "-f", "null", "-"]


def libsndfile_throughput(decoder, path):
  """Median of three passes of bench-decode, each at least a second of decoding."""
  rates = []
  for _ in range(3):
    out = subprocess.run([decoder, path, "1.0"], capture_output=True, timeout=120, check=True)
    frames, rate, elapsed = out.stdout.decode().split()
    rates.append(int(frames) / int(rate) / float(elapsed))
  return {"xrt": statistics.median(rates), "passes": rates}


# MARK: The run


class Context:
  def __init__(self, args):
    self.args = args


def median(xs):
  xs = [x for x in xs if x is not None]
  return statistics.median(xs) if xs else None


def measure(args):
  ctx = Context(args)
  players = [PLAYERS[n](ctx) for n in args.players]
  files = {f: os.path.join(args.files, FILE_NAMES[f]) for f in args.formats}
  results = []  # one dict per (player, format)
  cells = [(p, f) for p in players for f in args.formats if p.supports(f)]

  def row(player, fmt):
    for r in results:
      if r["player"] == player and r["format"] == fmt:
        return r
    r = {"player": player, "format": fmt, "runs": [], "errors": []}
    results.append(r)
    return r

  started = now()
  for run in range(args.runs):
    say(f"run {run + 1} of {args.runs}: CPU and memory, {len(cells)} plays of "
        f"{args.seconds:g} s each")
    for p, f in cells:
      say(f"  {p.name} {f}: playing {args.seconds:g} s")
      try:
        out = p.cpu_run(files[f], args.seconds)
      except Exception as e:
        out = {"error": str(e)}
      row(p.name, f)["runs"].append({"cpu_run": out})
    say(f"run {run + 1}: start and pause latency")
    for p, f in cells:
      say(f"  {p.name} {f}: start, pause")
      mon = Monitor()
      try:
        out = p.latency_run(files[f], mon)
      except Exception as e:
        out = {"error": str(e)}
      finally:
        mon.close()
      time.sleep(0.2)
      row(p.name, f)["runs"][-1]["latency_run"] = out
  say("decode throughput to ALSA's null device")
  for f in args.formats:
    if f in M4A_FORMATS:
      say(f"  ffmpeg {f}: decoding")
      r = row("ffmpeg", f)
      try:
        r["decode"] = throughput(ffmpeg_argv, files[f], args.seconds)
      except Exception as e:
        r["errors"].append(f"decode: {e}")
      continue
    r = row("libsndfile", f)
    try:
      r["decode"] = libsndfile_throughput(args.decoder, files[f])
    except Exception as e:
      r["errors"].append(f"decode: {e}")
  for p, f in cells:
    r = row(p.name, f)
    if p.decode_argv([files[f]]) is None:
      continue
    say(f"  {p.name} {f}: decoding")
    try:
      r["decode"] = throughput(p.decode_argv, files[f], args.seconds)
    except Exception as e:
      r["errors"].append(f"decode: {e}")
  if any(p.name == "hark" for p in players):
    Hark(ctx).stop_server()

  for r in results:
    runs = r["runs"]
    cpu = [x["cpu_run"].get("cpu") for x in runs]
    r["cpu_per_min"] = median([c * 60 / args.seconds if c is not None else None for c in cpu])
    r["rss_mb"] = median([x["cpu_run"].get("rss") for x in runs])
    server = median([x["cpu_run"].get("server_cpu") for x in runs])
    r["server_cpu_per_min"] = server * 60 / args.seconds if server is not None else None
    r["start_ms"] = median([x.get("latency_run", {}).get("start_ms") for x in runs])
    r["start_loud_ms"] = median([x.get("latency_run", {}).get("start_loud_ms") for x in runs])
    # Every warm start of every run, not the median of each run's median.
    warm = [ms for x in runs for ms in x.get("latency_run", {}).get("start_warm_each_ms", [])]
    r["start_warm_ms"], r["start_warm_count"] = median(warm), len(warm)
    r["start_warm_loud_ms"] = median(
      [ms for x in runs for ms in x.get("latency_run", {}).get("start_warm_loud_each_ms", [])])
    r["pause_ms"] = median([x.get("latency_run", {}).get("pause_ms") for x in runs])
    r["pause_arrival_ms"] = median(
      [x.get("latency_run", {}).get("pause_arrival_ms") for x in runs])
    r["decode_xrt"] = r.get("decode", {}).get("xrt")
    r["decode_cpu_xrt"] = r.get("decode", {}).get("cpu_xrt")
    for x in runs:
      for key in ("cpu_run", "latency_run"):
        for k in ("error", "pause_error"):
          if x.get(key, {}).get(k):
            r["errors"].append(f"{key.split('_')[0]}: {x[key][k]}")
  info = {p.name: {"pause": p.pause_how, "start": p.start_note} for p in players}
  return results, info, now() - started


# MARK: Ducking (hark only)

# While a navigation prompt speaks, hark lowers itself by the configured amount (set here with
# --duck, so the figure is known), on time, and a track with prompts in it takes as long as it does
# alone. The peers have no notion of other apps' sessions.
DUCK_DB = -20.0
DUCK_TONE_HZ = 500  # at 48 kHz a 10 ms window holds exactly five periods: a steady level
DUCK_HEARD_DB = 12.0  # "the duck heard": this far below the level before the prompt
BACK_WITHIN_DB = 1.0
PROMPT_SECONDS = 2.0
DURATION_TRACK_S = 14.0
DURATION_PROMPTS_AT = (3.0, 7.0, 10.0)  # seconds after the track's "playing" line
DUCK_TARGETS = {"heard_ms_max": 150.0, "duration_diff_s_max": 0.5}
NO_MANNERS = "n/a: no session manners"


class Stamped:
  """A process whose output lines are stamped with the clock time they arrive, as the end-to-end
  tests' `stamp` does with $EPOCHREALTIME, and whose exit is stamped too."""

  def __init__(self, argv, env=None):
    self.lines = []  # (time, text)
    self.exited = None
    self.proc = PROCS.start(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    threading.Thread(target=self._read, daemon=True).start()
    threading.Thread(target=self._wait, daemon=True).start()

  def _read(self):
    try:
      for raw in iter(self.proc.stdout.readline, b""):
        self.lines.append((now(), raw.decode(errors="replace").rstrip("\n")))
    except (OSError, ValueError):
      pass

  def _wait(self):
    self.proc.wait()
    self.exited = now()

  def first(self, text):
    """When the first line containing `text` arrived, or None."""
    return next((t for t, line in list(self.lines) if text in line), None)

  def last_line(self):
    return self.lines[-1][1] if self.lines else "(nothing printed)"

  def stop(self):
    # Its stdout stays open: the reader may still be in readline (a process it started could
    # hold the pipe), and closing it under the reader would wait for that.
    PROCS.stop(self.proc)


def write_tone(path, seconds, freq=DUCK_TONE_HZ, amplitude=0.5):
  """A steady sine in both channels, 48 kHz 16-bit (at 0.5: -9 dBFS RMS)."""
  period = RATE // freq
  assert period * freq == RATE, "the tone must have whole periods per second"
  one = array.array("h", [0] * (2 * period))
  for i in range(period):
    one[2 * i] = one[2 * i + 1] = int(round(amplitude * 32767 * math.sin(2 * math.pi * i / period)))
  if sys.byteorder != "little":
    one.byteswap()
  with wave.open(path, "wb") as w:
    w.setnchannels(CHANNELS)
    w.setsampwidth(2)
    w.setframerate(RATE)
    w.writeframes(one.tobytes() * int(seconds * freq))


def mean_db(levels):
  """The RMS level of a run of equal windows, from their dBFS figures."""
  if not levels:
    return None
  power = sum(10 ** (db / 10) for db in levels) / len(levels)
  return 10 * math.log10(power) if power > 0 else -200.0


class Ducking:
  """hark plays; `hark simulate nav` ducks it; the null sink's recording says how it sounded."""

  def __init__(self, args):
    self.hark = args.hark
    self.tmp = args.tmp
    # The prompt's own sound on a second null sink, so that 'out' records hark alone; without
    # one, a silent prompt (the session's ducking is the same).
    sinks = subprocess.run(["pactl", "list", "short", "sinks"], capture_output=True, text=True,
                           timeout=10).stdout
    self.other_sink = any(line.split("\t")[1:2] == ["other"] for line in sinks.splitlines())
    self.voice = "on the null sink 'other'" if self.other_sink else "silent (--no-sound: no " \
                                                                    "second sink)"

  def play(self, path):
    # "--duck=-20": in two words, ArgumentParser would take "-20" for an option.
    return Stamped([self.hark, "play", "--no-ui", "--device", "pulse", f"--duck={DUCK_DB:g}",
                    "--new", path])

  def prompt(self):
    argv = [self.hark, "simulate", "nav", "--seconds", f"{PROMPT_SECONDS:g}"]
    env = dict(os.environ)
    if self.other_sink:
      argv += ["--device", "pulse"]
      env["PULSE_SINK"] = "other"
    else:
      argv += ["--no-sound"]
    return Stamped(argv + ["Turn left"], env=env)

  def wait_playing(self, player, timeout=10):
    wait_until(lambda: player.first("playing '") is not None or player.exited is not None,
               timeout, interval=0.005)
    return player.first("playing '")

  def run(self):
    started = now()
    out = {"duck_db": DUCK_DB, "prompt_s": PROMPT_SECONDS, "tone_hz": DUCK_TONE_HZ,
           "prompt_sound": self.voice, "heard_db": DUCK_HEARD_DB, "back_db": BACK_WITHIN_DB,
           "targets": DUCK_TARGETS, "duck": [], "duration": {}}
    tone = os.path.join(self.tmp, "tone.wav")
    track = os.path.join(self.tmp, "track14.wav")
    write_tone(tone, 12)
    write_signal(track, DURATION_TRACK_S)
    for label, latency in (("parec, 10 ms latency", 10),
                           ("parec, default latency (deep buffers)", None)):
      say(f"  ducking: a prompt over a tone, recorder {label}")
      try:
        r = self.duck_run(tone, latency)
      except Exception as e:
        r = {"error": f"{type(e).__name__}: {e}"}
      r["recorder"] = label
      r["latency_ms"] = latency
      out["duck"].append(r)
      time.sleep(0.3)
    say(f"  ducking: a {DURATION_TRACK_S:g} s track alone, then with "
        f"{len(DURATION_PROMPTS_AT)} prompts (nothing recording: deep buffers)")
    d = out["duration"]
    d["track_s"] = DURATION_TRACK_S
    d["prompts_at_s"] = list(DURATION_PROMPTS_AT)
    for key, at in (("alone", ()), ("with_prompts", DURATION_PROMPTS_AT)):
      try:
        d[key] = self.duration_run(track, at)
      except Exception as e:
        d[key] = {"error": f"{type(e).__name__}: {e}"}
      time.sleep(0.3)
    a, w = d["alone"].get("took_s"), d["with_prompts"].get("took_s")
    d["difference_s"] = w - a if a is not None and w is not None else None
    out["elapsed_s"] = now() - started
    return out

  def duck_run(self, tone, latency_ms):
    """A prompt while a steady tone plays, as the recording of 'out' heard it (`latency_ms`:
    the recorder's, None for parec's default). Returns the figures in ms and dB; "error" (and
    whatever was measured before it) when one could not be made."""
    mon = Monitor(latency_ms, steady_anchor=True)
    player = prompt = None
    try:
      player = self.play(tone)
      t_play = self.wait_playing(player)
      if t_play is None:
        return {"error": f"hark did not say it plays ({player.last_line()})"}

      def steady():  # a second of sound recorded: a level to compare with
        end = mon.end_time()
        w = mon.levels(end - 1.0, end) if end is not None else []
        return len(w) >= 95 and all(db > -40 for _, db in w)

      time.sleep(1.0)
      if not wait_until(steady, 8, interval=0.1):
        return {"error": "no second of steady sound on the sink 9 s after hark said it plays"}
      time.sleep(0.2)
      prompt = self.prompt()
      wait_until(lambda: prompt.exited is not None, PROMPT_SECONDS + 10, interval=0.02)
      t_act, t_done = prompt.first("speaking"), prompt.first("done")
      if t_act is None or t_done is None:
        return {"error": f"the prompt said no 'speaking' and 'done' ({prompt.last_line()})"}
      # (With --no-sound it says "a chime" too, though nothing sounds.)
      chime = self.other_sink and prompt.first("a chime: no espeak-ng") is not None
      # 1.5 s past the prompt's end, and the recording holding it (a deep one lags).
      time.sleep(max(0.0, t_done + 1.5 - now()))
      wait_until(lambda: (mon.end_time() or 0) >= t_done + 1.5, 6, interval=0.1)
      if player.exited is not None:
        return {"error": f"hark stopped during the measurement ({player.last_line()})"}
    finally:
      if prompt:
        prompt.stop()
      if player:
        player.stop()
      mon.close()
    r = {"activation_after_playing_s": t_act - t_play, "prompt_s_measured": t_done - t_act}
    if chime:
      r["note"] = "the prompt's voice was a chime: no espeak-ng"
    before = mon.levels(t_act - 1.0, t_act - 0.1)
    if len(before) < 50:
      return {**r, "error": "the recording does not reach back to before the prompt"}
    level = mean_db([db for _, db in before])
    r["level_before_dbfs"] = level
    if level < -40:
      return {**r, "error": f"hark was not heard before the prompt ({level:.1f} dBFS)"}
    windows = mon.levels(t_act - 0.5, t_done + 1.5)
    # Ducked: at least DUCK_HEARD_DB down, and not a dropout (the duck is DUCK_DB, far above it).
    low = level - DUCK_HEARD_DB
    dropouts = [t for t, db in windows if db < level + DUCK_DB - 20]
    if dropouts:
      r["dropouts"] = len(dropouts)
    heard = next((t for t, db in windows if level + DUCK_DB - 20 <= db <= low), None)
    if heard is None:
      return {**r, "error": f"never {DUCK_HEARD_DB:g} dB below {level:.1f} dBFS while the "
                            "prompt was active"}
    heard += 0.01  # the end of the first ducked window: by then it is heard
    r["heard_ms"] = (heard - t_act) * 1000
    back = next((t for t, db in windows if t >= heard and db >= level - BACK_WITHIN_DB), None)
    if back is None:
      r["back_error"] = f"not back within {BACK_WITHIN_DB:g} dB 1.5 s after the prompt's end"
      ducked = [db for t, db in windows if t >= heard]
    else:
      r["back_ms"] = (back + 0.01 - t_done) * 1000
      ducked = [db for t, db in windows if heard <= t < back - 0.01]
    if ducked:
      # The median: the ramps at either end (40 ms each) do not move it.
      r["depth_db"] = level - statistics.median(ducked)
      r["ducked_s"] = len(ducked) * 0.01
    return r

  def duration_run(self, track, prompts_at):
    """From hark's "playing" line to its exit at the end of the queue, with a prompt of
    PROMPT_SECONDS at each of `prompts_at` seconds after that line."""
    player = self.play(track)
    prompts = []
    try:
      t_play = self.wait_playing(player)
      if t_play is None:
        return {"error": f"hark did not say it plays ({player.last_line()})"}
      for at in prompts_at:
        while now() < t_play + at and player.exited is None:
          time.sleep(0.005)
        prompts.append(self.prompt())
      wait_until(lambda: player.exited is not None, DURATION_TRACK_S + 20, interval=0.01)
      if player.exited is None:
        return {"error": f"still playing {DURATION_TRACK_S + 20:g} s after it started"}
      if player.proc.returncode != 0:
        return {"error": f"hark exited with status {player.proc.returncode} "
                         f"({player.last_line()})"}
      r = {"took_s": player.exited - t_play,
           # What hark said, in seconds from its "playing" line: a restart or a pause shows here.
           "hark_lines": [f"{t - t_play:.3f} {line}" for t, line in player.lines]}
      said = [line for _, line in player.lines if "playing '" not in line]
      if said:
        r["note"] = "hark said: " + " | ".join(said[:3]) + (" ..." if len(said) > 3 else "")
      for p in prompts:
        wait_until(lambda: p.exited is not None, PROMPT_SECONDS + 5, interval=0.05)
      unfinished = [i + 1 for i, p in enumerate(prompts) if p.first("done") is None]
      if unfinished:
        r["note"] = "; ".join(([r["note"]] if "note" in r else [])
                              + [f"prompt {', '.join(map(str, unfinished))} did not say 'done'"])
      if prompts:
        r["prompts_active_s"] = [round(p.first("done") - p.first("speaking"), 3)
                                 if p.first("done") and p.first("speaking") else None
                                 for p in prompts]
        r["prompts_started_s"] = [round(p.first("speaking") - t_play, 3)
                                  if p.first("speaking") else None for p in prompts]
      return r
    finally:
      for p in prompts:
        p.stop()
      player.stop()


# MARK: Manners (--manners)

# The README's comparison (hark's manners on a desktop beside the peers'), from measured behaviour:
# who pauses when the headset it plays on goes (and stays paused when it comes back), who steps
# aside for another program's phone call and comes back after it, and who tells MPRIS the truth.
# Every check gets a PulseAudio of its own loaded as a desktop loads it (stream-restore, role-cork,
# switch-on-connect...: Tests/EndToEnd/desktop-pulseaudio.sh) and a session bus of its own (as under
# dbus-run-session), so nothing one player did is left for the next. Each player plays a tone to the
# default sink through its natural path; recorders on the sinks' monitors say what was heard. A
# player that cannot be started gets "n/a: <why>".
MANNERS_TONE_HZ = DUCK_TONE_HZ  # the players' tone
PHONE_HZ = 1000  # the call's: in 20 ms windows it adds nothing to the 500 Hz level
HEARD_DBFS = -50.0  # the player is heard: its tone above this on a monitor
PHONE_SECONDS = 5.0
TRACK_SECONDS = 40.0  # each of the two tracks of the MPRIS check
# PulseAudio's modules as a desktop's default.pa loads them (no cards here: null sinks stand
# for the speakers and a Bluetooth headset). module-role-cork mutes and asks to cork the
# streams of role music or video while one of role phone plays; core PulseAudio (>= 14) moves
# a vanished sink's streams to the default one (module-rescue-streams is a no-op there).
DESKTOP_MODULES = ["module-device-restore", "module-stream-restore", "module-card-restore",
                   "module-switch-on-port-available", "module-switch-on-connect",
                   "module-always-sink", "module-role-cork"]
HEADSET_PROPS = "device.description=Headset device.bus=bluetooth device.form_factor=headset"
MPV_MPRIS = ["/usr/lib/mpv-mpris/mpris.so", "/usr/lib/x86_64-linux-gnu/mpv-mpris/mpris.so",
             "/etc/mpv/scripts/mpris.so"]


class Stage:
  """A private PulseAudio (the desktop's modules, a null sink 'speakers') and a private session
  bus for one check; the environment points at them until close()."""

  count = 0

  def __init__(self, tmp):
    Stage.count += 1
    self.dir = os.path.join(tmp, "stage", str(Stage.count))
    os.makedirs(os.path.join(self.dir, "pulse"), exist_ok=True)
    self.saved = {k: os.environ.get(k) for k in ("PULSE_SERVER", "PULSE_SINK",
                                                   "PULSE_RUNTIME_PATH", "PULSE_STATE_PATH",
                                                   "DBUS_SESSION_BUS_ADDRESS")}
    self.procs = []
    self.monitors = []
    self.headset_module = None
    bus = os.path.join(self.dir, "bus")
    self.procs.append(PROCS.start(["dbus-daemon", "--session", "--nofork",
                                   f"--address=unix:path={bus}"]))
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={bus}"
    if not wait_until(lambda: run_quiet(["dbus-send", "--session", "--print-reply",
                                         "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                         "org.freedesktop.DBus.GetId"]) == 0, 15, 0.1):
      raise RuntimeError("the private session bus did not answer in 15 s")
    sock = os.path.join(self.dir, "pulse", "native")
    pulse_dir = os.path.join(self.dir, "pulse")
    os.environ.update(PULSE_SERVER=f"unix:{sock}", PULSE_RUNTIME_PATH=pulse_dir,
                      PULSE_STATE_PATH=pulse_dir)
    os.environ.pop("PULSE_SINK", None)  # every player plays to the default sink
    argv = ["pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
            "--log-target=stderr",
            "-L", f"module-native-protocol-unix socket={sock} auth-anonymous=1"]
    for m in DESKTOP_MODULES:
      argv += ["-L", m]
    argv += ["-L", "module-null-sink sink_name=speakers rate=48000 channels=2 "
                   "sink_properties=device.description=Speakers"]
    self.log = open(os.path.join(self.dir, "pulseaudio.log"), "w")
    self.procs.append(PROCS.start(argv, stderr=self.log))
    if not wait_until(lambda: run_quiet(["pactl", "info"]) == 0, 20, 0.1):
      raise RuntimeError("the private PulseAudio did not answer in 20 s")
    self.pactl("set-default-sink", "speakers")

  def pactl(self, *words):
    """pactl's output; tried three times (a loaded machine can refuse a connection)."""
    for attempt in range(3):
      r = subprocess.run(["pactl", *words], stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=15)
      if r.returncode == 0:
        return r.stdout
      time.sleep(0.3)
    raise RuntimeError(f"pactl {' '.join(words)}: {r.stderr.strip()}")

  def add_sink(self, name, props=""):
    arg = f"sink_properties='{props}'" if props else ""
    module = self.pactl("load-module", "module-null-sink", f"sink_name={name}", "rate=48000",
                        "channels=2", *([arg] if arg else [])).strip()
    wait_until(lambda: name in self.sinks().values(), 5, 0.05)
    return module

  def load_headset(self):
    """The headset appears, and becomes the default as a desktop makes it."""
    self.headset_module = self.add_sink("headset", HEADSET_PROPS)
    self.pactl("set-default-sink", "headset")

  def unload_headset(self):
    self.pactl("unload-module", self.headset_module)
    self.headset_module = None

  def sinks(self):
    return {s["index"]: s["name"] for s in json.loads(self.pactl("-f", "json", "list", "sinks"))}

  def streams(self, exclude=()):
    """The sink inputs but those of the pids in `exclude` and of role phone: the player's."""
    sinks = self.sinks()
    out = []
    for s in json.loads(self.pactl("-f", "json", "list", "sink-inputs")):
      p = s.get("properties", {})
      if p.get("media.role") == "phone" or p.get("application.process.id") in map(str, exclude):
        continue
      out.append({"sink": sinks.get(s.get("sink"), s.get("sink")), "corked": s.get("corked"),
                  "mute": s.get("mute"), "role": p.get("media.role"),
                  "app": p.get("application.name")})
    return out

  def monitor(self, sink):
    m = Monitor(10, steady_anchor=True, device=sink)
    self.monitors.append(m)
    return m

  def close(self):
    for m in self.monitors:
      try:
        m.close()
      except Exception:
        pass
    for p in reversed(self.procs):
      PROCS.stop(p)
    self.log.close()
    for k, v in self.saved.items():
      if v is None:
        os.environ.pop(k, None)
      else:
        os.environ[k] = v


def tone_max(mons, t1, t2, freq=MANNERS_TONE_HZ):
  """The loudest 20 ms of the player's tone on any of `mons` from `t1` to `t2` (-200: none)."""
  return max([db for m in mons for _, db in m.tone_levels(t1, t2, freq)] + [-200.0])


def wait_recorded(mons, t, timeout=15):
  """Until every recording reaches clock time `t` (a recorder of a sink that went stops)."""
  return wait_until(lambda: all((m.end_time() or 0) >= t or m.proc.poll() is not None
                                for m in mons), max(0.0, t - now()) + timeout, 0.05)


def heard_on(stage, sinks, seconds=1.0):
  """What the sinks play now: {sink: the median level (dBFS) of the player's tone in 20 ms
  windows of `seconds` recorded afresh from each monitor; -200 for a sink that is not there}.
  Afresh, as a recording that goes on across a stream's move between sinks dates badly: each
  sink hands its monitor what it had rendered ahead."""
  mons = {}
  for s in sinks:
    try:
      mons[s] = stage.monitor(s)
    except RuntimeError:
      mons[s] = None
  marks = {s: m.mark() for s, m in mons.items() if m}
  time.sleep(seconds)
  out = {}
  for s, m in mons.items():
    out[s] = m.tone_db_since(marks[s], MANNERS_TONE_HZ) if m else -200.0
    if m:
      stage.monitors.remove(m)
      m.close()
  return out


def heard_now(mon, seconds=0.3):
  end = mon.end_time()
  return end is not None and tone_max([mon], end - seconds, end) > -30


class MannersPlayer:
  """What the manners need of a player, beside its Player class: start it on files as a user
  does (it plays them in order), its own word on its state, its own 'next', stop it."""

  mpris_why = None  # why there is no MPRIS to check, or None
  sound_pid = None  # the process whose sound stream it is

  def m_start(self, paths):
    raise NotImplementedError

  def m_state(self):
    """{"state": playing/paused/stopped/exited, "track": 1-based, "position": s, ...}"""
    raise NotImplementedError

  def m_next(self):
    raise NotImplementedError

  def m_stop(self):
    raise NotImplementedError

  def track_of(self, path_or_title):
    for i, p in enumerate(self.paths):
      if path_or_title in (p, os.path.basename(p), os.path.splitext(os.path.basename(p))[0]):
        return i + 1
    return None


class MHark(MannersPlayer, Hark):
  how = "hark play --no-ui --device default (ALSA's pulse plugin; media.role=music)"

  def m_start(self, paths):
    self.paths = paths
    self.stop_server()  # its session server watches this check's PulseAudio and bus
    self.proc = Stamped([self.bin, "play", "--no-ui", "--device", "default", "--new", *paths])
    self.sound_pid = self.proc.proc.pid

  def m_state(self):
    if self.proc.exited is not None:
      return {"state": "exited", "said": f"status {self.proc.proc.returncode}: "
                                         f"{self.proc.last_line() or '(an empty line)'}"}
    r = subprocess.run([self.bin, "status", "--json"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=15)
    if r.returncode != 0:
      return {"state": "?", "said": r.stderr.strip()}
    for s in json.loads(r.stdout).get("sessions", []):
      if s.get("name") == "hark" and s.get("pid") == self.proc.proc.pid:
        pb = s.get("playback") or {}
        return {"state": pb.get("state"), "track": self.track_of(pb.get("title")),
                "position": pb.get("position"), "pausedBy": pb.get("pausedBy")}
    return {"state": "?", "said": "no session of this player in 'hark status'"}

  def m_next(self):
    run_quiet([self.bin, "ctl", "--player", str(self.proc.proc.pid), "next"], timeout=15)

  def m_stop(self):
    if getattr(self, "proc", None):
      self.proc.stop()
    self.stop_server()


class MMpv(MannersPlayer, Mpv):
  how = "mpv --ao=pulse, mpv-mpris loaded with --script"

  def __init__(self, ctx):
    super().__init__(ctx)
    self.script = next((p for p in MPV_MPRIS if os.path.exists(p)), None)
    if self.script is None:
      self.mpris_why = "n/a: mpv-mpris not installed"

  def m_start(self, paths):
    self.paths = paths
    self.ipc = os.path.join(self.ctx.args.tmp, "mpv-manners.sock")
    if os.path.exists(self.ipc):
      os.unlink(self.ipc)
    self.proc = PROCS.start(["mpv", "--no-config", "--no-video", "--no-terminal", "--ao=pulse",
                             f"--input-ipc-server={self.ipc}",
                             *([f"--script={self.script}"] if self.script else []), *paths])
    self.sound_pid = self.proc.pid
    if not wait_until(lambda: os.path.exists(self.ipc) or self.proc.poll() is not None, 15):
      raise RuntimeError("mpv opened no IPC socket in 15 s")

  def command(self, *words):
    """One JSON IPC command; its "data"."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    try:
      s.connect(self.ipc)
      s.sendall(json.dumps({"command": list(words), "request_id": 7}).encode() + b"\n")
      buf = b""
      while True:
        data = s.recv(65536)
        if not data:
          raise RuntimeError("mpv closed its IPC socket")
        buf += data
        for line in buf.split(b"\n")[:-1]:
          msg = json.loads(line)
          if msg.get("request_id") == 7 and "error" in msg:
            return msg.get("data")
    finally:
      s.close()

  def m_state(self):
    if self.proc.poll() is not None:
      return {"state": "exited"}
    try:
      pause = self.command("get_property", "pause")
      pos = self.command("get_property", "time-pos")
      entry = self.command("get_property", "playlist-pos")
    except (OSError, RuntimeError, ValueError) as e:
      return {"state": "?", "said": str(e)}
    return {"state": "paused" if pause else "playing", "position": pos,
            "track": entry + 1 if isinstance(entry, int) and entry >= 0 else None}

  def m_next(self):
    self.command("playlist-next")

  def m_stop(self):
    if getattr(self, "proc", None):
      PROCS.stop(self.proc)


class MCmus(MannersPlayer, Cmus):
  how = "cmus, output_plugin=pulse, mpris=true"

  def m_start(self, paths):
    self.paths = paths
    self.start()
    self.sound_pid = self.pid
    self.remote("-c", "-l")  # an empty library, then the files
    self.remote("-l", *paths)
    self.remote("-C", "view 2")
    self.remote("-n")
    self.remote("-p")

  def m_state(self):
    if not alive(self.pid):
      return {"state": "exited"}
    try:
      out = self.remote("-Q", capture=True)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
      return {"state": "?", "said": str(e)}
    st = {}
    for line in out.splitlines():
      w = line.split(" ", 1)
      if w[0] == "status":
        st["state"] = w[1]
      elif w[0] == "file":
        st["track"] = self.track_of(w[1])
      elif w[0] == "position":
        st["position"] = float(w[1])
    return st

  def m_next(self):
    self.remote("-n")

  def m_stop(self):
    self.stop()


class MMoc(MannersPlayer, Moc):
  how = "MOC's server through ALSA 'default' (the pulse plugin; MOC has no PulseAudio output)"
  mpris_why = "none"

  def m_start(self, paths):
    self.paths = paths
    self.start()
    self.sound_pid = self.pid
    self.mocp("-c")
    self.mocp("-a", *paths)
    self.mocp("-p")

  def m_state(self):
    if not alive(self.pid):
      return {"state": "exited"}
    try:
      out = self.mocp("-i", capture=True)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
      return {"state": "?", "said": str(e)}
    st = {}
    for line in out.splitlines():
      k, _, v = line.partition(": ")
      if k == "State":
        st["state"] = {"PLAY": "playing", "PAUSE": "paused", "STOP": "stopped"}.get(v, v)
      elif k == "File":
        st["track"] = self.track_of(v)
      elif k == "CurrentSec" and v.strip().isdigit():
        st["position"] = float(v)
    return st

  def m_next(self):
    self.mocp("-f")

  def m_stop(self):
    self.stop()


class Mpd(MannersPlayer, Player):
  """MPD with a private config (its socket in the run's directory, no TCP port), its pulse
  output; driven by mpc. Measured in the manners only."""

  name = "MPD"
  how = "mpd with audio_output pulse (media.role=music), driven by mpc"
  mpris_why = "none without a bridge (mpDris2)"

  def __init__(self, ctx):
    super().__init__(ctx)
    self.dir = os.path.join(ctx.args.tmp, "mpd")
    self.sock = os.path.join(self.dir, "socket")

  def mpc(self, *words):
    r = subprocess.run(["mpc", *words], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=15, env={**os.environ, "MPD_HOST": self.sock})
    if r.returncode != 0:
      raise RuntimeError(f"mpc {' '.join(words)}: {r.stderr.strip()}")
    return r.stdout

  def m_start(self, paths):
    self.paths = paths
    shutil.rmtree(self.dir, ignore_errors=True)
    os.makedirs(self.dir)
    conf = os.path.join(self.dir, "mpd.conf")
    with open(conf, "w") as f:
      f.write(f'music_directory "{os.path.dirname(paths[0])}"\n'
              f'db_file "{self.dir}/db"\npid_file "{self.dir}/pid"\n'
              f'bind_to_address "{self.sock}"\nzeroconf_enabled "no"\n'
              'audio_output {\n  type "pulse"\n  name "pulse"\n}\n')
    self.log = open(os.path.join(self.dir, "stderr"), "w")
    self.proc = PROCS.start(["mpd", "--no-daemon", "--stderr", conf], stderr=self.log)
    self.sound_pid = self.proc.pid
    if not wait_until(lambda: os.path.exists(self.sock) or self.proc.poll() is not None, 15):
      raise RuntimeError("mpd opened no socket in 15 s")
    if self.proc.poll() is not None:
      raise RuntimeError(f"mpd exited: {open(self.log.name).read().strip()[-200:]}")
    self.mpc("--wait", "update")
    self.mpc("clear")
    self.mpc("add", *[os.path.basename(p) for p in paths])
    self.mpc("play")

  def m_state(self):
    if self.proc.poll() is not None:
      return {"state": "exited"}
    try:
      out = self.mpc("status")
    except (RuntimeError, subprocess.TimeoutExpired) as e:
      return {"state": "?", "said": str(e)}
    for line in out.splitlines():
      m = re.match(r"\[(\w+)\]\s+#(\d+)/\d+\s+(\d+):(\d+)/", line)
      if m:
        return {"state": m.group(1), "track": int(m.group(2)),
                "position": 60 * int(m.group(3)) + int(m.group(4))}
    return {"state": "stopped"}

  def m_next(self):
    self.mpc("next")

  def m_stop(self):
    if getattr(self, "proc", None):
      PROCS.stop(self.proc)
    if getattr(self, "log", None):
      self.log.close()


MANNERS_PLAYERS = {"hark": MHark, "mpv": MMpv, "cmus": MCmus, "moc": MMoc, "mpd": Mpd}
DEFAULT_MANNERS = "hark,mpv,cmus,moc,mpd"


def described(st):
  """A player's state in a few words: 'paused #1 12.3 s (route)'."""
  if not st:
    return "?"
  words = [str(st.get("state"))]
  if st.get("track"):
    words.append(f"#{st['track']}")
  if isinstance(st.get("position"), (int, float)):
    words.append(f"{st['position']:.1f} s")
  if st.get("pausedBy"):
    words.append(f"(by {st['pausedBy']})")
  if st.get("said"):
    words.append(f"({st['said']})")
  return " ".join(words)


def db(x):
  return None if x is None or x <= -199 else round(x, 1)


class Manners:
  def __init__(self, args):
    self.args = args
    self.ctx = Context(args)
    self.ctx.manners = True
    d = os.path.join(args.tmp, "manners-files")
    os.makedirs(d, exist_ok=True)
    self.tone = os.path.join(d, "tone60.wav")
    self.phone = os.path.join(d, "phone.wav")
    self.tracks = [os.path.join(d, f"track{i}.wav") for i in (1, 2)]
    write_tone(self.tone, 60, MANNERS_TONE_HZ)
    write_tone(self.phone, PHONE_SECONDS, PHONE_HZ, amplitude=0.3)
    for t in self.tracks:
      write_tone(t, TRACK_SECONDS, MANNERS_TONE_HZ)

  def one(self, name, check):
    """One check of one player on a stage of its own; its figures or {"error": why}."""
    stage = player = None
    started = now()
    try:
      stage = Stage(self.args.tmp)
      player = MANNERS_PLAYERS[name](self.ctx)
      return check(player, stage)
    except Exception as e:
      return {"error": f"{type(e).__name__}: {e}"}
    finally:
      if player is not None:
        try:
          player.m_stop()
        except Exception as e:
          say(f"  {name}: stopping: {e}")
      if stage is not None:
        stage.close()
      PROCS.stop_all()
      say(f"  {name}: {check.__name__} took {now() - started:.1f} s")

  def run(self):
    started = now()
    out = {}
    for name in self.args.players:
      say(f"manners: {name}")
      r = out[name] = {}
      r["headset"] = self.one(name, self.headset)
      r["call"] = self.one(name, self.call)
      if name == "hark":
        r["own_call"] = self.one(name, self.own_call)
      r["mpris"] = self.one(name, self.mpris)
      r["how"] = MANNERS_PLAYERS[name].how
    return out, now() - started

  def start_heard(self, player, stage, paths, sink):
    """Starts the player on `paths` with a recorder on `sink`; returns the recorder once the
    tone is heard there, or raises."""
    mon = stage.monitor(sink)
    player.m_start(paths)
    if not wait_until(lambda: heard_now(mon), 30, 0.1):
      raise RuntimeError(f"not heard on '{sink}' 30 s after it started "
                         f"(it says: {described(player.m_state())})")
    time.sleep(1.0)
    return mon

  def headset(self, player, stage):
    """Plays on the headset (the default); the headset goes; 3 s later it comes back."""
    stage.load_headset()
    self.start_heard(player, stage, [self.tone], "headset")
    r = {"before": described(player.m_state())}
    t0 = now()
    stage.unload_headset()
    time.sleep(max(0.0, t0 + 1.0 - now()))
    heard = heard_on(stage, ["speakers"])["speakers"]
    st = player.m_state()
    r["streams_after"] = stage.streams()
    r["state_after"] = described(st)
    r["heard_dbfs"] = db(heard)
    if heard > HEARD_DBFS:
      r["verdict"] = "keeps playing"
    elif st.get("state") == "paused":
      r["verdict"] = "pauses"
    elif st.get("state") in ("stopped", "exited"):
      r["verdict"] = f"stops ({st['state']})"
    else:
      r["verdict"] = f"silent, says {st.get('state')}"
    time.sleep(max(0.0, t0 + 3.0 - now()))
    t1 = now()
    stage.load_headset()
    time.sleep(max(0.0, t1 + 1.5 - now()))
    back = heard_on(stage, ["headset", "speakers"])
    st = player.m_state()
    r["back_state"] = described(st)
    r["back_streams"] = stage.streams()
    r["back_heard_dbfs"] = {k: db(v) for k, v in back.items()}
    where = "/".join(sorted({x["sink"] for x in r["back_streams"]})) or "?"
    if max(back.values()) > HEARD_DBFS:
      r["back_verdict"] = (f"keeps playing (on the {where})" if heard > HEARD_DBFS
                           else f"resumes (on the {where})")
    elif st.get("state") == "paused":
      r["back_verdict"] = "stays paused"
    else:
      r["back_verdict"] = f"silent, says {st.get('state')}"
    return r

  def call(self, player, stage, own=False):
    """A call while the player plays on the speakers: another program's phone-role stream (a
    1000 Hz tone, PHONE_SECONDS), or hark's own `hark call` when `own`."""
    mon = self.start_heard(player, stage, [self.tone], "speakers")
    s0, t_s0 = player.m_state(), now()
    tc = now()
    if own:
      stage.add_sink("earpiece")  # its ring and voice, away from the recording
      call = PROCS.start([self.args.hark, "call", "--ring", "1", "--talk", "3", "--device",
                          "pulse"], env={**os.environ, "PULSE_SINK": "earpiece"})
    else:
      call = PROCS.start(["paplay", "--property=media.role=phone",
                          "--property=application.name=Phone call", self.phone])
    time.sleep(max(0.0, tc + 1.5 - now()))
    during = heard_on(stage, ["speakers"])["speakers"]
    mid = player.m_state()
    r = {"before": described(s0), "streams_during": stage.streams(exclude=[call.pid]),
         "state_during": described(mid), "heard_during_dbfs": db(during)}
    if not wait_until(lambda: call.poll() is not None, 30, 0.01):
      raise RuntimeError("the call did not end in 30 s")
    te = now()
    s1 = player.m_state()
    r["call_s"] = round(te - tc, 2)
    wait_recorded([mon], te + 3.5)
    if isinstance(s0.get("position"), (int, float)) and isinstance(s1.get("position"),
                                                                  (int, float)):
      r["position_advanced_s"] = round(s1["position"] - s0["position"], 1)
      r["wall_s"] = round(now() - t_s0, 1)
    # When it is heard again: the first 20 ms of its tone in the recording from half a second
    # before the call's end (the recording of a sink whose streams stay put keeps time).
    back = next((t for t, x in mon.tone_levels(te - 0.5, te + 3.5, MANNERS_TONE_HZ)
                 if x > HEARD_DBFS), None)
    r["heard_again_after_s"] = round(back - te, 2) if back is not None else None
    st = player.m_state()
    r["state_after"] = described(st)
    silenced = any(s["mute"] or s["corked"] for s in r["streams_during"])
    if during > HEARD_DBFS:
      r["verdict"] = "keeps playing"
    elif mid.get("state") == "paused":
      r["verdict"] = "pauses"
    elif mid.get("state") == "playing" and silenced:
      r["verdict"] = "silenced by the server, plays on"
    else:
      r["verdict"] = f"silent, says {mid.get('state')}"
    if r["verdict"] == "keeps playing":
      r["after_verdict"] = "keeps playing"
      r["heard_again_after_s"] = None  # it never stopped
    elif back is not None and r["verdict"].startswith("silenced"):
      # The server unmuted it: what played meanwhile was lost.
      r["after_verdict"] = (f"heard again ({max(0.0, back - te):.1f} s); "
                            f"{r.get('position_advanced_s', '?')} s played unheard")
    elif back is not None:
      r["after_verdict"] = f"resumes ({max(0.0, back - te):.1f} s)"
    elif st.get("state") == "paused":
      r["after_verdict"] = "stays paused"
    else:
      r["after_verdict"] = f"silent, says {st.get('state')}"
    return r

  def own_call(self, player, stage):
    return self.call(player, stage, own=True)

  # The MPRIS side: straight over the bus with dbus-send, and through playerctl.

  @staticmethod
  def bus_names():
    r = subprocess.run(["dbus-send", "--session", "--print-reply=literal",
                        "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                        "org.freedesktop.DBus.ListNames"], capture_output=True, text=True,
                       timeout=15)
    return re.findall(r"org\.mpris\.MediaPlayer2\.[\w.\-]+", r.stdout)

  @staticmethod
  def prop(bus, name):
    r = subprocess.run(["dbus-send", "--session", "--print-reply=literal", "--reply-timeout=5000",
                        f"--dest={bus}", "/org/mpris/MediaPlayer2",
                        "org.freedesktop.DBus.Properties.Get",
                        "string:org.mpris.MediaPlayer2.Player", f"string:{name}"],
                       capture_output=True, text=True, timeout=15)
    if r.returncode != 0:
      return f"error: {r.stderr.strip()[:80]}"
    words = r.stdout.split()
    return words[-1] if words else ""

  def mpris(self, player, stage):
    """Two tracks; at the last one: what MPRIS says, and `playerctl next`; then a call and the
    headset going: does PlaybackStatus follow?"""
    if player.mpris_why:
      return {"verdict": player.mpris_why}
    stage.load_headset()
    mon = self.start_heard(player, stage, self.tracks, "headset")
    player.m_next()
    if not wait_until(lambda: (lambda s: s.get("track") == 2 and s.get("state") == "playing")(
        player.m_state()), 15, 0.2):
      raise RuntimeError(f"not at the last track 15 s after its own 'next' "
                         f"(it says: {described(player.m_state())})")
    wait_until(lambda: heard_now(mon), 10, 0.1)
    # Two seconds into it, so that a position in whole seconds (cmus's) says something too.
    wait_until(lambda: (player.m_state().get("position") or 0) >= 2.0, 10, 0.2)
    deadline, names = now() + 15, []
    while not names and now() < deadline:
      names = self.bus_names()
      time.sleep(0.2)
    if not names:
      raise RuntimeError("no org.mpris.MediaPlayer2.* name on the bus in 15 s")
    bus = names[0]
    short = bus[len("org.mpris.MediaPlayer2."):]
    r = {"bus_name": bus}
    r["playerctl_name"] = subprocess.run(
      ["playerctl", "-p", short, "metadata", "--format", "{{playerName}}"],
      capture_output=True, text=True, timeout=15).stdout.strip()
    for k in ("CanGoNext", "CanGoPrevious", "CanSeek", "CanPause", "PlaybackStatus"):
      r[k] = self.prop(bus, k)
    t_a = now()
    pos = self.prop(bus, "Position")
    own = player.m_state()
    r["read_apart_s"] = round(now() - t_a, 2)
    r["state_at_last"] = described(own)
    try:
      r["position_mpris_s"] = int(pos) / 1e6
      r["position_own_s"] = own.get("position")
      r["position_diff_s"] = round(r["position_mpris_s"] - own["position"], 2)
    except (TypeError, ValueError, KeyError):
      r["position_diff_s"] = None
    r["verdict"] = {"false": "false", "true": "true (wrong)"}.get(r["CanGoNext"], r["CanGoNext"])
    # `playerctl next` at the last track must change nothing.
    before = player.m_state()
    subprocess.run(["playerctl", "-p", short, "next"], capture_output=True, timeout=15)
    time.sleep(1.5)
    after = player.m_state()
    r["next_before"], r["next_after"] = described(before), described(after)
    r["next_heard"] = heard_now(mon)
    if after.get("state") == before.get("state") and after.get("track") == before.get(
        "track") and r["next_heard"]:
      r["next_verdict"] = "nothing changes"
    else:
      r["next_verdict"] = f"{after.get('state')}" + (
        f", track {after.get('track')}" if after.get("track") != before.get("track") else "") + (
        "" if r["next_heard"] else ", silent")
      if after.get("state") != "playing":
        r["status_verdict"] = "n/a: not playing after next"
        return r
    # Another program's call: what PlaybackStatus says while it lasts.
    tc = now()
    call = PROCS.start(["paplay", "--property=media.role=phone", self.phone])
    time.sleep(max(0.0, tc + 1.5 - now()))
    r["call_heard_dbfs"] = db(heard_on(stage, ["headset"])["headset"])
    r["call_status"] = self.prop(bus, "PlaybackStatus")
    r["call_own"] = described(player.m_state())
    wait_until(lambda: call.poll() is not None, 30, 0.05)
    te = now()
    wait_until(lambda: heard_now(mon), 4, 0.1)
    r["after_call_status"] = self.prop(bus, "PlaybackStatus")
    r["after_call_heard"] = heard_now(mon)
    time.sleep(max(0.0, te + 3.0 - now()))
    # The headset goes.
    t0 = now()
    stage.unload_headset()
    time.sleep(max(0.0, t0 + 1.0 - now()))
    r["gone_heard_dbfs"] = db(heard_on(stage, ["speakers"])["speakers"])
    r["gone_status"] = self.prop(bus, "PlaybackStatus")
    r["gone_own"] = described(player.m_state())

    def said(status, heard_db):
      heard = (heard_db or -200) > HEARD_DBFS
      return f"{status} ({'heard' if heard else 'silent'})"

    r["status_verdict"] = (f"call: {said(r['call_status'], r['call_heard_dbfs'])}; "
                           f"headset gone: {said(r['gone_status'], r['gone_heard_dbfs'])}")
    return r


def manners_lines(results, elapsed):
  lines = [f"manners: each check on a private PulseAudio 16 loaded as a desktop loads it "
           f"({', '.join(m[len('module-'):] for m in DESKTOP_MODULES)}) and a private session "
           f"bus; took {elapsed / 60:.1f} min",
           f"  the players play a {MANNERS_TONE_HZ} Hz tone to the default sink; 'heard': that "
           f"tone above {HEARD_DBFS:g} dBFS (the median of 20 ms windows of a second recorded "
           "afresh from a sink's monitor)",
           "  headset: it plays on the null sink 'headset' (device.bus=bluetooth, the default); "
           "the sink is unloaded (PulseAudio moves the stream to 'speakers'), heard 1-2 s after; "
           "3 s later loaded again as the default, heard 1.5-2.5 s after on either sink",
           f"  call: another program's paplay --property=media.role=phone ({PHONE_SECONDS:g} s of "
           f"{PHONE_HZ} Hz) on the same sink, heard 1.5-2.5 s into it; 'after': its first 20 ms "
           "heard again in a steady recording, from 0.5 s before the call's end to 3.5 s after",
           "  MPRIS: two tracks, the player's own 'next' to the last; CanGoNext read with "
           "dbus-send; 'playerctl next' there; Position against its own status (read together); "
           "PlaybackStatus during a phone stream and after the headset went, beside what was "
           "heard",
           ""]
  head = ["player", "headset goes", "headset back", "call", "after call",
          "CanGoNext at last", "next at last", "Position − own",
          "MPRIS status while paused/silenced", ""]
  rows = []

  def cell(x, key):
    if x.get("error"):
      return f"n/a: {x['error']}"
    return x.get(key, "—")

  for name, r in results.items():
    h, c, m = r["headset"], r["call"], r["mpris"]
    label = MANNERS_PLAYERS[name].name
    if "bus_name" in m:
      mpris = [cell(m, "verdict"), cell(m, "next_verdict"),
               fmt_num(m.get("position_diff_s"), "+.2f", " s"), cell(m, "status_verdict")]
    elif m.get("error"):
      mpris = [cell(m, "verdict")] * 4
    else:
      mpris = [m["verdict"]] * 4
    rows.append([label, cell(h, "verdict"), cell(h, "back_verdict"), cell(c, "verdict"),
                 cell(c, "after_verdict"), *mpris, ""])
    if "own_call" in r:
      o = r["own_call"]
      rows.append([f"{label} (hark call)", "", "", cell(o, "verdict"), cell(o, "after_verdict"),
                   "", "", "", "", ""])
  lines += table_lines(head, rows, left=len(head))
  lines.append("")
  lines.append("raw figures:")
  for name, r in results.items():
    label = MANNERS_PLAYERS[name].name
    lines.append(f"  {label}: {r['how']}")
    h = r["headset"]
    if not h.get("error"):
      lines.append(
        f"    headset goes: heard on the speakers {fmt_num(h['heard_dbfs'], '.1f', ' dBFS')} "
        f"(1-2 s after); it says '{h['state_after']}' (before: '{h['before']}'); its stream: "
        + (", ".join(f"{s['sink']} corked={s['corked']} mute={s['mute']} role={s['role']}"
                     for s in h["streams_after"]) or "none"))
      lines.append(
        f"    headset back: heard {fmt_num(h['back_heard_dbfs']['headset'], '.1f', ' dBFS')} on "
        f"the headset, {fmt_num(h['back_heard_dbfs']['speakers'], '.1f', ' dBFS')} on the "
        f"speakers (1.5-2.5 s after); it says '{h['back_state']}'; its stream: "
        + (", ".join(f"{s['sink']} corked={s['corked']} mute={s['mute']}"
                     for s in h["back_streams"]) or "none"))
    else:
      lines.append(f"    headset: n/a: {h['error']}")
    for key, what in (("call", "phone stream"), ("own_call", "hark call --ring 1 --talk 3")):
      c = r.get(key)
      if c is None:
        continue
      if c.get("error"):
        lines.append(f"    {what}: n/a: {c['error']}")
        continue
      lines.append(
        f"    {what} ({c['call_s']:.1f} s): heard {fmt_num(c['heard_during_dbfs'], '.1f', ' dBFS')}"
        f" 1.5-2.5 s into it; it says '{c['state_during']}'; its stream: "
        + (", ".join(f"corked={s['corked']} mute={s['mute']} role={s['role']}"
                     for s in c["streams_during"]) or "none")
        + (f"; position advanced {c['position_advanced_s']:.1f} s in {c['wall_s']:.1f} s"
           if c.get("position_advanced_s") is not None else "")
        + (f"; heard again {c['heard_again_after_s']:+.2f} s from its end (the call "
           "process's exit)"
           if c["heard_again_after_s"] is not None else "")
        + f"; then it says '{c['state_after']}'")
    m = r["mpris"]
    if m.get("error"):
      lines.append(f"    MPRIS: n/a: {m['error']}")
    elif "bus_name" in m:
      lines.append(
        f"    MPRIS {m['bus_name']} (playerctl: '{m['playerctl_name']}') at the last track: "
        f"CanGoNext {m['CanGoNext']}, CanGoPrevious {m['CanGoPrevious']}, CanSeek "
        f"{m['CanSeek']}, PlaybackStatus {m['PlaybackStatus']}; Position "
        f"{fmt_num(m.get('position_mpris_s'), '.2f', ' s')} against its own "
        f"{fmt_num(m.get('position_own_s'), '.2f', ' s')} (read {m['read_apart_s']:.2f} s apart)")
      lines.append(f"    playerctl next at the last track: '{m['next_before']}' -> "
                   f"'{m['next_after']}'" + ("" if m["next_heard"] else ", then silent"))
      if "call_status" in m:
        lines.append(
          f"    during a phone stream: PlaybackStatus {m['call_status']}, it says "
          f"'{m['call_own']}', heard {fmt_num(m['call_heard_dbfs'], '.1f', ' dBFS')}; after it: "
          f"{m['after_call_status']} ({'heard' if m['after_call_heard'] else 'silent'}); "
          f"headset gone: {m['gone_status']}, it says '{m['gone_own']}', heard "
          f"{fmt_num(m['gone_heard_dbfs'], '.1f', ' dBFS')} on the speakers")
    else:
      lines.append(f"    MPRIS: {m['verdict']}")
  return lines


def manners_main(args):
  results, elapsed = Manners(args).run()
  text = "\n".join(manners_lines(results, elapsed))
  print(text, flush=True)
  if args.json:
    with open(args.json, "w") as f:
      json.dump({"manners": results, "elapsed_s": elapsed, "heard_dbfs": HEARD_DBFS,
                 "tone_hz": MANNERS_TONE_HZ, "phone_hz": PHONE_HZ,
                 "modules": DESKTOP_MODULES}, f, indent=2)
      f.write("\n")


# MARK: The report

# Measured on another machine when the benchmark was written, for orientation (CPU s per
# minute, peak RSS MB).
ORIENTATION_FIGURES = {
  "cpu": "aplay WAV 0.08 / 7 MB; mpg123 MP3 0.28 / 7 MB; sox play FLAC 0.24, Ogg 0.31, "
         "MP3 0.33 / 9 MB; MOC 0.20-0.50 / 14 MB; cmus 0.35-0.75 / 14 MB; mpv 1.1-1.4 / 71 MB",
  "libsndfile": "WAV 6977x, FLAC 1667x, MP3 1258x, Vorbis 691x, Opus 284x",
  "start": "aplay 5 ms, mpg123 12, cmus 40, mpv 130",
  "pause": "mpv and mpg123 about 1 ms; aplay (SIGSTOP, cannot drop) 485 ms",
}
FLOOR = {"wav": "aplay", "mp3": "mpg123", "flac": "sox play", "ogg": "sox play"}
FULL_PLAYERS = ("cmus", "MOC")
# hark's CPU per minute played at most this share of MOC's, the lightest full player, on every
# format; where MOC was not measured, the best of the full players and twice the format's
# single-format floor, as before.
CPU_SHARE_OF_MOC = 0.8
# hark's pause, from the command's arrival in the player to silence on the sink.
PAUSE_ARRIVAL_MS_MAX = 5.0


def targets(results, fmt):
  """hark's targets on one format, from the peers' figures measured in this run."""
  def get(player, key):
    for r in results:
      if r["player"] == player and r["format"] == fmt:
        return r.get(key)
    return None

  full = [get(p, "cpu_per_min") for p in FULL_PLAYERS]
  full = [c for c in full if c is not None]
  floor = get(FLOOR.get(fmt, ""), "cpu_per_min")
  moc = get("MOC", "cpu_per_min")
  limits = ([min(full)] if full else []) + ([2 * floor] if floor is not None else [])
  if moc is not None:
    limits = [CPU_SHARE_OF_MOC * moc]
  sndfile = get("libsndfile", "decode_xrt")
  ffmpeg, ffmpeg_cpu = get("ffmpeg", "decode_xrt"), get("ffmpeg", "decode_cpu_xrt")
  if fmt in M4A_FORMATS:  # within 10 % of ffmpeg's time, and of its CPU time
    decode_min = ffmpeg / FFMPEG_WITHIN if ffmpeg else None
    decode_basis = f"time ≤ {FFMPEG_WITHIN:.2f} × ffmpeg -f null's"
  else:
    decode_min = 0.9 * sndfile if sndfile else None
    decode_basis = "90% of libsndfile"
  return {
    "cpu_per_min_max": min(limits) if limits else None,
    "cpu_basis": (f"{CPU_SHARE_OF_MOC:g} × MOC's {moc:.2f}" if moc is not None else ", ".join(
      ([f"best of cmus/MOC {min(full):.2f}"] if full else [])
      + ([f"2 x {FLOOR[fmt]} {floor:.2f}"] if floor is not None else [])) or "no peer figure"),
    "rss_mb_max": 20.0,
    "decode_xrt_min": decode_min,
    "decode_basis": decode_basis,
    "decode_cpu_xrt_min": ffmpeg_cpu / FFMPEG_WITHIN if ffmpeg_cpu else None,
    "ffmpeg_xrt": ffmpeg,
    "ffmpeg_cpu_xrt": ffmpeg_cpu,
    "start_ms_max": 30.0,
    "pause_ms_max": 15.0,
    "pause_arrival_ms_max": PAUSE_ARRIVAL_MS_MAX,
    # And below the peers: peak RSS below cmus's (with its FFmpeg plugin, which it needs for .m4a
    # and loads whatever it plays), and first sound within 15 ms with the session server up.
    "rss_mb_below": get("cmus", "rss_mb"),
    "start_warm_ms_max": 15.0,
  }


def fmt_num(x, spec, suffix=""):
  return "—" if x is None else f"{x:{spec}}{suffix}"


def table_lines(head, rows, left=1):
  """Columns padded to their widest cell (the first `left` to the left, the others to the
  right); the last column, the notes, as it comes."""
  widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(len(head) - 1)]

  def one(cells):
    return ("  ".join(c.ljust(w) if i < left else c.rjust(w)
                      for i, (c, w) in enumerate(zip(cells, widths)))
            + ("  " + cells[-1] if cells[-1] else "")).rstrip()

  return [one(head), one(["-" * w for w in widths] + [""])] + [one(r) for r in rows]


def ducking_lines(ducking, peers):
  """The ducking section of the table: hark's figures, the peers' n/a, the targets."""
  lines = ["ducking under a navigation prompt, hark only:"]
  if ducking.get("error"):
    return lines + [f"  n/a ({ducking['error']})"]
  lines.append(
    f"  hark plays a {ducking['tone_hz']} Hz tone with --duck {ducking['duck_db']:g}; "
    f"'hark simulate nav --seconds {ducking['prompt_s']:g}' (its voice {ducking['prompt_sound']})"
    " ducks it")
  lines.append(
    "  from the prompt's 'speaking' line to the first 10 ms of the recording of 'out' "
    f"{ducking['heard_db']:g} dB below the level before; depth: the median level while ducked;")
  lines.append(
    f"  back: from its 'done' line to the first 10 ms within {ducking['back_db']:g} dB of the "
    "level before (the lines stamped as they are printed)")
  lines.append("")
  head = ["player", "recorder on 'out'", "before dBFS", f"−{ducking['heard_db']:g} dB after ms",
          "depth dB", f"back ±{ducking['back_db']:g} dB after ms", "notes"]
  rows = []
  for r in ducking["duck"]:
    notes = []
    if r.get("error"):
      notes.append(f"n/a ({r['error']})")
    if r.get("back_error"):
      notes.append(f"back: n/a ({r['back_error']})")
    if r.get("dropouts"):
      notes.append(f"{r['dropouts']} silent 10 ms windows (dropouts)")
    if r.get("note"):
      notes.append(r["note"])

    def cell(key, spec):
      return "n/a" if r.get(key) is None else f"{r[key]:{spec}}"

    rows.append(["hark", r["recorder"], cell("level_before_dbfs", ".1f"), cell("heard_ms", "+.0f"),
                 cell("depth_db", ".1f"), cell("back_ms", "+.0f"), "; ".join(notes)])
  for name in peers:
    rows.append([name, "—", "—", "—", "—", "—", NO_MANNERS])
  lines += ["  " + x for x in table_lines(head, rows, left=2)]
  lines.append("")
  d = ducking["duration"]
  at = ", ".join(f"{x:g}" for x in d["prompts_at_s"])
  lines.append(
    f"  duration with prompts: a {d['track_s']:g} s track, timed from hark's 'playing' line to "
    f"its exit at the end of the queue; alone, then with {len(d['prompts_at_s'])} prompts of "
    f"{ducking['prompt_s']:g} s at {at} s; nothing recording (deep buffers)")
  lines.append("")
  head = ["player", "alone s", f"with {len(d['prompts_at_s'])} prompts s", "difference s",
          "notes"]
  notes = []
  for key, label in (("alone", "alone"), ("with_prompts", "with prompts")):
    x = d.get(key, {})
    if x.get("error"):
      notes.append(f"{label}: n/a ({x['error']})")
    if x.get("note"):
      notes.append(f"{label}: {x['note']}")
  rows = [["hark", fmt_num(d.get("alone", {}).get("took_s"), ".2f"),
           fmt_num(d.get("with_prompts", {}).get("took_s"), ".2f"),
           fmt_num(d.get("difference_s"), "+.2f"), "; ".join(notes)]]
  for name in peers:
    rows.append([name, "—", "—", "—", NO_MANNERS])
  lines += ["  " + x for x in table_lines(head, rows)]
  lines.append("")
  t = ducking["targets"]
  low = next((r for r in ducking["duck"] if r.get("latency_ms") is not None), {})
  heard = low.get("heard_ms")
  diff = d.get("difference_s")
  met = {
    "duck": None if heard is None else heard <= t["heard_ms_max"],
    "duration": None if diff is None else abs(diff) <= t["duration_diff_s_max"],
  }
  ducking["targets_met"] = met

  def mark(ok):
    return {True: "ok", False: "MISSED", None: "not measured"}[ok]

  lines.append(
    f"  targets: the duck {ducking['heard_db']:g} dB down within {t['heard_ms_max']:.0f} ms of "
    f"the prompt's activation ({low.get('recorder', 'low-latency recorder')}) "
    f"{mark(met['duck'])}; the track with prompts within {t['duration_diff_s_max']:g} s of its "
    f"time alone {mark(met['duration'])}")
  return lines


def report(args, results, info, elapsed, ducking=None):
  order = ["hark", "libsndfile", "ffmpeg", "aplay", "mpg123", "sox play", "mpv", "cmus", "MOC"]
  results.sort(key=lambda r: (order.index(r["player"]) if r["player"] in order else 99,
                              FORMATS.index(r["format"])))
  head = ["player", "format", "CPU s/min", "peak RSS MB", "decode ×RT", "start ms",
          "pause ms", "notes"]
  rows = []
  verdicts = []
  for r in results:
    f = r["format"]
    notes = []
    if r["player"] == "hark":
      t = targets(results, f)
      r["targets"] = t
      misses = []
      checks = [("CPU", r["cpu_per_min"], t["cpu_per_min_max"], lambda v, l: v <= l),
                ("RSS", r["rss_mb"], t["rss_mb_max"], lambda v, l: v < l),
                ("decode", r["decode_xrt"], t["decode_xrt_min"], lambda v, l: v >= l),
                ("start", r["start_ms"], t["start_ms_max"], lambda v, l: v < l),
                ("pause", r["pause_ms"], t["pause_ms_max"], lambda v, l: v < l),
                ("pause from arrival", r["pause_arrival_ms"], t["pause_arrival_ms_max"],
                 lambda v, l: v <= l),
                ("RSS below cmus", r["rss_mb"], t["rss_mb_below"], lambda v, l: v < l),
                ("start, server up", r["start_warm_ms"], t["start_warm_ms_max"],
                 lambda v, l: v <= l)]
      if f in M4A_FORMATS:
        checks.append(("decode CPU", r["decode_cpu_xrt"], t["decode_cpu_xrt_min"],
                       lambda v, l: v >= l))
      met = {}
      for label, v, lim, ok in checks:
        met[label] = None if v is None or lim is None else ok(v, lim)
        if met[label] is False:
          misses.append(label)
      r["targets_met"] = met
      verdicts.append((f, t, met))
      if f in M4A_FORMATS and r["decode_xrt"] and t["ffmpeg_xrt"]:
        # hark's time (and CPU time) over ffmpeg's for the same audio (FFMPEG_WITHIN)
        r["ffmpeg_time_ratio"] = t["ffmpeg_xrt"] / r["decode_xrt"]
        r["ffmpeg_cpu_ratio"] = (t["ffmpeg_cpu_xrt"] / r["decode_cpu_xrt"]
                                 if r["decode_cpu_xrt"] and t["ffmpeg_cpu_xrt"] else None)
        notes.append(f"decode time {r['ffmpeg_time_ratio']:.2f} × ffmpeg's, CPU "
                     f"{fmt_num(r['ffmpeg_cpu_ratio'], '.2f')} × (with its helper)")
      if r["start_warm_ms"] is not None:
        notes.append(f"start {r['start_warm_ms']:.0f} ms with server up "
                     f"(median of {r['start_warm_count']}; first loud sample "
                     f"{fmt_num(r['start_warm_loud_ms'], '.0f')} ms)")
      if r["pause_arrival_ms"] is not None:
        notes.append(f"pause {r['pause_arrival_ms']:.1f} ms from the command's arrival")
      if r["server_cpu_per_min"] is not None:
        notes.append(f"+ session server {r['server_cpu_per_min']:.2f} s/min")
      notes.append("targets: " + ("all met" if not misses else "missed " + ", ".join(misses)))
    notes += sorted(set(r["errors"]))
    rows.append([r["player"], FORMAT_NAMES[f], fmt_num(r["cpu_per_min"], ".2f"),
                 fmt_num(r["rss_mb"], ".1f"), fmt_num(r["decode_xrt"], ",.0f", "×"),
                 fmt_num(r["start_ms"], ".0f"), fmt_num(r["pause_ms"], ".0f"),
                 "; ".join(notes)])
  widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(len(head) - 1)]
  lines = []

  def line(cells):
    lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                           for i, (c, w) in enumerate(zip(cells, widths)))
                 + ("  " + cells[-1] if cells[-1] else ""))

  lines.append(f"hark benchmark: {args.seconds:g} s files, 48 kHz stereo; median of "
               f"{args.runs} run{'s' if args.runs > 1 else ''}; took {elapsed / 60:.1f} min")
  lines.append("CPU = user+sys seconds per minute of audio played to a PulseAudio null sink "
               "through ALSA's 'pulse' device; peak RSS of the player process")
  lines.append("decode = × real time to ALSA's 'null' device, start-up taken out; start = "
               "exec to the first sample on the sink that is not silence (hark's notes: the "
               "first loud one too); pause = command to silence on the sink (hark: from "
               "starting `hark ctl pause`; its notes: from the command's arrival in the "
               "player)")
  if any(f in M4A_FORMATS for f in args.formats):
    lines.append("AAC and ALAC .m4a: hark's CPU includes its hark-ffmpeg helper (a child it "
                 "reaps) and its peak RSS is the larger of the two; ffmpeg decodes with "
                 "-stream_loop to float (-c:a pcm_f32le -f null)")
  lines.append("")
  line(head)
  line(["-" * w for w in widths] + [""])
  prev = None
  for cells in rows:
    if prev is not None and cells[0] != prev:
      lines.append("")
    prev = cells[0]
    line(cells)
  lines.append("")
  lines.append("how each player was paused and started:")
  for name, i in info.items():
    lines.append(f"  {name}: pause by {i['pause']}" + (f"; start {i['start']}" if i["start"]
                                                        else "; start from exec"))
  lines.append("")
  lines.append("hark's targets, with the peers' figures from this run:")
  for f, t, met in verdicts:
    def mark(label):
      return {True: "ok", False: "MISSED", None: "not measured"}[met[label]]
    lines.append(
      f"  {FORMAT_NAMES[f]}: CPU ≤ {fmt_num(t['cpu_per_min_max'], '.2f')} s/min "
      f"({t['cpu_basis']}) {mark('CPU')}; RSS < 20 MB {mark('RSS')}; decode ≥ "
      f"{fmt_num(t['decode_xrt_min'], ',.0f', '×')} ({t['decode_basis']}) {mark('decode')}; "
      + (f"decode CPU ≤ {FFMPEG_WITHIN:.2f} × ffmpeg's {mark('decode CPU')}; "
         if "decode CPU" in met else "")
      + f"start < 30 ms {mark('start')}; pause < 15 ms {mark('pause')}, ≤ "
      f"{PAUSE_ARRIVAL_MS_MAX:g} ms from its arrival {mark('pause from arrival')}; RSS below "
      f"cmus's ({fmt_num(t['rss_mb_below'], '.1f', ' MB')}) {mark('RSS below cmus')}, start "
      f"with the server up ≤ 15 ms {mark('start, server up')}")
  lines.append("")
  lines.append("figures from another machine, for orientation:")
  for k, v in ORIENTATION_FIGURES.items():
    lines.append(f"  {k}: {v}")
  if ducking is not None:
    lines.append("")
    lines += ducking_lines(ducking, [n for n in info if n != "hark"])
  text = "\n".join(lines)
  print(text, flush=True)
  if args.json:
    with open(args.json, "w") as f:
      json.dump({"seconds": args.seconds, "runs": args.runs, "rate": RATE,
                 "elapsed_s": elapsed, "players": info, "results": results,
                 "orientation_figures": ORIENTATION_FIGURES,
                 "ducking": ducking if ducking is not None else "not measured"}, f, indent=2)
      f.write("\n")


# MARK: The library

# The queries typed a key at a time: a common word, a rare one (five titles, made so by
# scripts/make-library), and one found only with diacritics folded ("zoe" finds "Zoë").
LIBRARY_QUERIES = [("love", "common word"), ("quetzalcoatl", "rare word"),
                   ("zoe", "folded, finds Zoë")]
# The goals: the index's time a file (first index, rescans) no more than cmus's; a keystroke of
# search answered no slower than cmus's (median) and never over 20 ms, the queue's filter under
# 20 ms a key (its first too); the interface open within 150 ms; peak RSS with the library open
# (interface and player) below MPD's.
SEARCH_GOAL_MS = 20.0
# Typed in the queue's filter, with the whole library queued.
QUEUE_FILTER_QUERIES = ("love", "zoe")
OPEN_GOAL_MS = 150.0
# hark's interface is opened this many times: the first with no saved queue, the others
# restoring the one it saved (the whole library).
HARK_OPENS = 4
# How often the screen is read while waiting for it to change (tmux capture-pane).
POLL = 0.002
# Library.search's queries, as LibraryIndex/Library.swift has them, run through Python's
# sqlite3 on the same index file: the queries alone, without hark's process or its interface.
SEARCH_ORDER = ("ORDER BY coalesce(album_artist, artist), album, disc, track, path LIMIT 500")
SEARCH_CROWDED = 3000  # Library.crowded


def search_sql(db, query):
  """Library.search(query) (a query of lower-case words, as LIBRARY_QUERIES are): words of
  three letters or more through the trigram index unless SEARCH_CROWDED tracks hold them,
  else the tracks in order until the limit."""
  words = query.split()
  long = [w for w in words if len(w) >= 3]
  def likes(ws, first=1):
    return ([f"tracks.folded LIKE ?{first + i} ESCAPE '\\'" for i in range(len(ws))],
            ["%" + w + "%" for w in ws])
  if long:
    phrase = " ".join('"' + w.replace('"', '""') + '"' for w in long)
    n = db.execute("SELECT count(*) FROM (SELECT 1 FROM tracks_search WHERE tracks_search "
                   f"MATCH ?1 LIMIT {SEARCH_CROWDED})", (phrase,)).fetchone()[0]
    if n < SEARCH_CROWDED:
      conds, values = likes([w for w in words if w not in long], first=2)
      return db.execute("SELECT tracks.* FROM tracks_search JOIN tracks ON tracks.rowid = "
                        "tracks_search.rowid WHERE tracks_search MATCH ?1"
                        + "".join(" AND " + c for c in conds) + " " + SEARCH_ORDER,
                        [phrase] + values).fetchall()
  conds, values = likes(words)
  return db.execute("SELECT * FROM tracks INDEXED BY tracks_in_order"
                    + (" WHERE " + " AND ".join(conds) if conds else "") + " " + SEARCH_ORDER,
                    values).fetchall()


def timed(argv, env=None):
  """Runs `argv` to its end; (wall s, CPU s of it and every process it reaped, peak RSS MB of
  the largest of them, stdout)."""
  out = os.path.join(ARGS.tmp, "timed.out")
  with open(out, "w") as o, open(out + ".err", "w") as e:
    t0 = now()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    t = now() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
  if p.returncode != 0:
    raise RuntimeError(f"{' '.join(argv[:3])}: exit status {p.returncode}: "
                       f"{open(out + '.err').read().strip()[-300:]}")
  return t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, open(out).read()


class Tmux:
  """The run's private tmux server: one session per program, read with capture-pane."""

  def __init__(self, socket_name):
    self.base = ["tmux", "-L", socket_name, "-f", "/dev/null"]

  def new(self, name, argv, columns=120, rows=35):
    keep = ("HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
            "XDG_DATA_HOME")
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in os.environ.items() if k in keep)
    command = f"exec env {env} LANG=C.UTF-8 TERM=xterm-256color " + shlex.join(argv)
    subprocess.run(self.base + ["new-session", "-d", "-s", name, "-x", str(columns),
                                "-y", str(rows), command], check=True, timeout=10)
    out = subprocess.run(self.base + ["list-panes", "-t", name, "-F", "#{pane_pid}"],
                         capture_output=True, text=True, timeout=5).stdout.split()
    return int(out[0])

  def screen(self, name):
    return subprocess.run(self.base + ["capture-pane", "-p", "-t", name], capture_output=True,
                          text=True, timeout=5).stdout

  def keys(self, name, *keys, literal=False):
    subprocess.run(self.base + ["send-keys", "-t", name] + (["-l"] if literal else [])
                   + list(keys), check=True, timeout=5)

  def kill(self, name):
    run_quiet(self.base + ["kill-session", "-t", name])

  def wait_screen(self, name, predicate, timeout=60, what="the screen"):
    """Seconds until `predicate(screen text)` holds, read every POLL s; raises after
    `timeout`."""
    t0 = now()
    while True:
      text = self.screen(name)
      if predicate(text):
        return now() - t0
      if now() - t0 > timeout:
        raise RuntimeError(f"{what} not shown in {timeout} s; the screen:\n{text}")
      time.sleep(POLL)

  def keystrokes(self, name, query, shown):
    """Types `query` a character at a time; for each, the ms from send-keys until
    `shown(typed so far, screen)` holds."""
    out = []
    for i, ch in enumerate(query):
      t0 = now()
      self.keys(name, ch, literal=True)
      typed = query[: i + 1]
      self.wait_screen(name, lambda s: shown(typed, s), timeout=30, what=f"'{typed}'")
      out.append((now() - t0) * 1000)
    return out


def bottom_line(text):
  lines = [l for l in text.splitlines() if l.strip()]
  return lines[-1] if lines else ""


class LibMpd:
  """MPD with a private config (socket in the run's directory, a null output), on the library
  through `mpc update --wait`. MPD indexes a folder it has no database for by itself at start;
  so it first makes an empty database on an empty folder, and then is started on the library
  with it, so that `mpc update --wait` is the whole first index."""

  def __init__(self, lib, tmp):
    self.lib, self.dir = lib, os.path.join(tmp, "mpd")
    self.sock = os.path.join(self.dir, "socket")
    os.makedirs(os.path.join(self.dir, "empty"), exist_ok=True)
    self.proc = None

  def mpc(self, *words, timeout=3600):
    r = subprocess.run(["mpc", *words], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=timeout, env={**os.environ, "MPD_HOST": self.sock})
    if r.returncode != 0:
      raise RuntimeError(f"mpc {' '.join(words)}: {r.stderr.strip()}")
    return r.stdout

  def start(self, music):
    conf = os.path.join(self.dir, "mpd.conf")
    with open(conf, "w") as f:
      f.write(f'music_directory "{music}"\ndb_file "{self.dir}/db"\n'
              f'pid_file "{self.dir}/pid"\nbind_to_address "{self.sock}"\n'
              'zeroconf_enabled "no"\nauto_update "no"\n'
              'audio_output {\n  type "null"\n  name "null"\n}\n')
    self.log = open(os.path.join(self.dir, "stderr"), "a")
    self.proc = PROCS.start(["mpd", "--no-daemon", "--stderr", conf], stderr=self.log)
    if not wait_until(lambda: self.ping() or self.proc.poll() is not None, 30, 0.02):
      raise RuntimeError("mpd answered nothing in 30 s")
    if self.proc.poll() is not None:
      raise RuntimeError(f"mpd exited: {open(self.log.name).read().strip()[-300:]}")

  def ping(self):
    try:
      self.mpc("status", timeout=2)
      return True
    except (RuntimeError, subprocess.TimeoutExpired):
      return False

  def stop(self):
    if self.proc:
      PROCS.stop(self.proc)
      self.proc = None
      self.log.close()

  def prepare(self):
    """The empty database, made on the empty folder."""
    self.start(os.path.join(self.dir, "empty"))
    self.mpc("update", "--wait")
    self.stop()
    self.start(self.lib)

  def update(self):
    """`mpc update --wait`: (wall s, MPD's CPU s)."""
    c0 = proc_cpu(self.proc.pid)
    t0 = now()
    self.mpc("update", "--wait")
    return now() - t0, proc_cpu(self.proc.pid) - c0

  def songs(self):
    m = re.search(r"Songs:\s+(\d+)", self.mpc("stats"))
    return int(m.group(1)) if m else None


class LibCmus:
  """cmus in the private tmux server, driven by cmus-remote. `add -l DIR` and `update-cache`
  run on cmus's worker thread; while it has a library job, `save -l FILE` is refused ("can't
  save when tracks are being added", cmus's command_mode.c). So: done when a save goes
  through, and the next one saves as many tracks (the worker's last results may still be on
  their way to the main thread when its job ends)."""

  def __init__(self, tmux, tmp):
    self.tmux = tmux
    self.sock = os.path.join(os.environ["XDG_RUNTIME_DIR"], "cmus.sock")
    self.saved = os.path.join(tmp, "cmus-library.pl")
    conf = os.path.join(os.environ["HOME"], ".config", "cmus")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "rc"), "w") as f:
      # No D-Bus here: with MPRIS on, cmus stops at start-up to say so and waits for Enter.
      f.write("set mpris=false\nset softvol=true\n")
    self.pid = None

  def remote(self, *words):
    r = subprocess.run(["cmus-remote", "--server", self.sock, *words], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
      raise RuntimeError(f"cmus-remote {' '.join(words)}: {r.stderr.strip()}")
    return r.stdout

  def start(self):
    """Starts cmus; the time until it answers on its socket."""
    if os.path.exists(self.sock):
      os.unlink(self.sock)
    t0 = now()
    self.pid = self.tmux.new("cmus", ["cmus", "--listen", self.sock])
    PROCS.cleanups.append(self.stop)
    if not wait_until(lambda: os.path.exists(self.sock) and self.remote_ok(), 30, 0.005):
      raise RuntimeError("cmus never answered on its socket")
    return now() - t0

  def remote_ok(self):
    try:
      self.remote("-Q")
      return True
    except (RuntimeError, subprocess.TimeoutExpired):
      return False

  def save_count(self):
    """Tracks in the library, saved to a file; None while cmus is still adding."""
    if os.path.exists(self.saved):
      os.unlink(self.saved)
    said = self.remote("-C", f"save -l {self.saved}")
    if "Error" in said or not os.path.exists(self.saved):
      return None
    with open(self.saved, "rb") as f:
      return sum(1 for _ in f)

  def wait_done(self, t0, timeout=3600):
    """Seconds from `t0` until cmus's library job was done (see the class), and the count."""
    last = None
    while now() - t0 < timeout:
      t = now()
      n = self.save_count()
      if n is not None:
        if last is not None and last[1] == n:
          return last[0] - t0, n
        last = (t, n)
        continue
      last = None
      time.sleep(0.1)
    raise RuntimeError(f"cmus still adding after {timeout} s")

  def run_job(self, command):
    """A library job (`add -l DIR`, `update-cache`): (wall s, cmus's CPU s, tracks)."""
    c0 = proc_cpu(self.pid)
    t0 = now()
    self.remote("-C", command)
    t, n = self.wait_done(t0)
    return t, proc_cpu(self.pid) - c0, n

  def stop(self):
    if self.stop in PROCS.cleanups:
      PROCS.cleanups.remove(self.stop)
    try:
      self.remote("-C", "quit")
    except (RuntimeError, subprocess.TimeoutExpired):
      pass
    pid = self.pid
    # At quit cmus writes its cache and its library (lib.pl) for the next start.
    if pid and not wait_until(lambda: not alive(pid), 60):
      os.kill(pid, signal.SIGKILL)
    self.tmux.kill("cmus")
    self.pid = None


class LibraryBench:
  def __init__(self, args):
    self.args = args
    self.lib = args.library
    self.hark = args.hark
    self.tmux = Tmux(args.tmux_socket)
    self.r = {"hark": {}, "MPD": {}, "cmus": {}}
    self.errors = []
    self.made = {"tracks": args.tracks}
    self.artists = []

  def make(self):
    """The library, by scripts/make-library: timed, then counted (folders, size, formats).
    With --reuse-library, one made by an earlier run in the same folder (its size written
    beside it, in DIR.made) is kept, and read once so that it is in the page cache, as a
    library just made is."""
    made = self.lib.rstrip("/") + ".made"
    reused = False
    if self.args.reuse_library and os.path.exists(made):
      with open(made) as f:
        if f.read().strip() != str(self.args.tracks):
          raise RuntimeError(f"{self.lib} holds a library of another size ({made}); "
                             "give another --keep-library folder")
      t0 = now()
      for folder, _, files in os.walk(self.lib):
        for name in files:
          with open(os.path.join(folder, name), "rb") as f:
            while f.read(1 << 20):
              pass
      t, reused = now() - t0, True
    else:
      t, _, _, _ = timed([self.args.make_library, self.lib, "--tracks", str(self.args.tracks)])
      if self.args.reuse_library:
        with open(made, "w") as f:
          f.write(f"{self.args.tracks}\n")
    sizes, kinds, albums = 0, {}, 0
    for folder, dirs, files in os.walk(self.lib):
      albums += bool(files)
      for name in files:
        sizes += os.stat(os.path.join(folder, name)).st_size
        ext = name.rsplit(".", 1)[-1]
        kinds[ext] = kinds.get(ext, 0) + 1
    # Artists as the top folders name them: one on cmus's screen says its library is drawn.
    self.artists = [n for n in os.listdir(self.lib) if not n.startswith(".")]
    names = {"flac": "FLAC", "mp3": "MP3", "m4a": "AAC .m4a"}
    self.made = {"tracks": sum(kinds.values()), "s": t, "mb": sizes / 1e6, "albums": albums,
                 "artists": len(self.artists), "formats": kinds,
                 "mix": ", ".join(f"{kinds[k]:,} {names.get(k, k)}" for k in sorted(kinds)),
                 "reused": reused}

  def step(self, what, player, fn):
    say(what)
    t0 = now()
    try:
      fn()
      self.r.setdefault("steps_s", {})[what] = now() - t0
    except Exception as e:
      line = f"{what}: {type(e).__name__}: {e}"
      say(line)
      self.errors.append(line)
      self.r[player].setdefault("errors", []).append(line)

  # hark

  def hark_scan(self, key):
    # Tags only, as MPD and cmus read them; the loudness measured after is a step of its own.
    t, cpu, rss, out = timed([self.hark, "library", "scan", "--no-measure", self.lib])
    m = re.search(r": (\d+) tracks \((\d+) read, (\d+) removed", out)
    self.r["hark"][key] = {"s": t, "cpu_s": cpu, "rss_mb": rss,
                           "found": int(m.group(1)) if m else None,
                           "read": int(m.group(2)) if m else None}

  def hark_measure(self):
    """What measuring every track's loudness (EBU R128, for Sound Check on untagged files)
    adds to the first index: the scan run again, with nothing left to read but everything to
    measure, one track per processor."""
    t, cpu, rss, out = timed([self.hark, "library", "scan", self.lib])
    m = re.search(r"measured the loudness of (\d+) tracks?", out)
    self.r["hark"]["measure"] = {"s": t, "cpu_s": cpu, "measured": int(m.group(1)) if m else None}

  def hark_cli_search(self):
    out = {}
    for q, _ in LIBRARY_QUERIES:
      times = [timed([self.hark, "library", "search", q])[0] * 1000 for _ in range(5)]
      out[q] = {"median_ms": statistics.median(times), "runs_ms": times}
    self.r["hark"]["cli_search"] = out

  def sql_search(self):
    """Library.search's query alone, per keystroke, on hark's index (Python's sqlite3)."""
    import sqlite3
    path = os.path.join(os.environ["XDG_CACHE_HOME"], "hark", "library.sqlite3")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {}
    for q, _ in LIBRARY_QUERIES:
      per = []
      for i in range(1, len(q) + 1):
        runs = []
        for _ in range(3):
          t0 = now()
          search_sql(db, q[:i])
          runs.append((now() - t0) * 1000)
        per.append(statistics.median(runs))
      out[q] = {"median_ms": statistics.median(per), "worst_ms": max(per), "per_key_ms": per}
    db.close()
    self.r["hark"]["sql_search"] = out

  def hark_ui(self):
    """Opens the interface HARK_OPENS times (the music folder is the library, through the
    config); then, in the last, browses and types each query a key at a time."""
    conf = os.path.join(os.environ["XDG_CONFIG_HOME"], "hark")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "config.toml"), "w") as f:
      f.write(f"music_dir = {json.dumps(self.lib)}\n")
    opens, queued = [], []
    # The first open has no saved queue: the player queues the music folder, and q saves it.
    # Each open after it is on that saved queue, the whole library, as a user's is after the
    # first: timed to the library drawn, and to the queue's tab showing all of it.
    found = (self.r["hark"].get("first") or {}).get("found")
    whole = f"Queue ({found})" if found else None
    for i in range(HARK_OPENS):
      t0 = now()
      pid = self.tmux.new("hark", [self.hark])
      self.tmux.wait_screen("hark", lambda s: "Artists/" in s, what="hark's library view")
      opens.append((now() - t0) * 1000)
      if whole:
        self.tmux.wait_screen("hark", lambda s: whole in s, what=f"'{whole}'", timeout=120)
        queued.append((now() - t0) * 1000)
      if i < HARK_OPENS - 1:
        self.hark_quit(pid)
    h = self.r["hark"]
    saved = opens[1:] or opens
    h["open_ms"] = {"median": statistics.median(saved), "runs": opens,
                    "first_no_saved_queue": opens[0],
                    "queue_shown_median": statistics.median(queued[1:]) if queued[1:] else None}
    # Browse: Artists, the first artist, its first album; back to the music folder.
    for keys, header in ((["Down", "Enter"], "Artists"), (["Down", "Enter"], "Artists ›"),
                         (["Down", "Enter"], " › ")):
      self.tmux.keys("hark", *keys)
      self.tmux.wait_screen("hark", lambda s: header in s.splitlines()[0], what=header)
    search = {}
    for q, _ in LIBRARY_QUERIES:
      self.tmux.keys("hark", "/")
      self.tmux.wait_screen("hark", lambda s: bottom_line(s).lstrip().startswith("/"),
                            what="hark's search prompt")
      per = self.tmux.keystrokes(
        "hark", q, lambda typed, s: bottom_line(s).lstrip().startswith("/" + typed + "▏"))
      found = self.tmux.screen("hark")
      search[q] = {"median_ms": statistics.median(per), "worst_ms": max(per), "per_key_ms": per,
                   "nothing": "Nothing here matches" in found}
      self.tmux.keys("hark", "Escape")
      self.tmux.wait_screen("hark", lambda s: "▏" not in bottom_line(s), what="the prompt gone")
    h["ui_search"] = search
    # The queue's own filter, over the whole library queued: its first key folds every entry.
    self.tmux.keys("hark", "Tab")
    self.tmux.wait_screen("hark", lambda s: "#" in s.splitlines()[1], what="the queue's tab")
    qfilter = {}
    for q in QUEUE_FILTER_QUERIES:
      self.tmux.keys("hark", "/")
      self.tmux.wait_screen("hark", lambda s: bottom_line(s).lstrip().startswith("/"),
                            what="the queue's filter prompt")
      per = self.tmux.keystrokes(
        "hark", q, lambda typed, s: bottom_line(s).lstrip().startswith("/" + typed + "▏"))
      qfilter[q] = {"median_ms": statistics.median(per), "worst_ms": max(per),
                    "first_ms": per[0], "per_key_ms": per}
      self.tmux.keys("hark", "Escape")
      self.tmux.wait_screen("hark", lambda s: "▏" not in bottom_line(s), what="the prompt gone")
    h["ui_queue_filter"] = qfilter
    # The interface and its player are two processes (the player plays on when the interface
    # detaches): what the user's machine holds is both.
    player = hark_player_pid()
    h["ui_rss_mb"] = proc_hwm_mb(pid)
    h["player_rss_mb"] = proc_hwm_mb(player) if player else None
    h["rss_mb"] = h["ui_rss_mb"] + (h["player_rss_mb"] or 0)
    h["ui_cpu_s"] = proc_cpu(pid)
    self.hark_quit(pid)

  def hark_quit(self, pid):
    """q (no prompt is open here: Escape and q at once would be read as Alt-q); the seconds
    until hark has saved its queue and gone."""
    t0 = now()
    player = hark_player_pid()
    self.tmux.keys("hark", "q")
    if not wait_until(lambda: not alive(pid) and not (player and alive(player)), 60):
      os.kill(pid, signal.SIGKILL)
      raise RuntimeError("hark still running 60 s after q")
    self.r["hark"].setdefault("quit_s", []).append(now() - t0)
    self.tmux.kill("hark")

  # the floor: tmux itself

  def echo_floor(self):
    """The same keystroke measure on `cat`: what tmux and capture-pane cost alone."""
    self.tmux.new("echo", ["cat"])
    per = self.tmux.keystrokes("echo", "quetzalcoatl",
                               lambda typed, s: bottom_line(s).endswith(typed))
    self.tmux.kill("echo")
    self.r["floor"] = {"median_ms": statistics.median(per), "worst_ms": max(per),
                       "per_key_ms": per}

  # cmus

  def cmus_search(self):
    search = {}
    for q, _ in LIBRARY_QUERIES:
      self.tmux.keys("cmus", "/")
      self.tmux.wait_screen("cmus", lambda s: bottom_line(s).startswith("/"),
                            what="cmus's search line")
      per = self.tmux.keystrokes("cmus", q,
                                 lambda typed, s: bottom_line(s).startswith("/" + typed))
      search[q] = {"median_ms": statistics.median(per), "worst_ms": max(per),
                   "per_key_ms": per}
      self.tmux.keys("cmus", "Escape")
      self.tmux.wait_screen("cmus", lambda s: not bottom_line(s).startswith("/"),
                            what="cmus's search line gone")
    self.r["cmus"]["ui_search"] = search

  def cmus_open(self, cmus):
    """cmus started again on the library it saved at quit: until an artist of it is drawn,
    and until all of it is loaded (its start loads lib.pl through the worker)."""
    t0 = now()
    cmus.start()
    names = self.artists
    self.tmux.wait_screen("cmus", lambda s: any(n in s for n in names), what="cmus's library")
    drawn = now() - t0
    loaded, n = cmus.wait_done(t0)
    self.r["cmus"]["open_ms"] = {"drawn": drawn * 1000, "loaded": loaded * 1000, "tracks": n}

  # the run

  def run(self):
    started = now()
    say(f"making a library of {self.args.tracks:,} tracks in {self.lib}")
    self.make()
    say(f"{'read into the page cache' if self.made['reused'] else 'made'} in "
        f"{self.made['s']:.0f} s: {self.made['mix']}, {self.made['mb']:,.0f} MB")
    h, mpd_r, cm = self.r["hark"], self.r["MPD"], self.r["cmus"]
    self.step("hark: first index", "hark", lambda: self.hark_scan("first"))
    self.step("hark: the loudness measured after the first index", "hark", self.hark_measure)
    self.step("hark: rescan, nothing changed", "hark", lambda: self.hark_scan("unchanged"))
    mpd = LibMpd(self.lib, self.args.tmp)

    def mpd_first():
      mpd.prepare()
      t, cpu = mpd.update()
      mpd_r["first"] = {"s": t, "cpu_s": cpu, "found": mpd.songs()}
      t, cpu = mpd.update()
      mpd_r["unchanged"] = {"s": t, "cpu_s": cpu}
    self.step("MPD: first index and a rescan (mpc update --wait)", "MPD", mpd_first)
    cmus = LibCmus(self.tmux, self.args.tmp)

    def cmus_first():
      cmus.start()
      t, cpu, n = cmus.run_job(f"add -l {self.lib}")
      cm["first"] = {"s": t, "cpu_s": cpu, "found": n}
      t, cpu, n = cmus.run_job("update-cache")
      cm["unchanged"] = {"s": t, "cpu_s": cpu, "found": n}
    self.step("cmus: add -l, then update-cache", "cmus", cmus_first)

    def change():
      r = subprocess.run([self.args.make_library, "--change", "1", self.lib],
                         capture_output=True, text=True, timeout=600)
      if r.returncode != 0:
        raise RuntimeError(r.stderr.strip()[-300:])
      m = re.search(r"changed (\d+)", r.stderr)
      self.r["changed"] = int(m.group(1)) if m else None
    self.step("changing 1 % of the files (a tag rewritten)", "hark", change)
    self.step("hark: rescan, 1 % changed", "hark", lambda: self.hark_scan("changed"))

    def mpd_changed():
      t, cpu = mpd.update()
      mpd_r["changed"] = {"s": t, "cpu_s": cpu}
      mpd_r["rss_mb"] = proc_hwm_mb(mpd.proc.pid)
    self.step("MPD: rescan, 1 % changed", "MPD", mpd_changed)
    mpd.stop()

    def cmus_changed():
      t, cpu, n = cmus.run_job("update-cache")
      cm["changed"] = {"s": t, "cpu_s": cpu, "found": n}
      cm["rss_after_add_mb"] = proc_hwm_mb(cmus.pid)
      cmus.stop()
      self.cmus_open(cmus)
      # Browse as in hark: down the artists, into one (cmus's tree opens it in place).
      for k in ("Down", "space", "Down", "Tab", "Tab"):
        self.tmux.keys("cmus", k)
      time.sleep(0.5)
      self.cmus_search()
      cm["rss_mb"] = proc_hwm_mb(cmus.pid)
    self.step("cmus: update-cache, 1 % changed; started again on its library", "cmus",
              cmus_changed)
    cmus.stop()
    self.step("hark: library search on the command line", "hark", self.hark_cli_search)
    self.step("hark: the index's search query alone", "hark", self.sql_search)
    self.step("tmux: the echo floor", "hark", self.echo_floor)
    self.step("hark: the interface (open, browse, search a key at a time)", "hark", self.hark_ui)
    return now() - started


def library_lines(b, elapsed):
  r, made = b.r, b.made
  h, m, c = r["hark"], r["MPD"], r["cmus"]

  def g(d, *keys):
    for k in keys:
      if not isinstance(d, dict) or k not in d:
        return None
      d = d[k]
    return d

  def secs(d, key):
    v = g(d, key, "s")
    if v is None:
      return "—"
    cpu = g(d, key, "cpu_s")
    return f"{v:.2f} s" + (f" ({cpu:.1f} CPU)" if cpu is not None else "")

  lines = [
    f"hark library benchmark: {made['tracks']:,} tracks ({made['mix']}, 0.2–0.5 s each, "
    f"{made['mb']:,.0f} MB in {made['albums']:,} albums of {made['artists']:,} artists), "
    + (f"made by an earlier run and read again in {made['s']:.0f} s" if made.get("reused") else
       f"made by scripts/make-library in {made['s']:.0f} s")
    + f"; measured in {elapsed / 60:.1f} min",
    "every file in the page cache (" + ("read just before" if made.get("reused") else
                                        "written just before")
    + "); index times in wall seconds, with the CPU seconds of the program (and its helpers) "
    "in brackets",
    f"rescan, 1 % changed: {r.get('changed', '?')} files with a tag rewritten (size and "
    "modification time changed)",
    "",
  ]
  rows = [
    ["first index", secs(h, "first"), secs(m, "first"), secs(c, "first"),
     "hark library scan DIR; mpc update --wait; cmus-remote -C 'add -l DIR'"],
    ["loudness measured", secs(h, "measure"), "—", "—",
     f"hark library scan DIR after the first index: {fmt_num(g(h, 'measure', 'measured'), ',')} "
     "tracks measured (EBU R128, one per processor); MPD and cmus measure none"],
    ["rescan, nothing changed", secs(h, "unchanged"), secs(m, "unchanged"), secs(c, "unchanged"),
     "the same; cmus: update-cache"],
    ["rescan, 1 % changed", secs(h, "changed"), secs(m, "changed"), secs(c, "changed"), ""],
    ["tracks found", fmt_num(g(h, "first", "found"), ","), fmt_num(g(m, "first", "found"), ","),
     fmt_num(g(c, "first", "found"), ","), ""],
    ["open the interface", fmt_num(g(h, "open_ms", "median"), ".0f", " ms"), "—",
     fmt_num(g(c, "open_ms", "drawn"), ".0f", " ms"),
     f"to the library drawn; hark median of {HARK_OPENS - 1} opens on its saved queue of the "
     f"whole library (all of it in the queue's tab at "
     f"{fmt_num(g(h, 'open_ms', 'queue_shown_median'), '.0f', ' ms')}; the first open, with no "
     f"saved queue: {fmt_num(g(h, 'open_ms', 'first_no_saved_queue'), '.0f', ' ms')}); cmus all "
     f"of it loaded at {fmt_num(g(c, 'open_ms', 'loaded'), '.0f', ' ms')}"],
    ["peak RSS, library open", fmt_num(g(h, "rss_mb"), ".1f", " MB"),
     fmt_num(g(m, "rss_mb"), ".1f", " MB"), fmt_num(g(c, "rss_mb"), ".1f", " MB"),
     "VmHWM: hark's interface opened, browsed and searched (its queue the whole library), "
     f"and its player's process ({fmt_num(g(h, 'ui_rss_mb'), '.1f', ' MB')} + "
     f"{fmt_num(g(h, 'player_rss_mb'), '.1f', ' MB')}); "
     "MPD after its updates; cmus started on its saved library and searched"],
  ]
  lines += table_lines(["", "hark", "MPD", "cmus", "notes"], rows)
  lines.append("")
  lines.append("search, per keystroke (median / worst ms), query typed a key at a time:")

  def mw(d):
    return "—" if not d else f"{d['median_ms']:.1f} / {d['worst_ms']:.1f}"

  srows = []
  for q, what in LIBRARY_QUERIES:
    ui = g(h, "ui_search", q)
    srows.append([f"'{q}' ({what})", mw(ui), mw(g(h, "sql_search", q)),
                  fmt_num(g(h, "cli_search", q, "median_ms"), ".0f", " ms"),
                  mw(g(c, "ui_search", q)),
                  "hark showed nothing!" if ui and ui.get("nothing") else ""])
  lines += table_lines(["query", "hark UI", "hark query", "hark CLI", "cmus UI", ""], srows)
  fl = r.get("floor")
  lines.append("UI: key sent (tmux send-keys) until the screen shows it typed, with hark's "
               "results (≤ 500 tracks; hark draws after its search) or cmus's cursor on the "
               "first match; read with capture-pane every 2 ms. tmux alone, on `cat`: "
               + mw(fl) + " ms")
  lines.append("query: Library.search's SQL alone on hark's index (Python's sqlite3), each "
               "prefix of the query; CLI: `hark library search WORD`, process start to exit, "
               "median of 5")
  qf = [f"'{q}' {mw(g(h, 'ui_queue_filter', q))} (its first key "
        f"{fmt_num(g(h, 'ui_queue_filter', q, 'first_ms'), '.1f', ' ms')})"
        for q in QUEUE_FILTER_QUERIES]
  lines.append("the queue's filter in hark's UI, the whole library queued (median / worst ms): "
               + "; ".join(qf))
  lines.append("")
  hs = [g(h, "ui_search", q, "median_ms") for q, _ in LIBRARY_QUERIES]
  hw = [g(h, "ui_search", q, "worst_ms") for q, _ in LIBRARY_QUERIES]
  qs = [g(h, "sql_search", q, "worst_ms") for q, _ in LIBRARY_QUERIES]

  def ok(v):
    return {True: "ok", False: "MISSED", None: "not measured"}[v]

  def all_below(xs, limit):
    return None if not xs or any(x is None for x in xs) else all(x < limit for x in xs)

  open_ms, rss, mrss = g(h, "open_ms", "median"), g(h, "rss_mb"), g(m, "rss_mb")

  def per_file(d, key):
    """µs a file: wall time over the files found (cmus may find fewer: without its FFmpeg
    plugin it reads no .m4a)."""
    t, n = g(d, key, "s"), g(d, "first", "found")
    return None if t is None or not n else t / n * 1e6

  index_goals = []
  for key, what in (("first", "first index"), ("unchanged", "rescan"),
                    ("changed", "rescan 1 %")):
    hv, cv = per_file(h, key), per_file(c, key)
    verdict = None if hv is None or cv is None else hv <= cv
    index_goals.append(f"{what} {fmt_num(hv, '.1f')} against {fmt_num(cv, '.1f')} µs a file "
                       f"{ok(verdict)}")
  lines.append("goals: the index's time a file no more than cmus's: " + "; ".join(index_goals))
  cm = [g(c, "ui_search", q, "median_ms") for q, _ in LIBRARY_QUERIES]
  vs_cmus = (None if any(x is None for x in hs + cm) else
             all(a <= b for a, b in zip(hs, cm)))
  qw = [g(h, "ui_queue_filter", q, "worst_ms") for q in QUEUE_FILTER_QUERIES]
  lines.append(
    f"goals: search a keystroke: UI median no more than cmus's {ok(vs_cmus)}, worst < "
    f"{SEARCH_GOAL_MS:.0f} ms {ok(all_below(hw, SEARCH_GOAL_MS))}, the query alone (worst) < "
    f"{SEARCH_GOAL_MS:.0f} ms {ok(all_below(qs, SEARCH_GOAL_MS))}; the queue's filter < "
    f"{SEARCH_GOAL_MS:.0f} ms a key, its first too {ok(all_below(qw, SEARCH_GOAL_MS))}")
  lines.append(
    f"goals: open < {OPEN_GOAL_MS:.0f} ms "
    f"{ok(None if open_ms is None else open_ms < OPEN_GOAL_MS)}; peak RSS (interface and "
    f"player) below MPD's {ok(None if rss is None or mrss is None else rss < mrss)}")
  if b.errors:
    lines.append("")
    lines.append("errors:")
    lines += [f"  {e}" for e in b.errors]
  return lines


def library_main(args):
  b = LibraryBench(args)
  try:
    elapsed = b.run()
  finally:
    PROCS.stop_all()
  text = "\n".join(library_lines(b, elapsed))
  print(text, flush=True)
  if args.json:
    with open(args.json, "w") as f:
      json.dump({"library": b.made, "elapsed_s": elapsed, "results": b.r, "errors": b.errors,
                 "goals": {"index": "a file no slower than cmus",
                           "search_ms": SEARCH_GOAL_MS, "search_median": "no more than cmus's",
                           "queue_filter_ms": SEARCH_GOAL_MS, "open_ms": OPEN_GOAL_MS,
                           "rss": "below MPD's"}}, f, indent=2, ensure_ascii=False)
      f.write("\n")
  return 1 if b.errors else 0


def main():
  parser = argparse.ArgumentParser(prog="bench.py")
  sub = parser.add_subparsers(dest="cmd", required=True)
  g = sub.add_parser("signal")
  g.add_argument("--seconds", type=float, required=True)
  g.add_argument("out")
  r = sub.add_parser("run")
  r.add_argument("--hark", required=True)
  r.add_argument("--decoder")  # these three: all but --manners
  r.add_argument("--rusage")
  r.add_argument("--files")
  r.add_argument("--tmp", required=True)
  r.add_argument("--tmux-socket", required=True)
  r.add_argument("--seconds", type=float, required=True)
  r.add_argument("--runs", type=int, default=1)
  r.add_argument("--json")
  r.add_argument("--players")  # default: every player of the mode
  r.add_argument("--manners", action="store_true",
                 help="measure the manners (headset, call, MPRIS) instead: " + DEFAULT_MANNERS)
  r.add_argument("--formats", default=",".join(DEFAULT_FORMATS))
  r.add_argument("--no-ducking", action="store_true")
  r.add_argument("--library", help="measure the library instead: make one of "
                 "--tracks tracks in this (new) folder with --make-library, and index it")
  r.add_argument("--tracks", type=int, default=50000)
  r.add_argument("--make-library")
  r.add_argument("--reuse-library", action="store_true",
                 help="keep the library made in --library, and measure one made there before")
  args = parser.parse_args()
  global ARGS
  ARGS = args
  if args.cmd == "signal":
    write_signal(args.out, args.seconds)
    return 0
  known = MANNERS_PLAYERS if args.manners else PLAYERS
  args.players = [p for p in (args.players or (DEFAULT_MANNERS if args.manners else
                                               ",".join(PLAYERS))).split(",") if p]
  args.formats = [f for f in args.formats.split(",") if f]
  for p in args.players:
    if p not in known:
      parser.error(f"unknown player '{p}'; choose from {', '.join(known)}")
  if args.library:
    if not args.make_library:
      parser.error("--library needs --make-library")
    known = {"hark": None}
  elif not args.manners and not (args.decoder and args.rusage and args.files):
    parser.error("--decoder, --rusage and --files are needed (but with --manners)")
  for f in args.formats:
    if f not in FORMATS:
      parser.error(f"unknown format '{f}'; choose from {', '.join(FORMATS)}")

  def on_signal(sig, frame):
    raise SystemExit(128 + sig)

  signal.signal(signal.SIGTERM, on_signal)
  signal.signal(signal.SIGHUP, on_signal)
  try:
    if args.library:
      return library_main(args)
    if args.manners:
      manners_main(args)
      return 0
    results, info, elapsed = measure(args)
    ducking = None
    if "hark" in args.players and not args.no_ducking:
      say("ducking under a navigation prompt (hark only)")
      try:
        ducking = Ducking(args).run()
      except Exception as e:
        ducking = {"error": f"{type(e).__name__}: {e}"}
      finally:
        Hark(Context(args)).stop_server()
      elapsed += ducking.get("elapsed_s", 0)
    report(args, results, info, elapsed, ducking)
  finally:
    PROCS.stop_all()
  return 0


if __name__ == "__main__":
  sys.exit(main())
