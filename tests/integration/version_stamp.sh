#!/usr/bin/env bash
# The revision a binary stamps into every machine file's provenance is the source tree's as it was
# built, also in a build directory configured before the latest commits.
# Usage: version_stamp.sh ROOFPROBE SOURCE_DIR
set -u
roofprobe=$1 source_dir=$2
if ! command -v git > /dev/null || [ ! -e "$source_dir/.git" ]; then
  echo "SKIP: $source_dir is not a git checkout: the binary says 'unknown'"
  exit 0
fi
want=$(git -C "$source_dir" describe --always --dirty --abbrev=12)
got=$("$roofprobe" --version)
case "$got" in
  *"($want)") echo "ok: $got" ;;
  *) echo "FAIL: roofprobe --version says '$got'; the source tree is at $want"; exit 1 ;;
esac
