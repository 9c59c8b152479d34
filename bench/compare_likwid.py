#!/usr/bin/env python3
"""Side-by-side table of roofprobe's CPU ceilings and likwid-bench on the same machine, in the
same minutes: runs `roofprobe run --backend cpu` (or reads an existing machine.yaml), then
likwid-bench's load/update kernels at each fitted level's working set and its AVX FMA
peakflops kernels, and prints a Markdown table.

usage: bench/compare_likwid.py ROOFPROBE [--machine machine.yaml] [--out DIR]
Needs likwid-bench (Debian package likwid). likwid's MByte/s and MFlops/s are 1e6-based."""
import argparse
import math
import os
import re
import subprocess
import sys


def parse_machine(path):
    """Reads the fields the table needs from roofprobe's fixed-layout machine.yaml."""
    levels, compute, threads = [], {}, 1
    current = None
    for line in open(path):
        if m := re.match(r"^  threads: (\d+)", line):
            threads = int(m.group(1))
        if m := re.match(r"^  - level: (\S+)", line):
            current = {"level": m.group(1)}
            levels.append(current)
        elif m := re.match(r"^  - name: (\S+)", line):
            current = {"name": m.group(1)}
            compute[m.group(1)] = current
        elif current is not None and (m := re.match(r"^    (gbs|gflops): ([0-9.e+-]+)", line)):
            current[m.group(1)] = float(m.group(2))
        elif current is not None and (m := re.match(r"^    working_set_bytes: \[([0-9.e+]+), ([0-9.e+]+)\]", line)):
            current["ws"] = (float(m.group(1)), float(m.group(2)))
        elif current is not None and (m := re.match(r"^    by_series: \{(.*)\}", line)):
            for k, v in re.findall(r"mode=(\w+): ([0-9.e+-]+)", m.group(1)):
                current[k] = float(v)
    return levels, compute, threads


def likwid(test, size_kb, threads):
    out = subprocess.run(["likwid-bench", "-t", test, "-w", f"S0:{size_kb}kB:{threads}"],
                         capture_output=True, text=True, check=True).stdout
    mb = re.search(r"MByte/s:\s+([0-9.]+)", out)
    mf = re.search(r"MFlops/s:\s+([0-9.]+)", out)
    return float(mb.group(1)) / 1e3, float(mf.group(1)) / 1e3 if mf else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("roofprobe")
    ap.add_argument("--machine")
    ap.add_argument("--out", default="/tmp/roofprobe-vs-likwid")
    ap.add_argument("--avx", default="avx", help="likwid kernel suffix: avx or avx512")
    a = ap.parse_args()
    machine = a.machine
    if not machine:
        subprocess.run([a.roofprobe, "run", "--backend", "cpu", "--out", a.out, "-q"], check=True)
        machine = os.path.join(a.out, "machine.yaml")
    levels, compute, threads = parse_machine(machine)
    rows = []
    for lv in levels:
        lo, hi = lv["ws"]
        kb = max(8 * threads, int(round(math.sqrt(lo * hi) / 1000)))  # plateau centre
        load, _ = likwid(f"load_{a.avx}", kb, threads)
        update, _ = likwid(f"update_{a.avx}", kb, threads)
        rows.append((f"{lv['level']} read vs load_{a.avx}", f"{kb} kB", lv["gbs"], load, "GB/s"))
        if "rmw" in lv:
            rows.append((f"{lv['level']} rmw vs update_{a.avx}", f"{kb} kB", lv["rmw"], update, "GB/s"))
    for name, test in (("FP64.FMA", f"peakflops_{a.avx}_fma"), ("FP32.FMA", f"peakflops_sp_{a.avx}_fma")):
        if name in compute:
            _, flops = likwid(test, 16 * threads, threads)
            rows.append((f"{name} vs {test}", f"{16 * threads} kB", compute[name]["gflops"], flops, "GFLOP/s"))
    print(f"| ceiling | working set | roofprobe | likwid-bench | roofprobe / likwid |")
    print(f"| --- | --- | --- | --- | --- |")
    for name, ws, ours, theirs, unit in rows:
        print(f"| {name} | {ws} | {ours:.1f} {unit} | {theirs:.1f} {unit} | {100 * ours / theirs:.1f}% |")


if __name__ == "__main__":
    sys.exit(main())
