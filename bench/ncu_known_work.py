#!/usr/bin/env python3
"""ncu_known_work: GPU launches of known work, for recording Nsight Compute exports that
`roofprobe points` is then checked against (tests/unit/fixtures/ncu/README.md).

  python3 ncu_known_work.py [--expected FILE] [--size N] [--fp64-size N] [--elements N]

Runs, with PyTorch on the first CUDA device, each inside the NVTX push/pop range "known" (warm-up
launches outside it, so `ncu --nvtx --nvtx-include known/` profiles only the measured ones):
  - matrix products of N^3 (default 4096) in tf32, fp16, bf16, fp8 e4m3 (torch._scaled_mm, on
    compute capability 8.9 and later) and int8 (torch._int_mm), and fp64 at --fp64-size (2048):
    2 N^3 operations each;
  - an elementwise z = x + 2 y on --elements fp32 values: one FMA (2 FLOPs) and 12 bytes a value;
  - a reduction, the sum of --elements fp32 values: about one add and 4 bytes a value.
--expected FILE gets a JSON list, in launch order, of each operation's name, FLOPs (or integer
operations), the least bytes it must move to and from device memory, and the cuBLAS/PyTorch call;
an operation this GPU or PyTorch cannot run is listed with "skipped" and its reason, and one line
on stderr says so. Exit status: 0, 2 when there is no PyTorch or no CUDA device, 64 bad input.

Record with the architecture's metric list and with ncu's roofline set, clocks left as they are:
  LC_ALL=C ncu --csv --page raw --clock-control none --nvtx --nvtx-include known/ \\
      --metrics "$(roofprobe points --ncu-metrics --arch sm_90)" python3 ncu_known_work.py > arch.csv
  LC_ALL=C ncu --csv --page raw --clock-control none --nvtx --nvtx-include known/ \\
      --set roofline python3 ncu_known_work.py > roofline.csv
"""
import argparse
import json
import sys


def fail(message, status=64):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expected", help="write the known work of each launch here (JSON)")
    parser.add_argument("--size", type=int, default=4096, help="M = N = K of the matrix products")
    parser.add_argument("--fp64-size", type=int, default=2048, help="M = N = K of the fp64 product")
    parser.add_argument("--elements", type=int, default=1 << 26, help="values of the elementwise op and the sum")
    args = parser.parse_args()
    for name in ("size", "fp64_size", "elements"):
        value = getattr(args, name)
        # int8 and fp8 products need multiples of 16; the sizes stay far below device memory.
        if value < 16 or value % 16 or value > (1 << 30):
            fail(f"--{name.replace('_', '-')} {value}: want a multiple of 16 from 16 to 2^30")
    try:
        import torch
    except ImportError:
        fail("PyTorch is not installed: no launches to record", 2)
    if not torch.cuda.is_available():
        fail("no CUDA device is usable by PyTorch", 2)

    dev = torch.device("cuda")
    cc = torch.cuda.get_device_capability()
    n, n64, elems = args.size, args.fp64_size, args.elements
    torch.backends.cuda.matmul.allow_tf32 = True
    ops = []  # (name, flops, least bytes, call, thunk or skip reason)

    def gemm(name, m, element_bytes, out_bytes, call, make):
        least = 2 * m * m * element_bytes + m * m * out_bytes  # A and B read once, C written once
        try:
            thunk = make()
        except (RuntimeError, AttributeError, TypeError) as e:
            thunk = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        ops.append((name, 2 * m ** 3, least, call, thunk))

    def matmul(dtype, m):
        a = torch.randn(m, m, device=dev).to(dtype)
        b = torch.randn(m, m, device=dev).to(dtype)
        return lambda: torch.matmul(a, b)

    def scaled_fp8():
        if cc < (8, 9):
            raise RuntimeError(f"fp8 needs compute capability 8.9 or later, this GPU is {cc[0]}.{cc[1]}")
        a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
        one = torch.tensor(1.0, device=dev)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    def int8():
        a = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8)
        b = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8).t()
        return lambda: torch._int_mm(a, b)

    gemm("gemm_tf32", n, 4, 4, "torch.matmul float32, allow_tf32", lambda: matmul(torch.float32, n))
    gemm("gemm_fp16", n, 2, 2, "torch.matmul float16", lambda: matmul(torch.float16, n))
    gemm("gemm_bf16", n, 2, 2, "torch.matmul bfloat16", lambda: matmul(torch.bfloat16, n))
    gemm("gemm_fp8_e4m3", n, 1, 2, "torch._scaled_mm float8_e4m3fn -> bfloat16", scaled_fp8)
    gemm("gemm_int8", n, 1, 4, "torch._int_mm int8 -> int32", int8)
    gemm("gemm_fp64", n64, 8, 8, "torch.matmul float64", lambda: matmul(torch.float64, n64))

    x = torch.randn(elems, device=dev)
    y = torch.randn(elems, device=dev)
    z = torch.empty_like(x)
    ops.append(("elementwise_fma", 2 * elems, 12 * elems, "torch.add(x, y, alpha=2, out=z)",
                lambda: torch.add(x, y, alpha=2.0, out=z)))
    ops.append(("reduction_sum", elems, 4 * elems, "x.sum()", lambda: x.sum()))

    runnable = []
    for name, flops, least, call, thunk in ops:
        if callable(thunk):
            try:
                thunk()  # warm-up, outside the range: cuBLAS picks its kernel, PyTorch its plan
                torch.cuda.synchronize()
                runnable.append((name, thunk))
                continue
            except RuntimeError as e:
                thunk = f"RuntimeError: {str(e).splitlines()[0] if str(e) else ''}"
        print(f"ncu_known_work: {name} skipped: {thunk}", file=sys.stderr)

    torch.cuda.nvtx.range_push("known")
    for name, thunk in runnable:
        thunk()
        torch.cuda.synchronize()  # one operation's launches at a time, in the listed order
    torch.cuda.nvtx.range_pop()

    if args.expected:
        ran = {name for name, _ in runnable}
        listing = []
        for name, flops, least, call, thunk in ops:
            entry = {"name": name, "flops": flops, "least_dram_bytes": least, "call": call}
            if name not in ran:
                entry["skipped"] = thunk if isinstance(thunk, str) else "its warm-up failed"
            listing.append(entry)
        info = {"device": torch.cuda.get_device_name(), "compute_capability": f"{cc[0]}.{cc[1]}",
                "torch": torch.__version__, "cuda": torch.version.cuda, "operations": listing}
        with open(args.expected, "w") as out:
            json.dump(info, out, indent=1)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
