# Experiment (session 24): is a device-to-device copy of a byte count just
# past a round size slower? kgen bench's same-size copy of groupnorm_kb
# (268435712 bytes, 256 MiB + 256) took 224.96 us and of batchnorm_kb
# (256 MiB + 512) 224.86, but of gelu_64m (256 MiB) 181.79
# (results/2026-11-28-h100-s24-bench-memory/). Times torch's copy_ of
# uint8 tensors (a cudaMemcpyAsync device to device) at each size by
# triton.testing.do_bench (which clears the L2 before each run), and a
# copy through a float4 view where the size allows it.
import torch, triton

base = 256 << 20
for extra in (0, 256, 512, 1024, 4096, 65536, 1 << 20, -256):
    n = base + extra
    src = torch.ones(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    t = triton.testing.do_bench(lambda: dst.copy_(src), warmup=25, rep=200, return_mode="median")
    print("bytes %d (256 MiB %+d): %.2f us, %.0f GB/s" % (n, extra, t * 1e3, 2 * n / (t * 1e-3) / 1e9), flush=True)
    del src, dst
