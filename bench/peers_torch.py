#!/usr/bin/env python3
"""PyTorch's own kernels on the GPU beside roofprobe's ceilings (run by bench/peers-gpu; read by
bench/peer_tables.py's parse_torch).

Bandwidth: sum (read), fill_ (write), copy_ (copy) on 4 GiB float32 tensors, far past any L2,
best and median of 20 timed calls after 3 warm-up calls, bytes counted as each op moves them
(sum reads 4 GiB, fill_ writes 4 GiB, copy_ reads and writes 4 GiB each).
GEMM: square matmuls (default 8192) in the types roofprobe has tensor ceilings for: fp16 and bf16
(accumulating in fp32, PyTorch's default), tf32 (float32 with TF32 allowed), fp64, and fp8 e4m3
through torch._scaled_mm where the GPU has it; operands filled with small random values (zeros
draw less power and flatter the clock), best of 20 after 5 warm-ups. A type this PyTorch or GPU
cannot run is named on stderr and left out.

usage: peers_torch.py [--size N] [--skip-bandwidth] [--skip-gemm]"""
import argparse
import sys

import torch


def timed(f, warmups, runs):
    """(best, median) seconds of one call of f, timed with CUDA events."""
    for _ in range(warmups):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    times.sort()
    return times[0], times[len(times) // 2]


def bandwidth():
    n = 1 << 30  # float32 elements: 4 GiB
    a = torch.ones(n, device="cuda")
    b = torch.empty_like(a)
    for name, f, nbytes in [("read (sum)", lambda: a.sum(), 4 * n), ("write (fill_)", lambda: b.fill_(2.0), 4 * n),
                            ("copy (copy_)", lambda: b.copy_(a), 8 * n)]:
        best, median = timed(f, 3, 20)
        print(f"{name:14s} best {nbytes / best / 1e9:8.1f} GB/s  median {nbytes / median / 1e9:8.1f} GB/s", flush=True)
    del a, b
    torch.cuda.empty_cache()


def gemm(n):
    def operands(dtype):
        a = (torch.randn(n, n, device="cuda") / 4).to(dtype)
        b = (torch.randn(n, n, device="cuda") / 4).to(dtype)
        return a, b

    def plain(dtype, tf32=False):
        def make():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a, b = operands(dtype)
            return lambda: torch.matmul(a, b)
        return make

    def fp8():
        a, b = operands(torch.float8_e4m3fn)
        b = b.t().contiguous().t()  # _scaled_mm takes its second operand column-major
        one = torch.ones((), device="cuda")
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    cases = [("fp16.fp32", "matmul", plain(torch.float16)), ("bf16.fp32", "matmul", plain(torch.bfloat16)),
             ("tf32.fp32", "matmul", plain(torch.float32, tf32=True)), ("fp64.fp64", "matmul", plain(torch.float64)),
             ("fp8.fp32", "_scaled_mm", fp8)]
    for name, op, make in cases:
        try:
            f = make()
            best, median = timed(f, 5, 20)
        except (RuntimeError, AttributeError, TypeError) as e:
            print(f"peers_torch: gemm {name} skipped: {str(e).splitlines()[0][:120]}", file=sys.stderr)
            continue
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
        flop = 2.0 * n * n * n
        print(f"gemm {name} {n}x{n}x{n} ({op}) best {flop / best / 1e12:8.1f} TFLOP/s  "
              f"median {flop / median / 1e12:8.1f} TFLOP/s", flush=True)
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=8192, help="GEMM size (square)")
    ap.add_argument("--skip-bandwidth", action="store_true")
    ap.add_argument("--skip-gemm", action="store_true")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("error: PyTorch sees no CUDA device", file=sys.stderr)
        return 2
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    if not a.skip_bandwidth:
        bandwidth()
    if not a.skip_gemm:
        gemm(a.size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
