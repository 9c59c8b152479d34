#!/usr/bin/env bash
# The GPU acceptance's parts that need no GPU (the whole script runs on a GPU machine only):
#   - driver/acceptance/roofprobe-acceptance picks the reference file of each GPU CUDA names, and every
#     file it names exists in results/reference/;
#   - without a usable GPU it says so in one line on stderr, exits 2 and writes nothing;
#   - `roofprobe compare --verdict` end to end: a V100 "measurement" (the reference file's
#     published figures, relabelled as measured) against the V100 reference is all ok; scaled
#     by 1.5 it is above the peak; three files or --plot are refused in one line.
#   acceptance.sh ROOFPROBE GPU_TESTS_BINARY WORK SOURCE_DIR
set -euo pipefail
rp=$1 gpu_tests=$2 work=$3 src=$4
acc=$src/driver/acceptance/roofprobe-acceptance
rm -rf "$work" && mkdir -p "$work/bin"
fail() { echo "FAIL: $*" >&2; exit 1; }

while IFS='|' read -r name want; do
  got=$("$acc" --which-reference "$name")
  [[ $got == "$want" ]] || fail "reference for '$name': '$got', expected '$want'"
  [[ -z $want || -s $src/results/reference/$want ]] || fail "$want is not in results/reference"
done <<'NAMES'
NVIDIA H100 80GB HBM3|h100-sxm.yaml
NVIDIA H100 PCIe|h100-pcie.yaml
NVIDIA H100 NVL|
NVIDIA H200|h200-sxm.yaml
NVIDIA A100-SXM4-80GB|a100-sxm4-80gb.yaml
NVIDIA A100-SXM4-40GB|a100-sxm4-40gb.yaml
NVIDIA A100-PCIE-40GB|
Tesla V100-SXM2-16GB|v100-sxm2.yaml
Tesla V100-PCIE-16GB|
NVIDIA GeForce RTX 4090|rtx4090.yaml
NVIDIA GeForce RTX 3090|
NVIDIA B200|b200-hgx.yaml
NVIDIA GB200|
NVIDIA GeForce RTX 5090|rtx5090.yaml
NVIDIA GeForce RTX 5090 D|
NVIDIA GeForce RTX 5090 Laptop GPU|
NAMES
echo "reference picking: ok"

if [[ -x $gpu_tests ]]; then
  ln -s "$rp" "$work/bin/roofprobe"
  ln -s "$gpu_tests" "$work/bin/roofprobe_gpu_tests"
  if "$gpu_tests" --gtest_filter='CudaProbeTest.DescribesTheDevice' | grep -q '^\[  SKIPPED \]'; then
    set +e
    ROOFPROBE_BIN=$work/bin "$acc" --out "$work/acc" > "$work/out" 2> "$work/err"
    rc=$?
    set -e
    (( rc == 2 )) || fail "acceptance without a GPU exited $rc"
    [[ ! -s $work/out && $(wc -l < "$work/err") == 1 ]] || fail "not one line: $(cat "$work/out" "$work/err")"
    grep -q 'no usable GPU here (no CUDA device: ' "$work/err" || fail "said: $(cat "$work/err")"
    [[ ! -e $work/acc ]] || fail "wrote its output folder without a GPU"
    echo "no GPU: $(cat "$work/err")"
  else
    echo "note: a GPU is present; the no-GPU path is not checked here"
  fi
fi

ref=$src/results/reference/v100-sxm2.yaml
sed 's/source: published/source: empirical/' "$ref" > "$work/measured.yaml"
"$rp" compare --verdict "$work/measured.yaml" "$ref" > "$work/verdict.txt"
cat "$work/verdict.txt"
summary=$(tail -1 "$work/verdict.txt")
[[ $summary =~ ^verdict:\ ([0-9]+)\ ok,\ 0\ low,\ 0\ above\ peak,\ 0\ above\ spec ]] || fail "summary: $summary"
(( BASH_REMATCH[1] >= 5 )) || fail "only ${BASH_REMATCH[1]} ceilings judged"
grep -qE '^FP64\.FMA +GFLOP/s +7069 .* ok$' "$work/verdict.txt" || fail "no FP64.FMA row"
# The same figures 1.5 times higher: FP64.FMA above its peak at the clock, HBM above its spec.
awk '/source: empirical/ {e = 1} e && /^    (gbs|gflops):/ {$2 = $2 * 1.5; e = 0; print "    " $1 " " $2; next} {print}' \
  "$work/measured.yaml" > "$work/fast.yaml"
"$rp" compare --verdict "$work/fast.yaml" "$ref" --format csv > "$work/fast.csv"
grep -q '^compute,FP64.FMA,GFLOP/s,.*,above peak,peak$' "$work/fast.csv" || fail "1.5x FP64.FMA not above peak: $(cat "$work/fast.csv")"
grep -q '^memory bandwidth,HBM,GB/s,.*,above spec,spec$' "$work/fast.csv" || fail "1.5x HBM not above spec: $(cat "$work/fast.csv")"
# The reference first (the two swapped, or a reference against itself): nothing measured to judge.
for bad in "$work/measured.yaml $ref $ref" "$work/measured.yaml $ref --plot $work/x.png" "$ref $work/measured.yaml" \
  "$ref $ref"; do
  # shellcheck disable=SC2086
  if "$rp" compare --verdict $bad > "$work/bad.out" 2> "$work/bad.err"; then fail "accepted: $bad"; fi
  [[ $(wc -l < "$work/bad.err") == 1 ]] && grep -q '^error: compare --verdict' "$work/bad.err" || fail "$(cat "$work/bad.err")"
done
echo "integration.acceptance: ok"
