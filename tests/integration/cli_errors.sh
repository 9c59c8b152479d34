#!/usr/bin/env bash
# Bad input: one line "error: ..." on stderr, a non-zero exit, and no output written.
set -uo pipefail
rp=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
here=$(cd "$(dirname "$0")" && pwd)
cd "$work" || exit 1
source "$here/expect_lib.sh"
cfg() { printf '%s\n' "$2" > "$work/$1.yaml"; echo "$work/$1.yaml"; }

refused missing_config "no such file" -- "$rp" run --config "$work/nope.yaml" --out "$work/o1"
refused empty_config "empty configuration" -- "$rp" run --config "$(cfg empty '')" --out "$work/o2"
refused malformed_yaml "malformed YAML" -- "$rp" run --config "$(cfg bad 'cpu: [unclosed')" --out "$work/o3"
refused unknown_key "did you mean 'measurement'" -- "$rp" run --config "$(cfg unknown $'measurment:\n  min_samples: 3\ncpu:\n  probes: {flops: {}}')" --out "$work/o4"
refused unknown_axis ":4: cpu.probes.flops.precison" -- "$rp" run --config "$(cfg axis $'cpu:\n  probes:\n    flops:\n      precison: [fp64]')" --out "$work/o5"
refused wrong_type "expected a number" -- "$rp" run --config "$(cfg type $'measurement:\n  min_samples: many\ncpu:\n  probes: {flops: {}}')" --out "$work/o6"
refused zero_size "size must be > 0" -- "$rp" run --config "$(cfg zero $'cpu:\n  probes:\n    bandwidth:\n      working_set_bytes: 0')" --out "$work/o7"
refused min_gt_max "min (1 GiB) > max" -- "$rp" run --config "$(cfg minmax $'cpu:\n  probes:\n    bandwidth:\n      working_set_bytes: {min: 1GiB, max: 4KiB}')" --out "$work/o8"
refused too_big "exceeds 80% of the DRAM" -- "$rp" run --config "$(cfg big $'cpu:\n  probes:\n    bandwidth:\n      working_set_bytes: 500GiB')" --out "$work/o9"
refused bad_choice "not one of the choices" -- "$rp" run --config "$(cfg choice $'cpu:\n  probes:\n    flops:\n      precision: fp128')" --out "$work/o10"
touch "$work/afile"
refused unwritable_out "output" -- "$rp" run --quick --backend cpu --out "$work/afile/sub"
refused bad_backend "not one of cpu, cuda, all" -- "$rp" run --backend tpu
# NaN compares false both ways: refused before the run, not when fleet.yaml is written after it.
refused nan_outlier_margin "'nan' is not a number in .0, 0.99." -- "$rp" run --quick --backend cpu --outlier-margin nan --out "$work/o11"
refused nan_fma_ratio "'nan' is not a number in .0, 1." -- "$rp" plot "$work/none.yaml" --fma-ratio nan
refused validate_missing "no such file" -- "$rp" validate "$work/none.yaml"
refused validate_garbage "not a machine file" -- "$rp" validate "$(cfg garbage 'just text')"
# --strict with two ceilings above their peaks: one error line, counting the other.
awk '/^compute:/ {c = 1} c && /^    gflops:/ && n < 2 {sub(/gflops: .*/, "gflops: 5000"); n++} {print}' \
  "$here/../../results/measured/zen4-epyc-vm/20261125T0045Z/machine.yaml" > "$work/above.yaml"
# Nothing to plot: refused, and the directory made for the plots is not left behind.
refused plot_nothing "nothing to plot (power" -- "$rp" plot "$here/../../results/measured/zen4-epyc-vm/20261125T0045Z/machine.yaml" --kind power --out "$work/noplots"
if [[ -e $work/noplots ]]; then fail "plot_nothing: left $work/noplots"; else ok "plot_nothing: no directory left"; fi
# A sweep.csv of another device beside a machine file: its samples are not drawn under this
# machine's name, and the note says why (a CPU machine file, an H200's sweep).
mkdir -p "$work/foreign"
cp "$here/../../results/measured/zen4-epyc-vm/20261125T0045Z/machine.yaml" "$work/foreign/"
head -n 200 "$here/../../results/measured/h200-sxm/20261127T2101Z/sweep.csv" > "$work/foreign/sweep.csv"
if "$rp" plot "$work/foreign/machine.yaml" --kind bandwidth --out "$work/foreign/p" > /dev/null 2> "$work/foreign.err" &&
  grep -q "sweep.csv: its rows are of the cuda backend, the machine file is of a cpu; its samples are not drawn" "$work/foreign.err"; then
  ok "plot_foreign_sweep: not drawn, said so"
else
  fail "plot_foreign_sweep: $(cat "$work/foreign.err")"
fi
refused export_mix_other_format "only --format nersc draws FMA-mix" -- "$rp" export --format ert-json --mix "$here/../../results/measured/zen4-epyc-vm/20261125T0045Z/machine.yaml"
refused export_names_other_format "only --format ert-json takes names" -- "$rp" export --format nersc --names ert "$here/../../results/measured/zen4-epyc-vm/20261125T0045Z/machine.yaml"
refused validate_strict_above "above theoretical_gflops .* (and 1 more: validate without --strict lists them)" -- "$rp" validate --strict "$work/above.yaml"
refused fit_no_out "required" -- "$rp" fit "$work/x.csv"
printf 'working_set_bytes,gbs\n4096,abc\n' > "$work/ext.csv"
refused fit_bad_csv "ext.csv:2" -- "$rp" fit --bandwidth-csv "$work/ext.csv" --out "$work/fit.yaml"
# Other tools' sweeps (fit --from): an unknown format, flags that need an external sweep, a line
# that is not the format's, and level names the sweep does not show; none writes the machine file.
printf '1000 16 1.0 16000 0\n2000 16 not 32000 0\n' > "$work/ert.txt"
refused fit_from_unknown "use csv, ert, gpu-benches or likwid" -- "$rp" fit --bandwidth-csv "$work/ert.txt" --from stream --out "$work/fit.yaml"
refused fit_from_with_sweep "describe an external sweep" -- "$rp" fit "$work/ext.csv" --from ert --out "$work/fit.yaml"
refused fit_from_ert_bad_line "ert.txt:2: 'not' is not a number" -- "$rp" fit --bandwidth-csv "$work/ert.txt" --from ert --out "$work/fit.yaml"
refused fit_device_unknown "use cpu or gpu" -- "$rp" fit --bandwidth-csv "$work/ert.txt" --from ert --device tpu --out "$work/fit.yaml"
refused fit_cache_sizes_bad "is not a size" -- "$rp" fit --bandwidth-csv "$work/ert.txt" --from ert --cache-sizes 32KiB,lots --out "$work/fit.yaml"
refused fit_levels_twice "'L2' is named twice" -- "$rp" fit --bandwidth-csv "$work/ert.txt" --from ert --levels L2,L2 --out "$work/fit.yaml"
refused fit_gpu_unknown "no reference file 'no-such-gpu.yaml'" -- "$rp" fit --bandwidth-csv "$work/ert.txt" --from ert --gpu no-such-gpu --out "$work/fit.yaml"
refused fit_gpu_and_sizes "--cache-sizes or --gpu, not both" -- "$rp" fit --bandwidth-csv "$work/ert.txt" --from ert --gpu h100-pcie --cache-sizes 1MiB --out "$work/fit.yaml"
absent fit_from_bad_input "$work/fit.yaml"
absent fit_bad_csv "$work/fit.yaml"
# points --help ends with the whole ncu command, the metrics the reader understands included.
if "$rp" points --help | grep -q -- "--metrics gpu__time_duration.sum,.*dram__bytes.sum,.* ./app > app-ncu.csv"; then
  ok "points_help: prints the ncu command"
else
  fail "points_help: no ncu --metrics command in points --help"
fi
# points --ncu-metrics: the list for an architecture; a bad one, a CPU machine file, an export cut short.
if "$rp" points --ncu-metrics --arch sm_90 | grep -q "^gpu__time_duration.sum,.*,sm__ops_path_tensor_src_fp16.sum,"; then
  ok "points_ncu_metrics: prints the sm_90 list"
else
  fail "points_ncu_metrics: no sm_90 list"
fi
# A compute capability newer than any it knows still gets a list, with a note that says so.
if "$rp" points --ncu-metrics --arch sm_130 2> "$work/newer.err" | grep -q "^gpu__time_duration.sum," &&
  grep -q "^note: compute capability 13.0 is newer than any this roofprobe knows" "$work/newer.err"; then
  ok "points_ncu_metrics_newer: a list and a note"
else
  fail "points_ncu_metrics_newer: $(cat "$work/newer.err")"
fi
if "$rp" points --help | grep -q -- "--full-names.*numbered #1, #2"; then
  ok "points_help_names: --full-names says how names are shortened"
else
  fail "points_help_names: --full-names help"
fi
refused points_bad_arch "not a compute capability" -- "$rp" points --ncu-metrics --arch hopper
refused points_metrics_out "--ncu-metrics excludes --out" -- "$rp" points --ncu-metrics --arch sm_90 --out "$work/list.txt"
# The level name is a field of the points file's lines: a line break in it would break them.
refused points_level_newline "control character" -- "$rp" points --ncu-csv "$here/../unit/fixtures/ncu_raw_v100.csv" --dram-level $'HB\nM' --out "$work/nl.csv"
refused points_arch_zero "not a compute capability" -- "$rp" points --ncu-metrics --arch 0.0
refused points_arch_before_ncu "Nsight Compute profiles 7.0 (Volta) and newer" -- "$rp" points --ncu-metrics --arch 5.0
refused points_arch_without_list "requires --ncu-metrics" -- "$rp" points --arch sm_90 --ncu-csv "$work/x.csv"
refused points_nothing "give --ncu-csv FILE" -- "$rp" points
refused list_arch_with_backend "excludes" -- "$rp" list --arch 9.0 --backend cpu
refused list_arch_before_volta "7.0 (Volta) and newer" -- "$rp" list --arch 1.0
refused mpi_timeout_zero "'0' is not a positive number of seconds" -- "$rp" run --backend cpu --mpi-timeout 0 --out "$work/mt"
printf '"ID","Kernel Name","gpu__time_duration.sum","dram__bytes.sum"\n"","","ns","byte"\n"0","k","10","1,0' > "$work/torn.csv"
refused points_torn "torn.csv:3: torn row" -- "$rp" points --ncu-csv "$work/torn.csv" --out "$work/p.csv"
absent points_torn "$work/p.csv"
for d in o1 o2 o3 o4 o5 o6 o7 o8 o9 o10; do absent "out_dir_$d" "$work/$d"; done
(( failures == 0 )) && echo "integration.cli_errors: all ok" || { echo "$failures failures"; exit 1; }
