# The interface in a private tmux server, as a user sees and drives it: shared by the scripts
# that test it (source after lib.sh). The server and its session are named after this run; the
# server is killed at the end, failed or not. `TARGET` (default: the session) picks the window
# the helpers read and type into.
# shellcheck shell=bash
SOCK="hark-e2e-$E2E_NAME-$$"
SESSION="$E2E_NAME-$$"
# (lib.sh's cleanup reads the exit status from $?: hand it on, with errexit off in the trap.)
trap 'st=$?; set +e; tmux -L "$SOCK" kill-server 2>/dev/null; (exit $st); cleanup' EXIT
tmux_() { tmux -L "$SOCK" "$@"; }

# tmux_start COLUMNS ROWS: the session, a plain shell with a short prompt.
tmux_start() {
  tmux_ -f /dev/null new-session -d -s "$SESSION" -x "$1" -y "$2" "bash --norc --noprofile"
  keys "PS1='$ '" Enter
}

screen_text() { tmux_ capture-pane -p -t "${TARGET:-$SESSION}"; }
screen_has() { grep -qF -- "$1" <<<"$(screen_text)"; }
# expect_screen TEXT [SECONDS]: waits for TEXT on the screen; on failure prints the screen.
expect_screen() {
  local deadline=$((SECONDS + ${2:-5} + 1))
  while ! screen_has "$1"; do
    if [ $SECONDS -ge $deadline ]; then
      echo "the screen never showed '$1':"
      screen_text
      fail "timed out waiting for '$1' on the screen"
    fi
    sleep 0.05
  done
}
expect_screen_not() {
  local deadline=$((SECONDS + ${2:-5} + 1))
  while screen_has "$1"; do
    if [ $SECONDS -ge $deadline ]; then
      screen_text
      fail "'$1' stayed on the screen"
    fi
    sleep 0.05
  done
}
keys() { tmux_ send-keys -t "${TARGET:-$SESSION}" "$@"; }
# The elapsed time on the progress line, in seconds (-1 when there is none).
elapsed() {
  screen_text | python3 -c '
import re, sys
for line in sys.stdin:
    m = re.match(r"^ (\d+):(\d\d) [━─]", line)
    if m:
        print(int(m.group(1)) * 60 + int(m.group(2)))
        break
else:
    print(-1)'
}
elapsed_beyond() { [ "$(elapsed)" -gt "$1" ]; }
