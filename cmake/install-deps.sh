#!/usr/bin/env bash
# Installs what roofprobe needs to build and test, with the system package manager, only when
# something is missing (a second run does nothing). Debian/Ubuntu (apt). On clusters where the
# dependencies come from modules or Spack, skip this and use the plain cmake route in README.md.
set -euo pipefail

packages=(cmake g++ make pkg-config git libyaml-cpp-dev libcli11-dev libgtest-dev libgmock-dev
          libbenchmark-dev libopenmpi-dev openmpi-bin libhwloc-dev gnuplot-nox libceres-dev)
# The `fuzz` preset (tests/fuzz, docs/RELIABILITY.md): clang with libFuzzer and the sanitizer
# runtimes, and clang's OpenMP for the CPU probes the config fuzzer links. Debian 12 ships the
# runtimes in libclang-rt-dev; older Ubuntu has them in clang's own libclang-common-*-dev.
packages+=(clang libomp-dev)
# The style check (ctest -R format.sources): Debian's clang-format, whose version fixes the output.
packages+=(clang-format)
# The compiler cache the top-level CMakeLists.txt uses when present (ROOFPROBE_CCACHE).
packages+=(ccache)
# bench/peers-gpu reads machine files with PyYAML (ctest -R peers_tables).
packages+=(python3-yaml)
if apt-cache show libclang-rt-dev > /dev/null 2>&1; then packages+=(libclang-rt-dev); fi
# Optional extras: likwid (reference CPU figures for the comparison in docs/METHODOLOGY.md).
[[ ${ROOFPROBE_WITH_LIKWID:-0} == 1 ]] && packages+=(likwid)

# SASS checks (ctest -L ptx) need cuobjdump, which some CUDA installs leave out (this machine's
# CUDA 13.0 has nvcc and ptxas only). NVIDIA publishes it on PyPI as a wheel; it goes into a
# private folder of the checkout (build/tools, git-ignored), where tests/ptx/CMakeLists.txt looks.
install_sass_tools() {
  local nvcc root tools major
  nvcc=$(command -v nvcc || true)
  [[ -z $nvcc && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
  [[ -n $nvcc ]] || return 0                          # no CUDA: no SASS checks to run
  [[ -x $(dirname "$nvcc")/cuobjdump ]] && return 0   # the toolkit ships it
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  tools=$root/build/tools
  major=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  if compgen -G "$tools/nvidia/cu$major/bin/cuobjdump" > /dev/null; then
    echo "install-deps: cuobjdump present in build/tools"
    return 0
  fi
  # PyPI has cuobjdump/nvdisasm wheels from 13.2 on (none for 13.0/13.1); a newer disassembler
  # of the same major version reads older cubins. Pinned so that CI's SASS listing is repeatable.
  local version
  case $major in
    13) version=13.2.51 ;;
    *) echo "install-deps: no cuobjdump wheel pinned for CUDA $major: SASS checks will not run" >&2
       return 0 ;;
  esac
  echo "install-deps: cuobjdump and nvdisasm $version from PyPI into build/tools"
  # A failed download is not fatal here: ctest's sass.tools_present then fails and says why.
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
    --target "$tools" "nvidia-cuda-cuobjdump==$version" "nvidia-cuda-nvdisasm==$version" ||
    echo "install-deps: warning: pip could not install cuobjdump: SASS checks will fail" >&2
}
install_sass_tools

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} == 0 )); then
  echo "install-deps: all dependencies present"
  exit 0
fi
if ! command -v apt-get > /dev/null; then
  echo "error: missing ${missing[*]} and no apt-get here: install them with your package manager, modules or Spack" >&2
  exit 1
fi
sudo=""
if (( EUID != 0 )); then
  command -v sudo > /dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
