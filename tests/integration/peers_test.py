#!/usr/bin/env python3
"""bench/peers-gpu and bench/peers-cpu without a GPU and without running a peer: their tables from
recorded real outputs, checked against figures read off those files by hand; one line and a
non-zero exit on bad input, on a user's non-empty --out, and (where there is none) without a GPU.
Usage: peers_test.py SOURCE_DIR ROOFPROBE WORK

Recorded outputs: the H200 acceptance run results/measured/h200-sxm/20261125T2354Z/ (machine.yaml,
cublas.txt, diagnostics/torch-bandwidth.txt) and the result tables gpu-benches publishes
(tests/unit/fixtures/gpu-benches/); the CPU rows from compare_likwid.py's raw.json of
results/measured/xeon-amx-vm/, whose table.md (printed by compare_likwid.py then) has the ratios."""
import importlib.util
import os
import shutil
import subprocess
import sys

src, roofprobe, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []
h200 = os.path.join(src, "results/measured/h200-sxm/20261125T2354Z")
fixtures = os.path.join(src, "tests/unit/fixtures/gpu-benches")
peers_gpu = os.path.join(src, "bench/peers-gpu")
peers_cpu = os.path.join(src, "bench/peers-cpu")


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


def run(*args):
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def table_rows(text):
    """{first cell: [cells]} of the Markdown table in text."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| ceiling") and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def one_error_line(rc, out, err, want_rc, want_text, what):
    check(rc == want_rc, f"{what}: exit {rc}, expected {want_rc}")
    check(out == "", f"{what}: printed on stdout: {out[:200]}")
    check(len(err.splitlines()) == 1 and err.startswith("error: ") and want_text in err,
          f"{what}: stderr is not one 'error: ...{want_text}...' line: {err!r}")


# ---- the H200 table from the recorded outputs -------------------------------------------------
recorded = ["--machine", f"{h200}/machine.yaml", "--recorded", f"cublas={h200}/cublas.txt",
            "--recorded", f"torch={h200}/diagnostics/torch-bandwidth.txt",
            "--recorded", f"gpu-l2-cache={fixtures}/gpu-l2-cache_h200.txt",
            "--recorded", f"gpu-stream={fixtures}/gpu-stream_h200.txt"]
rc, out, err = run(peers_gpu, *recorded)
rows = table_rows(out)
# (roofprobe figure, best peer cell, ratio, verdict), each read off the files:
#   machine.yaml: L2 gbs 8725.739907 (ca copy); HBM by_series, the faster cache_op per mode: read
#     ca 4666.648579, write ca 4342.956998, copy ca 3970.01164; TENSOR.FP16.FP32 879673.8404,
#     TENSOR.BF16.FP32 942050.5302 GFLOP/s (compute:, not device.theoretical);
#   gpu-l2-cache_h200.txt (512 kB per block, L2 60 MiB = 61440 kB): from 4 chunks (2048 kB) to
#     61440 kB the best is 11745.0 at 2048 kB (13526.6 at 1536 kB is 3 chunks); from 2 x L2
#     (122880 kB) on, 3889.7 at 547328 kB;
#   gpu-stream_h200.txt: read at most 2756, init 3898, scale 3165;
#   torch-bandwidth.txt: sum 4398.4, fill_ 4649.7, copy_ 4225.5; cublas.txt: 873.0, 863.9.
want = {
    "L2": ("8726 GB/s (ca copy)", "gpu-benches gpu-l2-cache at 2048 kB: 11745", "0.743", "LOW (< 0.98)"),
    "HBM read": ("4667 GB/s (ca read)", "PyTorch sum: 4398", "1.061", "ok"),
    "HBM write": ("4343 GB/s (ca write)", "PyTorch fill_: 4650", "0.934", "LOW (< 0.98)"),
    "HBM copy": ("3970 GB/s (ca copy)", "PyTorch copy_: 4226", "0.940", "LOW (< 0.98)"),
    "TENSOR.FP16.FP32": ("879.7 TFLOP/s", "cuBLAS GemmEx 8192x8192x8192: 873.0", "1.008", "ok"),
    "TENSOR.BF16.FP32": ("942.1 TFLOP/s", "cuBLAS GemmEx 8192x8192x8192: 863.9", "1.090", "ok"),
    "L1": ("32289 GB/s (ca read)", "-", "-", "no peer"),
    "TENSOR.TF32.FP32": ("479.0 TFLOP/s", "-", "-", "no peer"),
}
check(rc == 1, f"H200 table: exit {rc}, expected 1 (rows below their bar); stderr {err!r}")
for label, cells in want.items():
    got = tuple(rows.get(label, [None] * 5)[1:5])
    check(got == cells, f"H200 row {label}: {got}, expected {cells}")
others = {
    "HBM read": "gpu-benches gpu-l2-cache at 547328 kB 3890; gpu-benches gpu-stream read (1024 threads/block) 2756",
    "HBM write": "gpu-benches gpu-stream init (608 threads/block) 3898",
    "HBM copy": "gpu-benches gpu-stream scale (1024 threads/block) 3165",
}
for label, cell in others.items():
    check(rows.get(label, [None] * 6)[5] == cell, f"H200 row {label}, other peers: {rows.get(label)}")
check("6 of 10 ceilings compared, 3 below their bar (L2, HBM write, HBM copy)" in out, f"H200 summary: {out[-200:]}")

# gpu-cache: the L1 peer is its best set that fits one SM's L1 (an H100's 256 KiB here), read
# off gpu-cache_h100_pcie.txt: 25270.0 at 148 kB (25266.1 at 204 kB; 236 kB and up are past it).
spec = importlib.util.spec_from_file_location("peer_tables", os.path.join(src, "bench/peer_tables.py"))
peer_tables = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer_tables)
machine = {"device": {"kind": "gpu", "caches": [{"level": "L1", "bytes": 262144}, {"level": "L2", "bytes": 52428800}]}}
with open(f"{fixtures}/gpu-cache_h100_pcie.txt") as f:
    figures = peer_tables.gpu_peer_figures(machine, {"gpu-cache": f.read()})
check(figures.get("L1") == [(25270.0, "gpu-benches gpu-cache at 148 kB")], f"gpu-cache L1 peer: {figures}")

# ---- the CPU table from compare_likwid.py's recorded raw.json -------------------------------
likwid = os.path.join(src, "results/measured/xeon-amx-vm/20261126T0244Z-likwid/raw.json")
rc, out, err = run(peers_cpu, "--recorded", likwid)
rows = table_rows(out)
check(rc == 0, f"CPU table: exit {rc}; stderr {err!r}")
check(len(rows) == 22, f"CPU table: {len(rows)} rows, expected 20 bandwidth and 2 FMA")
for label, ours, peer, ratio in (  # as table.md beside raw.json prints them
        ("L1 load (read), 48 KiB", "862.9 GB/s (512-bit)", "likwid load_avx512: 816.7", "1.057"),
        ("L2 update (rmw), 2048 KiB", "247.5 GB/s (256-bit)", "likwid update_avx: 235.6", "1.050"),
        ("L1 store (write), 48 KiB", "470.5 GB/s (512-bit)", "likwid store_avx512: 484.1", "0.972"),
        ("DRAM store_mem (write_nt), 467084 KiB", "49.0 GB/s (256-bit)", "likwid store_mem_avx: 44.4", "1.102")):
    got = tuple(rows.get(label, [None] * 4)[1:4])
    check(got == (ours, peer, ratio), f"CPU row {label}: {got}")
fma = os.path.join(src, "results/measured/xeon-amx-vm/20261126T1311Z-likwid-fma/raw.json")
rc, out, err = run(peers_cpu, "--recorded", fma)
rows = table_rows(out)
check(rows.get("FP64.FMA", [None] * 5)[1:5] == ["169.2 GFLOP/s", "likwid peakflops_avx512_fma: 170.3", "0.994", "ok"],
      f"CPU FP64.FMA row: {rows.get('FP64.FMA')}")
check(rows.get("FP32.FMA", [None] * 4)[3] == "1.006", f"CPU FP32.FMA row: {rows.get('FP32.FMA')}")

# ---- bad input: one line, nothing written ------------------------------------------------------
user = os.path.join(work, "user")
os.makedirs(user)
with open(os.path.join(user, "notes.txt"), "w") as f:
    f.write("mine\n")
one_error_line(*run(peers_gpu, *recorded, "--out", user), 64, "was not written by peers-gpu", "gpu --recorded --out USER")
one_error_line(*run(peers_gpu, "--machine", f"{h200}/machine.yaml", "--out", user), 64, "was not written by peers-gpu",
               "gpu --out USER")
one_error_line(*run(peers_cpu, "--roofprobe", roofprobe, "--out", user), 64, "was not written by peers-cpu",
               "cpu --out USER")
check(sorted(os.listdir(user)) == ["notes.txt"] and open(os.path.join(user, "notes.txt")).read() == "mine\n",
      f"the user's folder changed: {os.listdir(user)}")
one_error_line(*run(peers_gpu, "--machine", f"{h200}/machine.yaml", "--recorded", f"gpu-l2-cache={h200}/cublas.txt"),
               64, "not a gpu-l2-cache row", "gpu-l2-cache given cuBLAS output")
one_error_line(*run(peers_gpu, "--machine", f"{h200}/machine.yaml", "--recorded", f"nvbandwidth={h200}/cublas.txt"),
               64, "PEER one of", "unknown peer")
one_error_line(*run(peers_gpu, "--machine", f"{h200}/cublas.txt", "--recorded", f"cublas={h200}/cublas.txt"),
               64, "not a roofprobe machine file", "--machine not a machine file")
one_error_line(*run(peers_gpu, "--machine", os.path.join(src, "results/measured/xeon-amx-vm/20261126T0553Z/machine.yaml"),
                    "--recorded", f"cublas={h200}/cublas.txt"), 64, "not a GPU run", "--machine of a CPU run")

# Its own folder again: table.md is rewritten, nothing else is touched.
mine = os.path.join(work, "mine")
for _ in range(2):
    rc, out, err = run(peers_gpu, *recorded, "--out", mine)
    check(rc == 1 and os.path.exists(os.path.join(mine, "table.md")), f"--out its own folder: exit {rc}, {err!r}")

# ---- no GPU: one line, exit 2, no output folder --------------------------------------------------
listed = shutil.which("nvidia-smi") and "GPU " in subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                                                                  text=True).stdout
if listed:
    print("note: a GPU is present; the no-GPU path is not checked here")
else:
    out_dir = os.path.join(work, "nogpu")
    rc, out, err = run(peers_gpu, "--roofprobe", roofprobe, "--out", out_dir)
    one_error_line(rc, out, err, 2, "no usable GPU here", "peers-gpu without a GPU")
    check(not os.path.exists(out_dir), "peers-gpu without a GPU made its --out folder")
    print(f"no GPU: {err.strip()}")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("ok: peers tables from recorded outputs, bad input, --out safety")
