#!/usr/bin/env bash
# Bounded waits: with --mpi-timeout shorter than a rank's turn, the waiting rank gives up with
# "rank R: waited N s at <phase> barrier; a rank failed or hangs", the job is aborted (non-zero,
# no hang), and rank 0 leaves a fleet report of what finished.
set -euo pipefail
rp=$1 mpirun=$2 work=$3
source "$(dirname "$0")/mpi_common.sh"
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
write_tiny_config "$work/tiny.yaml"
status=0
# shellcheck disable=SC2046
timeout 120 "$mpirun" $(launcher_flags "$mpirun") -np 2 "$rp" run --config "$work/tiny.yaml" --backend cpu \
  --out "$work/run" --quiet --mpi-timeout 0.2 > "$work/summary.txt" 2> "$work/stderr.txt" || status=$?
echo "exit status $status"
grep -v 'plot skipped' "$work/stderr.txt" || true
(( status != 0 )) || fail "the job exited 0"
(( status != 124 )) || fail "the job hung (killed by timeout)"
grep -Eq '^rank [01]: waited 0.2 s at turn of local rank [01] \(cpu\) barrier; a rank failed or hangs$' "$work/stderr.txt" ||
  fail "no bounded-wait message"
echo "integration.mpi_timeout: ok"
