#!/usr/bin/env bash
# roofprobe run --quick --backend cpu end to end, then validate, re-fit and plot its output.
set -euo pipefail
rp=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$rp" run --quick --backend cpu --out "$work/run" --quiet > "$work/summary.txt"
cat "$work/summary.txt"
for f in machine.yaml sweep.csv run.yaml feeds.yaml; do [[ -s $work/run/$f ]] || fail "$f missing"; done
"$rp" validate "$work/run/machine.yaml"

# The summary names every memory level and both FMA ceilings. A quick run on a busy 2-core VM may
# not tell L1 from L2 (each point is short, and another process's time spreads its samples): then
# L1 must be named under missing: with the reason, never dropped without a word.
grep -q '^  L1 ' "$work/summary.txt" || grep -q '^  missing: memory level L1 (' "$work/summary.txt" ||
  fail "no L1 level in summary, and missing: does not name it"
grep -q '^  DRAM ' "$work/summary.txt" || fail "no DRAM level in summary"
grep -q '^  FP64.FMA ' "$work/summary.txt" || fail "no FP64.FMA ceiling"
grep -q '^  FP32.FMA ' "$work/summary.txt" || fail "no FP32.FMA ceiling"
# Complete, unless another process used the cores while a point was measured: then the file says
# so (complete: false, the point named under missing:) rather than publish it as this machine's.
grep -q '^complete: true' "$work/run/machine.yaml" || grep -q 'other processes used' "$work/run/machine.yaml" ||
  fail "machine.yaml not complete, and not for foreign load"

# sweep.csv: header plus one row per sample, every sample verified and positive.
head -1 "$work/run/sweep.csv" | grep -q '^rank,backend,probe,point,sample,params,working_set_bytes' || fail "sweep header"
rows=$(($(wc -l < "$work/run/sweep.csv") - 1))
(( rows > 100 )) || fail "only $rows samples"

# Re-fitting the recorded sweep reproduces the same levels.
"$rp" fit "$work/run/sweep.csv" --out "$work/refit.yaml" > /dev/null
"$rp" validate "$work/refit.yaml"
diff <(grep -E '^  - level:' "$work/run/machine.yaml") <(grep -E '^  - level:' "$work/refit.yaml") || fail "refit levels differ"
# ... and the run's completeness; the run's own gaps carry over once, its fit's notes are written afresh.
[[ $(grep '^complete:' "$work/run/machine.yaml") == $(grep '^complete:' "$work/refit.yaml") ]] || fail "refit completeness differs"
own=$(sed -n 's/^  run_gaps: *"\{0,1\}\([0-9]*\).*/\1/p' "$work/run/machine.yaml")
[[ -n $own ]] || fail "machine.yaml has no provenance run_gaps"
entries() { awk '/^missing:/ {m = 1; next} /^[^ -]/ {m = 0} m && /^ *- / {print}' "$1"; }
[[ -z $(entries "$work/refit.yaml" | sort | uniq -d) ]] || fail "refit lists an entry twice under missing:"

# Plots, when gnuplot exists.
if command -v gnuplot > /dev/null; then
  for v in bandwidth hierarchical; do
    [[ -s $work/run/plots/$v.png ]] || fail "plots/$v.png missing"
    head -c 8 "$work/run/plots/$v.png" | od -An -tx1 | grep -q '89 50 4e 47' || fail "$v.png is not a PNG"
  done
else
  echo "note: gnuplot not found, plot checks skipped"
fi
echo "integration.run_quick_cpu: ok ($rows samples)"
