# Sourced by the bundle tests: unpack TARBALL into WORK (emptied first) and set $root to the
# bundle's top folder. Every test unpacks its own copy, so the tests can run in parallel.
fail() { echo "FAIL: $*" >&2; exit 1; }
unpack_bundle() {
  local tarball=$1 work=$2
  [[ -s $tarball ]] || fail "$tarball missing: build the 'bundle' target first (cmake --build --preset bundle)"
  rm -rf "$work" && mkdir -p "$work/unpacked"
  tar -xzf "$tarball" -C "$work/unpacked" || fail "cannot unpack $tarball"
  local tops=("$work"/unpacked/*)
  (( ${#tops[@]} == 1 )) && [[ -d ${tops[0]} ]] || fail "the tarball must hold one top folder, it holds: ${tops[*]}"
  root=${tops[0]}
}
# The libraries every host provides (cmake/BundleRuntimeDeps.cmake leaves them out).
host_provided='^(ld-linux.*|linux-vdso.*|lib(c|m|dl|rt|pthread|resolv|util|mvec|anl|nsl)|lib(stdc\+\+|gcc_s)|libcuda|libnvidia-.*)\.so'
