#!/usr/bin/env bash
# G3, G20: the volume commands change the system volume of the output hark plays on (here the
# PulseAudio sink behind ALSA's pulse device, through its ALSA mixer), never a private gain;
# an output without a volume control has them disabled, and its name stands where the volume
# would be.
source "$(dirname "$0")/lib.sh"
start_pulse
sox -n -r 44100 -c 2 "$E2E_DIR/steady.wav" synth 60 sine 440 vol 0.5
sink_volume() { pactl get-sink-volume out | grep -o '[0-9]*%' | head -1 | tr -d %; }
sink_muted() { pactl get-sink-mute out | awk '{print $2}'; }
pactl set-sink-volume out 60%

start player hark play --no-ui --device pulse "$E2E_DIR/steady.wav"
wait_for 10 "hark playing" position_at_least 0.5
level_before=$(probe level "$(ago 0.6)" "$(ago 0.1)")
hark ctl volume -20 || fail "'hark ctl volume -20' failed"
wait_until 3 "the sink at 40%" 'test "$(sink_volume)" -ge 38 -a "$(sink_volume)" -le 42'
sleep 0.5
level_after=$(probe level "$(ago 0.4)" "$(now)")
# The null sink applies its volume before its monitor, on PulseAudio's cubic scale: from 60% to
# 40% is 60·log10(40/60) = -10.6 dB. Exactly that drop, no more, shows that the system volume
# changed and hark did not also lower its own samples (G3).
expected=$(python3 -c "import math; print(round(60 * math.log10($(sink_volume) / 60), 2))")
drop=$(python3 -c "print(round($level_after - $level_before, 2))")
check "abs($drop - $expected) < 1" || fail "the level moved $drop dB, the sink's volume accounts for $expected dB"
wait_until 3 "the published volume" 'check "abs($(playback volume) - 40) <= 2"'
[ "$(playback output)" = pulse ] || fail "the published output is '$(playback output)'"
grep -q "on 'pulse' at 4[0-2]%" <<<"$(hark status)" || fail "hark status does not show the volume: $(hark status)"
pass "G3/G20: 'hark ctl volume -20' took the sink from 60% to $(sink_volume)%: $drop dB, all of it the sink's"
hark ctl mute || fail "'hark ctl mute' failed"
wait_until 3 "the sink muted" 'test "$(sink_muted)" = yes'
hark ctl mute
wait_until 3 "the sink unmuted" 'test "$(sink_muted)" = no'
pass "G3/G20: 'hark ctl mute' mutes and unmutes the sink"
kill -TERM "$PID_player"; wait "$PID_player" || true

# A paced device with no mixer of its own: ALSA's plug onto pulse under another name.
cat >"$HOME/.asoundrc" <<'ASOUND'
pcm.nomixer { type plug; slave.pcm "pulse" }
ASOUND
start bare hark play --no-ui --device nomixer "$E2E_DIR/steady.wav"
wait_for 10 "hark playing on nomixer" position_at_least 0.3
set +e
out=$(hark ctl volume +10 2>&1); rc=$?
set -e
[ $rc -eq 1 ] || fail "volume on a device without a mixer exited $rc: $out"
grep -q "cannot change the volume: its output 'nomixer' has no volume control" <<<"$out" \
  || fail "volume on a device without a mixer said: $out"
[ "$(playback volume)" = None ] || fail "a volume was published for 'nomixer': $(playback volume)"
grep -q "on 'nomixer' (no volume control)" <<<"$(hark status)" || fail "hark status: $(hark status)"
[ "$(sink_volume)" -ge 38 ] && [ "$(sink_volume)" -le 42 ] || fail "the sink's volume moved: $(sink_volume)%"
pass "G3: on a device without a mixer the volume commands are disabled, saying why ('$out'), and its name is shown"
