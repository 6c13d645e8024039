#!/usr/bin/env bash
# G4 and G5 with a headphone jack: a fake ALSA card (the alsa-lib control plugin in
# Tests/FakeJackCard, built here with gcc) has a "Headphone Jack" the test flips; the session
# server watches it like any card's jacks (HARK_JACK_CONTROLS names the fake one). Plugging the
# headphones in while hark plays goes on; pulling them out pauses hark (pausedBy route) and
# plugging them back does not restart it. hark plays into a PulseAudio null sink meanwhile.
source "$(dirname "$0")/lib.sh"
start_pulse
plugin_dir="$E2E_DIR/plugin"
mkdir -p "$plugin_dir"
gcc -shared -fPIC -DPIC -Wall -Werror -o "$plugin_dir/libasound_module_ctl_fakejack.so" \
  "$(dirname "$0")/../FakeJackCard/fakejack.c" -lasound || fail "cannot build the fake card's plugin"
state="$E2E_DIR/card-state"
: >"$state"
cat >"$HOME/.asoundrc" <<ASOUND
ctl_type.fakejack { lib "$plugin_dir/libasound_module_ctl_fakejack.so" }
ctl.fakejack { type fakejack; state "$state"; driver "FakeJack" }
ASOUND
export HARK_JACK_CONTROLS=fakejack
route() { status_query "s['route']['name'] + ' (' + s['route']['kind'] + ')'"; }
sox -n -r 44100 -c 2 "$E2E_DIR/steady.wav" synth 60 sine 440 vol 0.5

start player hark play --no-ui --device pulse "$E2E_DIR/steady.wav"
wait_for 10 "hark playing" position_at_least 0.5
[ "$(status_query "s['route']['kind']")" = speakers ] || fail "before the jack: route $(route)"

echo "Headphone Jack=1" >"$state"
wait_until 5 "the headphones as the route" '[ "$(status_query "s[\"route\"][\"kind\"]")" = headphones ]'
sleep 0.3
[ "$(playback state)" = playing ] || fail "G4: plugging headphones in made hark $(playback state)"
pass "G4: the jack went on: the route is $(route) and hark plays on"

t0=$(now)
: >"$state"
wait_until 3 "paused by route" '[ "$(playback pausedBy)" = route ]'
expect_log player "went away"
sleep 0.4
gone=$(probe last-sound "$t0" "$(python3 -c "print($t0 + 0.4)")")
[ "$gone" = none ] && gone=0
check "$gone <= 0.1" || fail "G5: sound ${gone}s after the jack went off"
[ "$(status_query "s['route']['kind']")" = speakers ] || fail "after the unplug: route $(route)"
pass "G5: the jack went off: hark paused by route, silent ${gone}s after, the route is $(route)"

echo "Headphone Jack=1" >"$state"
wait_until 5 "the headphones again" '[ "$(status_query "s[\"route\"][\"kind\"]")" = headphones ]'
sleep 0.5
[ "$(playback state)" = paused ] || fail "G5: plugging back in made hark $(playback state)"
pass "G5: plugged back in, hark stays paused"
