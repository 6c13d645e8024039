# shellcheck shell=bash
# The Debian packages hark needs, in one place, and how to install them.
# Sourced by scripts/quickstart and scripts/test.

# What building and running hark needs: ALSA, libsndfile, ncurses, libdbus and libpulse (with
# their headers for the build; libdbus serves MPRIS, libpulse watches the sound server's outputs
# and calls when there is one); the freedesktop sound theme and espeak-ng give the simulated
# apps their sounds and voice (hark falls back to its own assets/sounds and a chime without
# them).
HARK_RUNTIME_PACKAGES=(procps libasound2-dev libsndfile1-dev libncurses-dev libdbus-1-dev
  libpulse-dev libasound2-plugins alsa-utils sound-theme-freedesktop espeak-ng)
# What the tests need on top: python3 reads `hark status --json` and measures recordings, tmux
# drives the UI tests, PulseAudio's null sink plays in real time and parec records it, sox
# makes the test tones, gcc builds the assets test's small libsndfile checker; the MPRIS tests
# start private buses with dbus-daemon, watch them with dbus-monitor and dbus-send (dbus-bin),
# and drive the player with playerctl.
HARK_TEST_PACKAGES=("${HARK_RUNTIME_PACKAGES[@]}" python3 tmux pulseaudio pulseaudio-utils sox gcc
  dbus-daemon dbus-bin playerctl)

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
