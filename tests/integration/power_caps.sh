#!/usr/bin/env bash
# roofprobe run --power-caps refused before anything is measured or written: a backend without a
# settable power limit (the CPU's), and caps that are not positive, finite, distinct watts. Each
# gives one line "error: ...", a non-zero exit, and no run directory. The limit itself is never
# set by any test on a real GPU: that is tests/unit/power_caps_test.cpp's fake NVML.
set -uo pipefail
rp=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
export ROOFPROBE_LOCK_DIR=$work/locks
failures=0
refused() {  # refused NAME PATTERN -- ARGS...: one error line matching PATTERN, exit 1 or 2, $work/NAME not made
  local name=$1 pattern=$2; shift 3
  "$@" --out "$work/$name" > "$work/$name.stdout" 2> "$work/$name.stderr" < /dev/null
  local rc=$? lines
  lines=$(grep -c . "$work/$name.stderr")
  if (( rc != 1 && rc != 2 )); then echo "FAIL $name: exit $rc: $(cat "$work/$name.stderr")"; failures=$((failures+1)); return; fi
  if (( lines != 1 )) || ! grep -q '^error: ' "$work/$name.stderr"; then
    echo "FAIL $name: want one 'error: ...' line, got: $(cat "$work/$name.stderr")"; failures=$((failures+1)); return
  fi
  if ! grep -qF -- "$pattern" "$work/$name.stderr"; then
    echo "FAIL $name: want '$pattern' in: $(cat "$work/$name.stderr")"; failures=$((failures+1)); return
  fi
  if [[ -e $work/$name ]]; then echo "FAIL $name: wrote $work/$name"; failures=$((failures+1)); return; fi
  if [[ -s $work/$name.stdout ]]; then echo "FAIL $name: printed: $(cat "$work/$name.stdout")"; failures=$((failures+1)); return; fi
  echo "ok   $name: $(cat "$work/$name.stderr")"
}

refused cpu_has_no_limit "the cpu backend cannot set a power limit" -- "$rp" run --quick --backend cpu --power-caps 300
refused backend_not_named "name the backend whose power limit the run sets" -- "$rp" run --quick --power-caps 300
refused negative "must be positive and finite" -- "$rp" run --quick --backend cpu --power-caps 300,-400
refused not_watts "'300W' is not a number of watts" -- "$rp" run --quick --backend cpu --power-caps 300W
refused twice "300 W is listed twice" -- "$rp" run --quick --backend cpu --power-caps 300,400,300
refused empty "expected watts" -- "$rp" run --quick --backend cpu --power-caps ""
# Refused before the device lock is taken too: no other run's lock file is made for it.
if [[ -n $(ls -A "$ROOFPROBE_LOCK_DIR" 2>/dev/null) ]]; then echo "FAIL a refused run took the device lock"; failures=$((failures+1)); fi
exit $(( failures > 0 ))
