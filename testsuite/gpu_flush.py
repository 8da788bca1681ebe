"""How the L2 flush before each timed run bends a memory-bound kernel's
time: a row sum, a column sum and a copy of 64 MiB (f32 4096 x 4096), and
a row sum of 1 GiB, timed with CUDA events after (a) no flush, (b) a
memset of twice the L2 (kgen's runner and triton.testing.do_bench: it
leaves the L2 full of dirty lines that the kernel's reads must write
back), (c) a read of twice the L2 (a clean cold L2). Prints a table of
medians with p20-p80."""
import torch

dev = torch.device("cuda")
props = torch.cuda.get_device_properties(dev)
l2 = props.L2_cache_size
print("gpu", props.name, "L2", l2 >> 20, "MiB; torch", torch.__version__)
buf = torch.empty(2 * l2, dtype=torch.uint8, device=dev)
fl32 = buf.view(torch.float32)
sink = torch.empty(1, dtype=torch.float32, device=dev)


def flush(kind):
    if kind == "memset":
        buf.fill_(1)
    elif kind == "read":
        torch.sum(fl32, dim=0, out=sink[0])


def timeit(fn, kind, reps=200):
    for _ in range(20):
        flush(kind)
        fn()
    ts = []
    for _ in range(reps):
        flush(kind)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000)
    ts.sort()
    return ts[len(ts) // 2], ts[len(ts) // 5], ts[4 * len(ts) // 5]


x = torch.randn(4096, 4096, device=dev)
y = torch.empty_like(x)
big = torch.randn(16384, 16384, device=dev)
rows = torch.empty(4096, device=dev)
cases = [
    ("row sum 64 MiB", lambda: torch.sum(x, dim=1, out=rows), x.numel() * 4),
    ("col sum 64 MiB", lambda: torch.sum(x, dim=0, out=rows), x.numel() * 4),
    ("copy 64 MiB", lambda: y.copy_(x), 2 * x.numel() * 4),
    ("row sum 1 GiB", lambda: big.sum(dim=1), big.numel() * 4),
]
print("%-16s %-8s %10s %10s %8s" % ("case", "flush", "median us", "p20-p80", "GB/s"))
for name, fn, nbytes in cases:
    for kind in ("none", "memset", "read"):
        m, lo, hi = timeit(fn, kind)
        print("%-16s %-8s %10.2f %5.2f-%-5.2f %8.0f" % (name, kind, m, lo, hi, nbytes / m / 1e3))
