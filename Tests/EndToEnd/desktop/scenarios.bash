# shellcheck shell=bash
# hark's manners on a desktop's sound server (issue 10), the same checks on each stack and ALSA
# device: sourced by desktop-pulseaudio.sh and desktop-pipewire.sh after lib.sh, once their
# sound server runs with the sinks "out" (the speakers, the default) and "other", and
# recorders on their monitors into $OUT_REC and $OTHER_REC. The stack script provides:
#   restart_sound_server   stop the sound server and start it again with the state it saved
#                          (stream-restore's memory), the sinks made again, and new recorders
#                          (new $OUT_REC and $OTHER_REC)
#   phone_stream FILE      play FILE as a call of another program (media.role phone)
# and sets STACK (a name for the messages) and, if the player needs a different environment
# for DEVICE, PLAYER_ENV (arguments to env(1): `-u PULSE_SERVER`...).

HEADSET_SINK=bluez_sink.hark_test
sox -n -r 44100 -c 2 "$E2E_DIR/steady.wav" synth 120 sine 440 vol 0.5
sox -n -r 44100 -c 1 "$E2E_DIR/voice.wav" synth 2 sine 300 vol 0.3
sox -n -r 44100 -c 2 "$E2E_DIR/other-music.wav" synth 30 sine 660 vol 0.3
# A 440 Hz sine at half scale, as hark plays it (no private gain: G3) and a recorder hears it.
FULL_LEVEL=-9.03

# load_headset: a null sink standing for a Bluetooth headset; prints its module index.
load_headset() {
  pactl load-module module-null-sink sink_name=$HEADSET_SINK \
    "sink_properties='device.description=\"Bluetooth headset\" device.bus=bluetooth'"
}
sink_exists() { pactl list short sinks | awk '{print $2}' | grep -qx "$1"; }

# The sink-input index of the stream of process PID (its own pid, or its client's).
stream_of() {
  local pid=$1
  pactl -f json list sink-inputs 2>/dev/null | python3 -c "
import json, sys
pid = '$pid'
clients = {}
try:
    import subprocess
    for c in json.loads(subprocess.run(['pactl', '-f', 'json', 'list', 'clients'],
                                       capture_output=True, text=True).stdout or '[]'):
        clients[str(c['index'])] = c['properties'].get('application.process.id')
except Exception:
    pass
for s in json.load(sys.stdin):
    p = s['properties'].get('application.process.id') or clients.get(str(s.get('client')))
    if p == pid:
        print(s['index'])
"
}

# The properties (key=value lines) of the stream of process PID.
stream_props() {
  local index
  index=$(stream_of "$1")
  pactl -f json list sink-inputs | python3 -c "
import json, sys
for s in json.load(sys.stdin):
    if str(s['index']) == '$index':
        for k, v in s['properties'].items():
            print(f'{k}={v}')"
}

# move_stream PID SINK: the user moves the stream of process PID to SINK, as pavucontrol
# does. WirePlumber 0.4.13 ignores some moves made through its pulse service (seen with plain
# aplay, on pipewire-alsa and on the pulse plugin alike: 2 moves in 8 without effect), so, like
# a user, it tries again (up to 5 times) until the stream is there.
move_stream() {
  local pid=$1 sink=$2 sink_index try n
  sink_index=$(pactl list short sinks | awk -v s="$sink" '$2 == s {print $1}')
  for try in 1 2 3 4 5; do
    pactl move-sink-input "$(stream_of "$pid")" "$sink"
    for ((n = 0; n < 30; n++)); do
      [ "$(pactl list short sink-inputs | awk -v i="$(stream_of "$pid")" '$1 == i {print $2}')" = "$sink_index" ] && return 0
      sleep 0.05
    done
  done
  fail "the stream of pid $pid could not be moved to '$sink': $(pactl list short sink-inputs | tr '\t\n' ' ;')"
}

# leaked_since T0: the most milliseconds of hark heard on the speakers or the other output in
# the 0.6 s after T0 (from its first sound there to its last), 0 when none.
leaked_since() {
  local t0=$1 leak=0 rec first last
  for rec in "$OUT_REC" "$OTHER_REC"; do
    first=$(python3 "$PROBE" first-sound "$rec" "$t0" "$(python3 -c "print($t0 + 0.6)")")
    [ "$first" = none ] && continue
    last=$(python3 "$PROBE" last-sound "$rec" "$t0" "$(python3 -c "print($t0 + 0.6)")")
    leak=$(python3 -c "print(max($leak, round(($last - $first) * 1000)))")
  done
  echo "$leak"
}

# start_recorders GENERATION: recorders on the speakers' and the other output's monitors, in
# $OUT_REC and $OTHER_REC (new files for each start of the sound server).
start_recorders() {
  OUT_REC="$E2E_DIR/rec-out-$1.raw"
  start_recorder out "$OUT_REC"
  OTHER_REC="$E2E_DIR/rec-other-$1.raw"
  start_recorder other "$OTHER_REC"
}

route_of_hark() { status_query "next(x['route']['name'] for x in s['sessions'] if x['name']=='hark')"; }
heard_on_out() { python3 "$PROBE" level "$OUT_REC" "$(ago 0.3)" "$(now)"; }
# What is heard now on either output: the speakers, or the other sink where the user may have
# sent hark's stream (WirePlumber's restore-stream remembers that choice for the next run).
heard() {
  local other=-200
  other=$(python3 "$PROBE" level "$OTHER_REC" "$(ago 0.3)" "$(now)")
  python3 -c "print(max($(heard_on_out), $other))"
}
# expect_full_level WHAT: hark is heard within 4 s at the level it plays at, not muted or
# lowered by anything the sound server remembered.
expect_full_level() {
  local what=$1
  wait_until 4 "$what: hark heard" 'check "$(heard) > -40"'
  # The level once the stream has settled (its first 100 ms may still be ramping in).
  sleep 0.35
  local level
  level=$(heard)
  check "abs($level - ($FULL_LEVEL)) < 1.5" \
    || fail "$what: hark heard at $level dBFS, not at its full $FULL_LEVEL dBFS (muted or lowered by the sound server's memory?)"
  pass "$STACK/$DEVICE: $what: heard at full level ($level dBFS)"
}

# start_player [NAME=VALUE...]: the headless player on DEVICE, as the user would start it on
# this desktop, with more environment if given.
start_player() {
  start player env ${PLAYER_ENV[@]+"${PLAYER_ENV[@]}"} "$@" "$HARK_BIN" play --no-ui \
    --device "$DEVICE" "$E2E_DIR/steady.wav"
}
stop_player() {
  kill "$PID_player"
  wait_for 5 "the player's exit" eval '! alive "$PID_player"'
}

run_desktop_scenarios() {
  export DEVICE=$1

  # --- (1) G5: hark plays on the headset (the default sink); the headset goes.
  local module
  module=$(load_headset)
  wait_for 5 "the headset sink" sink_exists $HEADSET_SINK
  # A low-latency recorder on the headset too, as on the speakers: a null sink nobody records
  # renders seconds ahead like a deep buffer (the engine issue's matter, not this one's).
  start_recorder $HEADSET_SINK "$E2E_DIR/rec-headset-$DEVICE.raw"
  pactl set-default-sink $HEADSET_SINK
  start_player
  wait_for 10 "hark playing" position_at_least 1
  wait_until 5 "hark's route is the headset" '[ "$(route_of_hark)" = "Bluetooth headset" ]'
  # Issue 10 §4: the stream says what it is (the sound server may translate the role's case).
  local props
  props=$(stream_props "$PID_player")
  echo "$props" | grep -qix "media.role=music" || fail "hark's stream has no music role: $props"
  echo "$props" | grep -qx "application.id=org.hark.player" || fail "hark's stream has no application.id: $props"
  pass "$STACK/$DEVICE: hark's stream says media.role=$(echo "$props" | grep -i "^media.role=" | cut -d= -f2) and application.id=org.hark.player"
  local t0 leak
  t0=$(now)
  pactl unload-module "$module"
  wait_until 3 "paused by route" '[ "$(playback pausedBy)" = route ]'
  expect_log player "paused: 'Bluetooth headset' went away"
  sleep 0.6
  leak=$(leaked_since "$t0")
  check "$leak < 50" || fail "G5 on $STACK/$DEVICE: ${leak} ms of hark reached the speakers after the headset went (limit 50)"
  pass "$STACK/$DEVICE: G5: the headset went: hark paused by route; ${leak} ms reached the speakers (goal < 50)"
  echo "$STACK $DEVICE leaked_ms=$leak" >>"$E2E_DIR/figures.txt"
  pactl set-default-sink out

  # --- (2) Played again: heard at full level (the stream hark lost left no mute behind).
  hark ctl play
  wait_until 3 "playing" '[ "$(playback state)" = playing ]'
  expect_full_level "'hark ctl play' after the headset went"

  # --- (3) G4/G5 (issue 10 §3): a headset appears beside the speakers and goes while hark
  # plays on them: it is nobody's route, and hark never pauses.
  module=$(load_headset)
  wait_for 5 "the headset sink" sink_exists $HEADSET_SINK
  sleep 0.5
  [ "$(route_of_hark)" = Speakers ] || fail "a headset that appeared became hark's route: $(route_of_hark)"
  pactl unload-module "$module"
  sleep 0.8
  [ "$(playback state)" = playing ] \
    || fail "G4/G5 on $STACK/$DEVICE: a headset hark was not playing on came and went, and hark is $(playback state) ($(playback pausedBy))"
  pass "$STACK/$DEVICE: G4/G5: a headset came and went beside the speakers; hark played on"

  # --- (4) G6: the user moves hark's stream to another sink: it goes on, and its route follows.
  [ -n "$(stream_of "$PID_player")" ] || fail "no sink input of hark's player (pid $PID_player): $(pactl list short sink-inputs)"
  move_stream "$PID_player" other
  sleep 0.6
  [ "$(playback state)" = playing ] || fail "G6 on $STACK/$DEVICE: moving the stream made hark $(playback state)"
  heard_on_other() { check "$(python3 "$PROBE" level "$OTHER_REC" "$(ago 0.3)" "$(now)") > -40"; }
  local deadline=$((SECONDS + 5))
  until heard_on_other; do
    [ $SECONDS -lt $deadline ] && { sleep 0.05; continue; }
    fail "G6 on $STACK/$DEVICE: hark not heard on 'other' 5 s after the user moved its stream there (hark's stream now: $(stream_of "$PID_player"); streams: $(pactl list short sink-inputs | tr '\t\n' ' ;'); sinks: $(pactl list short sinks | tr '\t\n' ' ;'))"
  done
  pass "$STACK/$DEVICE: G6: the user moved hark's stream to 'other'; it played on there"
  move_stream "$PID_player" out

  # --- (4b) G5 for hark playing on a headset that is not the default (the user sent it there:
  # PULSE_SINK, PIPEWIRE_NODE): when it goes the current output does not change, only hark's
  # own; hark must still pause. That takes matching the sound server's stream to hark's
  # process, through its client where the stream names none (PipeWire's ALSA plugin's).
  stop_player
  module=$(load_headset)
  wait_for 5 "the headset sink" sink_exists $HEADSET_SINK
  start_recorder $HEADSET_SINK "$E2E_DIR/rec-headset2-$DEVICE.raw"
  start_player PULSE_SINK=$HEADSET_SINK PIPEWIRE_NODE=$HEADSET_SINK
  wait_for 10 "hark playing on the headset" position_at_least 0.5
  wait_until 3 "hark's route is the headset it plays on" '[ "$(route_of_hark)" = "Bluetooth headset" ]'
  [ "$(status_query "s['route']['name']")" = Speakers ] || fail "the current output is not the speakers"
  t0=$(now)
  pactl unload-module "$module"
  wait_until 3 "paused by route (the headset hark played on went)" '[ "$(playback pausedBy)" = route ]'
  sleep 0.6
  leak=$(leaked_since "$t0")
  check "$leak < 50" || fail "G5 on $STACK/$DEVICE: ${leak} ms of hark reached the speakers after the headset it played on went (limit 50)"
  pass "$STACK/$DEVICE: G5: the headset hark played on went while the speakers stayed the default: paused by route; ${leak} ms reached the speakers"
  echo "$STACK $DEVICE not_default_leaked_ms=$leak" >>"$E2E_DIR/figures.txt"
  stop_player
  start_player
  wait_for 10 "hark playing on the speakers" position_at_least 0.5

  # --- (5) G11/G13/G14: a phone-role stream of another program is a call: hark pauses for it
  # and resumes when it ends.
  rm -f "$E2E_DIR/phone.done"
  (phone_stream "$E2E_DIR/voice.wav"; echo "ended $(now)" >"$E2E_DIR/phone.done") &
  E2E_PIDS+=($!)
  wait_until 4 "interrupted by the phone stream" '[ "$(playback pausedBy)" = interruption ]'
  wait_for 8 "the phone stream's end" test -s "$E2E_DIR/phone.done"
  wait_until 4 "playing again after the call" '[ "$(playback state)" = playing ]'
  pass "$STACK/$DEVICE: G11/G13/G14: another program's phone-role stream paused hark as a call; hark resumed after it"

  # --- (6) A new run after all that: heard at full level.
  stop_player
  start_player
  wait_for 10 "the new run playing" position_at_least 0.5
  expect_full_level "a new 'hark play' run"

  # --- (7) The sound server restarted (its stream-restore memory read back from disk): a
  # stream after it is heard at full level too.
  stop_player
  restart_sound_server
  start_player
  wait_for 10 "a run after the restart playing" position_at_least 0.5
  expect_full_level "'hark play' after the sound server restarted"
  stop_player
}
