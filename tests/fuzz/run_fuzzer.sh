#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time (ctest's fuzz.* tests; docs/RELIABILITY.md).
#   run_fuzzer.sh FUZZER WORKDIR SECONDS TIMEOUT DICT SEED_DIR...
# The corpus grows in WORKDIR/corpus (kept between local runs, seeds re-read every run). Exit
# status: 0 when libFuzzer ran the whole time with no crash, hang (> TIMEOUT s for one input),
# leak, out-of-memory or sanitizer report; otherwise non-zero, with the input saved as
# WORKDIR/artifacts/crash-* (or timeout-*, leak-*, oom-*) and printed here in hex.
set -uo pipefail
fuzzer=$1 work=$2 seconds=$3 timeout=$4 dict=$5
shift 5
name=$(basename "$fuzzer")
rm -rf "$work/artifacts"
mkdir -p "$work/corpus" "$work/artifacts"
seeds=()
for d in "$@"; do [[ -d $d ]] && seeds+=("$d"); done

log="$work/last-run.log"
start=$(date +%s)
# -rss_limit_mb / -malloc_limit_mb: a YAML bomb that expands would be reported as an OOM.
"$fuzzer" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
  -dict="$dict" -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" "${seeds[@]}" > "$log" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))

stat() { awk -v k="stat::$1:" '$1 == k {print $2}' "$log" | tail -1; }
execs=$(stat number_of_executed_units)
corpus=$(find "$work/corpus" -type f | wc -l)
findings=$(grep -cE '^==[0-9]+==ERROR|^SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer|ALARM: working on the last Unit|FUZZ FINDING|deadly signal|out-of-memory' "$log")

if (( rc == 0 && findings == 0 )); then
  echo "$name: ${execs:-?} executions in ${elapsed} s, 0 crashes (seeds: ${seeds[*]}; corpus now $corpus inputs)"
  exit 0
fi
echo "$name: FAILED (exit $rc) after ${execs:-?} executions in ${elapsed} s; libFuzzer output:"
tail -60 "$log"
for f in "$work"/artifacts/*; do
  [[ -f $f ]] || continue
  echo "--- input $f (reproduce: $fuzzer $f):"
  head -c 2048 "$f" | od -A d -c | head -40
done
exit 1
