#!/bin/sh
# Times matmul_bf16_4k under several matmul-mma configurations, then the
# memory-bound instances against PyTorch eager: how the templates' default
# configurations were chosen. Build bin/kgen first. Logs go to $OUT.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for c in \
  BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=4,BLOCKS_PER_SM=1 \
  BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=4,BLOCKS_PER_SM=2 \
  BM=128,BN=128,BK=64,WARPS_M=2,WARPS_N=4,STAGES=3,BLOCKS_PER_SM=2 \
  BM=128,BN=256,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,BLOCKS_PER_SM=1 \
  BM=256,BN=128,BK=32,WARPS_M=4,WARPS_N=2,STAGES=3,BLOCKS_PER_SM=1 \
  BM=128,BN=128,BK=64,WARPS_M=2,WARPS_N=2,STAGES=3,BLOCKS_PER_SM=2 \
  BM=128,BN=256,BK=64,WARPS_M=2,WARPS_N=4,STAGES=3,BLOCKS_PER_SM=1; do
  printf '%s ' "$c" >> "$OUT/sweep.txt"
  ./bin/kgen bench --target cuda:sm_90 --config "$c" --kernel matmul_bf16_4k examples/matmul_lowp.kg 2>>"$OUT/sweep.err" | grep "^matmul_bf16_4k" >> "$OUT/sweep.txt"
done
"$(dirname "$0")/gpu_bench.sh" --kernel "$1" examples/*.kg
echo "== sweep (matmul_bf16_4k)"
cat "$OUT/sweep.txt"
