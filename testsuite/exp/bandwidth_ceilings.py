"""What the GPU's memory moves at, by the mix of reads and writes.

kgen bench states memory-bound kernels as a fraction of the device-to-device
copy bandwidth (as many bytes read as written). A kernel that writes more
than it reads (an outer product, a dequantization to a wider type, two
outputs of one input) meets a different ceiling; this measures it with
PyTorch's own kernels on buffers far larger than the L2 (1 GiB), so that
no flush is needed:

  copy      y.copy_(x)           read 1 : write 1 (the copy bandwidth)
  read      x.sum()              read only
  write     y.fill_(1)           write only
  read1w2   y.copy_(x) into a    read 1 : write 2 (x's f16 widened to f32)
            tensor of twice x's bytes (a dequantization's mix)

Each is timed with CUDA events over 20 runs after 5 warm-ups; the median,
p20 and p80 are printed with the bytes moved over the median time.
    python3 testsuite/exp/bandwidth_ceilings.py
"""
import statistics

import torch


def timed(fn, runs=20, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)  # us
    times.sort()
    return statistics.median(times), times[len(times) // 5], times[len(times) * 4 // 5]


def main():
    n = 1 << 30  # bytes
    x = torch.randn(n // 4, device="cuda")
    y = torch.empty_like(x)
    h = torch.randn(n // 2, device="cuda").half()  # 1 GiB of f16
    w = torch.empty(n // 2, device="cuda")  # 2 GiB of f32
    cases = [
        ("copy", lambda: y.copy_(x), 2 * n),
        ("read", lambda: x.sum(), n),
        ("write", lambda: y.fill_(1.0), n),
        ("read1w2", lambda: w.copy_(h), 3 * n),
    ]
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    print("%-8s %10s %22s %8s %8s" % ("case", "us", "(p20-p80)", "GB/s", "of copy"))
    copy = None
    for name, fn, moved in cases:
        med, p20, p80 = timed(fn)
        gbs = moved / med / 1e3
        copy = copy or gbs
        print("%-8s %10.1f %22s %8.0f %7.0f%%" % (name, med, "(%.1f-%.1f)" % (p20, p80), gbs, 100 * gbs / copy))


if __name__ == "__main__":
    main()
