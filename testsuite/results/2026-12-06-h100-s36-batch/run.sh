#!/bin/bash
# The thirty-sixth session's fifth call, on nvidia-h100-x1, cuda:sm_90, no
# PyTorch: against fa9a8d3 (bin/kgen-base),
#   bin/kgen-batch: a staged copy's batch wholly in the block's piece
#     loaded and taken with no test a chunk (-invariants/ timed it with the
#     row invariants hoisted too);
#   bin/kgen: that, and launches by clusters taking only the clusters that
#     fit at once (the runner's new clusters command,
#     cuOccupancyMaxActiveClusters), each looping over the rows.
# 1. testsuite/gpu_row_launches.sh: kgen test (bin/kgen) of the staged and
#    cluster set and of every example instance with a staged or cluster
#    launch, then the three kgens on those instances and on center_2m and
#    layernorm_2m staged by clusters of 16 blocks of 1024 threads;
# 2. center_2m and layernorm_2m staged by 16 blocks of 512 threads.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W"
OUT=$W KGENS="kgen-base kgen-batch kgen" bash testsuite/gpu_row_launches.sh
staged="row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=512"
for k in kgen-base kgen-batch kgen; do
	timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel center_2m,layernorm_2m --config "$staged" --json "$W/time/$k-512.json" testsuite/cluster_rows.kg > "$W/time/$k-512.log" 2>&1
	echo "bench $k, staged by 16 blocks of 512: exit $?"
done
for k in kgen-batch kgen; do
	./bin/kgen bench --compare "$W/time/kgen-base-512.json" "$W/time/$k-512.json" > "$W/time/compare-$k-512.txt" 2>&1
	echo "== kgen-base against $k, staged by 16 blocks of 512"
	grep -E "^(center|layernorm)_2m|^summary" "$W/time/compare-$k-512.txt" | cut -c1-110
done
rm -rf "$W/emit"
tar czf "$FINAL/s36-batch.tgz" -C "$W" . && rm -rf "$W"
