#!/usr/bin/env bash
# bundle.chroot: the strongest form of "nothing but glibc, libstdc++/libgcc_s and the driver":
# a root file system holding only those (copied from this host, with no ld.so.cache and no
# /usr/lib), and the bundle. Inside it (chroot, env -i) roofprobe --version and list, the GPU
# tests (which skip: not even libcuda.so.1 is there) and roofprobe-bench's list must run.
# Skipped (exit 77) where chroot is not permitted.
#   run_chroot.sh TARBALL WORK WITH_CUDA
set -euo pipefail
. "$(dirname "$0")/common.sh"
tarball=$1 work=$2 with_cuda=$3
unpack_bundle "$tarball" "$work"
newroot=$work/root
mkdir -p "$newroot/lib64" "$newroot/lib" "$newroot/tmp" "$newroot/opt"

# The host's copies of exactly the host-provided base (the loader at its absolute path).
base=(libc.so.6 libm.so.6 libdl.so.2 librt.so.1 libpthread.so.0 libstdc++.so.6 libgcc_s.so.1)
cp -L /lib64/ld-linux-x86-64.so.2 "$newroot/lib64/"
cache=$(/sbin/ldconfig -p)  # read whole: an awk that exits early would SIGPIPE it under pipefail
for name in "${base[@]}"; do
  path=$(awk -v n="$name" '$1 == n && /x86-64/ {print $NF; exit}' <<< "$cache")
  [[ -n $path ]] || fail "$name not found on this host"
  cp -L "$path" "$newroot/lib/"
done
cp -a "$root" "$newroot/opt/roofprobe"
# No /proc in this root, but glibc finds $ORIGIN (the programs' RPATH $ORIGIN/../lib) by reading
# the link /proc/self/exe. A fixed link to bin/roofprobe gives every program here its true
# origin: they all live in bin/. (Without it even a correct bundle fails to load libgomp here.)
mkdir -p "$newroot/proc/self"
ln -s /opt/roofprobe/bin/roofprobe "$newroot/proc/self/exe"

command -v chroot > /dev/null || { echo "SKIP: no chroot program here"; exit 77; }
if ! chroot "$newroot" /opt/roofprobe/bin/roofprobe --version > /dev/null 2> "$work/chroot.err"; then
  if grep -qiE 'operation not permitted|permission denied' "$work/chroot.err"; then
    echo "SKIP: chroot is not permitted here: $(cat "$work/chroot.err")"
    exit 77
  fi
  fail "roofprobe --version in the minimal root: $(cat "$work/chroot.err")"
fi
chroot_bin=$(command -v chroot)
inside() { env -i PATH=/opt/roofprobe/bin "$chroot_bin" "$newroot" "$@"; }
inside /opt/roofprobe/bin/roofprobe --version
inside /opt/roofprobe/bin/roofprobe list > "$work/list.txt" || fail "roofprobe list in the minimal root"
grep -q '^flops \[cpu\]' "$work/list.txt" || fail "roofprobe list in the minimal root named no CPU probe"
inside /opt/roofprobe/bin/roofprobe-bench --benchmark_list_tests > "$work/bench.txt" ||
  fail "roofprobe-bench in the minimal root"
if [[ $with_cuda == ON ]]; then
  inside /opt/roofprobe/bin/roofprobe_gpu_tests > "$work/gpu.txt" 2>&1 || { cat "$work/gpu.txt"; fail "GPU tests in the minimal root"; }
  grep -q '^no CUDA device: ' "$work/gpu.txt" || fail "GPU tests in the minimal root gave no skip reason"
  echo "GPU tests in the minimal root: $(grep -m1 '^no CUDA device: ' "$work/gpu.txt")"
fi
echo "minimal root: $(cd "$newroot" && find . -type f | grep -v '^./opt/' | sort | tr '\n' ' ')"
echo "bundle.chroot: ok"
