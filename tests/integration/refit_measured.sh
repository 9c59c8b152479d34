#!/usr/bin/env bash
# Re-fits a run recorded on real hardware (results/measured/...) and checks the memory levels it
# publishes, in order. The fitter is judged on real sweeps here, not only on synthetic curves:
# a knee fragment ("L3.b") or a ramp-extrapolated first level is what a user spots first.
# Usage: refit_measured.sh ROOFPROBE WORK RUN_DIR LEVEL...
set -euo pipefail
rp=$1 work=$2 run=$3
shift 3
want="$*"
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

cp "$run/run.yaml" "$work/run.yaml"
[[ -f $run/feeds.yaml ]] && cp "$run/feeds.yaml" "$work/feeds.yaml"  # how the run declared its fit
if [[ -f $run/sweep.csv.gz ]]; then gzip -dc "$run/sweep.csv.gz" > "$work/sweep.csv"; else cp "$run/sweep.csv" "$work/sweep.csv"; fi
"$rp" fit "$work/sweep.csv" --out "$work/machine.yaml" > "$work/summary.txt"
"$rp" validate "$work/machine.yaml"

# The empirical levels, in the file's order (the spec-only ones a run adds are not fitted).
got=$(awk '/^memory:/ {m = 1; next} /^[^ ]/ {m = 0}
           m && /^  - level:/ {name = $3}
           m && /^    source: empirical/ {printf "%s%s", sep, name; sep = " "}' "$work/machine.yaml")
[[ $got == "$want" ]] || fail "$run: levels '$got', want '$want'"
# A cache of the run's device with no level is named under missing:, never dropped silently.
for cache in $(awk '/^  caches:/ {c = 1; next} c && /level:/ {gsub(/[{},]/, ""); print $3} c && !/level:/ {c = 0}' "$work/machine.yaml"); do
  [[ " $got " == *" $cache "* || " $got " == *" $cache."* ]] && continue
  grep -q "memory level $cache (" "$work/machine.yaml" || fail "$run: $cache has no level and missing: does not say why"
done
# No published level lies above the best sample it rests on (an extrapolated level).
awk '/^memory:/ {m = 1; next} /^[^ ]/ {m = 0}
     m && /^  - level:/ {name = $3; e = 0}
     m && /^    source: empirical/ {e = 1}
     m && /^    gbs:/ && e {g = $2}
     m && /^    stats:/ && e && match($0, /best: [-+0-9.eE]+/) {
       best = substr($0, RSTART + 6, RLENGTH - 6)
       if (g > best * 1.05) {print name ": " g " GB/s above its best sample " best; bad = 1}
     }
     END {exit bad}' "$work/machine.yaml" || fail "$run: a level above every sample it rests on"
# Every level the bandwidth probe's fit publishes has a 95% interval of its rate (a level beside an
# unlocated one once lost it: the H200's L2 next to a knee the fit could not place; a noisy VM's
# levels lost theirs to a singular covariance), and every empirical level has the statistics of the
# samples it rests on.
awk '/^memory:/ {m = 1; next} /^[^ ]/ {m = 0}
     function check() {
       if (p == "bandwidth" && !ci) {print name ": no gbs_ci95"; bad = 1}
       if (e && n < 1) {print name ": no samples in its stats"; bad = 1}
     }
     m && /^  - level:/ {check(); name = $3; p = ""; ci = 0; e = 0; n = 0}
     m && /^    source: empirical/ {e = 1}
     m && /^    probe:/ {p = $2}
     m && /^    gbs_ci95:/ {ci = 1}
     m && /^    stats:/ && match($0, /samples: [0-9]+/) {n = substr($0, RSTART + 9, RLENGTH - 9) + 0}
     END {check(); exit bad}' "$work/machine.yaml" || fail "$run: a published level without an interval or statistics"
# A published capacity interval holds its capacity and spans less than three decades (an unlocated
# knee has none: an H200's L1 knee once came out as [3e-6, 1e20] bytes).
awk '/^memory:/ {m = 1; next} /^[^ ]/ {m = 0}
     m && /^  - level:/ {name = $3; cap = 0}
     m && /^    capacity_bytes:/ {cap = $2}
     m && /^    capacity_ci95:/ {gsub(/[][,]/, " "); lo = $2; hi = $3
       if (lo > cap || hi < cap || hi > 1000 * lo) {print name ": capacity " cap " outside or absurd in [" lo ", " hi "]"; bad = 1}}
     END {exit bad}' "$work/machine.yaml" || fail "$run: a capacity interval that does not locate its knee"
# No sample a GPU's memory level rests on beats the memory's peak (bus width x memory clock).
peak=$(grep -o 'memory_peak_gbs: [0-9.]*' "$work/machine.yaml" | head -1 | awk '{print $2}' || true)
if [[ -n $peak ]]; then
  awk -v peak="$peak" -v mem="$(awk '/^  memory_name:/ {print $2; exit}' "$work/machine.yaml")" '
       /^memory:/ {m = 1; next} /^[^ ]/ {m = 0}
       m && /^  - level:/ {name = $3}
       m && name == mem && /^    stats:/ && match($0, /best: [-+0-9.eE]+/) {
         best = substr($0, RSTART + 6, RLENGTH - 6) + 0  # a number, not a string comparison
         if (best > peak * 1.02) {print name ": best sample " best " GB/s above the peak " peak; bad = 1}
       }
       END {exit bad}' "$work/machine.yaml" || fail "$run: the memory level rests on a sample above the memory's peak"
fi
# missing: holds real gaps only: a GPU run's refit names at most 3 (combinations that do not exist
# on the device are not planned, so never listed).
if grep -q '^  kind: gpu' "$work/machine.yaml"; then
  gaps=$(awk '/^missing:/ {m = 1; next} /^[^ -]/ {m = 0} m && /^ *- / {n++} END {print n + 0}' "$work/machine.yaml")
  (( gaps <= 3 )) || fail "$run: $gaps entries under missing:, want at most 3 real gaps"
fi
echo "refit_measured: ok ($run: $got)"
