"""The peers' side of `bench/peers-gpu` and `bench/peers-cpu`: reading what each peer prints,
picking the best peer figure for each roofprobe ceiling, and the Markdown table with the ratio
and a verdict per row. Nothing here runs a program, so CI checks it on recorded outputs
(tests/integration/peers_test.py).

Every figure is 1e9-based: GB/s for memory, GFLOP/s inside (TFLOP/s in the table for tensors).
A row's ratio is roofprobe's ceiling over the best peer's figure for the same work; its verdict
is `ok` at or above the row's bar (memory 0.98, compute 1.0 on GPUs; 0.95 on CPUs), else `LOW`.
"""
import re

GPU_MEMORY_BAR = 0.98
GPU_COMPUTE_BAR = 1.0
CPU_BAR = 0.95

# gpu-benches at the commit peers-gpu fetches (and whose published tables tests/unit/fixtures
# holds): the output formats below are those of this commit.
GPU_BENCHES_REPO = "https://github.com/te42kyfo/gpu-benches"
GPU_BENCHES_COMMIT = "1c36d50c"

KIB = 1024.0  # gpu-benches' "kB" is the data-set bytes / 1024


class PeerError(Exception):
    """A peer output or machine file that cannot be read: the message is the whole error line."""


def _number(text):
    return float(text.replace(",", ""))


# ---- roofprobe's side: the ceilings of a machine file ------------------------------------------

def _level(machine, name):
    for level in machine.get("memory") or []:
        if level.get("level") == name:
            return level
    return None


def _compute(machine, name):
    """The measured ceiling of this name (the compute: list, not device.theoretical)."""
    for ceiling in machine.get("compute") or []:
        if ceiling.get("name") == name:
            return ceiling
    return None


def _series_label(params):
    keys = [params[k] for k in ("cache_op", "mode") if k in params]
    return " ".join(str(k) for k in keys)


def _best_by_mode(level):
    """{mode: (GB/s, series)}: the faster cache_op of each access mode of a bandwidth level."""
    best = {}
    series = level.get("by_series") or {}
    if not series and "params" in level:  # a file with the headline series only
        series = {";".join(f"{k}={v}" for k, v in level["params"].items()): level["gbs"]}
    for key, gbs in series.items():
        fields = dict(part.split("=", 1) for part in str(key).split(";") if "=" in part)
        mode = fields.get("mode")
        if mode and (mode not in best or gbs > best[mode][0]):
            best[mode] = (float(gbs), _series_label(fields))
    return best


TENSOR_TYPES = ("FP16.FP32", "BF16.FP32", "TF32.FP32", "FP8.FP32", "FP64.FP64")


def gpu_ceilings(machine):
    """[(key, label, GB/s or GFLOP/s, how roofprobe measured it, kind)] of a GPU machine file."""
    if (machine.get("device") or {}).get("kind") != "gpu":
        raise PeerError("the machine file is not a GPU run (device.kind is not gpu)")
    out = []
    for name in ("L1", "L2"):
        level = _level(machine, name)
        if level:
            how = level.get("headline", "").replace("cache_op=", "").replace(";mode=", " ")
            out.append((name, name, float(level["gbs"]), how, "memory"))
    memory_name = machine["device"].get("memory_name") or "HBM"
    level = _level(machine, memory_name)
    if level:
        modes = _best_by_mode(level)
        for mode in ("read", "write", "copy"):  # rmw: no peer measures it
            if mode in modes:
                gbs, how = modes[mode]
                out.append((f"memory.{mode}", f"{memory_name} {mode}", gbs, how, "memory"))
    for t in TENSOR_TYPES:
        c = _compute(machine, f"TENSOR.{t}")
        if c:
            out.append((f"tensor.{t}", f"TENSOR.{t}", float(c["gflops"]), "", "compute"))
    return out


def cache_bytes(machine, level):
    for c in (machine.get("device") or {}).get("caches") or []:
        if c.get("level") == level:
            return float(c["bytes"])
    return None


# ---- the peers' outputs ---------------------------------------------------------------------

_GB_S = re.compile(r"([0-9][0-9.]*)\s*GB/s")
_KB = re.compile(r"([0-9][0-9.]*)\s*kB")


def parse_gpu_cache(text, where="gpu-cache"):
    """gpu-benches gpu-cache: [(data set bytes, Eff. GB/s)] (every SM reads the same data set)."""
    rows, header = [], False
    for n, line in enumerate(text.splitlines(), 1):
        header = header or "data set" in line
        # Blank lines, the header, and what it prints before it ("clock: 1980 1980 ...").
        if not line.strip() or "data set" in line or (not header and not _GB_S.findall(line)):
            continue
        sizes, rates = _KB.findall(line), _GB_S.findall(line)
        if len(sizes) != 1 or not rates:
            raise PeerError(f"{where}:{n}: not a gpu-cache row ('<n> kB ... <x> GB/s'): {line.strip()[:60]}")
        rows.append((_number(sizes[0]) * KIB, _number(rates[0])))
    if not rows:
        raise PeerError(f"{where}: no gpu-cache rows")
    return rows


def parse_gpu_l2_cache(text, where="gpu-l2-cache"):
    """gpu-benches gpu-l2-cache: [(bytes per block, total data set bytes, Eff. GB/s)]."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or "data set" in line:
            continue
        sizes, rates = _KB.findall(line), _GB_S.findall(line)
        if len(sizes) != 2 or not rates:
            raise PeerError(f"{where}:{n}: not a gpu-l2-cache row ('<n> kB <m> kB ... <x> GB/s'): {line.strip()[:60]}")
        rows.append((_number(sizes[0]) * KIB, _number(sizes[1]) * KIB, _number(rates[0])))
    if not rows:
        raise PeerError(f"{where}: no gpu-l2-cache rows")
    return rows


# gpu-stream's columns: init stores only, read loads only, scale loads one array and stores
# another (roofprobe's copy); triad and the stencils have no roofprobe counterpart.
STREAM_COLUMNS = ("init", "read", "scale", "triad", "3pt", "5pt")


def parse_gpu_stream(text, where="gpu-stream"):
    """gpu-benches gpu-stream: {column: [(threads per block, GB/s)]} over its block sizes."""
    out = {c: [] for c in STREAM_COLUMNS}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("blockSize"):
            continue
        m = re.match(r"\s*(\d+)\s+(\d+)\s+[0-9.]+\s*%\s*\|\s*GB/s:(.*)$", line)
        if not m:
            raise PeerError(f"{where}:{n}: not a gpu-stream row ('<block> <threads> <occ> % | GB/s: ...')")
        # A HIP build may print "! <n> blocks per SM" before the rates.
        rates = re.sub(r"!\s*\d+\s+blocks per SM", " ", m.group(3)).split()
        if len(rates) != len(STREAM_COLUMNS):
            raise PeerError(f"{where}:{n}: {len(rates)} rates, gpu-stream prints {len(STREAM_COLUMNS)}")
        for column, rate in zip(STREAM_COLUMNS, rates):
            out[column].append((int(m.group(1)), _number(rate)))
    if not out["read"]:
        raise PeerError(f"{where}: no gpu-stream rows")
    return out


def parse_cublas(text, where="cublas"):
    """driver/acceptance/cublas_gemm.cu's lines: {type: (GFLOP/s, "MxNxK")}."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"cublas (\S+) (\d+x\d+x\d+): ([0-9.]+) TFLOP/s", line)
        if m:
            out[m.group(1).upper()] = (float(m.group(3)) * 1e3, m.group(2))
    if not out:
        raise PeerError(f"{where}: no 'cublas <type> <MxNxK>: <x> TFLOP/s' line")
    return out


def parse_torch(text, where="torch"):
    """bench/peers_torch.py's lines: {"read"|"write"|"copy": (GB/s, op), "gemm.<TYPE>": (GFLOP/s, op)}."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"(read|write|copy) \((\S+)\)\s+best\s+([0-9.]+) GB/s", line)
        if m:
            out[m.group(1)] = (float(m.group(3)), m.group(2))
        m = re.match(r"gemm (\S+) (\d+x\d+x\d+) \((\S+)\)\s+best\s+([0-9.]+) TFLOP/s", line)
        if m:
            out["gemm." + m.group(1).upper()] = (float(m.group(4)) * 1e3, f"{m.group(3)} {m.group(2)}")
    if not out:
        raise PeerError(f"{where}: no 'read (sum) best <x> GB/s' or 'gemm ...' line")
    return out


PARSERS = {"gpu-cache": parse_gpu_cache, "gpu-l2-cache": parse_gpu_l2_cache, "gpu-stream": parse_gpu_stream,
           "cublas": parse_cublas, "torch": parse_torch}


# ---- best peer per ceiling --------------------------------------------------------------------

def _kb(nbytes):
    return f"{nbytes / KIB:.0f} kB"


def gpu_peer_figures(machine, outputs):
    """{ceiling key: [(GB/s or GFLOP/s, peer description)]} from the peers' outputs
    {"gpu-cache"|"gpu-l2-cache"|"gpu-stream"|"cublas"|"torch": text}."""
    figures = {}
    add = lambda key, value, what: figures.setdefault(key, []).append((value, what))
    l1 = cache_bytes(machine, "L1")
    l2 = cache_bytes(machine, "L2")

    if "gpu-cache" in outputs and l1:
        # Every SM reads the same set: sets that fit one SM's L1 measure the L1.
        rows = [r for r in parse_gpu_cache(outputs["gpu-cache"]) if r[0] <= l1]
        if rows:
            size, gbs = max(rows, key=lambda r: r[1])
            add("L1", gbs, f"gpu-benches gpu-cache at {_kb(size)}")

    if "gpu-l2-cache" in outputs and l2:
        rows = parse_gpu_l2_cache(outputs["gpu-l2-cache"])
        # Its blocks read chunk (block index mod the chunk count): with 3 chunks or fewer, the
        # blocks an SM holds at once read the same chunk often enough to share its L1 lines,
        # so its best L2 figure is taken from 4 chunks up to the L2's size.
        in_l2 = [r for r in rows if r[1] >= 4 * r[0] and r[1] <= l2]
        if in_l2:
            _, total, gbs = max(in_l2, key=lambda r: r[2])
            add("L2", gbs, f"gpu-benches gpu-l2-cache at {_kb(total)}")
        # Past twice the L2, little of a pass is left in it from the pass before.
        beyond = [r for r in rows if r[1] >= 2 * l2]
        if beyond:
            _, total, gbs = max(beyond, key=lambda r: r[2])
            add("memory.read", gbs, f"gpu-benches gpu-l2-cache at {_kb(total)}")

    if "gpu-stream" in outputs:
        stream = parse_gpu_stream(outputs["gpu-stream"])
        for mode, column in (("read", "read"), ("write", "init"), ("copy", "scale")):
            block, gbs = max(stream[column], key=lambda r: r[1])
            add(f"memory.{mode}", gbs, f"gpu-benches gpu-stream {column} ({block} threads/block)")

    if "torch" in outputs:
        torch = parse_torch(outputs["torch"])
        for mode in ("read", "write", "copy"):
            if mode in torch:
                gbs, op = torch[mode]
                add(f"memory.{mode}", gbs, f"PyTorch {op}")
        for t in TENSOR_TYPES:
            if f"gemm.{t}" in torch:
                gflops, op = torch[f"gemm.{t}"]
                add(f"tensor.{t}", gflops, f"PyTorch {op}")

    if "cublas" in outputs:
        for t, (gflops, shape) in parse_cublas(outputs["cublas"]).items():
            add(f"tensor.{t}", gflops, f"cuBLAS GemmEx {shape}")
    return figures


def gpu_rows(machine, outputs):
    """[(label, roofprobe figure text, best peer text, ratio or None, verdict, other peers text)]."""
    figures = gpu_peer_figures(machine, outputs)
    rows = []
    for key, label, ours, how, kind in gpu_ceilings(machine):
        tensor = kind == "compute"
        fmt = (lambda v: f"{v / 1e3:.1f} TFLOP/s") if tensor else (lambda v: f"{v:.0f} GB/s")
        bare = (lambda v: f"{v / 1e3:.1f}") if tensor else (lambda v: f"{v:.0f}")
        ours_text = fmt(ours) + (f" ({how})" if how else "")
        peers = sorted(figures.get(key, []), key=lambda p: -p[0])
        if not peers:
            rows.append((label, ours_text, "-", None, "no peer", "-"))
            continue
        bar = GPU_COMPUTE_BAR if tensor else GPU_MEMORY_BAR
        best, what = peers[0]
        ratio = ours / best
        others = "; ".join(f"{w} {bare(v)}" for v, w in peers[1:]) or "-"
        rows.append((label, ours_text, f"{what}: {bare(best)}", ratio, verdict(ratio, bar), others))
    return rows


def verdict(ratio, bar):
    return "ok" if ratio >= bar else f"LOW (< {bar:g})"


def markdown(rows, header=("ceiling", "roofprobe", "best peer", "ratio", "verdict", "other peers")):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for r in rows:
        cells = [r[0], r[1], r[2], "-" if r[3] is None else f"{r[3]:.3f}", r[4], r[5]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(rows):
    compared = [r for r in rows if r[3] is not None]
    low = [r[0] for r in compared if not r[4].startswith("ok")]
    text = f"{len(compared)} of {len(rows)} ceilings compared, {len(low)} below their bar"
    return text + (f" ({', '.join(low)})" if low else ""), len(low)


# ---- CPU: likwid-bench (bench/compare_likwid.py's raw.json) -------------------------------------

def cpu_rows(raw):
    """Rows of the same shape from compare_likwid.py's raw.json ({"mode|kernel|level": {...}})."""
    rows = []
    for key, r in raw.items():
        mode, kernel, level = key.split("|")
        tests = {t: v for t, v in r.items() if t not in ("size", "roofprobe")}
        if not tests or not r.get("roofprobe"):
            raise PeerError(f"raw.json: {key}: no roofprobe or likwid figures")
        best_test = max(tests, key=lambda t: max(tests[t]))
        theirs = max(tests[best_test])
        others = "; ".join(f"likwid {t} {max(v):.1f}" for t, v in tests.items() if t != best_test) or "-"
        if kernel == "None":  # an FMA row: [GFLOP/s, theoretical, MHz] per run
            ours = max(run[0] for run in r["roofprobe"])
            label, ours_text = f"{mode.upper()}.FMA", f"{ours:.1f} GFLOP/s"
        else:  # a bandwidth row: [GB/s, vector bits] per run
            ours, bits = max((run[0], run[1]) for run in r["roofprobe"])
            label = f"{level} {kernel} ({mode}), {r['size'] / 1024:.0f} KiB"
            ours_text = f"{ours:.1f} GB/s ({bits}-bit)"
        ratio = ours / theirs
        rows.append((label, ours_text, f"likwid {best_test}: {theirs:.1f}", ratio, verdict(ratio, CPU_BAR), others))
    return rows
