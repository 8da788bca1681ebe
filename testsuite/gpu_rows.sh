#!/bin/bash
# Row reductions whose cached rows move in chunks of VEC elements
# (lower.RowVec) on a GPU machine: kgen test of the row-reduction examples
# and backends/cuda/testdata/rows.kg on cuda:sm_90 (clusters) and
# cuda:sm_90a, then kgen bench of the memory-bound row instances (kgen's
# times only; BASELINE=eager adds PyTorch's) with this kgen and, when
# bin/kgen-old is there (a kgen built before the change), with that one in
# the same run. Build bin/kgen (and bin/kgen-old) first; carry bin/. Logs
# go to $OUT; the tables are printed last.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
files="examples/layernorm.kg examples/rmsnorm.kg examples/softmax.kg examples/log_softmax.kg examples/reductions.kg"
rows=${KERNELS:-layernorm_bf16_llm,rmsnorm_bf16_llama,layernorm_8kx4k,rmsnorm_llama,softmax_4kx16k,softmax_vocab,sum_rows_kb,sum_rows_4kx16k,logsumexp_4k,log_softmax_16x16384}
timeout -k 10 150 ./bin/kgen test --target cuda:sm_90 --seeds 2 --max-work 3e7 $files backends/cuda/testdata/rows.kg > "$OUT/test-cuda.log" 2>&1
echo "kgen test cuda:sm_90: exit $?" | tee -a "$OUT/summary.txt"
for k in kgen kgen-old; do
	[ -x ./bin/$k ] || continue
	timeout -k 10 150 ./bin/$k bench --target cuda:sm_90a ${BASELINE:+--baseline $BASELINE} --kernel "$rows" --json "$OUT/bench-$k.json" \
		$files > "$OUT/bench-$k.txt" 2> "$OUT/bench-$k.log"
	echo "bench with $k: exit $?" | tee -a "$OUT/summary.txt"
done
grep -h "^FAIL\|passed\|failed" "$OUT"/test-*.log | tail -8
for f in "$OUT"/bench-*.txt; do echo "== $f"; awk '{print $1, $2, $3, $6, $7, $9}' "$f"; done
cat "$OUT/summary.txt"
