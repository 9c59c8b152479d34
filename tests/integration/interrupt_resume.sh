#!/usr/bin/env bash
# SIGTERM leaves a valid machine.yaml with complete: false; SIGKILL loses nothing written
# before it; --resume finishes either run with complete: true and keeps every earlier sample.
set -uo pipefail
rp=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# A small run (32 points, seconds): what is tested is the interruption and the resume, and the
# probes and the fit are the same as in a quick run.
cat > "$work/small.yaml" <<'YAML'
measurement: {warmup_seconds: 0.01, min_samples: 3, min_seconds: 0.02, max_noise: 0.02, timeout_seconds: 0.1, target_launch_seconds: 0.005}
cpu:
  sustained_seconds: 0
  probes:
    bandwidth: {mode: [read, copy], working_set_bytes: {min: 4KiB, max: 64MiB, points_per_octave: 1}}
    flops: {precision: [fp64], form: [fma], flops_per_element: [1, 64]}
YAML

# distinct points in a sweep.csv
points() { tail -n +2 "$1" | cut -d, -f4 | sort -un | wc -l; }

interrupt() {  # interrupt SIGNAL DIR: start a small run and send SIGNAL once it has measured something
  local sig=$1 dir=$2
  "$rp" run --config "$work/small.yaml" --backend cpu --out "$dir" -q > "$dir.out" 2> "$dir.err" &
  local pid=$!
  for _ in $(seq 100); do
    sleep 0.2
    [[ -f $dir/sweep.csv ]] && (( $(wc -l < "$dir/sweep.csv") > 20 )) && break
  done
  kill "-$sig" "$pid"
  wait "$pid"
}

# --- SIGTERM: a valid, incomplete machine file -------------------------------------------------
interrupt TERM "$work/term"; rc=$?
(( rc == 143 )) || fail "SIGTERM exit status $rc, want 143"
grep -q '^complete: false' "$work/term/machine.yaml" || fail "SIGTERM: machine.yaml not complete: false"
grep -q 'interrupted by SIGTERM' "$work/term/machine.yaml" || fail "SIGTERM: missing list does not say why"
"$rp" validate "$work/term/machine.yaml" || fail "SIGTERM: machine.yaml invalid"
cp "$work/term/sweep.csv" "$work/term.before.csv"
"$rp" run --resume "$work/term" -q > /dev/null || fail "resume after SIGTERM failed"
# Complete, unless other processes loaded the host (then the file names those points); never
# with a point left unmeasured by the interruption.
whole() {
  ! grep -q "not measured (interrupted)\|interrupted by" "$1" &&
    { grep -q '^complete: true' "$1" || grep -q "foreign-load\|other processes used" "$1"; }
}
whole "$work/term/machine.yaml" || fail "resume after SIGTERM: not complete"
cmp -s "$work/term.before.csv" <(head -c "$(stat -c %s "$work/term.before.csv")" "$work/term/sweep.csv") ||
  fail "resume after SIGTERM rewrote earlier samples"
total=$(points "$work/term/sweep.csv")

# --- SIGKILL: nothing written before is lost; the torn tail is repaired -------------------------
interrupt KILL "$work/kill"
[[ -f $work/kill/machine.yaml ]] && fail "SIGKILL: a machine.yaml appeared (it cannot have been finished)"
printf '0,cpu,bandwidth,999,0,mode=re' >> "$work/kill/sweep.csv"   # as if killed mid-write
before_points=$(points "$work/kill/sweep.csv")
head -n -1 "$work/kill/sweep.csv" | awk -F, 'NR > 1 { print $4 }' | sort -u > "$work/kill.done"
"$rp" run --resume "$work/kill" -q > /dev/null || fail "resume after SIGKILL failed"
whole "$work/kill/machine.yaml" || fail "resume after SIGKILL: not complete"
"$rp" validate "$work/kill/machine.yaml" || fail "resume after SIGKILL: invalid machine.yaml"
after=$(points "$work/kill/sweep.csv")
(( after == total )) || fail "resumed sweep has $after points, a full run has $total"
grep -q ',mode=re$' "$work/kill/sweep.csv" && fail "torn line kept"
# every point fully recorded before the kill is still there
comm -23 "$work/kill.done" <(tail -n +2 "$work/kill/sweep.csv" | cut -d, -f4 | sort -u) | grep -q . &&
  fail "points measured before SIGKILL were lost"

# --- SIGTERM after measuring (fitting, drawing): the record is whole, the status says stopped ---
late=$work/late
"$rp" run --config "$work/small.yaml" --backend cpu --out "$late" -q > "$late.out" 2> "$late.err" &
pid=$!
# machine.yaml appears (renamed into place, whole) before the plots are drawn.
for _ in $(seq 6000); do [[ -f $late/machine.yaml ]] && break; sleep 0.01; done
[[ -f $late/machine.yaml ]] || fail "late stop: no machine.yaml within 60 s"
if kill -TERM "$pid" 2> /dev/null; then
  wait "$pid"; rc=$?
  if grep -q "after measuring" "$late.err"; then
    (( rc == 143 )) || fail "SIGTERM after measuring: exit status $rc, want 143"
    "$rp" validate "$late/machine.yaml" || fail "SIGTERM after measuring: machine.yaml invalid"
    whole "$late/machine.yaml" || fail "SIGTERM after measuring: the measured run is not complete"
    # Signalled alone (not its process group), gnuplot finishes: the views are drawn, or named.
    if grep -q "the plots were drawn" "$late.err"; then
      [[ -f $late/plots/bandwidth.png ]] || fail "the plots said drawn are not: $(ls "$late/plots")"
    else
      grep -q "draw them with: roofprobe plot $late/machine.yaml" "$late.err" || fail "no hint: $(cat "$late.err")"
    fi
    late_note="stopped after measuring: exit $rc"
  else
    # The signal came as the run was returning: it ended by the signal's default action.
    (( rc == 0 || rc == 143 )) || fail "SIGTERM at the run's end: exit status $rc"
    late_note="ended before the signal was handled: exit $rc"
  fi
else
  wait "$pid" || fail "late stop: the run failed: $(cat "$late.err")"
  late_note="ended before the signal"
fi

# --- refusals -----------------------------------------------------------------------------------
printf 'cpu:\n  probes: {flops: {}}\n' > "$work/other.yaml"
"$rp" run --resume "$work/kill" --config "$work/other.yaml" 2> "$work/refuse.err" && fail "resume with another config accepted"
grep -q "differs from the config" "$work/refuse.err" || fail "refusal message: $(cat "$work/refuse.err")"
"$rp" run --resume "$work" 2> "$work/refuse2.err" && fail "resume of a non-run directory accepted"
grep -q "^error: .*cannot resume: no run.yaml" "$work/refuse2.err" || fail "refusal message: $(cat "$work/refuse2.err")"
echo "integration.interrupt_resume: ok ($before_points points before SIGKILL, $after after resume; late SIGTERM: $late_note)"
