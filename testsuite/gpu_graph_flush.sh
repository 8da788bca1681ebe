#!/bin/sh
# The timing protocol's CUDA graphs for plans under 20 us, with the kgens
# in KGENS (default "kgen-old kgen": one L2 flush before a graph's runs,
# then a flush before each run with the flushes timed apart and taken
# off): one configuration of ResNet's global average pool (25 MiB, near
# the 20 us line) on cuda:sm_90 and triton:sm_90, three processes each,
# then short instances beside eager. Build the binaries into bin/ first.
#   KGENS="kgen kgen-graph" testsuite/gpu_graph_flush.sh
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for k in ${KGENS:-kgen-old kgen}; do
	[ -x "./bin/$k" ] || { echo "no bin/$k"; continue; }
	for i in 1 2 3; do
		for c in "cuda:sm_90 BLOCK_ROWS=32,THREADS=128,PREFETCH=0,CLUSTER=1,VEC=1" "triton:sm_90 BLOCK=64,BLOCK_ROWS=16,num_warps=2"; do
			set -- $c
			echo "$k $i $1 $2 $(./bin/$k bench --target "$1" --config "$2" --kernel global_avgpool_resnet examples/pooling.kg 2>&1 | grep '^bench:')"
		done
	done | tee -a "$OUT/pool.txt"
	timeout 200 "./bin/$k" bench --target cuda:sm_90,triton:sm_90 --baseline eager \
		--kernel softmax_16x16384,log_softmax_16x16384,mse_kb,rmsnorm_small,sum_rows_kb --json "$OUT/small-$k.json" \
		examples/softmax.kg examples/log_softmax.kg examples/losses.kg examples/rmsnorm.kg examples/reductions.kg \
		> "$OUT/small-$k.txt" 2> "$OUT/small-$k.log"
	echo "bench $k: exit $?"
	cat "$OUT/small-$k.txt"
done
