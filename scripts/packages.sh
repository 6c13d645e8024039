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
# make: `make install` (the Makefile) puts hark, its helpers, the man page, the completions
# and the assets under a prefix.
# bolt-19 (LLVM's post-link optimizer, llvm-bolt), binutils (objcopy) and python3: scripts/bolt
# lays out the release hark's code so that the code the player runs sits together, about 2 MB
# less of its memory (issue 11); a newer llvm-bolt is used where one is installed.
HARK_RUNTIME_PACKAGES=(procps pkgconf make bolt-19 binutils python3 libasound2-dev libsndfile1-dev libncurses-dev
  libdbus-1-dev libpulse-dev libasound2-plugins alsa-utils sound-theme-freedesktop espeak-ng
  libavformat-dev libavcodec-dev libswresample-dev libavutil-dev libtagc0-dev libsqlite3-dev
  libswscale-dev libchafa-dev)
# What the tests need on top: python3 reads `hark status --json` and measures recordings, tmux
# drives the UI tests, PulseAudio's null sink plays in real time and parec records it, sox
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
# icecast2 is a real internet radio station on loopback (radio.sh, fed by ffmpeg), and curl
# sets its titles and reads its status. lame, flac, vorbis-tools (oggenc), opus-tools (opusenc)
# and wavpack make the gapless test's files as people rip them. sqlite3 makes another program's
# database for the library index to refuse. man-db, fish and bash-completion check what
# `make install` puts in a temporary prefix: the man page with `man -M`, the completions loaded
# where fish and bash-completion look for them.
HARK_TEST_PACKAGES=("${HARK_RUNTIME_PACKAGES[@]}" python3 tmux pulseaudio pulseaudio-utils sox gcc
  dbus-daemon dbus-bin playerctl pipewire pipewire-bin wireplumber libpipewire-0.3-modules
  libspa-0.2-modules ffmpeg python3-dbusmock kitty xterm fonts-dejavu-core xvfb xdotool icecast2 curl
  lame flac vorbis-tools opus-tools wavpack sqlite3 man-db fish bash-completion)

# install_packages NAME...: apt-get update, then apt-get install -y, as root or through sudo.
install_packages() {
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
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
# "out" (ALSA's default device goes to it), so the player plays in real time and the manners
# can be watched (`pactl list sink-inputs`, or recorded with `parec -d out.monitor`). Needs
# $XDG_RUNTIME_DIR (ensure_runtime_dir first). Leaves a machine with a card or a server alone.
ensure_sound_output() {
  if aplay -l 2>/dev/null | grep -q '^card' || [ -n "${PULSE_SERVER:-}" ] \
    || [ -S "$XDG_RUNTIME_DIR/pulse/native" ]; then
    return
  fi
  install_packages pulseaudio pulseaudio-utils
  echo "note: no sound card and no sound server here; starting PulseAudio with a silent null" \
    "sink 'out' (hear nothing, record it with: parec -d out.monitor; stop it with: pactl exit)" >&2
  # -n: no default.pa (it wants hardware and a login); as root it must be told its modules.
  setsid pulseaudio -n --daemonize=no --exit-idle-time=-1 --log-target=stderr \
    -L module-native-protocol-unix -L "module-null-sink sink_name=out" \
    >"${TMPDIR:-/tmp}/hark-pulseaudio-$(id -u).log" 2>&1 </dev/null &
  local _
  for _ in $(seq 50); do pactl info >/dev/null 2>&1 && return; sleep 0.1; done
  echo "note: PulseAudio did not start; see ${TMPDIR:-/tmp}/hark-pulseaudio-$(id -u).log" >&2
}
