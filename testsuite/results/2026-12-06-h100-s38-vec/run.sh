#!/bin/bash
# The thirty-eighth session's second call, cuda:sm_90, no PyTorch. bin/kgen
# (ffd9b86): a row pass that writes its outputs along the row stores whole
# chunks as vectors, and the staged outputs' store indexes a vector
# pointer (nvcc had split both into one store a point); bin/kgen-base is
# main (0a3031f); bin/kgen-regroup is bin/kgen with s37-regroup's
# splitGroups (group norm in one launch); bin/kgen-stores is bin/kgen with
# s37-stores (a staged row's outputs in batches of 8 chunks, which the
# first call found slower: its stores split too), its store indexed as
# vectors (branch s38-stores-vec).
#  1. kgen test (bin/kgen) of cluster_rows.kg and of every example file
#     with a kernel whose code changed (their kernels of run-time sizes
#     among them), and KernelBench's five row kernels of run-time sizes;
#     kgen test (bin/kgen-regroup) of the group norms; kgen test
#     (bin/kgen-stores) of cluster_rows.kg, staged_rows.kg staged in one
#     block and by 16, and softmax.kg;
#  2. kgen-base against kgen and kgen-stores on cluster_rows.kg's
#     instances at their defaults and on softmax_vocab and kb_softmax_wide,
#     and kgen-base against kgen-regroup on groupnorm_kb.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
# Results go straight to $OUT (no tar at the end), in order of need, so
# that what ran comes back if the call is cut short.
W=${OUT:-/tmp/out}
mkdir -p "$W/correct" "$W/time"
t() { # name, timeout, kgen, args...
	local n=$1 s=$2 k=$3
	shift 3
	timeout -k 5 "$s" ./bin/$k test --target cuda:sm_90 --seeds 3 "$@" > "$W/correct/$n.log" 2>&1
	echo "test $n ($k): exit $? $(grep -E 'passed' "$W/correct/$n.log" | tail -1)"
}
t cluster_rows 60 kgen testsuite/cluster_rows.kg
t examples 120 kgen examples/rmsnorm.kg examples/l2norm.kg examples/layernorm.kg examples/log_softmax.kg examples/quantize.kg examples/softmax.kg examples/masked.kg
t kb_rows 60 kgen --kernel kb_l1norm,kb_l2norm,kb_layernorm,kb_log_softmax,kb_softmax testsuite/kernelbench/level1.kg
t groupnorm 60 kgen-regroup --kernel groupnorm_kb,groupnorm_small examples/norms.kg
for k in kgen-base kgen kgen-stores; do
	timeout 90 ./bin/$k bench --target cuda:sm_90 --json "$W/time/$k-cluster_rows.json" testsuite/cluster_rows.kg > "$W/time/$k-cluster_rows.log" 2>&1
	echo "bench $k, cluster_rows.kg: exit $?"
	timeout 40 ./bin/$k bench --target cuda:sm_90 --kernel softmax_vocab,kb_softmax_wide --json "$W/time/$k-wide.json" examples/softmax.kg testsuite/kernelbench/level1.kg > "$W/time/$k-wide.log" 2>&1
	echo "bench $k, softmax_vocab and kb_softmax_wide: exit $?"
done
t stores_cluster_rows 60 kgen-stores testsuite/cluster_rows.kg
for c in 1:256 16:128; do
	IFS=: read -r k th <<< "$c"
	t stores_staged_c$k 60 kgen-stores --max-work 3e7 --config "row-reduce.STAGE=1,row-reduce.CLUSTER=$k,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=$th" testsuite/staged_rows.kg
done
t stores_softmax 60 kgen-stores examples/softmax.kg
for k in kgen-base kgen-regroup; do
	timeout 40 ./bin/$k bench --target cuda:sm_90 --kernel groupnorm_kb --json "$W/time/$k-gn.json" examples/norms.kg > "$W/time/$k-gn.log" 2>&1
	echo "bench $k, groupnorm_kb: exit $?"
done
./bin/kgen bench --compare "$W/time/kgen-base-cluster_rows.json" "$W/time/kgen-cluster_rows.json" > "$W/time/compare-cluster_rows.txt" 2>&1
./bin/kgen bench --compare "$W/time/kgen-base-gn.json" "$W/time/kgen-regroup-gn.json" > "$W/time/compare-gn.txt" 2>&1
./bin/kgen bench --compare "$W/time/kgen-base-cluster_rows.json" "$W/time/kgen-stores-cluster_rows.json" > "$W/time/compare-stores-cluster_rows.txt" 2>&1
./bin/kgen bench --compare "$W/time/kgen-base-wide.json" "$W/time/kgen-wide.json" > "$W/time/compare-wide.txt" 2>&1
./bin/kgen bench --compare "$W/time/kgen-base-wide.json" "$W/time/kgen-stores-wide.json" > "$W/time/compare-stores-wide.txt" 2>&1
for c in cluster_rows wide gn stores-cluster_rows stores-wide; do
	echo "== $c"
	grep -hE "^[a-z]" "$W/time/compare-$c.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-110
done
