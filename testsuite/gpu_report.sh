#!/bin/sh
# The evidence run for issue 3 on a GPU machine, in one call: kgen test on
# cuda:sm_90a for the files whose plans differ there (matrix products),
# then kgen bench of testsuite/targets.txt on cuda:sm_90a beside PyTorch
# eager. (testsuite/gpu_check.sh tests every example on cuda:sm_90.) Build
# bin/kgen first. Logs go to $OUT; the bench table is printed last.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
./bin/kgen test --target cuda:sm_90a --seeds 3 --max-work 3e7 examples/matmul.kg examples/matmul_lowp.kg \
	examples/batched_matmul.kg examples/fused_gemm.kg examples/attention.kg > "$OUT/test-sm90a.log" 2>&1
echo "kgen test (sm_90a) exit $?: $(tail -1 "$OUT/test-sm90a.log")"
TARGET=cuda:sm_90a "$(dirname "$0")/gpu_bench.sh" --kernel "$(cat "$(dirname "$0")/targets.txt")" examples/*.kg
