# The assertions the command batteries share, sourced by them. Each counts a case, prints
# "ok   ..." or "FAIL ...", and adds to $failures. The files of case NAME (NAME.stdout,
# NAME.stderr) are written in the working directory, so a battery cds into its own first.
#   EXPECT_TIMEOUT: seconds a command may run before it is killed (default 60).
failures=0 cases=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# expect NAME RC_KIND PATTERN -- CMD...: RC_KIND is "error" (exit 1 or 2, not a signal) or "ok".
# PATTERN is a grep -E regex the error line (or, for "ok", the first stderr line) must match
# ("-": none checked). An error is one `error: ...` line; beside it stderr may hold only `note:`
# and `warning:` lines.
expect() {
  local name=$1 kind=$2 pattern=$3
  shift 4
  cases=$((cases + 1))
  timeout -s KILL "${EXPECT_TIMEOUT:-60}" "$@" > "$name.stdout" 2> "$name.stderr" < /dev/null
  local rc=$?
  local first; first=$(grep -m1 -E '^error:' "$name.stderr" || head -n1 "$name.stderr")
  if [[ $kind == ok ]]; then
    (( rc == 0 )) || { fail "$name: exit $rc: $first"; return; }
  else
    (( rc == 1 || rc == 2 )) || { fail "$name: want exit 1 or 2, got $rc: $first"; return; }
    [[ $first == error:* ]] || { fail "$name: first stderr line is not 'error: ...': $first"; return; }
    local errors; errors=$(grep -c -E '^error:' "$name.stderr")
    (( errors == 1 )) || { fail "$name: $errors 'error:' lines, want one: $first"; return; }
    local other; other=$(grep -v -m1 -E '^(error|note|warning):' "$name.stderr")
    [[ -z $other ]] || { fail "$name: a stderr line beside the error is not a note or warning: $other"; return; }
  fi
  if [[ $pattern != - ]] && ! grep -qE -- "$pattern" <<< "$first"; then fail "$name: want /$pattern/ in: $first"; return; fi
  ok "$name: ${first:-exit 0}"
}
# refused NAME PATTERN -- CMD...: the strict form, for input refused before any work: exit 1 or 2,
# stderr exactly one line `error: ...` that matches the basic regex PATTERN, nothing on stdout.
refused() {
  local name=$1 pattern=$2
  shift 3
  cases=$((cases + 1))
  timeout -s KILL "${EXPECT_TIMEOUT:-60}" "$@" > "$name.stdout" 2> "$name.stderr" < /dev/null
  local rc=$?
  local said; said=$(cat "$name.stderr")
  (( rc == 1 || rc == 2 )) || { fail "$name: want exit 1 or 2, got $rc: $said"; return; }
  [[ $(grep -c . "$name.stderr") == 1 && $said == error:* ]] || { fail "$name: want one 'error: ...' line, got: $said"; return; }
  grep -q -- "$pattern" "$name.stderr" || { fail "$name: want /$pattern/ in: $said"; return; }
  [[ ! -s $name.stdout ]] || { fail "$name: printed: $(head -c 200 "$name.stdout")"; return; }
  ok "$name: $said"
}
absent() {  # absent NAME PATH: PATH was not made (not even as a link)
  cases=$((cases + 1))
  [[ ! -e $2 && ! -L $2 ]] && ok "$1: $2 not created" || fail "$1: $2 was created"
}
unchanged() {  # unchanged NAME FILE SUM: the file still has checksum SUM
  cases=$((cases + 1))
  [[ $(md5sum < "$2") == "$3" ]] && ok "$1: $2 unchanged" || fail "$1: $2 changed"
}
sum() { md5sum < "$1"; }
