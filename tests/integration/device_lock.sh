#!/usr/bin/env bash
# Exclusive measurement (docs/RELIABILITY.md): two `roofprobe run --backend cpu` started together
# never measure at the same time. The second waits for the first's device lock, says for whom,
# and its measuring interval (provenance measured_from .. measured_until, milliseconds) begins
# after the first's ends; with --no-wait it refuses, naming the run in the way.
#   device_lock.sh ROOFPROBE WORKDIR
set -uo pipefail
rp=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
cd "$work" || exit 1
export ROOFPROBE_LOCK_DIR=$work/locks
fail() { echo "FAIL: $*"; exit 1; }
field() { grep -m1 "^  $2:" "$1/machine.yaml" | sed "s/^  $2: *//; s/\"//g; s/'//g"; }

cat > tiny.yaml <<'YAML'
measurement: {warmup_seconds: 0.002, min_samples: 3, min_seconds: 0.05, max_noise: 0.5, timeout_seconds: 0.1, target_launch_seconds: 0.002}
cpu:
  threads: 1
  sustained_seconds: 0
  probes:
    flops: {precision: [fp64, fp32], form: [fma, nofma], flops_per_element: [8]}
YAML

"$rp" run --config tiny.yaml --backend cpu --out A -q > A.out 2> A.err &
a=$!
# B starts once A holds the lock (its record names A's directory).
for _ in $(seq 100); do grep -qs "run: A" locks/cpu-*.lock && break; sleep 0.05; done
grep -qs "run: A" locks/cpu-*.lock || fail "run A never took the CPU lock"
"$rp" run --config tiny.yaml --backend cpu --out C --no-wait -q > C.out 2> C.err
rc=$?
(( rc == 1 )) || fail "--no-wait beside a running run: exit $rc, want 1"
grep -qE "^error: the CPU of .* is in use by run A \(pid $a, user [^,]+, since [0-9TZ:-]+" C.err || fail "--no-wait message: $(cat C.err)"
[[ ! -e C/sweep.csv ]] || fail "--no-wait run measured"
"$rp" run --config tiny.yaml --backend cpu --out B -q > B.out 2> B.err &
b=$!
wait $a || fail "run A failed: $(cat A.err)"
wait $b || fail "run B failed: $(cat B.err)"
grep -q "waiting for the CPU of .*: in use by run A (pid $a" B.err || fail "B did not say whom it waited for: $(cat B.err)"
a_until=$(field A measured_until) b_from=$(field B measured_from)
[[ -n $a_until && -n $b_from ]] || fail "no measuring interval in the machine files"
[[ $a_until < $b_from ]] || fail "the runs measured at the same time: A until $a_until, B from $b_from"
# The lock directory is shared by every user: sticky and world-writable; the lock files 0666.
[[ $(stat -c %a locks) == 1777 ]] || fail "lock directory mode $(stat -c %a locks)"
for f in locks/*.lock; do [[ $(stat -c %a "$f") == 666 ]] || fail "$f mode $(stat -c %a "$f")"; done
# A waiting run leaves the device alone: it takes the lock before it describes the device (which
# pins the CPU threads and measures the clock; on a GPU, opens a context that the holder's NVML
# check would list as a foreign process). The lock is held here by flock(1) while D waits.
lockfile=$(ls locks/cpu-*.lock)
flock "$lockfile" sleep 3 &
holder=$!
sleep 0.3
"$rp" run --config tiny.yaml --backend cpu --out D -q > D.out 2> D.err &
d=$!
for _ in $(seq 100); do grep -qs "waiting for" D.err && break; sleep 0.05; done
grep -qs "waiting for" D.err || fail "run D did not wait for the held lock: $(cat D.err)"
d_cpus=$(grep Cpus_allowed_list "/proc/$d/status") own_cpus=$(grep Cpus_allowed_list /proc/self/status)
[[ $d_cpus == "$own_cpus" ]] || fail "run D pinned its threads (described the CPU) while waiting: $d_cpus, not $own_cpus"
wait $holder
wait $d || fail "run D failed: $(cat D.err)"
echo "device_lock: ok (A until $a_until, B from $b_from)"
