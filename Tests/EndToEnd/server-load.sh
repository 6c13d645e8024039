#!/usr/bin/env bash
# The session server under hostile load. (1) A client floods valid requests while another sends one
# right behind them: the other is answered within a turn or two of the flood's (8 requests), not
# after everything the server read of it at once (a 16 KB read, over 500 requests: what the server
# did before it took turns). (2) With a desktop's descriptor limit scaled down (64), 200 connections
# that never speak: the server does not spin, logs the overload a bounded number of times, keeps the
# registered app, and still answers 'hark status' and 'hark ctl'.
source "$(dirname "$0")/lib.sh"
LOAD="$(cd "$(dirname "$0")" && pwd)/server_load.py"
socket="$XDG_RUNTIME_DIR/hark/session.sock"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# --- (1) Fair turns.
start server hark session-server --persist
wait_for 5 "the session server" test -S "$socket"
worst=0
for silent in on off on off; do
  read -r before sent < <(python3 "$LOAD" flood "$socket" "$(server_pid)" 2000 $silent)
  [ "$sent" -ge 500 ] || fail "the flood got only $sent requests into the socket"
  [ "$before" -gt "$worst" ] && worst=$before
done
[ "$worst" -le 16 ] || fail "a flood of valid requests had $worst answered before another client's one (limit: the turn under way when it came and one more, 16)"
pass "a flooding client (2,000 requests queued) had at most $worst answered before another client's request"
hark session-server --stop >/dev/null
wait_for 5 "the server's exit" eval '! alive "$PID_server"'

# --- (2) Out of room: 200 silent connections against 64 descriptors.
prlimit --nofile=64:64 "$HARK_BIN" session-server --persist >"$E2E_DIR/server2.log" 2>&1 &
E2E_PIDS+=($!)
spid=$!
wait_for 5 "the limited session server" test -S "$socket"
start music hark simulate music --no-sound --seconds 60
expect_field music active true
t0=$(cpu_ticks "$spid")
python3 "$LOAD" hold "$socket" 200 4 >"$E2E_DIR/hold.out" &
E2E_PIDS+=($!)
hold=$!
wait_for 5 "the connections opened" test -s "$E2E_DIR/hold.out"
sleep 0.5
out=$(timeout 3 "$HARK_BIN" status 2>&1) || fail "'hark status' under load: $out"
timeout 3 "$HARK_BIN" ctl pause >/dev/null 2>&1 || fail "'hark ctl pause' under load failed"
expect_field music active false
wait "$hold"
opened=$(sed -n 1p "$E2E_DIR/hold.out")
closed=$(sed -n 2p "$E2E_DIR/hold.out")
t1=$(cpu_ticks "$spid")
cpu=$(python3 -c "print(($t1 - $t0) / $(getconf CLK_TCK))")
check "$cpu < 1.0" || fail "the server used ${cpu}s of CPU in 4 s under load: spinning"
log="$E2E_DIR/server2.log"  # a server started by hand logs to its stderr
lines=$(grep -c "connections (the most served at once)\|out of file descriptors" "$log") || lines=0
[ "$lines" -le 3 ] || fail "the overload was logged $lines times"
check "$closed >= $opened - 64" || fail "the server closed only $closed of $opened silent connections"
expect_field music active false
pass "200 silent connections on 64 descriptors: $opened opened, $closed closed by the server, ${cpu}s of CPU, logged $lines times; 'hark status' and 'hark ctl pause' answered; the music app kept its session"
