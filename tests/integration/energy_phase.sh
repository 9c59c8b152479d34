#!/usr/bin/env bash
# The energy phase of a CPU run, end to end, on a powercap tree whose package counter follows the
# run's CPU time (fake_rapl.py: no machine the tests run on lets a user read RAPL). The run finds
# the counter, measures its update interval, runs each FMA ceiling and memory level on part of
# the threads after the sustained phase, writes those rows to sweep.csv, and fits the energy
# model from them, or names why not; `fit` alone fits the same model; sustained_seconds: 0 runs no
# energy phase. The counter is a model, so its figures are not asserted.
set -euo pipefail
rp=$1 work=$2 python=${3:-python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$here/same_numbers.sh"

config() {  # config SECONDS: a small run with the given sustained_seconds
  cat <<YAML
measurement: {warmup_seconds: 0.005, min_samples: 3, min_seconds: 0.01, max_noise: 0.05, timeout_seconds: 0.05, target_launch_seconds: 0.005}
cpu:
  sustained_seconds: $1
  probes:
    bandwidth: {mode: [read], working_set_bytes: [16KiB, 24KiB, 32KiB, 64MiB, 128MiB]}
    flops: {precision: [fp64], form: [fma], flops_per_element: [64]}
YAML
}
config 0.4 > on.yaml
config 0 > off.yaml

writer=
stop_writer() {
  [[ -n $writer ]] || return 0
  touch powercap/stop
  wait "$writer" 2> /dev/null || true
  writer=
}
trap stop_writer EXIT

run() {  # run NAME CONFIG: a run on the fake counter, its pid given to the counter's writer
  rm -rf powercap "$1.pid"
  "$python" "$here/fake_rapl.py" powercap "$1.pid" 20 30 &
  writer=$!
  for _ in $(seq 100); do [[ -e powercap/intel-rapl:0/energy_uj ]] && break; sleep 0.05; done
  local status=0
  ROOFPROBE_POWERCAP_ROOT=$PWD/powercap "$rp" run --config "$2" --backend cpu --out "$1" > "$1.summary" 2> "$1.err" &
  echo $! > "$1.pid"
  wait $! || status=$?
  stop_writer
  [[ $status == 0 ]] || fail "$1: run exited $status: $(cat "$1.err")"
}

run on on.yaml
"$rp" validate on/machine.yaml > /dev/null || fail "machine.yaml with an energy model does not validate"
grep -q 'energy_counter: RAPL package-0 (powercap sysfs),' on/machine.yaml || fail "the fake counter was not read"

threads=$(sed -n 's/^  threads: \([0-9]*\)$/\1/p' on/machine.yaml | head -1)
if (( threads < 2 )); then
  # One thread has no part to run on: the phase says so, and runs nothing.
  grep -q '^  - "energy model: .*ran on one worker' on/machine.yaml || fail "one thread, and missing: does not say so"
  grep -q ',energy:' on/sweep.csv && fail "energy rows with one thread"
  echo "note: one thread here: the phase has no part to run on"
  exit 0
fi

# Each FMA ceiling and level on a part of the threads: progress lines and sweep.csv rows.
half=$((threads / 2))
grep -q "^energy FP64.FMA on $half of $threads workers" on.err || fail "no progress line for FP64.FMA: $(cat on.err)"
grep -q ",energy:FP64.FMA:$half/$threads\$" on/sweep.csv || fail "no energy rows of FP64.FMA"
# The device memory is shared by the workers: its sustained phase is its one rate, and the energy
# phase leaves it out.
grep -q ',sustained:DRAM$' on/sweep.csv || fail "no sustained rows of DRAM"
grep -q ',energy:DRAM:' on/sweep.csv && fail "energy rows of DRAM, which the sustained phase measured"

# The model is fitted from the shares, or missing: says why (a busy machine's foreign load).
if grep -q '^energy_model:' on/machine.yaml; then
  grep -qE '^  constant_power_w: [0-9.e+-]+$' on/machine.yaml || fail "energy model without constant power"
  grep -q "per stretch of a phase's windows" on/machine.yaml || fail "energy model fit does not say its observations"
else
  grep -q '^  - "energy model: ' on/machine.yaml || fail "no energy model and no reason: $(cat on/machine.yaml)"
  echo "note: energy model not fitted: $(grep '^  - "energy model: ' on/machine.yaml | head -1)"
fi

# fit alone fits the same model from sweep.csv (which keeps 9 digits; the fit's conditioning may
# cost a few of them).
"$rp" fit on/sweep.csv --out refit.yaml > /dev/null
sed -n '/^energy_model:/,/^[a-z]/p' on/machine.yaml > model.run
sed -n '/^energy_model:/,/^[a-z]/p' refit.yaml > model.refit
same model.run model.refit 1e-5 || fail "fit alone fits another energy model: $(diff model.run model.refit)"

# No sustained phase, no energy phase.
run off off.yaml
grep -q ',energy:' off/sweep.csv && fail "energy rows with sustained_seconds: 0"
echo "energy phase: ok ($threads threads; $(grep -c ',energy:' on/sweep.csv) energy rows)"
