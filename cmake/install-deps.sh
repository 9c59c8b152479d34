#!/usr/bin/env bash
# Installs what roofprobe needs to build and test, with the system package manager, only when
# something is missing (a second run does nothing). Debian/Ubuntu (apt). On clusters where the
# dependencies come from modules or Spack, skip this and use the plain cmake route in README.md.
set -euo pipefail

packages=(cmake g++ make pkg-config git libyaml-cpp-dev libcli11-dev libgtest-dev libgmock-dev
          libbenchmark-dev libopenmpi-dev openmpi-bin libhwloc-dev gnuplot-nox libceres-dev)
# The `fuzz` preset (tests/fuzz, README "Reliability"): clang with libFuzzer and the sanitizer
# runtimes, and clang's OpenMP for the CPU probes the config fuzzer links. Debian 12 ships the
# runtimes in libclang-rt-dev; older Ubuntu has them in clang's own libclang-common-*-dev.
packages+=(clang libomp-dev)
if apt-cache show libclang-rt-dev > /dev/null 2>&1; then packages+=(libclang-rt-dev); fi
# Optional extras: likwid (reference CPU figures for the README comparison).
[[ ${ROOFPROBE_WITH_LIKWID:-0} == 1 ]] && packages+=(likwid)

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
