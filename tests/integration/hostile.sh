#!/usr/bin/env bash
# Hostile-use battery (docs/RELIABILITY.md): what a careless user, or root on a shared node, does
# with well-formed but absurd values, odd paths, devices, FIFOs, links, concurrent runs and odd
# environments. Each case asserts the exit code, the first stderr line, and that no earlier result
# or foreign file changed. The test makes its own FIFOs and device nodes in its work directory and
# never points an output at the machine's /dev/null or /dev/full.
#   hostile.sh ROOFPROBE WORKDIR
set -uo pipefail
rp=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1
source "$here/expect_lib.sh"
skipped=0

cat > tiny.yaml <<'YAML'
measurement: {warmup_seconds: 0.002, min_samples: 3, min_seconds: 0.005, max_noise: 0.5, timeout_seconds: 0.02, target_launch_seconds: 0.002}
cpu:
  threads: 1
  sustained_seconds: 0
  probes:
    flops: {precision: [fp64], form: [fma], flops_per_element: [8]}
YAML
"$rp" run --config tiny.yaml --backend cpu --out done -q > /dev/null 2>&1 || { echo "FAIL: the reference run failed"; exit 1; }
machine_sum=$(sum done/machine.yaml) sweep_sum=$(sum done/sweep.csv)

# --- run directories belong to one run -------------------------------------------------------
# (On a busy host the reference run's points may be flagged as measured beside other processes'
# load: it then ends complete: false, and the refusal names --resume as well.)
expect finished_run error "already holds a (finished )?run.*another --out" -- "$rp" run --config tiny.yaml --backend cpu --out done -q
unchanged finished_run done/machine.yaml "$machine_sum"
unchanged finished_run done/sweep.csv "$sweep_sum"
mkdir busy && (exec 9> busy/.roofprobe.lock && flock -x 9 && sleep 5) &
sleep 0.5
expect concurrent_run error "another roofprobe run is using this directory" -- "$rp" run --config tiny.yaml --backend cpu --out busy -q
wait
[[ ! -e busy/sweep.csv ]] && ok "concurrent_run: nothing written" || fail "concurrent_run: wrote busy/sweep.csv"

# --- absurd numbers ---------------------------------------------------------------------------
expect threads_huge error "threads on [0-9]+ cores" -- "$rp" run --config tiny.yaml --backend cpu --threads 100000 --out t1 -q
cores=$(nproc)
expect threads_more error "threads on [0-9]+ cores.*--oversubscribe" -- "$rp" run --config tiny.yaml --backend cpu --threads $((cores + 1)) --out t2 -q
sed 's/threads: 1/threads: 100000/' tiny.yaml > threads.yaml
expect threads_config error "threads.yaml: cpu.threads: 100000 threads" -- "$rp" run --config threads.yaml --backend cpu --out t3 -q
expect threads_negative error "--threads" -- "$rp" run --config tiny.yaml --backend cpu --threads -1 --out t4 -q
expect out_empty error "--out: empty value" -- "$rp" run --config tiny.yaml --backend cpu --out "" -q
printf 'cpu:\n  probes: {}\n' > noprobes.yaml
expect no_probes error "cpu.probes: empty" -- "$rp" run --config noprobes.yaml --backend cpu --out t5 -q
for d in t1 t2 t3 t4 t5; do [[ ! -e $d ]] || fail "$d: an output directory was created for a refused run"; done

# --- resume with other settings ---------------------------------------------------------------
mkdir half && cp done/run.yaml done/config.yaml half/ && head -n 2 done/sweep.csv > half/sweep.csv
expect resume_threads error "cannot resume with --threads 2: the run was started with 1" -- "$rp" run --resume half --threads 2 --oversubscribe -q
# Started on another node: its device measures other figures, even of the same model.
mkdir elsewhere && cp half/* elsewhere/ && sed -i 's/^  host: .*/  host: othernode/' elsewhere/run.yaml
expect resume_other_host error "started on host 'othernode', this is '.*': resume it there" -- "$rp" run --resume elsewhere -q

# --- duplicate keys ---------------------------------------------------------------------------
printf 'cpu:\n  threads: 1\n  threads: 2\n  probes:\n    flops: {precision: fp64}\n' > dup.yaml
expect dup_config error "dup.yaml:3: threads: written twice" -- "$rp" run --config dup.yaml --backend cpu --out t6 -q
{ cat done/machine.yaml; echo "complete: false"; } > dup-machine.yaml
expect dup_machine error "complete: written twice" -- "$rp" validate dup-machine.yaml

# --- consumers refuse a file validate rejects --------------------------------------------------
sed 's/^schema: .*/schema: roofprobe.machine\/1\nunits: 7/' done/machine.yaml > invalid.yaml
expect export_invalid error "invalid.yaml" -- "$rp" export invalid.yaml --format json
expect compare_invalid error "invalid.yaml" -- "$rp" compare done/machine.yaml invalid.yaml

# --- inputs that are not regular files ----------------------------------------------------------
mkfifo fifo
expect fifo_config error "not a regular file" -- "$rp" run --config fifo --out t7 -q
expect fifo_validate error "not a regular file" -- "$rp" validate fifo
expect fifo_export error "not a regular file" -- "$rp" export fifo --format json
expect fifo_fit error "not a regular file" -- "$rp" fit fifo --out f.yaml
expect fifo_bandwidth error "not a regular file" -- "$rp" fit --bandwidth-csv fifo --out f.yaml
expect fifo_ncu error "not a regular file" -- "$rp" points --ncu-csv fifo
ln -s loop1 loop2 && ln -s loop2 loop1
expect link_loop error "loop" -- "$rp" validate loop1

# --- outputs that are devices, FIFOs or links ------------------------------------------------------
"$rp" export done/machine.yaml --format json --out ref.json 2> /dev/null
expect fifo_no_reader error "no process reads this FIFO" -- "$rp" export done/machine.yaml --format json --out fifo
[[ -p fifo ]] && ok "fifo_no_reader: still a FIFO" || fail "fifo_no_reader: the FIFO was replaced"
(cat fifo > from-fifo.json) &
sleep 0.3
expect fifo_reader ok - -- "$rp" export done/machine.yaml --format json --out fifo
wait
cmp -s from-fifo.json ref.json && [[ -p fifo ]] && ok "fifo_reader: written in place" || fail "fifo_reader: wrong content or replaced"
if mknod full c 1 7 2> /dev/null && mknod null c 1 3 2> /dev/null; then
  expect device_full error "full: write failed: No space left on device" -- "$rp" export done/machine.yaml --format json --out full
  expect device_null ok - -- "$rp" export done/machine.yaml --format json --out null
  [[ -c full && -c null ]] && ok "devices: still character devices" || fail "devices: a device node was replaced"
else
  echo "skip devices: mknod not permitted here"; skipped=$((skipped + 2))
fi
echo '{}' > elsewhere.json && ln -s elsewhere.json link.json
expect out_symlink ok - -- "$rp" export done/machine.yaml --format json --out link.json
[[ -L link.json ]] && cmp -s elsewhere.json ref.json && ok "out_symlink: link kept, target written" \
  || fail "out_symlink: the link was replaced or its target not written"
mkdir adir
expect out_directory error "is a directory" -- "$rp" export done/machine.yaml --format json --out adir
expect out_missing_dir error "does not exist" -- "$rp" export done/machine.yaml --format json --out nodir/x.json

# --- a full filesystem: the previous file stays whole ----------------------------------------------
mkdir small
if mount -t tmpfs -o size=16k tmpfs small 2> /dev/null; then
  cp ref.json small/keep.json
  head -c 12000 /dev/zero > small/filler 2> /dev/null || true
  keep_sum=$(sum small/keep.json)
  expect disk_full error "small/keep.json: write failed" -- "$rp" export done/machine.yaml --format ert-json --out small/keep.json
  unchanged disk_full small/keep.json "$keep_sum"
  [[ -z $(ls small | grep tmp) ]] && ok "disk_full: no temp file left" || fail "disk_full: left $(ls small)"
  umount small
else
  echo "skip disk_full: cannot mount a tmpfs here"; skipped=$((skipped + 1))
fi

# --- degenerate sweeps: fit refuses what validate would reject -----------------------------------
printf 'working_set_bytes,gbs\n4096,0.0\n' > zero.csv
expect fit_zero error "zero.csv" -- "$rp" fit --bandwidth-csv zero.csv --out z.yaml
printf 'working_set_bytes,gbs\n4096,10\n' > one.csv
expect fit_one_row error "one.csv: need at least 3 distinct" -- "$rp" fit --bandwidth-csv one.csv --out z.yaml
{ echo "working_set_bytes,gbs"; for x in 1 2 4 8 16; do echo "$((x * 4096)),1e308"; done; } > huge.csv
"$rp" fit --bandwidth-csv huge.csv --out h.yaml > /dev/null 2>&1
cases=$((cases + 1))
if [[ -e h.yaml ]]; then "$rp" validate h.yaml > /dev/null 2>&1 && ok "fit_1e308: written and valid" || fail "fit_1e308: wrote an invalid file"
else ok "fit_1e308: refused"; fi
[[ ! -e z.yaml ]] || fail "fit wrote z.yaml for a refused sweep"
printf 'working_set_bytes,note,gbs\n4096,"a, b",50\n8192,"c",50\n16384,"d,e,f",50\n' > quoted.csv
expect quoted_commas ok - -- "$rp" fit --bandwidth-csv quoted.csv --out q.yaml
grep -q '^    gbs: 50' q.yaml && ok "quoted_commas: parsed by field" || fail "quoted_commas: wrong level"

# --- comparisons that cannot be drawn, fleets with odd rank directories --------------------------
reference=$here/../../results/reference/h100-sxm.yaml
files=(); for i in $(seq 1 14); do files+=("$reference"); done
expect compare_many_plot error "more than fit one plot" -- "$rp" compare "${files[@]}" --plot many.png
[[ ! -e many.gp && ! -e many.png ]] && ok "compare_many_plot: nothing written" || fail "compare_many_plot: wrote files"
mkdir -p fleet/rank-0 fleet/rank-99999999999 && cp done/machine.yaml fleet/rank-0/
expect fleet_odd_rank ok - -- "$rp" fleet fleet
grep -q 'rank-99999999999: not a rank directory' fleet/fleet.yaml && ok "fleet_odd_rank: named" || fail "fleet_odd_rank: not named"

# --- odd paths and environments ---------------------------------------------------------------------
odd=$'odd dir/new\nline/ünï'
expect odd_path ok - -- "$rp" run --config tiny.yaml --backend cpu --out "$odd" -q
[[ -s "$odd/machine.yaml" ]] && ok "odd_path: written" || fail "odd_path: no machine.yaml"
expect env_garbage ok - -- env OMP_NUM_THREADS=garbage OMP_PROC_BIND=nonsense "$rp" run --config tiny.yaml --backend cpu --out env1 -q
expect env_no_home ok - -- env -u HOME LC_ALL=de_DE.UTF-8 LC_NUMERIC=de_DE.UTF-8 "$rp" run --config tiny.yaml --backend cpu --out env2 -q
"$rp" validate env2/machine.yaml > /dev/null && ok "env_no_home: valid file" || fail "env_no_home: invalid file"

# --- signals at every phase: the record stays resumable -----------------------------------------------
for delay in 0.05 0.3 1.0; do
  d=sig-$delay
  "$rp" run --config tiny.yaml --backend cpu --out "$d" -q > /dev/null 2>&1 &
  pid=$!
  sleep "$delay"; kill -TERM $pid 2> /dev/null; wait $pid; rc=$?
  cases=$((cases + 1))
  if (( rc == 0 || rc == 143 )) || [[ ! -e $d/run.yaml ]]; then
    if [[ -e $d/run.yaml ]] && (( rc != 0 )); then
      "$rp" run --resume "$d" -q > /dev/null 2>&1 && "$rp" validate "$d/machine.yaml" > /dev/null \
        && ok "sigterm after ${delay}s: resumed to a valid file" || fail "sigterm after ${delay}s: resume failed"
    else
      ok "sigterm after ${delay}s: exit $rc"
    fi
  else
    fail "sigterm after ${delay}s: exit $rc"
  fi
done

echo "hostile: $cases cases, $failures failed, $skipped skipped"
(( failures == 0 ))
