#!/usr/bin/env bash
# The sustained phase on the CPU backend, for real: a run with a short sustained_seconds writes a
# sustained figure for FP64.FMA and DRAM (settled or marked not settled; on a loaded machine,
# withheld with the reason), `fit` alone publishes the same from sweep.csv; sustained_seconds: 0
# writes none. No timing is asserted. Beside another process, the fit may find no level to loop
# at all (every point flagged foreign-load); then that ceiling is not checked and the test ends
# as skipped (77), naming it.
set -euo pipefail
rp=$1 work=$2
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/same_numbers.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

config() {  # config SECONDS: a small run with the given sustained_seconds
  cat <<YAML
measurement: {warmup_seconds: 0.005, min_samples: 3, min_seconds: 0.01, max_noise: 0.05, timeout_seconds: 0.05, target_launch_seconds: 0.005}
cpu:
  sustained_seconds: $1
  probes:
    bandwidth: {mode: [read], working_set_bytes: [16KiB, 24KiB, 64MiB, 128MiB]}
    flops: {precision: [fp64], form: [fma], flops_per_element: [64]}
YAML
}
config 0.4 > on.yaml
config 0 > off.yaml

# A figure withheld because another process used the cores during its loop (a loaded machine:
# docs/RELIABILITY.md): missing: says so and its windows are flagged foreign-load.
withheld() {  # withheld FILE CEILING
  grep -q "^  - \"$2: sustained: measured while other processes" "$1"
}

# The run flagged points measured beside another process (docs/RELIABILITY.md).
beside_load() { grep -q ',foreign-load' "$1"; }
unchecked=()
has_ceiling() { grep -qE "^  - (name|level): $2\$" "$1"; }  # has_ceiling FILE CEILING

# sustained: { ... } under the ceiling named $2 (a compute name: or a memory level:) of file $1
sustained_of() { awk -v name="$2" '
  /^  - (name|level): / { inside = ($3 == name) }
  inside && /^    sustained:/ { grab = 1; next }
  grab && /^      / { print; next }
  { grab = 0 }' "$1"; }

"$rp" run --config on.yaml --backend cpu --out on > on.summary 2> on.err || fail "run failed: $(cat on.err)"
"$rp" validate on/machine.yaml > /dev/null || fail "machine.yaml with sustained figures does not validate"
for c in FP64.FMA DRAM; do
  if ! grep -q "^sustained $c: [0-9]* windows" on.err; then
    { beside_load on/sweep.csv && ! has_ceiling on/machine.yaml "$c"; } ||
      fail "$c: no progress line: $(cat on.err)"
    echo "note: $c: not looped: the sweep was measured beside another process and fits no $c"
    unchecked+=("$c")
    continue
  fi
  figure=$(sustained_of on/machine.yaml "$c")
  if [[ -z $figure ]] && withheld on/machine.yaml "$c"; then
    grep -q "foreign-load.*,sustained:$c\$" on/sweep.csv ||
      fail "$c: withheld, but its windows are not flagged foreign-load"
    echo "note: $c: sustained figure withheld: another process used the cores during its loop"
    continue
  fi
  [[ -n $figure ]] || fail "no sustained figure for $c: $(cat on/machine.yaml)"
  grep -qE '^      settled: (true|false)$' <<< "$figure" || fail "$c: sustained without settled:"
  grep -qE '^      windows: [1-9]' <<< "$figure" || fail "$c: sustained without windows"
  # A settled figure carries its interval; an unsettled one none, and the summary says so.
  if grep -q 'settled: true' <<< "$figure"; then
    grep -qE '_ci95: \[' <<< "$figure" || fail "$c: settled without interval"
    grep -qE "^  $c +sustained [0-9.]+ (GFLOP/s|GB/s) \([0-9]+% of burst\)" on.summary || fail "$c: summary line"
  else
    grep -q '_ci95' <<< "$figure" && fail "$c: unsettled with an interval"
    grep -qE "^  $c +not settled" on.summary || fail "$c: summary does not say not settled"
  fi
done
[[ " ${unchecked[*]} " == *" FP64.FMA "* ]] || grep -q ',sustained:FP64.FMA$' on/sweep.csv || fail "no sustained rows in sweep.csv"

# fit alone publishes the same sustained figures from sweep.csv: the same keys, settled and
# windows, and numbers equal to the 9 digits sweep.csv keeps.
"$rp" fit on/sweep.csv --out refit.yaml > /dev/null
for c in FP64.FMA DRAM; do
  [[ " ${unchecked[*]} " == *" $c "* ]] && continue
  sustained_of on/machine.yaml "$c" > "a.$c"
  sustained_of refit.yaml "$c" > "b.$c"
  same "a.$c" "b.$c" ||
    fail "refit $c differs: $(diff "a.$c" "b.$c")"
done

# Stopped in its sustained phase: an interrupted run (143), which --resume finishes by looping
# the ceilings not yet looped, without measuring the sweep again.
config 1 > stop.yaml
"$rp" run --config stop.yaml --backend cpu --out stop > /dev/null 2> stop.err &
pid=$!
for _ in $(seq 300); do grep -q '^sustained FP64.FMA (' stop.err 2> /dev/null && break; sleep 0.05; done
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
(( rc == 143 )) || fail "SIGTERM in the sustained phase: exit status $rc, want 143: $(cat stop.err)"
grep -q '^complete: false' stop/machine.yaml || fail "stopped in the sustained phase, yet complete"
sweep_rows=$(grep -vc ',sustained:' stop/sweep.csv)
"$rp" run --resume stop -q > /dev/null 2> resume.err || fail "resume after a stop in the sustained phase: $(cat resume.err)"
[[ $(grep -vc ',sustained:' stop/sweep.csv) == "$sweep_rows" ]] || fail "resume measured the sweep again"
for c in FP64.FMA DRAM; do
  [[ -n $(sustained_of stop/machine.yaml "$c") ]] || withheld stop/machine.yaml "$c" ||
    { beside_load stop/sweep.csv && ! has_ceiling stop/machine.yaml "$c"; } ||
    fail "resumed run has no sustained figure for $c"
done

# Off: no sustained rows, no sustained figures.
"$rp" run --config off.yaml --backend cpu --out off -q > /dev/null 2> off.err || fail "run failed: $(cat off.err)"
grep -q '^    sustained:' off/machine.yaml && fail "sustained_seconds: 0 wrote a sustained figure"
grep -q ',sustained:' off/sweep.csv && fail "sustained_seconds: 0 wrote sustained rows"
if ((${#unchecked[@]})); then
  echo "SKIP: not checked: ${unchecked[*]}: measured beside another process, the sweep fits no level to loop"
  exit 77
fi
echo "integration.sustained_cpu: ok"
