#!/usr/bin/env bash
# bundle.bare_env: the unpacked bundle run from an empty environment (env -i, PATH=/usr/bin:/bin,
# no LD_LIBRARY_PATH), from a folder that is not where it was built:
#   roofprobe --version and list; a small CPU characterization, validated; roofprobe-bench lists
#   its benchmarks; the GPU tests run, or all skip with the CUDA backend's reason where there is
#   no GPU; and there, the acceptance says so in one line and exits 2 without writing anything.
#   run_bare.sh TARBALL WORK WITH_CUDA
set -euo pipefail
. "$(dirname "$0")/common.sh"
tarball=$1 work=$2 with_cuda=$3
unpack_bundle "$tarball" "$work"
bare() { env -i PATH=/usr/bin:/bin HOME="$work" "$@"; }
cd "$work"

bare "$root/bin/roofprobe" --version
bare "$root/bin/roofprobe" list > list.txt || fail "roofprobe list"
grep -q '^flops \[cpu\]' list.txt || fail "roofprobe list names no CPU flops probe"
if [[ $with_cuda == ON ]]; then grep -q '^flops \[cuda\]' list.txt || fail "roofprobe list names no CUDA probe"; fi

# A run of seconds rather than the quick run's minute: what is checked is that the bundle's probes,
# fitter and plots run from it; the quick run itself is integration.run_quick_cpu's.
cat > small.yaml <<'YAML'
measurement: {warmup_seconds: 0.01, min_samples: 3, min_seconds: 0.02, max_noise: 0.02, timeout_seconds: 0.1, target_launch_seconds: 0.005}
cpu:
  sustained_seconds: 0
  probes:
    bandwidth: {mode: [read], working_set_bytes: {min: 4KiB, max: 64MiB, points_per_octave: 1}}
    flops: {precision: [fp64], form: [fma], flops_per_element: [1, 64]}
YAML
bare "$root/bin/roofprobe" run --backend cpu --config small.yaml --out "$work/run" --quiet > run.txt ||
  fail "roofprobe run --backend cpu --config small.yaml"
for f in machine.yaml sweep.csv run.yaml; do [[ -s $work/run/$f ]] || fail "run wrote no $f"; done
bare "$root/bin/roofprobe" validate "$work/run/machine.yaml" || fail "the run's machine.yaml does not validate"
# What the run measured is the fitter's business (integration.run_quick_cpu); here it must have
# run its probes from the bundle: complete, with a memory level and a compute ceiling. Incomplete
# only where another process used the cores during a point (the file then names it, and says so).
grep -q '^complete: true' "$work/run/machine.yaml" || grep -q 'other processes used' "$work/run/machine.yaml" ||
  fail "the run's machine.yaml is not complete, and not for foreign load"
grep -qE '^  (L1|L2|L3|DRAM) ' run.txt || fail "the run printed no memory level"
grep -qE '^  FP(64|32)\.(no)?FMA ' run.txt || fail "the run printed no compute ceiling"

bare "$root/bin/roofprobe-bench" --benchmark_list_tests > bench.txt || fail "roofprobe-bench"
(( $(wc -l < bench.txt) > 0 )) || fail "roofprobe-bench lists no benchmark"

[[ $with_cuda == ON ]] || { echo "bundle.bare_env: ok (CPU-only bundle)"; exit 0; }
bare "$root/bin/roofprobe_gpu_tests" > gpu.txt 2>&1 || { cat gpu.txt; fail "GPU tests failed"; }
if grep -q '^\[  PASSED  \] 0 tests' gpu.txt; then
  # No GPU here: every test skipped, each with the backend's reason.
  skipped=$(grep -c '^\[  SKIPPED \] .*(' gpu.txt || true)
  reasons=$(grep -c '^no CUDA device: ' gpu.txt || true)
  (( skipped > 0 && skipped == reasons )) || fail "GPU tests: $skipped skipped, $reasons with the 'no CUDA device: ...' reason"
  echo "GPU tests: $skipped skipped: $(grep -m1 '^no CUDA device: ' gpu.txt)"

  set +e
  bare "$root/bin/roofprobe-acceptance" --out "$work/acceptance" > acc.out 2> acc.err
  rc=$?
  set -e
  (( rc == 2 )) || fail "acceptance without a GPU exited $rc, expected 2"
  [[ ! -s acc.out && $(wc -l < acc.err) == 1 ]] || fail "acceptance without a GPU: expected one line on stderr: $(cat acc.out acc.err)"
  grep -q '^roofprobe-acceptance: no usable GPU here (no CUDA device: ' acc.err || fail "acceptance said: $(cat acc.err)"
  [[ ! -e $work/acceptance ]] || fail "acceptance without a GPU created its output folder"
  echo "acceptance: $(cat acc.err)"
else
  echo "GPU tests: $(grep '^\[  PASSED  \]' gpu.txt) (a GPU is present)"
fi
echo "bundle.bare_env: ok"
