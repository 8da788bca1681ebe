#!/bin/sh
# Measures the GPU's ceilings with kgen's probes (kgen devices --measure)
# and, beside them in the same call, cuBLAS's rate on large square matrix
# products through torch.matmul: the probes' rates must be at least
# cuBLAS's, or they are not ceilings. Build bin/kgen first. Results go to
# $OUT (ceilings.json, ceilings.txt, cublas.txt).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
./bin/kgen devices --measure > "$OUT/ceilings.txt" 2>&1
./bin/kgen devices --measure --json > "$OUT/ceilings.json" 2> "$OUT/ceilings.err"
python3 - > "$OUT/cublas.txt" 2>&1 <<'PY'
import torch
from triton.testing import do_bench
print("torch", torch.__version__, torch.cuda.get_device_name())
for name, dt, n, tf32 in [("bf16", torch.bfloat16, 8192, False), ("f16", torch.float16, 8192, False),
                          ("tf32", torch.float32, 8192, True), ("f32", torch.float32, 4096, False)]:
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.randn(n, n, device="cuda", dtype=dt)
    b = torch.randn(n, n, device="cuda", dtype=dt)
    ms = do_bench(lambda: a @ b, warmup=100, rep=500, quantiles=[0.5, 0.2, 0.8])
    f = 2 * n ** 3
    print("cublas %-5s %5d^3  %.1f TFLOP/s (p20-p80 %.1f-%.1f)" % (name, n, f / ms[0] / 1e9, f / ms[2] / 1e9, f / ms[1] / 1e9))
PY
sed -n '/Ceilings/,$p' "$OUT/ceilings.txt"
cat "$OUT/cublas.txt"
