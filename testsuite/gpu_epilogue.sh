#!/bin/bash
# Matrix products on the CUDA-core tiles with this kgen and, when
# bin/kgen-old is there (a kgen built before a change to compare), with
# that one, in the same run, beside PyTorch eager: the suite's f32
# products of both levels. Build bin/kgen (and bin/kgen-old) first; carry
# bin/. Reports go to $OUT; the tables are printed last.
#   KERNELS: the instances (default: the suite's f32 products)
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
S=testsuite/kernelbench
K=${KERNELS:-kb_matmul_small_k,kb_matmul_square,kb_matmul_irregular,kb_bmm_nominal,kb_tensor_matmul_nominal,kb_matmul_at_nominal,kb_matmul_bt_nominal,kb_matmul_large_k,kb2_gemm_bias_relu_nominal,kb2_gemm_scale_gelu_nominal,kb2_gemm_sigmoid_residual_nominal}
for k in kgen kgen-old; do
	[ -x ./bin/$k ] || continue
	timeout -k 10 200 ./bin/$k bench --target cuda:sm_90a --baseline eager --kernel "$K" --json "$OUT/bench-$k.json" --md "$OUT/bench-$k.md" \
		$S/level1.kg $S/level2.kg > "$OUT/bench-$k.txt" 2> "$OUT/bench-$k.log"
	echo "bench with $k: exit $?" | tee -a "$OUT/summary.txt"
done
cat "$OUT"/bench-*.txt "$OUT/summary.txt"
