#!/bin/bash
# The thirty-fourth session's fourth call, on nvidia-h100-x1: rows staged
# across a cluster of blocks, a piece of each row a block (STAGE=1,
# CLUSTER > 1; bin/kgen, the session's tree), against 48c8863
# (bin/kgen-base).
# 1. kgen test of testsuite/cluster_rows.kg at its defaults (every launch
#    staged by clusters of 8 or 16), cuda:sm_90;
# 2. kgen test of testsuite/staged_rows.kg (rows of 1 to 50257 at every
#    offset in a chunk, two staged inputs, fused lets) with every
#    row-reduce launch staged by clusters of 4 blocks of 256 threads and of
#    16 of 128;
# 3. the two long-row instances timed before and after, no PyTorch beside
#    them (kgen bench's same-size copy in each report).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
mkdir -p "$FINAL/w/correct" "$FINAL/w/ba"
timeout -k 5 150 ./bin/kgen test --target cuda:sm_90 --seeds 3 testsuite/cluster_rows.kg > "$FINAL/w/correct/cluster_rows.log" 2>&1
echo "test cluster_rows.kg: exit $?"; grep -E "^(FAIL|ok)|passed" "$FINAL/w/correct/cluster_rows.log" | tail -9
for c in 4:256 16:128; do
	cfg="row-reduce.STAGE=1,row-reduce.CLUSTER=${c%%:*},row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=${c##*:}"
	timeout -k 5 100 ./bin/kgen test --target cuda:sm_90 --seeds 3 --max-work 3e7 --config "$cfg" testsuite/staged_rows.kg > "$FINAL/w/correct/staged-c${c%%:*}.log" 2>&1
	echo "test staged_rows.kg CLUSTER=${c%%:*}: exit $?"; grep -E "^FAIL|passed" "$FINAL/w/correct/staged-c${c%%:*}.log" | tail -4
done
OUT=$FINAL/w/ba BASELINE= TARGETS=cuda:sm_90 KERNELS=softmax_256k,layernorm_2m \
	timeout 150 sh testsuite/gpu_before_after.sh testsuite/cluster_rows.kg 2>&1 | tail -8
grep -h "softmax_256k\|layernorm_2m" "$FINAL"/w/ba/*.md | cut -c1-220
tar czf "$FINAL/s34-cluster-stage.tgz" -C "$FINAL/w" . && rm -rf "$FINAL/w"
