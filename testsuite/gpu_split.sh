#!/bin/bash
# Row reductions split across blocks (lower.splitRows) on a GPU machine:
# kgen test of the examples whose plans it changes (and of the CUDA-core
# matrix tiles') on cuda:sm_90 and triton:sm_90, then kgen bench of the
# split instances beside PyTorch eager with this kgen and, when
# bin/kgen-old is there (a kgen built before the change), with that one in
# the same run. Build bin/kgen (and bin/kgen-old) first; carry bin/. Logs
# go to $OUT; the tables are printed last.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
files="examples/losses.kg examples/reductions.kg examples/l2norm.kg examples/matvec.kg examples/masked.kg"
split=${KERNELS:-mse_kb,cross_entropy_kb,smooth_l1_kb,mean_rows_kb,sum_all_1k,var_std_rows_kb,vector_norm_1m,dot_1m,count_positive_kb,kb_mse_nominal}
timeout -k 10 200 ./bin/kgen test --target cuda:sm_90 --seeds 2 $files examples/matmul.kg examples/conv2d.kg > "$OUT/test-cuda.log" 2>&1
echo "kgen test cuda:sm_90: exit $?" | tee -a "$OUT/summary.txt"
timeout -k 10 150 ./bin/kgen test --target triton:sm_90 --seeds 2 --max-work 3e7 $files > "$OUT/test-triton.log" 2>&1
echo "kgen test triton:sm_90: exit $?" | tee -a "$OUT/summary.txt"
for k in kgen kgen-old; do
	[ -x ./bin/$k ] || continue
	timeout -k 10 100 ./bin/$k bench --target cuda:sm_90a --baseline eager --kernel "$split" --json "$OUT/bench-$k.json" \
		$files testsuite/kernelbench/level1.kg > "$OUT/bench-$k.txt" 2> "$OUT/bench-$k.log"
	echo "bench with $k: exit $?" | tee -a "$OUT/summary.txt"
done
grep -h "^FAIL\|passed\|failed" "$OUT"/test-*.log | tail -8
cat "$OUT"/bench-*.txt "$OUT/summary.txt"
