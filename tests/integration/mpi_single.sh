#!/usr/bin/env bash
# Without a launcher (or built without MPI) the same CLI runs one process: with --out, fleet.yaml
# lists that one rank; `roofprobe fleet` rebuilds it.
set -euo pipefail
rp=$1 work=$2
source "$(dirname "$0")/mpi_common.sh"
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
write_tiny_config "$work/tiny.yaml"
"$rp" run --config "$work/tiny.yaml" --backend cpu --out "$work/run" --quiet > "$work/summary.txt"
[[ -s $work/run/machine.yaml ]] || fail "machine.yaml missing"
[[ ! -e $work/run/rank-0 ]] || fail "a single process wrote rank-0/"
f=$work/run/fleet.yaml
grep -q '^schema: roofprobe.fleet/2$' "$f" || fail "fleet.yaml schema"
[[ $(grep -c '^  - rank: ' "$f") == 1 ]] || fail "fleet.yaml does not list exactly one rank"
grep -q 'machine: machine.yaml' "$f" || fail "fleet.yaml: machine path"
grep -q '^fleet:' "$work/summary.txt" && fail "a single-process run printed the fleet table"
"$rp" fleet "$work/run" | tee "$work/fleet.txt"
grep -q '^fleet: 1 rank(s) on 1 host(s)' "$work/fleet.txt" || fail "fleet command output"
echo "integration.mpi_single: ok"
