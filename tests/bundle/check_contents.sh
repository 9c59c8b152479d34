#!/usr/bin/env bash
# bundle.contents: what the tarball holds and that it is self-contained.
#   check_contents.sh TARBALL WORK WITH_CUDA CUDA_ARCHITECTURES [CUOBJDUMP]
# - the programs, the acceptance script, the reference files, BUNDLE.txt;
# - every executable carries RPATH $ORIGIN/../lib (DT_RPATH, which also serves the bundled
#   libraries' own dependencies) and no path of this machine;
# - static CUDA runtime: no libcudart.so needed;
# - closure: the loader, run on each executable, resolves every library either inside lib/ or
#   to one that every host provides (glibc, libstdc++/libgcc_s, the NVIDIA driver);
# - fat binary: device code for every architecture of CUDA_ARCHITECTURES (cuobjdump --list-elf)
#   and PTX for the "-virtual"/plain ones (--list-ptx).
set -euo pipefail
. "$(dirname "$0")/common.sh"
tarball=$1 work=$2 with_cuda=$3 archs=$4 cuobjdump=${5:-}
unpack_bundle "$tarball" "$work"
echo "bundle: $tarball, $(du -k "$tarball" | cut -f1) KiB packed, $(du -sk "$root" | cut -f1) KiB unpacked"

programs=(roofprobe roofprobe-bench)
[[ $with_cuda == ON ]] && programs+=(roofprobe_gpu_tests)
for f in "${programs[@]/#/bin/}" bin/roofprobe-acceptance bin/peers-gpu bin/peers-cpu bin/gpu-checks BUNDLE.txt \
         share/roofprobe/reference/h100-sxm.yaml share/roofprobe/configs/default.yaml \
         share/roofprobe/bench/peer_tables.py share/roofprobe/bench/peers_torch.py \
         share/roofprobe/bench/ncu_known_work.py; do
  [[ -s $root/$f ]] || fail "$f missing from the bundle"
done
for p in "${programs[@]}" roofprobe-acceptance peers-gpu peers-cpu gpu-checks; do [[ -x $root/bin/$p ]] || fail "bin/$p not executable"; done
ls "$root"/lib/*.so* > /dev/null 2>&1 || fail "lib/ holds no library"
cat "$root/BUNDLE.txt"
grep -q '^host must provide: glibc >= 2\.[0-9]*' "$root/BUNDLE.txt" || fail "BUNDLE.txt does not say which glibc it needs"

real_root=$(readlink -f "$root")
for p in "${programs[@]}"; do
  exe=$root/bin/$p
  dyn=$(readelf -d "$exe")
  grep -q 'Library rpath: \[$ORIGIN/../lib\]' <<< "$dyn" || fail "bin/$p: no RPATH \$ORIGIN/../lib: $(grep -E 'R(UN)?PATH' <<< "$dyn")"
  ! grep -q 'RUNPATH' <<< "$dyn" || fail "bin/$p has a RUNPATH (it would hide the RPATH from the bundled libraries)"
  ! grep -q 'libcudart' <<< "$dyn" || fail "bin/$p needs libcudart.so: the CUDA runtime must be linked statically"
  # The loader's view from an empty environment: every library from lib/ or the host's base set.
  while read -r name arrow path _; do
    [[ $arrow == "=>" ]] || continue
    if [[ $path == "not" ]]; then
      [[ $name =~ $host_provided ]] || fail "bin/$p: $name not found"
    elif [[ $(readlink -f "$path") != "$real_root/lib/"* && ! $name =~ $host_provided ]]; then
      fail "bin/$p loads $name from the host ($path), not from the bundle's lib/"
    fi
  done < <(env -i /usr/bin/ldd "$exe")
done
echo "closure: ok (${programs[*]}: every library from lib/ or the host's glibc/libstdc++/driver)"

if [[ $with_cuda == ON && -n $cuobjdump ]]; then
  elf=$("$cuobjdump" --list-elf "$root/bin/roofprobe")
  ptx=$("$cuobjdump" --list-ptx "$root/bin/roofprobe")
  IFS=';' read -ra list <<< "$archs"
  for a in "${list[@]}"; do
    n=${a%%-*}
    if [[ $a != *-virtual ]]; then grep -q "sm_$n\b" <<< "$elf" || fail "no sm_$n device code in bin/roofprobe"; fi
    if [[ $a != *-real ]]; then grep -q "sm_$n\b" <<< "$ptx" || fail "no compute_$n PTX in bin/roofprobe"; fi
    if [[ $a == *-real ]]; then ! grep -q "sm_$n\b" <<< "$ptx" || fail "PTX for sm_$n, expected machine code only"; fi
  done
  echo "fat binary: ok ($archs; $(grep -c 'ELF file' <<< "$elf") cubins, $(grep -c 'PTX file' <<< "$ptx") PTX)"
fi
echo "bundle.contents: ok"
