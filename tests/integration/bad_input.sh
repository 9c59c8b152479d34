#!/usr/bin/env bash
# Bad input battery (issue 6): YAML bombs, deep nesting, huge lists, binary garbage, non-UTF-8,
# a directory or a missing file, non-finite numbers, wrong schema versions, fed to both
#   roofprobe run --config FILE --out DIR     and     roofprobe validate FILE.
# Each must print exactly one line "error: ..." on stderr naming the file (and the line where
# there is one), nothing on stdout, exit non-zero (not by a signal), use at most
# ROOFPROBE_BAD_INPUT_SECONDS (default 1) of CPU time and write no file. The bound is on CPU
# time, which a bomb or a quadratic reader spends whatever else runs, and not on the wall clock,
# which a busy machine stretches; a process that hangs without spending CPU is killed at 10x the
# bound of wall time.
#   bad_input.sh ROOFPROBE WORKDIR
set -uo pipefail
rp=$1 work=$2
limit=${ROOFPROBE_BAD_INPUT_SECONDS:-1}
rm -rf "$work" && mkdir -p "$work/in" "$work/cwd"
in=$work/in
source "$(dirname "$0")/expect_lib.sh"

# check NAME FILE RUN_PATTERN VALIDATE_PATTERN: both commands on FILE (a pattern "-" skips that
# command). Patterns are grep -E regexes the error line must match after the "error: FILE" prefix
# check; "@LINE" in a pattern stands for FILE:<number>:.
check() {
  local name=$1 file=$2 run_pattern=$3 validate_pattern=$4
  local cmd pattern out rc
  for cmd in run validate; do
    if [[ $cmd == run ]]; then pattern=$run_pattern; else pattern=$validate_pattern; fi
    [[ $pattern == - ]] && continue
    out=$work/out-$name-$cmd
    local args=(validate "$file")
    [[ $cmd == run ]] && args=(run --config "$file" --out "$out/run" --backend cpu)
    # bash's `time` of the subshell: the user and system CPU seconds of roofprobe.
    local cpu
    cpu=$( { TIMEFORMAT='%3U %3S'; time (cd "$work/cwd" && timeout -s KILL "$((10 * limit))" "$rp" "${args[@]}" \
                                          > "$out.stdout" 2> "$out.stderr"; echo "rc=$?" > "$out.rc"); } 2>&1 )
    rc=$(sed 's/rc=//' "$out.rc")
    local ms; ms=$(awk -v t="$cpu" 'BEGIN { split(t, a, " "); printf "%d", (a[1] + a[2]) * 1000 }')
    local what="$name ($cmd, ${ms} ms CPU)"
    local err; err=$(cat "$out.stderr")
    if (( rc == 137 || rc == 124 )); then fail "$what: did not finish within $((10 * limit)) s"; continue; fi
    if (( ms > limit * 1000 )); then fail "$what: used more than $limit s of CPU time"; continue; fi
    if (( rc == 0 )); then fail "$what: exit 0"; continue; fi
    if (( rc > 125 )); then fail "$what: killed by a signal (exit $rc): $err"; continue; fi
    if [[ -s $out.stdout ]]; then fail "$what: wrote to stdout: $(head -c 300 "$out.stdout")"; continue; fi
    if (( $(wc -l < "$out.stderr") != 1 )); then fail "$what: want one stderr line, got: $(head -c 600 "$out.stderr")"; continue; fi
    if [[ $err != "error: $file"* ]]; then fail "$what: want 'error: $file...', got: $err"; continue; fi
    local re=${pattern//@LINE/$(printf '%s' "$file" | sed 's/[][\.*^$+?(){}|]/\\&/g'):[0-9]+:}
    if ! grep -qE -- "$re" "$out.stderr"; then fail "$what: want /$re/ in: $err"; continue; fi
    if [[ -e $out ]]; then fail "$what: created $out"; continue; fi
    if [[ -n $(ls -A "$work/cwd") ]]; then fail "$what: wrote $(ls -A "$work/cwd") in the working directory"; rm -rf "${work:?}/cwd/"*; continue; fi
    echo "ok   $what: $(head -c 200 "$out.stderr")"
  done
}

# A valid machine file to corrupt, written by this roofprobe (fit of a synthetic sweep).
{
  echo "working_set_bytes,gbs"
  for kib in 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072; do
    gbs=200; (( kib > 32 )) && gbs=100; (( kib > 1024 )) && gbs=50; (( kib > 16384 )) && gbs=20
    echo "$((kib * 1024)),$gbs"; echo "$((kib * 1024)),$gbs.5"
  done
} > "$work/sweep.csv"
"$rp" fit --bandwidth-csv "$work/sweep.csv" --out "$work/valid-machine.yaml" > /dev/null 2>&1 \
  || { echo "FAIL: cannot write the valid machine file to corrupt"; exit 1; }
"$rp" validate "$work/valid-machine.yaml" > /dev/null || { echo "FAIL: the fitted machine file does not validate"; exit 1; }
machine() { cp "$work/valid-machine.yaml" "$in/$1"; echo "$in/$1"; }   # machine NAME -> path of a copy
config_ok=$'cpu:\n  probes:\n    flops: {precision: fp64}\n'

# --- files that are not there, or not files --------------------------------------------------
check missing "$in/absent.yaml" "no such file" "no such file"
check directory "$in" "is a directory" "is a directory"
# Devices and FIFOs are not read at all: /dev/zero never ends, a FIFO may never be written.
check dev_null /dev/null "not a regular file" "not a regular file"
check dev_zero /dev/zero "not a regular file" "not a regular file"

# --- YAML bombs: aliases expanding exponentially ("billion laughs") --------------------------
bomb() {  # bomb PREFIX INDENT: a list of 10 levels of 10 aliases each, 10^10 leaves if expanded
  printf '%s\n' "$1"
  printf '%*s- &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' "$2" ''
  for i in 1 2 3 4 5 6 7 8 9; do
    local p=$((i - 1))
    printf '%*s- &l%d [*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d]\n' "$2" '' "$i" $p $p $p $p $p $p $p $p $p $p
  done
}
bomb "lol:" 2 > "$in/bomb-top.yaml"
check bomb_top "$in/bomb-top.yaml" "@LINE aliases expand" "@LINE aliases expand"
bomb $'cpu:\n  probes:\n    flops:\n      flops_per_element:' 8 > "$in/bomb-config.yaml"
check bomb_in_config "$in/bomb-config.yaml" "@LINE aliases expand" -
{ sed -n '/^missing:/q;p' "$work/valid-machine.yaml"; bomb "missing:" 2; sed -n '/^provenance:/,$p' "$work/valid-machine.yaml"; } > "$in/bomb-machine.yaml"
check bomb_in_machine "$in/bomb-machine.yaml" - "@LINE aliases expand"
# An alias of the whole list inside itself (a cycle in yaml-cpp's node graph): refused from the
# parser's events, before anything walks the graph.
printf 'cpu:\n  probes:\n    flops:\n      flops_per_element: &a [1, *a]\n' > "$in/cycle.yaml"
check alias_cycle "$in/cycle.yaml" "@LINE an alias refers to a node it is inside" "@LINE an alias refers to a node it is inside"

# --- deep nesting ----------------------------------------------------------------------------
head -c 50000 /dev/zero | tr '\0' '[' > "$in/deep-flow.yaml"
check deep_flow "$in/deep-flow.yaml" "@LINE.*nested too deeply" "@LINE.*nested too deeply"
{ printf 'cpu: '; for ((i = 0; i < 10000; i++)); do printf '{a: '; done; echo; } > "$in/deep-map.yaml"
check deep_map "$in/deep-map.yaml" "@LINE.*nested too deeply" "@LINE.*nested too deeply"
{ printf 'memory:\n  '; for ((i = 0; i < 3000; i++)); do printf -- '- '; done; echo x; } > "$in/deep-block.yaml"
check deep_block "$in/deep-block.yaml" "@LINE" "@LINE"

# --- huge lists: 1e6 items -------------------------------------------------------------------
{ printf 'cpu:\n  probes:\n    flops:\n      flops_per_element: ['; seq -s, 1 1000000; echo ']'; } > "$in/huge-config.yaml"
check huge_list_config "$in/huge-config.yaml" "too large for a config" "too large for a machine file"
{ cat "$work/valid-machine.yaml"; echo "scaling:"; yes '  - {units: 1, DRAM: 1}' | head -n 1000000; } > "$in/huge-machine.yaml"
check huge_list_machine "$in/huge-machine.yaml" "too large" "too large for a machine file"
# Just under the limits: the densest YAML the readers accept must still be quick.
{ printf 'cpu:\n  probes:\n    flops:\n      flops_per_element: ['; yes '1,' | head -n 32000 | tr -d '\n'; echo '1]'; } > "$in/dense-config.yaml"
check dense_config "$in/dense-config.yaml" "@LINE.*listed twice" -
{ printf 'schema: roofprobe.machine/1\nmissing: ['; yes 'a,' | head -n 128000 | tr -d '\n'; echo 'a]'; } > "$in/dense-machine.yaml"
check dense_machine "$in/dense-machine.yaml" - "@LINE.*complete: missing"

# --- binary garbage and non-UTF-8 ------------------------------------------------------------
RANDOM=42
garbage=""
for ((i = 0; i < 4096; i++)); do garbage+=$(printf '\\%03o' $((RANDOM % 256))); done
printf "$garbage" > "$in/garbage.bin"
check garbage "$in/garbage.bin" "" ""
head -c 4096 "$rp" > "$in/elf-head.bin"
check elf_header "$in/elf-head.bin" '@LINE.*\\x00' '@LINE.*\\x00'
printf 'cpu:\n  probes:\n    flops: {precision: "fp\\0\\n64"}\n' > "$in/nul-value.yaml"
check nul_in_value "$in/nul-value.yaml" "@LINE.*'fp\\\\x00\\\\x0a64' is not one of the choices" -
printf 'cpu:\n  probes:\n    flops: {precision: \xff\xfe\x80}\n' > "$in/latin1-value.yaml"
check non_utf8_value "$in/latin1-value.yaml" '@LINE.*\\xff\\xfe\\x80.*not one of the choices' "@LINE.*schema: missing"
printf 'cpu:\n  probes:\n    fl\xe9ps: {}\n' > "$in/latin1-key.yaml"
check non_utf8_key "$in/latin1-key.yaml" '@LINE.*fl\\xe9ps: unknown key' -
printf '\xff\xfec\x00p\x00u\x00:\x00 \x00{\x00}\x00\n\x00' > "$in/utf16.yaml"
check utf16 "$in/utf16.yaml" "" ""
printf 'cpu:\n  probes:\n    "flops\\n\\u001b[31mred": {}\n' > "$in/escapes-key.yaml"
check control_chars_key "$in/escapes-key.yaml" '@LINE.*flops\\x0a\\x1b\[31mred: unknown key' -
printf 'cpu:\n  probes:\n    flops: {precision: "\\x"}\n' > "$in/bad-escape.yaml"
check bad_escape "$in/bad-escape.yaml" "@LINE.*malformed YAML" "@LINE.*malformed YAML"
{ printf 'cpu:\n  probes:\n    flops: {precision: '; head -c 60000 /dev/zero | tr '\0' 'k'; echo '}'; } > "$in/long-value.yaml"
check long_value "$in/long-value.yaml" '@LINE.*precision: .kkkk*\.\.\.$' -

# --- non-finite numbers ----------------------------------------------------------------------
for v in .nan .inf -.inf .NaN; do
  printf 'measurement:\n  min_seconds: %s\n%s' "$v" "$config_ok" > "$in/config$v.yaml"
  check "config_min_seconds_$v" "$in/config$v.yaml" "@LINE.*measurement.min_seconds: expected a finite number" -
  sed "0,/gbs: [0-9.e+]*/s//gbs: $v/" "$work/valid-machine.yaml" > "$in/machine-gbs$v.yaml"
  check "machine_gbs_$v" "$in/machine-gbs$v.yaml" - "@LINE.*memory\[0\]\.gbs: not a finite number"
done
printf 'cpu:\n  probes:\n    bandwidth: {working_set_bytes: .inf}\n' > "$in/size-inf.yaml"
check config_size_inf "$in/size-inf.yaml" "@LINE.*working_set_bytes: malformed size" -
printf 'cpu:\n  threads: 1e300\n  probes: {flops: {}}\n' > "$in/threads-huge.yaml"
check config_threads_1e300 "$in/threads-huge.yaml" "@LINE.*cpu.threads: must be between" -
sed 's/compute_units: .*/compute_units: 1e300/' "$work/valid-machine.yaml" > "$in/machine-units-huge.yaml"
check machine_count_1e300 "$in/machine-units-huge.yaml" - "@LINE.*device.compute_units: out of range"
sed 's/memory_bytes: .*/memory_bytes: -5/' "$work/valid-machine.yaml" > "$in/machine-negative-bytes.yaml"
check machine_negative_bytes "$in/machine-negative-bytes.yaml" - "@LINE.*device.memory_bytes: expected a size in bytes"

# --- wrong schema versions and wrong shapes --------------------------------------------------
for s in roofprobe.machine/2 roofprobe.machine/0 '1' '[roofprobe.machine/1]'; do
  tag=${s//[^a-z0-9]/_}
  sed "s|^schema: .*|schema: $s|" "$work/valid-machine.yaml" > "$in/schema-$tag.yaml"
  check "schema_$tag" "$in/schema-$tag.yaml" "@LINE.*unknown key" "@LINE.*schema"
done
grep -v '^schema:' "$work/valid-machine.yaml" > "$in/schema-none.yaml"
check schema_missing "$in/schema-none.yaml" "@LINE.*unknown key" "@LINE.*schema: missing"
printf 'schema: roofprobe.config/2\n%s' "$config_ok" > "$in/config-schema.yaml"
check config_schema_key "$in/config-schema.yaml" "@LINE.*schema: unknown key" "@LINE.*unsupported schema"
sed 's/^  theoretical:$/  theoretical: [7]/; /^  theoretical:/{n;/^    \[\]$/d}' "$work/valid-machine.yaml" > "$in/theoretical-scalar.yaml"
check machine_scalar_item "$in/theoretical-scalar.yaml" - "@LINE.*device.theoretical\[\]: expected a mapping"
printf '{[cpu]: {probes: {flops: {}}}}\n' > "$in/list-key.yaml"
check config_list_key "$in/list-key.yaml" "@LINE.*expected a plain key" "@LINE.*schema: missing"

if (( failures == 0 )); then echo "integration.bad_input: all ok"; else echo "$failures failures"; exit 1; fi
