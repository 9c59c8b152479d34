#!/usr/bin/env bash
# mpirun -np 2 roofprobe run --backend cpu end to end: per-rank machine files, fleet.yaml naming
# both ranks, aggregates, the outlier table; then `roofprobe fleet` rebuilds the report, also
# after a rank's machine file is gone.
set -euo pipefail
rp=$1 mpirun=$2 work=$3
source "$(dirname "$0")/mpi_common.sh"
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
write_tiny_config "$work/tiny.yaml"

# shellcheck disable=SC2046
timeout 240 "$mpirun" $(launcher_flags "$mpirun") -np 2 "$rp" run --config "$work/tiny.yaml" --backend cpu \
  --out "$work/run" --quiet > "$work/summary.txt" 2> "$work/stderr.txt" || {
  cat "$work/summary.txt" "$work/stderr.txt"; fail "mpirun exited $?"; }
cat "$work/summary.txt"
for r in 0 1; do
  for f in machine.yaml sweep.csv run.yaml config.yaml; do
    [[ -s $work/run/rank-$r/$f ]] || fail "rank-$r/$f missing"
  done
  "$rp" validate "$work/run/rank-$r/machine.yaml"
  grep -q "mpi_rank: $r\$" "$work/run/rank-$r/machine.yaml" || fail "rank-$r/machine.yaml: no mpi_rank $r"
  grep -q "mpi_ranks: 2\$" "$work/run/rank-$r/machine.yaml" || fail "rank-$r/machine.yaml: no mpi_ranks 2"
done
[[ ! -e $work/run/machine.yaml ]] || fail "a machine.yaml outside rank-<r>/"
f=$work/run/fleet.yaml
grep -q '^schema: roofprobe.fleet/2$' "$f" || fail "fleet.yaml schema"
grep -q '^  - rank: 0$' "$f" || fail "fleet.yaml does not name rank 0"
grep -q '^  - rank: 1$' "$f" || fail "fleet.yaml does not name rank 1"
grep -q 'machine: rank-1/machine.yaml' "$f" || fail "fleet.yaml: rank 1's machine file"
grep -Eq '^  job: \{.*DRAM: [0-9.e+]+.*FP64.FMA: [0-9.e+]+' "$f" || fail "fleet.yaml: no job aggregates"
grep -q '^    FP64.FMA:$' "$f" || fail "fleet.yaml: no FP64.FMA ceiling statistics (ceilings: {<device>: {FP64.FMA: ...}})"
grep -q '^fleet: 2 rank(s) on 1 host(s)' "$work/summary.txt" || fail "summary: no fleet line"
grep -q '^outliers' "$work/summary.txt" || fail "summary: no outlier table"

# Rebuild: same ranks; with rank 1's file gone, a report of rank 0 that names rank 1 missing.
"$rp" fleet "$work/run" --outlier-margin 0.5 > "$work/fleet.txt"
grep -q '^outlier_margin: 0.5$' "$f" || fail "fleet --outlier-margin not recorded"
grep -q '^  - rank: 1$' "$f" || fail "rebuilt fleet.yaml lost rank 1"
rm "$work/run/rank-1/machine.yaml"
"$rp" fleet "$work/run" > "$work/fleet2.txt"
cat "$work/fleet2.txt"
grep -q '^  - rank: 0$' "$f" || fail "partial fleet.yaml lost rank 0"
! grep -q '^  - rank: 1$' "$f" || fail "partial fleet.yaml still lists rank 1"
grep -q 'rank 1: no rank-1/machine.yaml' "$f" || fail "partial fleet.yaml does not name rank 1 missing"
echo "integration.mpi_run: ok"
