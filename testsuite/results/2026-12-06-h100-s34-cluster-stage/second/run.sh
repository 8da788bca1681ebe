#!/bin/bash
# The thirty-fourth session's fifth call, on nvidia-h100-x1 (first/ holds
# the fourth: the first version, whose staged outputs read a layer norm's
# weights an element at a time). bin/kgen is 731af5e's tree plus
# cluster_rows.kg's center_2m; bin/kgen-base 48c8863.
# 1. kgen test of testsuite/cluster_rows.kg at its defaults (every launch
#    staged by clusters of 8 or 16), of staged_rows.kg staged by clusters
#    of 4 blocks of 256 threads and of 16 of 128, and of the examples'
#    layernorm.kg staged in one block (its weights read a chunk at a time);
# 2. the three long-row instances timed before and after (gpu_before_after,
#    no PyTorch; kgen bench's same-size copy in each report), and
#    layernorm_2m and center_2m with clusters of 16 blocks of 512 threads.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
mkdir -p "$FINAL/w/correct" "$FINAL/w/ba" "$FINAL/w/t512"
timeout -k 5 100 ./bin/kgen test --target cuda:sm_90 --seeds 3 testsuite/cluster_rows.kg > "$FINAL/w/correct/cluster_rows.log" 2>&1
echo "test cluster_rows.kg: exit $?"; grep -E "^FAIL|passed" "$FINAL/w/correct/cluster_rows.log" | tail -4
for c in 4:256:testsuite/staged_rows.kg 16:128:testsuite/staged_rows.kg 1:64:examples/layernorm.kg; do
	IFS=: read -r k th f <<< "$c"
	cfg="row-reduce.STAGE=1,row-reduce.CLUSTER=$k,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=$th"
	timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 --max-work 3e7 --config "$cfg" $f > "$FINAL/w/correct/staged-c$k.log" 2>&1
	echo "test $f CLUSTER=$k THREADS=$th: exit $?"; grep -E "^FAIL|passed" "$FINAL/w/correct/staged-c$k.log" | tail -4
done
OUT=$FINAL/w/ba BASELINE= TARGETS=cuda:sm_90 KERNELS=softmax_256k,layernorm_2m,center_2m \
	timeout 100 sh testsuite/gpu_before_after.sh testsuite/cluster_rows.kg 2>&1 | tail -7
timeout 40 ./bin/kgen bench --target cuda:sm_90 --kernel layernorm_2m,center_2m --config "row-reduce.THREADS=512" --md "$FINAL/w/t512/bench.md" testsuite/cluster_rows.kg > "$FINAL/w/t512/bench.log" 2>&1
echo "bench THREADS=512: exit $?"
grep -h "softmax_256k\|layernorm_2m\|center_2m" "$FINAL"/w/ba/*.md "$FINAL/w/t512/bench.md" | cut -c1-200
tar czf "$FINAL/s34-cluster-stage2.tgz" -C "$FINAL/w" . && rm -rf "$FINAL/w"
