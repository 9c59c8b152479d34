#!/usr/bin/env bash
# Golden files of every export format: each machine file below, exported in each format, must
# equal tests/integration/golden/<name>.<format> byte for byte (a refused export: its one error
# line, in <name>.<format>.error). The inputs are a spec-only reference (results/reference/
# h100-sxm.yaml), a measured H100 run and a measured CPU run, so empty, GPU and CPU sections are
# all pinned. After an intended change of an exporter, regenerate and review the diff:
#   ROOFPROBE_UPDATE_GOLDEN=1 ctest -R integration.export_golden; git diff tests/integration/golden
set -uo pipefail
rp=$1 work=$2 src=$3
golden=$src/tests/integration/golden
inputs=(
  "h100-sxm-reference=$src/results/reference/h100-sxm.yaml"
  "h100-sxm-measured=$src/results/measured/h100-sxm/20261124T2305Z/machine.yaml"
  "zen4-measured=$src/results/measured/zen4-epyc-vm/20261125T0312Z/machine.yaml"
)
formats=(ert-json nersc rocprof-csv json)
rm -rf "$work" && mkdir -p "$work"
checked=0
source "$(dirname "$0")/expect_lib.sh"

for input in "${inputs[@]}"; do
  name=${input%%=*} file=${input#*=}
  [[ -f $file ]] || { fail "$name: $file is missing"; continue; }
  for fmt in "${formats[@]}"; do
    out=$work/$name.$fmt
    if "$rp" export "$file" --format "$fmt" --out "$out" 2> "$out.stderr"; then
      got=$out want=$golden/$name.$fmt
    else
      grep '^error: ' "$out.stderr" > "$out.error"
      got=$out.error want=$golden/$name.$fmt.error
    fi
    if [[ ${ROOFPROBE_UPDATE_GOLDEN:-} == 1 ]]; then
      rm -f "$golden/$name.$fmt" "$golden/$name.$fmt.error"
      cp "$got" "$want" && echo "wrote $want"
      continue
    fi
    checked=$((checked+1))
    if [[ ! -f $want ]]; then
      fail "$name $fmt: no golden file $(basename "$want") (the export $( [[ $got == *.error ]] && echo failed || echo succeeded))"
    elif ! diff -u "$want" "$got" > "$out.diff"; then
      fail "$name $fmt differs from $(basename "$want"):"; head -40 "$out.diff"
    else
      echo "ok   $name $fmt ($(wc -c < "$got") bytes)"
    fi
  done
done
(( ${ROOFPROBE_UPDATE_GOLDEN:-0} == 1 )) && exit 0
echo "$checked exports checked, $failures failed"
(( failures == 0 && checked == ${#inputs[@]} * ${#formats[@]} ))
