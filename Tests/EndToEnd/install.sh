#!/usr/bin/env bash
# hark installs like a real program. `make install PREFIX=… DESTDIR=…` into a temporary root puts
# hark, hark-ffmpeg, hark-tags, hark-cover, the man page, the bash, zsh and fish completions and the
# assets under DESTDIR+PREFIX and nowhere else; `man -M` reads the page; bash (alone and through
# bash-completion) and fish load the completions and complete subcommands (zsh's is checked when zsh
# is installed); the installed hark, with no build folder on PATH, finds its own sounds (an alarm is
# heard where there is no sound theme) and runs the installed helpers (hark-tags reads an .m4a's
# tags, hark-ffmpeg decodes it); a copy of hark alone fails at each, so each check sees the
# installed layout at work. `make uninstall` removes those files and share/hark, and leaves what it
# did not install.
# make install builds the release binaries first (incrementally: seconds when current).
user_home=${HOME:-}
source "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
unset HARK_ASSETS HARK_FFMPEG_HELPER HARK_TAGS_HELPER
# SwiftPM's caches are the user's, not this test's fresh HOME. At the normal priority: nice 19
# did not reach the release build (SwiftPM undoes it: its compilers ran at nice 0 under
# `nice -n 19 make`), and in the idle scheduling class (chrt, which SwiftPM keeps) it waited on
# every other build of a shared machine (make install took 223 s instead of 142); scripts/test
# runs the scripts that time sound at nice -10 instead.
make_() { HOME="${user_home:-$HOME}" make -C "$repo" "$@" PREFIX="$prefix" DESTDIR="$stage"; }
stage="$E2E_DIR/root" prefix="$E2E_DIR/usr"
root="$stage$prefix"
# Other programs' files, there before: uninstall must leave them.
mkdir -p "$root/bin" "$root/share/man/man1"
echo other >"$root/bin/other" && echo other >"$root/share/man/man1/other.1"

# --- (a) Where the files go.
start=$SECONDS
make_ install >"$E2E_DIR/make-install.log" 2>&1 || fail "make install failed"
took=$((SECONDS - start))
expected=$( (cd "$repo/assets" && find . -type f -printf 'share/hark/assets/%P\n')
  printf '%s\n' bin/hark bin/hark-ffmpeg bin/hark-tags bin/hark-cover bin/other share/man/man1/hark.1 \
    share/man/man1/other.1 share/bash-completion/completions/hark share/zsh/site-functions/_hark \
    share/fish/vendor_completions.d/hark.fish share/doc/hark/README.md share/doc/hark/LICENSE \
    share/doc/hark/docs/MANNERS.md share/doc/hark/docs/TOUR.md share/doc/hark/docs/PROTOCOL.md \
    share/doc/hark/docs/HACKING.md share/doc/hark/docs/PERFORMANCE.md)
installed=$(find "$stage" ! -type d | sed "s|^$root/||")
diff <(sort <<<"$expected") <(sort <<<"$installed") >"$E2E_DIR/files.diff" ||
  fail "not the files expected (- expected, + installed): $(cat "$E2E_DIR/files.diff")"
[ ! -e "$prefix" ] || fail "make install wrote to PREFIX without DESTDIR: $(find "$prefix")"
for p in hark hark-ffmpeg hark-tags hark-cover; do
  [ -x "$root/bin/$p" ] || fail "bin/$p is not executable"
done
libraries=$(ldd "$root/bin/hark")
! grep -qi swift <<<"$libraries" || fail "the installed hark needs Swift's libraries: $libraries"
# libstdc++ is linked statically (scripts/static-libstdc++), about 1 MB of the headless player's
# memory (docs/PERFORMANCE.md, "libstdc++ linked statically").
! grep -q 'libstdc++' <<<"$libraries" || fail "the installed hark loads libstdc++.so: $libraries"
# libpulse and libdbus (and libsystemd, libgcrypt and X11's libraries behind them) are opened when
# the sound-server watcher, MPRIS or the sleep watch start: at every start they took 1.6 ms of
# 'hark ctl' and 'hark status' (docs/PERFORMANCE.md, "Libraries opened on first use").
! grep -qE 'libpulse|libdbus' <<<"$libraries" ||
  fail "the installed hark loads libpulse or libdbus when it starts: $libraries"
# Where llvm-bolt is installed, the installed hark's code is laid out by it (scripts/bolt, about
# 2 MB less of the player's memory: docs/PERFORMANCE.md, "The code laid out by BOLT"); what follows
# (its alarm heard, its index, an .m4a played through its helper, its status) is that rewritten
# hark at work.
if "$repo/scripts/bolt" --which >/dev/null; then
  readelf -S "$root/bin/hark" | grep -q '\.note\.bolt_info' ||
    fail "llvm-bolt is installed, but the installed hark was not laid out by it:" \
      "$(grep '^bolt:' "$E2E_DIR/make-install.log")"
  # "laid out by llvm-22 (...)", or "laid out as before" when this build was laid out already.
  bolted=" ($(sed -n 's/^bolt: [^:]*: //p' "$E2E_DIR/make-install.log" | tail -1))"
fi
pass "make install ($took s) put $(($(wc -l <<<"$expected") - 2)) files under DESTDIR+PREFIX," \
  "none elsewhere${bolted:-}"

# --- (b) The man page.
page=$(man -M "$root/share/man" -w hark) || fail "man -M does not find hark"
[ "$page" = "$root/share/man/man1/hark.1" ] || fail "man -M found '$page'"
text=$(MANPAGER=cat MANWIDTH=80 man -M "$root/share/man" hark 2>"$E2E_DIR/man.log") ||
  fail "man -M could not show the page: $(cat "$E2E_DIR/man.log")"
for heading in NAME SYNOPSIS OPTIONS FILES; do
  grep -q "^$heading\$" <<<"$text" || fail "the page has no $heading: $(head -20 <<<"$text")"
done
pass "man -M $prefix/share/man hark shows the page ($(wc -l <<<"$text") lines)"

# --- (c) bash: the script alone, then found by bash-completion by its place, as a login
# shell's bash finds it; completing "hark sta" and "hark simulate al" with the function the
# script registers.
complete_bash='
  line=$1
  name=$(complete -p hark | sed -n "s/.* -F \([^ ]*\) .*/\1/p")
  [ -n "$name" ] || exit 1
  read -ra COMP_WORDS <<<"$line"
  COMP_LINE=$line COMP_POINT=${#line} COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  "$name" hark "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
  echo "${COMPREPLY[*]}"'
bash_script="$root/share/bash-completion/completions/hark"
registered=$(bash --norc --noprofile -c "source '$bash_script'; complete -p hark") ||
  fail "the bash completion does not register hark"
grep -q -- '-F _hark hark$' <<<"$registered" || fail "bash registered: $registered"
got=$(bash --norc --noprofile -c "source '$bash_script'; $complete_bash" _ "hark sta")
[ "$got" = status ] || fail "bash completes 'hark sta' with '$got'"
got=$(XDG_DATA_DIRS="$root/share" PATH="$root/bin:$PATH" bash --norc --noprofile -c "
  source /usr/share/bash-completion/bash_completion
  __load_completion hark || exit 1
  $complete_bash" _ "hark simulate al") || fail "bash-completion does not find it in $prefix/share"
[ "$got" = alarm ] || fail "bash (bash-completion) completes 'hark simulate al' with '$got'"
pass "bash: '$registered'; 'hark sta' completes to status, and through bash-completion" \
  "'hark simulate al' to alarm"

# --- (d) fish: the script sourced, then loaded from vendor_completions.d as fish finds it.
got=$(fish -c "source '$root/share/fish/vendor_completions.d/hark.fish'; complete -C 'hark sta'")
[ "$(cut -f1 <<<"$got")" = status ] || fail "fish completes 'hark sta' with '$got'"
got=$(XDG_DATA_DIRS="$root/share" PATH="$root/bin:$PATH" fish -c "complete -C 'hark simulate al'")
[ "$(cut -f1 <<<"$got")" = alarm ] || fail "fish (autoload) completes 'hark simulate al' with '$got'"
pass "fish: 'hark sta' completes to status, and autoloaded from vendor_completions.d" \
  "'hark simulate al' to alarm"

if command -v zsh >/dev/null; then
  got=$(zsh -f -c "fpath=('$root/share/zsh/site-functions' \$fpath)
    autoload -U compinit && compinit -u -D && autoload +X _hark
    print -r -- \${_comps[hark]}") || fail "zsh cannot load _hark"
  [ "$got" = _hark ] || fail "zsh's compinit gives hark '$got'"
  pass "zsh: compinit finds _hark in site-functions and loads it"
fi

# --- (e) The installed hark at work, with nothing of the build on PATH: a copy of hark alone
# (no helpers beside it, no share/hark above it) is the control that fails.
plain_path=/usr/bin:/bin
for p in hark hark-ffmpeg hark-tags hark-cover; do
  for d in ${plain_path//:/ }; do
    [ ! -e "$d/$p" ] || fail "there is a $d/$p: the test cannot tell which one runs"
  done
done
HARK_BIN="$root/bin/hark"
installed() { timeout 20 env PATH=$plain_path "$HARK_BIN" "$@"; }
mkdir "$E2E_DIR/alone"
cp "$HARK_BIN" "$E2E_DIR/alone/hark"
alone() {
  timeout 20 env PATH=$plain_path XDG_CACHE_HOME="$E2E_DIR/alone-cache" "$E2E_DIR/alone/hark" "$@"
}
start_pulse
# No sound theme anywhere: the alarm's sound can only be hark's own.
export XDG_DATA_DIRS="$E2E_DIR/no-themes" XDG_DATA_HOME="$E2E_DIR/no-themes"
installed simulate alarm --seconds 1.5 --device pulse >"$E2E_DIR/alarm.log" 2>&1
level=$(probe level "$(ago 1.6)" "$(ago 0.3)")
check "$level > -40" || fail "the installed hark's alarm was not heard ($level dBFS)"
! log_has alarm "no sound" || fail "the installed hark did not find its sounds"
alone simulate alarm --seconds 0.5 --device pulse >"$E2E_DIR/alarm-alone.log" 2>&1
log_has alarm-alone "no sound: no 'alarm-clock-elapsed' in the sound theme nor in hark's assets" ||
  fail "a copy of hark alone found sounds: $(cat "$E2E_DIR/alarm-alone.log")"
pass "the installed hark rings its alarm sound from $prefix/share/hark/assets ($level dBFS);" \
  "a copy of it alone has none"

music="$E2E_DIR/music"
mkdir "$music"
ffmpeg -nostdin -v error -f lavfi -i "sine=f=440:d=30" -ac 2 -c:a aac \
  -metadata title="Installed Tune" -metadata artist="Prefix Band" "$music/tune.m4a"
installed library scan "$music" >"$E2E_DIR/scan.log" 2>&1 || fail "library scan failed"
grep -q ": 1 track (1 read, 0 removed)$" "$E2E_DIR/scan.log" ||
  fail "library scan: $(cat "$E2E_DIR/scan.log")"
found=$(installed library search installed)
grep -q "^Prefix Band .* Installed Tune  *$music/tune.m4a$" <<<"$found" ||
  fail "library search found: $found"
got=$(alone library scan "$music" 2>&1)
grep -q "1 without readable tags" <<<"$got" || fail "a copy of hark alone read the tags: $got"
pass "the installed hark-tags read the .m4a's tags: '$found'"

start player env PATH=$plain_path "$HARK_BIN" play --no-ui --device pulse "$music/tune.m4a"
wait_for 10 "the installed hark playing the .m4a" position_at_least 0.5
helper=$(for p in $(pgrep -P "$PID_player"); do readlink "/proc/$p/exe"; done | sort -u)
[ "$helper" = "$root/bin/hark-ffmpeg" ] || fail "the player's helper is '$helper'"
level=$(probe level "$(ago 0.4)" "$(now)")
check "$level > -40" || fail "the .m4a was not heard ($level dBFS)"
kill "$PID_player"
wait "$PID_player" || true
got=$(alone play --no-ui --device pulse "$music/tune.m4a" 2>&1) &&
  fail "a copy of hark alone played the .m4a"
grep -qF "hark-ffmpeg is not installed next to hark" <<<"$got" ||
  fail "a copy of hark alone said: $got"
pass "the installed hark plays the .m4a through $prefix/bin/hark-ffmpeg ($level dBFS)"

# --- (f) make uninstall: the installed files and share/hark go; the others' files and the
# shared folders stay. Twice: the second has nothing to do and does not fail.
make_ uninstall >"$E2E_DIR/make-uninstall.log" 2>&1 || fail "make uninstall failed"
make_ uninstall >>"$E2E_DIR/make-uninstall.log" 2>&1 || fail "a second make uninstall failed"
left=$(find "$stage" ! -type d | sed "s|^$root/||" | sort | tr '\n' ' ')
[ "$left" = "bin/other share/man/man1/other.1 " ] || fail "after make uninstall, files left: $left"
[ ! -e "$root/share/hark" ] || fail "make uninstall left $prefix/share/hark"
[ ! -e "$root/share/doc/hark" ] || fail "make uninstall left $prefix/share/doc/hark"
pass "make uninstall removed what it installed and share/hark, and left the others' files"
