#!/usr/bin/env bash
# One rank fails for real (its output path DIR/rank-1 is a file): the job ends, bounded, with a
# non-zero status, "rank 1: error: ..." on stderr, and rank 0's results and the fleet report kept.
set -euo pipefail
rp=$1 mpirun=$2 work=$3
source "$(dirname "$0")/mpi_common.sh"
rm -rf "$work" && mkdir -p "$work/run"
fail() { echo "FAIL: $*" >&2; exit 1; }
write_tiny_config "$work/tiny.yaml"
touch "$work/run/rank-1"

status=0
start=$(date +%s)
# shellcheck disable=SC2046
timeout 120 "$mpirun" $(launcher_flags "$mpirun") -np 2 "$rp" run --config "$work/tiny.yaml" --backend cpu \
  --out "$work/run" --quiet --mpi-timeout 60 > "$work/summary.txt" 2> "$work/stderr.txt" || status=$?
echo "exit status $status after $(( $(date +%s) - start )) s"
cat "$work/stderr.txt"
(( status != 0 )) || fail "the job exited 0 although rank 1 failed"
(( status != 124 )) || fail "the job hung (killed by timeout)"
grep -q '^rank 1: error: .*rank-1' "$work/stderr.txt" || fail "no 'rank 1: error:' line naming its output path"
"$rp" validate "$work/run/rank-0/machine.yaml"
grep -q '^  - rank: 0$' "$work/run/fleet.yaml" || fail "fleet.yaml does not keep rank 0"
grep -q 'rank 1: no rank-1/machine.yaml' "$work/run/fleet.yaml" || fail "fleet.yaml does not name rank 1 missing"
echo "integration.mpi_fail: ok"
