#!/usr/bin/env bash
# Sleep and wake, against a fake systemd-logind (python3-dbusmock's logind template) on a private
# system bus: while hark plays it holds a delay inhibitor; PrepareForSleep(true) pauses it (a route
# reason, as the phone's wakeFromSleep) within 100 ms and the inhibitor is let go; after
# PrepareForSleep(false) it is still paused and says why; play (the media keys' way, through hark
# ctl) works at once and takes the inhibitor again.
source "$(dirname "$0")/lib.sh"
start_pulse
sys_python=/usr/bin/python3  # Debian's, which has dbusmock and dbus; PATH may hold another
$sys_python -c 'import dbusmock, dbus' 2>/dev/null || fail "python3-dbusmock is not installed"

# A private "system" bus and the fake logind on it.
dbus-daemon --session --nofork --print-address=3 3>"$E2E_DIR/bus-address" >/dev/null 2>&1 &
E2E_PIDS+=($!)
wait_for 5 "the private system bus" test -s "$E2E_DIR/bus-address"
export DBUS_SYSTEM_BUS_ADDRESS=$(head -1 "$E2E_DIR/bus-address")
start logind $sys_python -m dbusmock --system --template logind
logind() {  # logind METHOD ARGS...: calls the fake logind, prints the answer
  $sys_python - "$@" <<'PY'
import sys, dbus
bus = dbus.SystemBus()
o = bus.get_object("org.freedesktop.login1", "/org/freedesktop/login1")
if sys.argv[1] == "sleep":
    o.EmitSignal("org.freedesktop.login1.Manager", "PrepareForSleep", "b",
                 [sys.argv[2] == "true"], dbus_interface="org.freedesktop.DBus.Mock")
elif sys.argv[1] == "inhibitors":
    print(sum(1 for i in o.ListInhibitors(dbus_interface="org.freedesktop.login1.Manager")
              if i[0] == "sleep" and i[1] == "hark" and i[3] == "delay"))
PY
}
wait_for 10 "the fake logind" logind inhibitors

sox -n -r 44100 -c 2 "$E2E_DIR/tone.wav" synth 60 sine 440 vol 0.3
start player hark play --no-ui --device pulse "$E2E_DIR/tone.wav"
expect_log player "playing 'tone' (1/1)" 10
wait_until 5 "a delay inhibitor held while playing" 'test "$(logind inhibitors)" = 1'
pass "while playing hark holds a delay inhibitor for sleep"

t=$(now)
logind sleep true
wait_until 3 "paused for the sleep" 'test "$(playback pausedBy)" = sleep'
expect_log player "paused: the computer is going to sleep" 3
wait_until 3 "the inhibitor let go" 'test "$(logind inhibitors)" = 0'
sleep 0.3
# Silent on the sink within 100 ms of the signal (the signal is sent a moment after $t).
gone=$(probe last-sound "$(python3 -c "print($t - 1)")" "$(python3 -c "print($t + 1)")")
gone=$(python3 -c "print(round($gone - 1, 3))")
check "$gone <= 0.1" || fail "sound went on ${gone}s after PrepareForSleep (limit 0.1 s)"
pass "before sleep it pauses (silent ${gone}s after the signal, paused by route) and lets the inhibitor go"

logind sleep false
expect_log player "the computer woke up; still paused (play resumes)" 3
sleep 0.3
test "$(playback state)" = paused || fail "after waking hark is $(playback state)"
hark ctl play || fail "play after waking failed"
wait_until 3 "playing again" 'test "$(playback state)" = playing'
wait_until 3 "the inhibitor taken again" 'test "$(logind inhibitors)" = 1'
pass "after waking it stays paused and says so; play works at once and holds sleep again"
