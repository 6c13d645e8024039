# shellcheck shell=bash
# The Debian packages hark needs, in one place, and how to install them.
# Sourced by scripts/quickstart and scripts/test.

# What building and running hark needs: ALSA, libsndfile, ncurses, libdbus and libpulse (with
# their headers for the build; libdbus serves MPRIS, libpulse watches the sound server's outputs
# and calls when there is one; hark opens ncurses, libdbus and libpulse when it first uses
# them); the freedesktop sound theme and espeak-ng give the simulated apps their sounds and
# voice (hark falls back to its own assets/sounds and a chime without them).
# pkgconf: SwiftPM finds those libraries' flags with pkg-config (libdbus-1-dev pulls it in
# today; named here so the build does not hang on that).
# libavformat-dev, libavcodec-dev, libswresample-dev, libavutil-dev: FFmpeg, for the hark-ffmpeg
# helper, which decodes what libsndfile cannot (AAC and ALAC in .m4a, WavPack, WMA, ...) in a
# process of its own; hark itself never loads them.
# libtagc0-dev: TagLib's C binding, for the hark-tags helper that reads tags for the library
# index (hark itself never loads TagLib); libsqlite3-dev: the index itself. libchafa-dev and
# libswscale-dev: the hark-cover helper, which turns the playing album's cover into coloured
# character cells for the interface (FFmpeg decodes and scales the picture, chafa picks the
# cells); neither is loaded into hark itself.
# libebur128-dev: EBU R128 loudness (integrated loudness, true peak) measured for the files
# without ReplayGain tags, so that Sound Check works on every file; hark opens libebur128 when it
# first measures (the index's background thread, `hark library scan`), never at start.
# libcurl4-openssl-dev: HTTP with TLS for sending listens to ListenBrainz and Last.fm (libcurl
# is opened when the first listen is sent, never at start). libtag1-dev: TagLib's C++ headers,
# for the hark-tags helper's lyrics and ReplayGain writing (libtagc0-dev brings it; named here
# because hark-tags now uses it directly).
# libsoundtouch1: SoundTouch (LGPL-2.1+), which plays long recordings at other speeds with their
# pitch kept; hark opens its C interface, libSoundTouchDll.so.1, when a speed other than 1x is
# first asked for, and declares the few functions it calls itself (no -dev header needed).
# make: `make install` (the Makefile) puts hark, its helpers, the man page, the completions
# and the assets under a prefix.
# bolt-19 (LLVM's post-link optimizer, llvm-bolt), binutils (objcopy) and python3: scripts/bolt
# lays out the release hark's code so that the code the player runs sits together, about 2 MB
# less of its memory (docs/PERFORMANCE.md); a newer llvm-bolt is used where one is installed.
HARK_RUNTIME_PACKAGES=(procps pkgconf make bolt-19 binutils python3 libasound2-dev libsndfile1-dev libncurses-dev
  libdbus-1-dev libpulse-dev libasound2-plugins alsa-utils sound-theme-freedesktop espeak-ng
  libavformat-dev libavcodec-dev libswresample-dev libavutil-dev libtagc0-dev libsqlite3-dev
  libswscale-dev libchafa-dev libebur128-dev libcurl4-openssl-dev libtag1-dev libsoundtouch1)
# What the tests need on top: python3 reads `hark status --json` and measures recordings, tmux
# drives the UI tests, PulseAudio's null sink plays in real time and parec records it (its
# daemon unpacked privately, not installed: see pulseaudio-libraries below), sox
# makes the test tones, gcc builds the assets test's small libsndfile checker; the MPRIS tests
# start private buses with dbus-daemon, watch them with dbus-monitor and dbus-send (dbus-bin),
# and drive the player with playerctl. The desktop tests also run PipeWire as desktops do:
# pipewire and wireplumber, PipeWire's pulse service from libpipewire-0.3-modules (run by the
# test on a private socket; the pipewire-pulse package only adds systemd units), pw-play from
# pipewire-bin. Not pipewire-alsa, which conflicts with pulseaudio: the tests unpack its ALSA
# plugin from the package without installing it. ffmpeg makes the FFmpeg decoder's test files
# (AAC, ALAC, WavPack, TTA, WMA, AC-3, Matroska). python3-dbusmock stands in for systemd-logind
# on a private system bus (sleep.sh: PrepareForSleep and the delay inhibitor). kitty, xvfb and
# xdotool run the interface in a real kitty on a virtual X server and press its media keys;
# xterm (as a VT340, in DejaVu Sans Mono) draws the cover as sixels there.
# icecast2 is a real internet radio station on loopback (radio.sh, fed by ffmpeg), curl
# sets its titles and reads its status, and iproute2's ss sees the player's connections to it. lame, flac, vorbis-tools (oggenc), opus-tools (opusenc)
# and wavpack make the gapless test's files as people rip them. sqlite3 makes another program's
# database for the library index to refuse. man-db, fish and bash-completion check what
# `make install` puts in a temporary prefix: the man page with `man -M`, the completions loaded
# where fish and bash-completion look for them. strace holds a player's fsync up (its delay
# injection) so that seams.sh can start `hark` while a player is saving its queue. mpv and
# mpv-mpris (which installs its script system-wide, /etc/mpv/scripts/mpris.so) are another
# desktop player on the private session bus: the sleep timer fades it out and pauses it through
# MPRIS (sleep-timer.sh). rsync keeps scripts/test's copy of the tree, where the builds are
# kept between runs, the same as the clone (a file rewritten only when its content differs).
# gdb: a failed end-to-end script prints where each thread of its hark processes was (lib.sh's
# hark_stacks), for the failure seen once in hundreds of runs.
HARK_TEST_PACKAGES=("${HARK_RUNTIME_PACKAGES[@]}" python3 tmux pulseaudio-libraries pulseaudio-utils sox gcc
  dbus-daemon dbus-bin playerctl pipewire pipewire-bin wireplumber libpipewire-0.3-modules
  libspa-0.2-modules ffmpeg python3-dbusmock kitty xterm fonts-dejavu-core xvfb xdotool icecast2 curl
  iproute2 lame flac vorbis-tools opus-tools wavpack sqlite3 man-db fish bash-completion strace mpv
  mpv-mpris rsync gdb)

# PulseAudio's daemon is never installed: the pulseaudio package conflicts with pipewire-alsa,
# and installing it removes that, and with it the sound of a PipeWire desktop (seen). The tests,
# the benchmark and ensure_sound_output unpack it into a private folder instead
# (scripts/private-pulseaudio) and run it from there; the name pulseaudio-libraries in a list
# stands for what it needs to run, its own dependencies (libraries, pulseaudio-utils; none of
# them conflicts with anything), installed as usual.
# Only those not installed yet: one named that is (libc6, libsystemd0) would be upgraded, and
# systemd with it.
pulseaudio_libraries() {
  local name
  apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances pulseaudio 2>/dev/null | awk '/^  Depends: [^<]/ {print $2}' | sort -u \
    | while read -r name; do
      dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "ok installed" || echo "$name"
    done
}

# install_packages NAME...: apt-get update, then apt-get install -y, as root or through sudo.
# Never removes or replaces a package: when apt would (apt-get install -s says so), it installs
# nothing and says which.
install_packages() {
  local sudo=() wanted=() name removed
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  for name in "$@"; do
    if [ "$name" = pulseaudio-libraries ]; then
      mapfile -t -O "${#wanted[@]}" wanted < <(pulseaudio_libraries)
    else
      wanted+=("$name")
    fi
  done
  removed=$(apt-get install -s -y --no-install-recommends "${wanted[@]}" 2>/dev/null \
    | awk '/^Remv / {printf "%s%s", sep, $2; sep = ", "}')
  if [ -n "$removed" ]; then
    echo "hark: installing what is needed would remove $removed; installed nothing (install the missing packages by hand, keeping those)" >&2
    return 1
  fi
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null
}

# The Swift toolchain lives in /opt/swift on our machines; make sure it is on PATH.
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
  export PATH="/opt/swift/usr/bin:$PATH"
fi
command -v swift >/dev/null 2>&1 || { echo "hark: no Swift toolchain on PATH (Swift 6.3 is needed)" >&2; exit 1; }

# A shell without a login session (root in a container, a bare ssh) has no $XDG_RUNTIME_DIR,
# which hark's session server needs. Use the login's directory if it exists, else a private one.
ensure_runtime_dir() {
  [ -n "${XDG_RUNTIME_DIR:-}" ] && return
  local dir="/run/user/$(id -u)"
  if [ ! -d "$dir" ] || [ ! -O "$dir" ]; then
    dir="${TMPDIR:-/tmp}/hark-runtime-$(id -u)"
    mkdir -p -m 700 "$dir"
  fi
  export XDG_RUNTIME_DIR="$dir"
  echo "note: \$XDG_RUNTIME_DIR was not set; using '$dir'" >&2
}

# A machine with no sound card and no sound server (a container, a VM, a CI runner) has nothing
# to play to. Give it what hark's tests use: a private PulseAudio with a silent null sink named
# "out" (hark plays ALSA's default there: with no card it is the sound server's default sink),
# so the player plays in real time and the manners can be watched (`pactl list sink-inputs`,
# or recorded with `parec -d out.monitor`). Needs
# $XDG_RUNTIME_DIR (ensure_runtime_dir first). Leaves a machine with a card or a server alone.
ensure_sound_output() {
  if aplay -l 2>/dev/null | grep -q '^card' || [ -n "${PULSE_SERVER:-}" ] \
    || [ -S "$XDG_RUNTIME_DIR/pulse/native" ]; then
    return
  fi
  install_packages pulseaudio-libraries pulseaudio-utils
  local daemon
  daemon=$("$(dirname "${BASH_SOURCE[0]}")/private-pulseaudio")/pulseaudio || return 0
  echo "note: no sound card and no sound server here; starting PulseAudio with a silent null" \
    "sink 'out' (hear nothing, record it with: parec -d out.monitor; stop it with: pactl exit)" >&2
  # -n: no default.pa (it wants hardware and a login); as root it must be told its modules.
  setsid "$daemon" -n --daemonize=no --exit-idle-time=-1 --log-target=stderr \
    -L module-native-protocol-unix -L "module-null-sink sink_name=out" \
    >"${TMPDIR:-/tmp}/hark-pulseaudio-$(id -u).log" 2>&1 </dev/null &
  local _
  for _ in $(seq 50); do pactl info >/dev/null 2>&1 && return; sleep 0.1; done
  echo "note: PulseAudio did not start; see ${TMPDIR:-/tmp}/hark-pulseaudio-$(id -u).log" >&2
}
