#!/usr/bin/env python3
"""bench/compare_likwid.py reads roofprobe's FMA ceilings from a machine file's compute: list, not
the device's theoretical peaks listed earlier under the same names. Usage:
compare_likwid_test.py SOURCE_DIR"""
import importlib.util
import os
import sys

src = sys.argv[1]
spec = importlib.util.spec_from_file_location("compare_likwid", os.path.join(src, "bench", "compare_likwid.py"))
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)

# A run whose device peaks (start-up clock 3874 MHz) differ from its ceilings: FP64.FMA 224.3 of
# 230.4 at 3600 MHz, where device.theoretical says 247.9.
machine = open(os.path.join(src, "results/measured/xeon-amx-vm/20261126T0553Z/machine.yaml")).read()
for precision, want in (("fp64", (224.3, 230.4)), ("fp32", (449.3, 462.7))):
    gflops, theoretical, mhz = compare.fma_ceiling(machine, precision)
    if abs(gflops - want[0]) > 0.1 or abs(theoretical - want[1]) > 0.1 or not 3000 < mhz < 4200:
        sys.exit(f"FAIL: {precision}: read {gflops} GFLOP/s, theoretical {theoretical} at {mhz} MHz; want {want}")
print("ok: the FMA ceilings come from compute:")
