#!/usr/bin/env bash
# Gapless, measured. A continuous sine of 441 Hz, cut sample-exactly into three tracks and encoded
# as MP3 (with the LAME tag's encoder delay and padding), AAC in .m4a (with its edit list), Ogg
# Vorbis, Opus (with its pre-skip), FLAC and WavPack (Debian's lame, oggenc, opusenc, flac and
# wavpack where installed; ffmpeg's encoders else), is played by hark as one queue per format
# through ALSA's pulse device to a private PulseAudio's null sink, whose monitor is recorded. Across
# each boundary between two tracks the sine goes on:
#   - no gap: no silence over 1 ms in it, and it lasts the 4 s it was cut from (within 1 ms);
#   - no shift: the sine fitted over 240 ms after the boundary is where the one fitted over 240
#     ms before it says (within half a sample: samples dropped or repeated move it);
#   - no step: with the sine fitted over 500 ms around the boundary subtracted, the largest
#     residual within 10 ms of it is below -60 dBFS for FLAC and WavPack and, for the lossy codecs, no more
#     than 3 dB above what ffmpeg's own decode of the same files (trimmed to the lengths cut)
#     leaves there. Each track of a lossy codec is encoded alone, so the encoder's error is
#     larger where its track begins or ends than mid-track, however well it is decoded: hark is
#     held to what a correct decode gives, and the mid-track residual is reported beside it.
# And across a change of rate (FLAC at 44.1 kHz, then 48 kHz, then 44.1) and of decoder (FLAC,
# then AAC through the FFmpeg helper) every silence is under 50 ms.
#
# Each track is 58800 samples: 100 CD sectors (a CD track is whole sectors of 1/75 s), 1.333 s,
# which is not a whole number of milliseconds (ffmpeg writes an .m4a's edit list in ms), and 588
# periods of 441 Hz, so that each cut is at a zero crossing (a kink for the codecs, not a step).
# The first track begins with 0.25 s of silence: a stream's first few milliseconds can be
# missing from the monitor's recording (a new stream rewinds the sink), and the sine's start
# must be heard whole to place the boundaries, 58800 and 117600 samples after it.
source "$(dirname "$0")/lib.sh"
start_pulse
media="$E2E_DIR/media"
mkdir -p "$media"
FREQ=441

skip() { echo "skip $E2E_NAME: $*"; }
ENCODERS=$(ffmpeg -hide_banner -encoders 2>/dev/null || true)
has_encoder() { grep -qw "$1" <<<"$ENCODERS"; }

# The sine and its three pieces: 0.25 s of silence and 58800 samples, then 58800, then 58800.
PIECE=58800
sox -n -r 44100 -c 2 -b 16 "$media/sine.wav" synth 4 sine $FREQ vol 0.4 pad 0.25 0
sox "$media/sine.wav" "$media/p1.wav" trim 0s $((11025 + PIECE))s
sox "$media/sine.wav" "$media/p2.wav" trim $((11025 + PIECE))s ${PIECE}s
sox "$media/sine.wav" "$media/p3.wav" trim $((11025 + 2 * PIECE))s ${PIECE}s
[ "$(soxi -s "$media/p3.wav")" = $PIECE ] || fail "the sine was not cut as meant"

# encoder FORMAT: the encoder this machine has for FORMAT (mp3 m4a ogg opus flac wv), or
# nothing: Debian's own encoders first (lame, oggenc, opusenc, flac, wavpack: what people rip
# with, and what scripts/packages.sh installs for the tests), else ffmpeg's.
encoder() {
  case $1 in
    mp3) if command -v lame >/dev/null; then echo lame; elif has_encoder libmp3lame; then echo libmp3lame; fi ;;
    m4a) has_encoder aac && echo aac ;;
    ogg) if command -v oggenc >/dev/null; then echo oggenc; elif has_encoder libvorbis; then echo libvorbis; fi ;;
    opus) if command -v opusenc >/dev/null; then echo opusenc; elif has_encoder libopus; then echo libopus; fi ;;
    flac) if command -v flac >/dev/null; then echo flac; else echo sox; fi ;;
    wv) if command -v wavpack >/dev/null; then echo wavpack; elif has_encoder wavpack; then echo ffwavpack; fi ;;
  esac
  return 0
}

# encode ENCODER IN OUT: one piece, at a high rate (the less codec noise, the finer the check).
encode() {
  local ff=(ffmpeg -v error -y -i "$2")
  case $1 in
    lame) lame --quiet -b 320 "$2" "$3" ;;
    libmp3lame) "${ff[@]}" -c:a libmp3lame -b:a 320k "$3" ;;
    aac) "${ff[@]}" -c:a aac -b:a 256k "$3" ;;
    libvorbis) "${ff[@]}" -c:a libvorbis -q:a 8 "$3" ;;
    oggenc) oggenc --quiet -q 8 -o "$3" "$2" ;;
    libopus) "${ff[@]}" -c:a libopus -b:a 256k "$3" ;;
    opusenc) opusenc --quiet --bitrate 256 "$2" "$3" ;;
    flac) flac --silent --force -o "$3" "$2" ;;
    sox) sox "$2" "$3" ;;
    wavpack) wavpack -q -y "$2" -o "$3" ;;
    ffwavpack) "${ff[@]}" -c:a wavpack "$3" ;;
  esac
}

# reference FORMAT: ffmpeg's own decode of the three pieces, each trimmed to the length it was
# cut to (ffmpeg 5.1 plays an .m4a's padding at its end), at 44.1 kHz, one after the other, as
# a recording whose first sample is at time 0 (.t0) for the probe.
reference() {
  local ref="$E2E_DIR/ref-$1.raw" i frames rate
  : >"$ref"
  for i in 1 2 3; do
    frames=$(soxi -s "$media/p$i.wav")
    rate=$(ffprobe -v error -select_streams a -show_entries stream=sample_rate -of csv=p=0 \
      "$media/p$i.$1" | grep -m1 -oE '[0-9]+')
    ffmpeg -v error -i "$media/p$i.$1" -af "atrim=end_sample=$((frames * rate / 44100)),aresample=44100" \
      -ac 2 -f s16le - >>"$ref"
  done
  head -c $((44100 * 4 / 2)) /dev/zero >>"$ref"
  echo 0 >"$ref.t0"
}

# value FILE KEY [FIELD]: a value of the gapless probe's output ("boundary 1" is KEY "boundary",
# FIELD 3 its residual).
value() { awk -v k="$2" -v f="${3:-2}" '$1 == k { print $f; exit }' "$1"; }
boundary() { awk -v b="$2" -v f="$3" '$1 == "boundary" && $2 == b { print $f }' "$1"; }

# play_recorded NAME FILE...: plays the files as one queue, waits for the player to exit and for
# the recording to hold all it played; T1 and T2 then span it.
play_recorded() {
  local name=$1; shift
  T1=$(now)
  start "$name" hark play --no-ui --device pulse "$@"
  local pid_var="PID_$name"
  wait_for 30 "$name to finish" bash -c "! kill -0 ${!pid_var} 2>/dev/null"
  wait "${!pid_var}" || fail "$name exited $? ($(cat "$E2E_DIR/$name.log"))"
  local n=0 f
  for f in "$@"; do
    n=$((n + 1))
    log_has "$name" "playing '$(basename "${f%.*}")' ($n/$#)" || fail "$name did not play '$f': $(cat "$E2E_DIR/$name.log")"
  done
  sleep 0.1
  T2=$(now)
  wait_until 5 "the recording to reach the end of $name" \
    'python3 "$PROBE" reaches "$E2E_DIR/rec.raw" "$T2"'
}

declare -A LABEL=([mp3]="MP3" [m4a]="AAC in .m4a" [ogg]="Ogg Vorbis" [opus]="Opus" [flac]="FLAC"
  [wv]="WavPack")
declare -A NEEDS=([mp3]="the lame package, or ffmpeg built with libmp3lame"
  [m4a]="ffmpeg with its aac encoder" [ogg]="vorbis-tools, or ffmpeg built with libvorbis"
  [opus]="opus-tools, or ffmpeg built with libopus" [wv]="the wavpack package, or ffmpeg's")
failed=() measured=()
for fmt in mp3 m4a ogg opus flac wv; do
  enc=$(encoder $fmt)
  if [ -z "$enc" ]; then
    skip "${LABEL[$fmt]} not tested: no encoder for it here (${NEEDS[$fmt]})"
    measured+=("$fmt")
    continue
  fi
  for i in 1 2 3; do encode "$enc" "$media/p$i.wav" "$media/p$i.$fmt"; done
  # The encoder wrote what a gapless decoder needs.
  said=$(python3 "$PROBE" delay "$media/p2.$fmt")
  case $fmt in
    mp3) [[ $said =~ ^lame\ [1-9][0-9]*\ [1-9] ]] || fail "the MP3 has no LAME tag with its delay and padding ($said)" ;;
    m4a) [[ $said =~ ^edit-list\ [1-9] ]] || fail "the .m4a has no edit list skipping the encoder's delay ($said)" ;;
    opus) [[ $said =~ ^pre-skip\ [1-9] ]] || fail "the Opus file has no pre-skip ($said)" ;;
  esac

  reference $fmt
  python3 "$PROBE" gapless "$E2E_DIR/ref-$fmt.raw" 0 100 $FREQ $PIECE/44100 3 >"$E2E_DIR/ref-$fmt.txt"
  play_recorded "$fmt" "$media/p1.$fmt" "$media/p2.$fmt" "$media/p3.$fmt"
  python3 "$PROBE" gapless "$E2E_DIR/rec.raw" "$T1" "$T2" $FREQ $PIECE/44100 3 >"$E2E_DIR/got-$fmt.txt"
  got="$E2E_DIR/got-$fmt.txt" ref="$E2E_DIR/ref-$fmt.txt"
  summary="$(tr '\n' ' ' <"$got")"
  check "abs($(value "$ref" length) - 4) <= 0.001 and $(value "$ref" silence) == 0 and abs($(boundary "$ref" 1 5)) <= 0.5 and abs($(boundary "$ref" 2 5)) <= 0.5" \
    || fail "${LABEL[$fmt]}: ffmpeg's own decode of the pieces is not one 4 s sine, nothing to hold hark to: $(tr '\n' ' ' <"$ref")"
  [ "$(value "$got" amplitude)" != none ] || fail "${LABEL[$fmt]}: nothing heard"

  why=()
  length=$(value "$got" length) silence=$(value "$got" silence)
  check "abs($length - 4) <= 0.001" || why+=("the sine lasted ${length} s, not 4")
  check "$silence == 0" || why+=("a silence of ${silence} s in it")
  residuals=() refs=()
  for b in 1 2; do
    r=$(boundary "$got" $b 3) step=$(boundary "$got" $b 5) rr=$(boundary "$ref" $b 3)
    [ "$r" != none ] || { why+=("boundary $b out of the recording"); continue; }
    residuals+=("$r") refs+=("$rr")
    check "abs($step) <= 0.5" || why+=("the sine after boundary $b is shifted by $step samples")
    if [ $fmt = flac ] || [ $fmt = wv ]; then
      check "$r <= -60" || why+=("a step of $r dBFS at boundary $b (limit: -60)")
    else
      check "$r <= $rr + 3" \
        || why+=("a step of $r dBFS at boundary $b, where ffmpeg's own decode leaves $rr (limit: 3 dB more)")
    fi
  done
  detail="boundaries ${residuals[*]} dBFS (ffmpeg's own decode: ${refs[*]}), mid-track noise $(value "$got" floor) dBFS, no shift, no gap, $length s"
  if [ ${#why[@]} -gt 0 ]; then
    echo "FAIL $E2E_NAME: ${LABEL[$fmt]} is not gapless through hark: $(IFS=';'; echo "${why[*]}") [$summary]" >&2
    failed+=("${LABEL[$fmt]}")
  else
    case $said in
      lame*) said=$(awk '{ print ", LAME tag: delay " $2 ", padding " $3 }' <<<"$said") ;;
      edit-list*) said=", edit list: from ${said#edit-list }" ;;
      pre-skip*) said=", $said" ;;
      *) said= ;;
    esac
    pass "${LABEL[$fmt]} ($enc$said) plays gaplessly: $detail"
  fi
  measured+=("$fmt")
done
# (An error in an expansion ends the loop without ending the script.)
[ "${measured[*]}" = "mp3 m4a ogg opus flac wv" ] || fail "only ${measured[*]} were measured"

# --- A change of rate, and of decoder: the device reopens, or not; either way a gap under
# 50 ms. FLAC at 44.1 kHz (after 0.25 s of silence), 48 kHz, 44.1 kHz, then AAC at 44.1 kHz,
# 1 s of the sine each.
sox -n -r 44100 -c 2 "$media/c1.flac" synth 1 sine $FREQ vol 0.4 pad 0.25 0
sox -n -r 48000 -c 2 "$media/c2.flac" synth 1 sine $FREQ vol 0.4
sox -n -r 44100 -c 2 "$media/c3.flac" synth 1 sine $FREQ vol 0.4
sox -n -r 44100 -c 2 -b 16 "$media/c4.wav" synth 1 sine $FREQ vol 0.4
ffmpeg -v error -y -i "$media/c4.wav" -c:a aac -b:a 256k "$media/c4.m4a"
play_recorded change "$media/c1.flac" "$media/c2.flac" "$media/c3.flac" "$media/c4.m4a"
probe gaps "$T1" "$T2" >"$E2E_DIR/change-gaps.txt"
# Each gap is named by the boundary it is at: about k s of sound from the first.
declare -A NAME=([1]="44.1 -> 48 kHz" [2]="48 -> 44.1 kHz" [3]="FLAC -> AAC")
declare -A GAP=()
while read -r at length; do
  k=$(python3 -c "print(round($at))")
  check "$length < 0.05" \
    || fail "a gap of ${length} s at $at s (${NAME[$k]:-not at a boundary}): limit 50 ms"
  GAP[$k]="${GAP[$k]:+${GAP[$k]} + }$(python3 -c "print(f'{$length * 1000:.1f} ms')")"
done <"$E2E_DIR/change-gaps.txt"
heard=$(probe level "$T1" "$T2")
check "$heard > -20" || fail "the format changes were not heard ($heard dBFS)"
pass "a change of rate or decoder leaves a gap under 50 ms: ${NAME[1]} ${GAP[1]:-none}, ${NAME[2]} ${GAP[2]:-none}, ${NAME[3]} ${GAP[3]:-none}"

[ ${#failed[@]} -eq 0 ] || fail "not gapless through hark: ${failed[*]}"
