#!/usr/bin/env bash
# roofprobe run --power-caps refused before anything is measured or written: a backend without a
# settable power limit (the CPU's), and caps that are not positive, finite, distinct watts. Each
# gives one line "error: ...", a non-zero exit, and no run directory. The limit itself is never
# set by any test on a real GPU: that is tests/unit/power_caps_test.cpp's fake NVML.
set -uo pipefail
rp=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
export ROOFPROBE_LOCK_DIR=$work/locks
here=$(cd "$(dirname "$0")" && pwd)
cd "$work" || exit 1
source "$here/expect_lib.sh"
# capped NAME PATTERN -- ARGS...: refused (one error line matching PATTERN), no run directory made.
capped() {
  local name=$1 pattern=$2
  shift 3
  refused "$name" "$pattern" -- "$@" --out "$work/$name"
  absent "$name" "$work/$name"
}

capped cpu_has_no_limit "the cpu backend cannot set a power limit" -- "$rp" run --quick --backend cpu --power-caps 300
capped backend_not_named "name the backend whose power limit the run sets" -- "$rp" run --quick --power-caps 300
capped negative "must be positive and finite" -- "$rp" run --quick --backend cpu --power-caps 300,-400
capped not_watts "'300W' is not a number of watts" -- "$rp" run --quick --backend cpu --power-caps 300W
capped twice "300 W is listed twice" -- "$rp" run --quick --backend cpu --power-caps 300,400,300
capped empty "expected watts" -- "$rp" run --quick --backend cpu --power-caps ""
# Refused before the device lock is taken too: no other run's lock file is made for it.
[[ -z $(ls -A "$ROOFPROBE_LOCK_DIR" 2>/dev/null) ]] && ok "no device lock taken" || fail "a refused run took the device lock"
exit $(( failures > 0 ))
