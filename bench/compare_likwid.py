#!/usr/bin/env python3
"""roofprobe's CPU bandwidth kernels and FMA peaks against likwid-bench's same kernels, on the
same working sets, thread count and cores, interleaved run by run, as one Markdown table.

Rows: kernel (load/update/copy/store/store_mem = roofprobe's read/rmw/copy/write/write_nt) x
level (L1, L2, L3, DRAM), then FP64/FP32 FMA against likwid's peakflops(_sp)_avx512_fma and
_avx_fma and against roofprobe's theoretical peak (at the clock measured during its samples).

Working sets come from the cache sizes of the cores used (sysfs): L1 and L2 = 50% of the
threads' private caches together, L3 = 50% of the L3 instances they share, DRAM = 16 x L3.
With --levels-from MACHINE_YAML the L3 and DRAM sets come from a roofprobe run of this machine
instead: the middle (geometric mean) of the level's working_set_bytes span. Use it where the
share of the L3 a run gets is not what sysfs reports (a VM: 480 MiB reported, a knee near 110 MB);
the private L1 and L2 are what sysfs says.
Each round runs, per row: roofprobe, likwid _avx512, roofprobe, likwid _avx (so each tool gets
the same number of runs); a row's figure per tool is its best run over all rounds. A roofprobe
run measures the point at its default vector widths (512 and 256 bits on AVX-512 builds) and
its figure is the faster width's median over its samples (what its fitter takes per size);
likwid's is the MByte/s (MFlops/s) it prints for its run. Both use 1e6/1e9-based units.

usage: bench/compare_likwid.py ROOFPROBE [--threads 2] [--rounds 3] [--out DIR] [--levels-from MACHINE_YAML]
                              [--fma-only]
Needs likwid-bench (Debian package likwid)."""
import argparse
import csv
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

KERNELS = [("read", "load"), ("rmw", "update"), ("copy", "copy"), ("write", "store"), ("write_nt", "store_mem")]
ISAS = ["avx512", "avx"]
# roofprobe's sampling for one point: about as long as a likwid-bench run (>= 1 s).
MEASUREMENT = ("{warmup_seconds: 0.1, min_samples: 10, min_seconds: 1.0, max_noise: 0.01, "
               "timeout_seconds: 2.0, target_launch_seconds: 0.02}")


def cache_totals(threads):
    """Bytes of each data/unified cache level over cpus 0..threads-1 (distinct instances)."""
    totals = {}
    for cpu in range(threads):
        for index in glob.glob(f"/sys/devices/system/cpu/cpu{cpu}/cache/index*"):
            read = lambda name: open(os.path.join(index, name)).read().strip()
            if read("type") == "Instruction":
                continue
            size = read("size")
            size = int(size[:-1]) * {"K": 1024, "M": 1 << 20, "G": 1 << 30}[size[-1]] if size[-1].isalpha() else int(size)
            totals.setdefault(int(read("level")), {})[read("shared_cpu_list")] = size
    return {level: sum(inst.values()) for level, inst in totals.items()}


def working_sets(threads):
    """{level: bytes}: half of each cache, and 16 times the last one for DRAM, but no more than a
    quarter of the memory (a VM on a server part: 300 MiB of L3 beside 24 GiB) nor less than 4
    times the last cache."""
    c = cache_totals(threads)
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    dram = max(4 * c[3], min(16 * c[3], memory // 4)) // 4096 * 4096
    return {"L1": c[1] // 2, "L2": c[2] // 2, "L3": c[3] // 2, "DRAM": dram}


def working_sets_from(machine_yaml):
    """{level: bytes}: the geometric middle of each memory level's span in a machine file."""
    text = open(machine_yaml).read()
    memory = text[text.index("\nmemory:"):]
    end = re.search(r"\n\S", memory[1:])
    memory = memory[: end.start() + 1] if end else memory
    sizes = {}
    for entry in re.split(r"\n  - ", memory)[1:]:
        level = re.search(r"level: (\S+)", entry)
        span = re.search(r"working_set_bytes: \[([0-9.e+]+), ([0-9.e+]+)\]", entry)
        if level and span and level.group(1) in ("L1", "L2", "L3", "DRAM"):
            middle = (float(span.group(1)) * float(span.group(2))) ** 0.5
            sizes[level.group(1)] = max(4096, int(middle) // 4096 * 4096)
    if not sizes:
        sys.exit(f"error: {machine_yaml}: no L1/L2/L3/DRAM level with a working_set_bytes span")
    return sizes


def roofprobe_point(binary, threads, probe_yaml, workdir):
    """Runs roofprobe on one config; returns the sweep rows and the machine file text."""
    with tempfile.TemporaryDirectory(dir=workdir) as d:
        config = os.path.join(d, "c.yaml")
        with open(config, "w") as f:
            f.write(f"measurement: {MEASUREMENT}\ncpu: {{threads: {threads}, probes: {probe_yaml}}}\n")
        subprocess.run([binary, "run", "--config", config, "--backend", "cpu", "--out", os.path.join(d, "o"), "-q"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        rows = list(csv.DictReader(open(os.path.join(d, "o", "sweep.csv"))))
        return rows, open(os.path.join(d, "o", "machine.yaml")).read()


def roofprobe_bandwidth(binary, threads, mode, size, workdir):
    """(GB/s, vector bits) of the faster of roofprobe's default vector widths at this point,
    each point's figure the median of its samples (as the fitter takes a size's best point)."""
    rows, _ = roofprobe_point(binary, threads, f"{{bandwidth: {{mode: [{mode}], working_set_bytes: [{size}]}}}}", workdir)
    points = {}
    for r in rows:
        bits = re.search(r"vector_bits=(\d+)", r["params"]).group(1)
        points.setdefault(bits, []).append(float(r["gbs"]))
    return max((statistics.median(v), int(bits)) for bits, v in points.items())


def roofprobe_fma(binary, threads, precision, workdir):
    """(GFLOP/s, theoretical GFLOP/s at the samples' clock, clock MHz) of <precision>.FMA."""
    _, machine = roofprobe_point(binary, threads, f"{{flops: {{precision: [{precision}], form: [fma], "
                                 "flops_per_element: [256, 1024], bytes_per_thread: 16KiB}}", workdir)
    return fma_ceiling(machine, precision)


def fma_ceiling(machine, precision):
    """(gflops, theoretical_gflops, clock_mhz) of the <precision>.FMA ceiling in a machine file's
    text. It is read from the top-level compute: list: device.theoretical names the same ceilings
    first, with the peak at the start-up clock as their gflops, which is not a measurement."""
    compute = machine[machine.index("\ncompute:"):]
    name = f"name: {precision.upper()}.FMA"
    if name not in compute:
        sys.exit(f"error: roofprobe published no {precision.upper()}.FMA ceiling (see its missing: list)")
    block = compute[compute.index(name):]
    end = block.find("\n  - ")  # the next ceiling
    block = block if end < 0 else block[:end]
    field = lambda k: float(re.search(rf"\n\s+{k}: ([0-9.e+-]+)", block).group(1))
    return field("gflops"), field("theoretical_gflops"), field("clock_mhz")


def likwid(test, size_bytes, threads):
    """likwid-bench's MByte/s or MFlops/s of one run, in GB/s or GFLOP/s."""
    out = subprocess.run(["likwid-bench", "-t", test, "-w", f"S0:{size_bytes}B:{threads}"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"MFlops/s:\s+([0-9.]+)", out) if "peakflops" in test else re.search(r"MByte/s:\s+([0-9.]+)", out)
    return float(m.group(1)) / 1e3


def likwid_tests(kernel, precision=None):
    if precision is None:
        return [f"{kernel}_{isa}" for isa in ISAS]
    sp = "_sp" if precision == "fp32" else ""
    return [f"peakflops{sp}_{isa}_fma" for isa in ISAS]


def run_rows(a, sizes):
    """rows[key] = {"roofprobe": [...], "<likwid test>": [...]} over all rounds, interleaved."""
    rows = {}
    per_round = (0 if a.fma_only else len(KERNELS) * len(sizes)) + 2
    for rnd in range(a.rounds):
        done = 0
        for mode, kernel in [] if a.fma_only else KERNELS:
            for level, size in sizes.items():
                # A round takes minutes: say where it is, one line per row (stderr, as the rest).
                done += 1
                print(f"round {rnd + 1} of {a.rounds}: row {done} of {per_round}, {kernel} at {level} "
                      f"({size // 1024} KiB)", file=sys.stderr, flush=True)
                r = rows.setdefault((mode, kernel, level), {"size": size})
                for test in likwid_tests(kernel):
                    r.setdefault("roofprobe", []).append(roofprobe_bandwidth(a.roofprobe, a.threads, mode, size, a.out))
                    r.setdefault(test, []).append(likwid(test, size, a.threads))
        for precision in ("fp64", "fp32"):
            done += 1
            print(f"round {rnd + 1} of {a.rounds}: row {done} of {per_round}, {precision.upper()}.FMA",
                  file=sys.stderr, flush=True)
            r = rows.setdefault((precision, None, "L1"), {"size": 16 * 1024 * a.threads})
            for test in likwid_tests(None, precision):
                r.setdefault("roofprobe", []).append(roofprobe_fma(a.roofprobe, a.threads, precision, a.out))
                r.setdefault(test, []).append(likwid(test, r["size"], a.threads))
        print(f"round {rnd + 1} of {a.rounds} done", file=sys.stderr, flush=True)
    return rows


def print_table(rows, a):
    if not a.fma_only:
        print_bandwidth_table(rows)
    print_fma_table(rows)


def print_bandwidth_table(rows):
    print(f"| kernel (roofprobe mode) | level | working set | roofprobe | likwid _avx512 | likwid _avx | roofprobe / best likwid |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (mode, kernel, level), r in rows.items():
        if kernel is None:
            continue
        ours, bits = max(r["roofprobe"])
        tests = likwid_tests(kernel)
        theirs = [max(r[t]) for t in tests]
        print(f"| {kernel} ({mode}) | {level} | {r['size'] / 1024:.0f} KiB | {ours:.1f} GB/s ({bits}-bit) | "
              f"{theirs[0]:.1f} | {theirs[1]:.1f} | {ours / max(theirs):.3f} |")
    print()


def print_fma_table(rows):
    print("| ceiling | roofprobe | likwid _avx512_fma | likwid _avx_fma | roofprobe / best likwid | "
          "theoretical at the samples' clock | roofprobe / theoretical |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (precision, kernel, level), r in rows.items():
        if kernel is not None:
            continue
        best = max(r["roofprobe"], key=lambda x: x[0])  # the run with the best GFLOP/s
        theirs = [max(r[t]) for t in likwid_tests(None, precision)]
        print(f"| {precision.upper()}.FMA | {best[0]:.1f} GFLOP/s | {theirs[0]:.1f} | {theirs[1]:.1f} | "
              f"{best[0] / max(theirs):.3f} | {best[1]:.1f} at {best[2]:.0f} MHz | {best[0] / best[1]:.3f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("roofprobe")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="/tmp/roofprobe-vs-likwid", help="scratch directory and raw.json")
    ap.add_argument("--levels-from", metavar="MACHINE_YAML",
                    help="working sets at the middle of each level of this machine file, not from sysfs")
    ap.add_argument("--fma-only", action="store_true", help="only the FMA rows (a minute instead of ten)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    sizes = working_sets(a.threads)
    if a.levels_from:
        measured = working_sets_from(a.levels_from)
        sizes.update({level: measured[level] for level in ("L3", "DRAM") if level in measured})
    started, load_before = time.strftime("%Y-%m-%d %H:%M:%S %Z"), os.getloadavg()[0]
    rows = run_rows(a, sizes)
    finished, load_after = time.strftime("%H:%M:%S %Z"), os.getloadavg()[0]
    with open(os.path.join(a.out, "raw.json"), "w") as f:
        json.dump({f"{k[0]}|{k[1]}|{k[2]}": v for k, v in rows.items()}, f, indent=1)
    print(f"{a.threads} threads, {a.rounds} rounds, {started} - {finished}, "
          f"1-minute load average {load_before:.1f} before, {load_after:.1f} after\n")
    print_table(rows, a)


if __name__ == "__main__":
    sys.exit(main())
