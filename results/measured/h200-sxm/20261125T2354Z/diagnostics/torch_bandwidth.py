# Cross-check of roofprobe's HBM read/write/copy figures on the same GPU, through PyTorch's own
# kernels (sum = read, fill_ = write, copy_ = copy), 4 GiB arrays, best of 20 after 3 warm-ups.
import torch
n = 1 << 30  # float32 elements: 4 GiB
a = torch.ones(n, device="cuda"); b = torch.empty_like(a)
def best(f, nbytes):
    for _ in range(3): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) / 1e3)
    t = min(ts); med = sorted(ts)[len(ts) // 2]
    return nbytes / t / 1e9, nbytes / med / 1e9
print(torch.cuda.get_device_name(), torch.__version__)
for name, f, nb in [("read (sum)", lambda: a.sum(), 4 * n), ("write (fill_)", lambda: b.fill_(2.0), 4 * n),
                    ("copy (copy_)", lambda: b.copy_(a), 8 * n)]:
    bst, med = best(f, nb)
    print(f"{name:14s} best {bst:8.1f} GB/s  median {med:8.1f} GB/s")
