#!/usr/bin/env bash
# bench/gpu-checks, the one call a borrowed GPU is checked with, run here on the CPU backend: its
# lock step (two runs started together never measure at once) and its foreign step (a run beside
# a busy loop flags and names the disturbed points), its usage errors, the refusal of a non-empty
# --out, and, without a GPU, one line and exit 2. ncu_known_work.py says why it cannot run
# without PyTorch or a GPU.
#   gpu_checks.sh ROOFPROBE WORKDIR SOURCE_DIR
set -uo pipefail
rp=$1 work=$2 src=$3
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1
export ROOFPROBE=$rp ROOFPROBE_LOCK_DIR=$work/locks
checks=$src/bench/gpu-checks
fail() { echo "FAIL: $*"; exit 1; }

"$checks" --backend cpu --steps lock,foreign --budget 240 --out run > out.txt 2> err.txt
rc=$?
cat err.txt
((rc == 0)) || fail "gpu-checks --backend cpu: exit $rc"
grep -q "^lock     ok      A measured until .*, B from .*; B: .*the CPU of .* is free after" run/checks.txt ||
  fail "lock step: $(grep '^lock' run/checks.txt)"
grep -q "^foreign  ok      beside the load: complete false, [1-9][0-9]* samples flagged" run/checks.txt ||
  fail "foreign step: $(grep '^foreign' run/checks.txt)"
[[ $(grep -c . run/checks.txt) == 2 ]] || fail "want 2 check lines: $(cat run/checks.txt)"

# Usage errors: one line each, exit 64, nothing written.
expect_usage() {
  "$checks" "$@" > /dev/null 2> e.txt
  local got=$?
  ((got == 64)) || fail "gpu-checks $*: exit $got, want 64"
  [[ $(grep -c . e.txt) == 1 ]] && grep -q "^error: " e.txt || fail "gpu-checks $*: $(cat e.txt)"
}
expect_usage --budget 5 --out u1
expect_usage --budget ten --out u1
expect_usage --backend rocm --out u1
expect_usage --steps lock,bogus --out u1
expect_usage --gpu-benches "$work/none" --out u1
expect_usage --frobnicate
[[ ! -e u1 ]] || fail "a refused call made its --out"
# A non-empty --out is never written into.
mkdir mine && echo keep > mine/notes.txt
expect_usage --backend cpu --steps lock --out mine
[[ $(ls mine) == notes.txt && $(cat mine/notes.txt) == keep ]] || fail "gpu-checks wrote into a user's folder"

# Without a GPU: one line, exit 2.
if ! nvidia-smi -L > /dev/null 2>&1; then
  "$checks" --out nogpu > /dev/null 2> e.txt
  got=$?
  ((got == 2)) || fail "gpu-checks without a GPU: exit $got, want 2"
  grep -q "^error: no usable NVIDIA GPU" e.txt || fail "gpu-checks without a GPU: $(cat e.txt)"
fi

# ncu_known_work.py: bad sizes are usage errors; without PyTorch or a GPU it says so, exit 2.
python3 "$src/bench/ncu_known_work.py" --size 100 > /dev/null 2> e.txt
got=$?
((got == 64)) && grep -q "^error: --size 100: want a multiple of 16" e.txt || fail "ncu_known_work --size 100: exit $got: $(cat e.txt)"
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null; then
  python3 "$src/bench/ncu_known_work.py" > /dev/null 2> e.txt
  got=$?
  ((got == 2)) && grep -q "^error: \(PyTorch is not installed\|no CUDA device\)" e.txt ||
    fail "ncu_known_work without a GPU: exit $got: $(cat e.txt)"
fi
echo "gpu_checks: ok"
