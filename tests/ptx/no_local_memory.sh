#!/usr/bin/env bash
# Every kernel in a built binary (all architectures of its fat binary, every template instance
# the probes launch, not only the ones the per-family checks compile) must run without local
# memory: no stack frame, no local allocation, no LDL/STL in its SASS. A spill in a probe's loop
# would time local-memory traffic instead of the probe's own work.
#   no_local_memory.sh CUOBJDUMP BINARY [MIN_KERNELS]
set -euo pipefail
cuobjdump=$1 binary=$2 min_kernels=${3:-50}
usage=$("$cuobjdump" -res-usage "$binary")
functions=$(grep -c 'Function ' <<< "$usage" || true)
# The CUDA backend holds over a hundred kernels; far fewer means the listing was not parsed.
if (( functions < min_kernels )); then
  echo "FAIL  only $functions kernels listed by cuobjdump -res-usage $binary"
  exit 1
fi
bad=$(awk '/Function /{f=$2} /REG:/{ if ($0 !~ /STACK:0 / || $0 !~ /LOCAL:0 /) print f": "$0 }' <<< "$usage")
ldl=$("$cuobjdump" -sass "$binary" | grep -cE '^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?(LDL|STL)\b' || true)
echo "kernels: $functions, with a stack frame or local memory: $(grep -c . <<< "$bad" || true), LDL/STL: $ldl"
if [[ -n $bad || $ldl != 0 ]]; then
  [[ -n $bad ]] && echo "FAIL  kernels using local memory:" && echo "$bad" | c++filt | head -20
  exit 1
fi
echo "ok    no kernel of $binary uses local memory"
