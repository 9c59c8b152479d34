#!/usr/bin/env bash
# Nothing a user owns is lost (docs/RELIABILITY.md): an output never replaces an input of the same
# command, a run directory's files are never written through a link planted there, files a
# command writes beside its output never replace the user's own, and a run never mixes with
# another's data. Each case asserts the exit code, the one-line error and that no file changed.
#   write_safety.sh ROOFPROBE WORKDIR SOURCE_DIR
set -uo pipefail
rp=$1 work=$2 src=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1
export ROOFPROBE_LOCK_DIR=$work/locks
source "$here/expect_lib.sh"
EXPECT_TIMEOUT=120

cat > tiny.yaml <<'YAML'
measurement: {warmup_seconds: 0.002, min_samples: 3, min_seconds: 0.005, max_noise: 0.5, timeout_seconds: 0.02, target_launch_seconds: 0.002}
cpu:
  threads: 1
  sustained_seconds: 0
  probes:
    flops: {precision: [fp64], form: [fma], flops_per_element: [8, 16]}
YAML
h200=$src/results/measured/h200-sxm/20261125T2343Z/machine.yaml
"$rp" run --config tiny.yaml --backend cpu --out S -q > /dev/null 2>&1 || { echo "FAIL: the reference run failed"; exit 1; }
sweep=$(sum S/sweep.csv)

# --- an output is never one of the command's inputs (by file, however spelled) ----------------
expect fit_into_its_sweep error "--out S/sweep.csv: is the input S/sweep.csv" -- "$rp" fit S/sweep.csv --out S/sweep.csv
unchanged fit_into_its_sweep S/sweep.csv "$sweep"
mkdir -p sub && ln -s ../S/sweep.csv sub/alias.csv
expect fit_into_a_link_to_its_sweep error "is the input S/sweep.csv" -- "$rp" fit S/sweep.csv --out sub/alias.csv
expect fit_into_another_spelling error "is the input" -- "$rp" fit S/sweep.csv --out ./sub/../S/sweep.csv
expect fit_into_its_run_yaml error "is the input S/run.yaml" -- "$rp" fit S/sweep.csv --out S/run.yaml
c=$(sum S/config.yaml)
expect fit_into_its_config error "is the config of the run" -- "$rp" fit S/sweep.csv --out S/config.yaml
unchanged fit_into_its_config S/config.yaml "$c"
m=$(sum S/machine.yaml)
expect fit_into_its_runs_machine_file error "is the machine file of the run whose sweep this is" -- \
  "$rp" fit S/sweep.csv --out S/machine.yaml
unchanged fit_into_its_runs_machine_file S/machine.yaml "$m"
unchanged fit_into_its_sweep S/sweep.csv "$sweep"
printf 'working_set_bytes,gbs\n4096,100\n8192,100\n16384,100\n65536,50\n131072,50\n262144,50\n' > x.csv
x=$(sum x.csv)
expect fit_bandwidth_into_itself error "--out x.csv: is the input x.csv" -- "$rp" fit --bandwidth-csv x.csv --out x.csv
unchanged fit_bandwidth_into_itself x.csv "$x"
cp "$src/results/reference/h200-sxm.yaml" ref.yaml
r=$(sum ref.yaml)
expect fit_bandwidth_into_its_gpu_file error "--out ref.yaml: is the input ref.yaml" -- "$rp" fit --bandwidth-csv x.csv --gpu ref.yaml --out ref.yaml
unchanged fit_bandwidth_into_its_gpu_file ref.yaml "$r"
cp "$src/tests/unit/fixtures/ncu_raw_v100.csv" f.csv
f=$(sum f.csv)
expect points_into_its_input error "--out f.csv: is the input f.csv" -- "$rp" points --ncu-csv f.csv --out f.csv
unchanged points_into_its_input f.csv "$f"
expect export_into_its_input error "is the input S/machine.yaml" -- "$rp" export S/machine.yaml --format json --out S/machine.yaml

# --- a run never replaces what a user has in its --out directory -------------------------------
mkdir U1 && echo "my notes" > U1/config.yaml
expect run_over_users_config error "U1.*config.yaml" -- "$rp" run --config tiny.yaml --backend cpu --out U1 -q
[[ $(cat U1/config.yaml) == "my notes" ]] && ok "run_over_users_config: config.yaml kept" || fail "run_over_users_config: config.yaml changed"
absent run_over_users_config U1/sweep.csv
absent run_over_users_config U1/.roofprobe.lock
mkdir -p U2/plots && echo "my figure" > U2/plots/hierarchical.png
expect run_over_users_plots error "U2.*plots" -- "$rp" run --config tiny.yaml --backend cpu --out U2 -q
[[ $(cat U2/plots/hierarchical.png) == "my figure" ]] && ok "run_over_users_plots: kept" || fail "run_over_users_plots: changed"

# --- links planted in an output directory are not followed -------------------------------------
echo "victim" > victim.txt
v=$(sum victim.txt)
for name in config.yaml run.yaml plots fleet.yaml; do
  mkdir "L-$name" && ln -s ../victim.txt "L-$name/$name"
  expect "run_link_$name" error "L-$name.*$name" -- "$rp" run --config tiny.yaml --backend cpu --out "L-$name" -q
  unchanged "run_link_$name" victim.txt "$v"
done
mkdir L-dangling && ln -s ../planted.csv L-dangling/sweep.csv
expect run_dangling_sweep_link error "L-dangling.*sweep.csv" -- "$rp" run --config tiny.yaml --backend cpu --out L-dangling -q
absent run_dangling_sweep_link planted.csv
# The check that the directory is writable opens no file already there: a link planted under the
# name it once used (.roofprobe-write-test.PID, the PID known to whoever starts the run) is left.
mkdir W
expect run_write_test_link ok - -- bash -c 'ln -s ../victim.txt "W/.roofprobe-write-test.$$" && exec "$0" run \
  --config tiny.yaml --backend cpu --out W -q' "$rp"
unchanged run_write_test_link victim.txt "$v"
cp -r S F && rm -f F/fleet.yaml && ln -s ../victim.txt F/fleet.yaml
expect fleet_through_a_link error "F/fleet.yaml: is a symbolic link" -- "$rp" fleet F
unchanged fleet_through_a_link victim.txt "$v"
cp -r S G && echo "my fleet notes" > G/fleet.yaml
expect fleet_over_users_file error "G/fleet.yaml: is a file roofprobe did not write" -- "$rp" fleet G
expect fleet_over_its_own ok - -- "$rp" fleet S

# --- a link the user names stays a link; a descriptor is written, not reopened ------------------
mkdir -p keep && ln -s keep/out.json named.json
expect export_through_a_dangling_link ok - -- "$rp" export S/machine.yaml --format json --out named.json
cases=$((cases + 1))
[[ -L named.json && -s keep/out.json ]] && ok "export_through_a_dangling_link: still a link, its target written" ||
  fail "export_through_a_dangling_link: named.json is $(stat -c %F named.json), keep/out.json $(stat -c %s keep/out.json 2>&1)"
ln -s nowhere/out.json lost.json
expect export_through_a_link_to_no_directory error "lost.json: the directory .*nowhere does not exist" -- \
  "$rp" export S/machine.yaml --format json --out lost.json
echo "my log line" > log.txt
cases=$((cases + 1))
if "$rp" export S/machine.yaml --format json --out /dev/stdout >> log.txt 2> stdout_append.err &&
   [[ $(head -1 log.txt) == "my log line" ]] && grep -q '"schema"' log.txt; then
  ok "export_to_dev_stdout_appended: the log kept its line, the export follows"
else
  fail "export_to_dev_stdout_appended: $(head -c 200 log.txt) $(cat stdout_append.err)"
fi
cases=$((cases + 1))
piped=$("$rp" export S/machine.yaml --format json --out /dev/stdout | grep -c '"schema"')
[[ $piped == 1 ]] && ok "export_to_dev_stdout_piped: written into the pipe" || fail "export_to_dev_stdout_piped: $piped"
expect export_to_a_closed_descriptor error "/dev/fd/9: not open" -- "$rp" export S/machine.yaml --format json --out /dev/fd/9

# --- a signal leaves no temp file --------------------------------------------------------------------
mkdir -p sigplot
for delay in 0.05 0.15 0.3 0.5; do
  "$rp" plot "$h200" --out sigplot > /dev/null 2>&1 &
  pid=$!
  sleep "$delay"; kill -TERM $pid 2> /dev/null; wait $pid
  rc=$?
  cases=$((cases + 1))
  left=$(find sigplot -name '*tmp*' | head -3)
  [[ -z $left ]] && ok "plot_sigterm_after_${delay}s: exit $rc, no temp file" ||
    fail "plot_sigterm_after_${delay}s: left $left"
done

# --- compare --plot: the files beside the image ------------------------------------------------
expect compare_help ok - -- "$rp" compare --help
cases=$((cases + 1))
grep -q "FILE_roofs.dat" compare_help.stdout && ok "compare_help: lists the data files" || fail "compare_help: the files beside the image are not listed"
echo "my gnuplot script" > report.gp
r=$(sum report.gp)
expect compare_over_users_script error "report.gp: is a file roofprobe did not write" -- "$rp" compare "$h200" "$h200" --plot report.png
unchanged compare_over_users_script report.gp "$r"
absent compare_over_users_script report_roofs.dat
expect compare_verdict_across_kinds error "is a cpu, the reference .* a gpu" -- "$rp" compare S/machine.yaml "$h200" --verdict
# An image carries no mark: one without roofprobe's script of its name beside it is the user's.
echo "my picture" > users.png
r=$(sum users.png)
expect compare_over_users_image error "users.png: is a file roofprobe did not write" -- "$rp" compare "$h200" "$h200" --plot users.png
# A name is never gnuplot's to run: a newline in it would end the script's comment line.
expect compare_plot_name_with_a_newline error "holds a control character" -- \
  "$rp" compare "$h200" "$h200" --plot $'a\nsystem("touch pwned")\nb.png'
absent compare_plot_name_with_a_newline pwned
unchanged compare_over_users_image users.png "$r"
absent compare_over_users_image users.gp
cp "$h200" input.png
r=$(sum input.png)
expect compare_plot_over_its_input error "input.png: is a file roofprobe did not write" -- "$rp" compare input.png "$h200" --plot input.png
unchanged compare_plot_over_its_input input.png "$r"
mkdir P && echo "my picture" > P/hierarchical.png
r=$(sum P/hierarchical.png)
expect plot_over_users_image error "hierarchical.png: is a file roofprobe did not write" -- "$rp" plot "$h200" --kind hierarchical --out P
unchanged plot_over_users_image P/hierarchical.png "$r"
absent plot_over_users_image P/hierarchical.gp
if command -v gnuplot > /dev/null; then
  printf 'kernel,level,intensity,performance\nk1,HBM,2,20\nk2,L1,1,5\n' > roofless.csv
  cpu_machine=$src/results/measured/zen4-epyc-vm/20261125T0045Z/machine.yaml
  expect plot_points_without_a_roof ok "points at HBM have no roof in .*machine.yaml \(its levels: L1, " -- "$rp" plot "$cpu_machine" --points roofless.csv --kind hierarchical --out PR
  expect compare_plot_twice_1 ok - -- "$rp" compare "$h200" "$h200" --plot mine.png
  expect compare_plot_twice_2 ok - -- "$rp" compare "$h200" "$h200" --plot mine.png
fi

# --- whole data: a sweep is one run's --------------------------------------------------------
mkdir mixed && cp S/run.yaml S/feeds.yaml mixed/ && cp S/sweep.csv mixed/sweep.csv
tail -n +2 S/sweep.csv | sed 's/^0,cpu,/1,cpu,/' >> mixed/sweep.csv
expect fit_two_ranks error "rows of two MPI ranks" -- "$rp" fit mixed/sweep.csv --out mixed.yaml
mkdir twobackends && cp S/sweep.csv twobackends/ && tail -n +2 S/sweep.csv | sed 's/^0,cpu,/0,cuda,/' >> twobackends/sweep.csv
expect fit_two_backends error "rows of two backends" -- "$rp" fit twobackends/sweep.csv --out twobackends.yaml
mkdir twice && cp S/run.yaml S/feeds.yaml twice/ && { cat S/sweep.csv; tail -n +2 S/sweep.csv; } > twice/sweep.csv
expect fit_rows_twice error "sample 0 is in it twice" -- "$rp" fit twice/sweep.csv --out twice.yaml
absent fit_rows_twice twice.yaml
mkdir gpurun && cp S/sweep.csv gpurun/ && sed -e 's/^  kind: cpu/  kind: gpu/' -e 's/^  backend: cpu/  backend: cuda/' S/run.yaml > gpurun/run.yaml
expect fit_cpu_sweep_beside_gpu_run error "rows are of the cpu backend, but run.yaml beside it" -- "$rp" fit gpurun/sweep.csv --out gpurun.yaml
mkdir kindgpu && cp S/sweep.csv S/feeds.yaml kindgpu/ && sed 's/^  kind: cpu/  kind: gpu/' S/run.yaml > kindgpu/run.yaml
expect fit_run_yaml_kind_edited error "run.yaml beside it is a cpu run of a device of kind 'gpu'" -- "$rp" fit kindgpu/sweep.csv --out kindgpu.yaml
mkdir fewerplanned && cp S/sweep.csv S/feeds.yaml fewerplanned/ && sed 's/^  planned_points: .*/  planned_points: 1/' S/run.yaml > fewerplanned/run.yaml
expect fit_more_points_than_planned error "2 points, but run.yaml beside it planned 1" -- "$rp" fit fewerplanned/sweep.csv --out fewerplanned.yaml
# The first point whole, the second cut after its first row (the writer was killed).
mkdir torn && cp S/run.yaml S/feeds.yaml torn/
awk -F, 'NR == 1 || $4 == 0 || ($4 == 1 && !seen++)' S/sweep.csv > torn/sweep.csv
"$rp" fit torn/sweep.csv --out torn.yaml > /dev/null 2> torn.stderr
cases=$((cases + 1))
grep -q '^complete: false' torn.yaml && grep -q "ends inside this point" torn.yaml && grep -q "1 of 2 planned points are not in the sweep" torn.yaml \
  && ok "fit_truncated: complete: false, names what is missing" || fail "fit_truncated: $(grep complete torn.yaml)"
# A run whose config had a sustained phase, cut before it: the sweep's points are all there.
mkdir nosustained && cp S/sweep.csv S/feeds.yaml nosustained/
sed 's/^  sustained_seconds: "\?0"\?$/  sustained_seconds: 0.3/' S/run.yaml > nosustained/run.yaml
"$rp" fit nosustained/sweep.csv --out nosustained.yaml > /dev/null 2>&1
cases=$((cases + 1))
grep -q 'sustained_seconds: 0.3' nosustained/run.yaml && grep -q '^complete: false' nosustained.yaml \
  && grep -q "the sustained phase (run.yaml: sustained_seconds 0.3) has no rows in the sweep" nosustained.yaml \
  && ok "fit_without_its_sustained_phase: complete: false" || fail "fit_without_its_sustained_phase: $(grep complete nosustained.yaml)"
# A run whose sustained phase had nothing to loop (a noFMA ceiling only), refit without its
# machine.yaml: the sweep is the run's whole data.
sed -e 's/form: \[fma\]/form: [nofma]/' -e 's/sustained_seconds: 0$/sustained_seconds: 0.3/' tiny.yaml > nofma.yaml
"$rp" run --config nofma.yaml --backend cpu --out N -q > /dev/null 2>&1 || fail "the noFMA run failed"
mkdir notarget && cp N/run.yaml N/feeds.yaml N/sweep.csv notarget/
"$rp" fit notarget/sweep.csv --out notarget.yaml > /dev/null 2>&1
cases=$((cases + 1))
# (complete unless a busy machine flagged its points as measured beside other processes' load)
grep -q 'FP64.noFMA' notarget.yaml && ! grep -q "sustained phase" notarget.yaml \
  && { grep -q '^complete: true' notarget.yaml || grep -q "other processes" notarget.yaml; } \
  && ok "fit_with_nothing_to_sustain: complete" || fail "fit_with_nothing_to_sustain: $(grep -E 'complete|FMA' notarget.yaml)"
# A writer still holding the run's lock.
(exec 9> S/.roofprobe.lock && flock -x 9 && sleep 3) &
sleep 0.5
"$rp" fit S/sweep.csv --out busy.yaml > /dev/null 2>&1
cases=$((cases + 1))
grep -q '^complete: false' busy.yaml && grep -q "still being written" busy.yaml && ok "fit_while_written: complete: false" \
  || fail "fit_while_written: $(grep complete busy.yaml)"
wait

# --- resume --------------------------------------------------------------------------------
m=$(sum S/machine.yaml)
expect resume_finished error "S: the run is complete.*nothing to resume" -- "$rp" run --resume S -q
unchanged resume_finished S/machine.yaml "$m"
unchanged resume_finished S/sweep.csv "$sweep"
expect resume_other_out error "--out elsewhere.*--resume S" -- "$rp" run --resume S --out elsewhere -q
expect resume_other_backend error "--backend cuda.*cpu" -- "$rp" run --resume S --backend cuda -q
expect resume_with_quick error "--quick: the run in S does not record --quick" -- "$rp" run --resume S --quick -q
mkdir nobackend && cp S/config.yaml S/sweep.csv nobackend/ && grep -v '^  backend:' S/run.yaml > nobackend/run.yaml
expect resume_run_yaml_without_backend error "nobackend/run.yaml: cannot resume: it records no backend" -- \
  "$rp" run --resume nobackend -q

# --- bounded budgets ----------------------------------------------------------------------------
for setting in "warmup_seconds: 1e6" "target_launch_seconds: 1e6" "max_noise: 1e-6" "timeout_seconds: 1e308"; do
  key=${setting%%:*}
  printf 'measurement: {%s}\ncpu:\n  probes: {flops: {}}\n' "$setting" > "budget-$key.yaml"
  expect "budget_$key" error "budget-$key.yaml:1: measurement.$key: out of range: .* not in \[" -- \
    "$rp" run --config "budget-$key.yaml" --backend cpu --out "budget-$key" -q
  absent "budget_$key" "budget-$key/sweep.csv"
done
# A point that would sample for 60 s stops within seconds of SIGTERM, keeping a resumable record.
cat > long.yaml <<'YAML'
measurement: {warmup_seconds: 0.01, min_samples: 100000, min_seconds: 60, max_noise: 0.001, timeout_seconds: 60, target_launch_seconds: 0.01}
cpu:
  threads: 1
  sustained_seconds: 0
  probes:
    flops: {precision: [fp64], form: [fma], flops_per_element: [8, 16]}
YAML
"$rp" run --config long.yaml --backend cpu --out long -q > long.out 2> long.err &
pid=$!
for _ in $(seq 100); do [[ -s long/run.yaml ]] && break; sleep 0.1; done
sleep 1
start=$(date +%s%N)
kill -TERM $pid
wait $pid
rc=$?
took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
took="$((took_ms / 1000)).$(printf %03d $((took_ms % 1000)))"
cases=$((cases + 1))
# Generous for a loaded CI host: the point alone would run 60 s.
if (( rc == 143 && took_ms < 5000 )) && grep -q '^complete: false' long/machine.yaml \
   && grep -q "not measured (interrupted)" long/machine.yaml; then
  ok "sigterm_inside_a_point: exit 143 after ${took}s, machine.yaml incomplete and resumable"
else
  fail "sigterm_inside_a_point: exit $rc after ${took}s: $(head -c 300 long.err)"
fi

echo "write_safety: $cases cases, $failures failures"
(( failures == 0 ))
