#!/bin/bash
# The thirty-eighth session's first call (prepared in the thirty-seventh as
# its third, which never ran), on the H100, cuda:sm_90, no PyTorch: against
# eaf42c5 (main, bin/kgen-base), bin/kgen writes a
# staged row's outputs as its copy reads them: a thread's chunks in
# batches of 8, THREADS apart, 32-bit indices, a batch wholly in the
# block's piece whose staged chunks line up computed and stored with no
# test a chunk (-ablate/ measured the hand-written equivalent: center_2m
# staged by 16 blocks of 1024 threads 322.37 -> 267.46 us).
# testsuite/gpu_row_launches.sh: kgen test (bin/kgen) of the staged and
# cluster set and of every example instance with a staged or cluster
# launch, then both kgens on those instances and on center_2m,
# layernorm_2m and softmax_256k staged by clusters of 16 blocks of 512 and
# of 1024 threads; then both on those three at their defaults, and
# bin/kgen-stage16 (branch s37-stage16: that, and rows that two streamed
# passes read staged across clusters of up to 16 blocks by default),
# after kgen test of cluster_rows.kg at its defaults with it. Last,
# bin/kgen-regroup (branch s38-regroup-stores: these stores and s37-regroup's
# splitGroups, group norm in one launch) tested on norms.kg's group norms and
# timed on groupnorm_kb at its default and staged by 16 blocks of 512
# threads, beside kgen-base and kgen.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W"
OUT=$W KGENS="kgen-base kgen" THREADS=512,1024 LONG=center_2m,layernorm_2m,softmax_256k bash testsuite/gpu_row_launches.sh
timeout -k 5 90 ./bin/kgen-stage16 test --target cuda:sm_90 --seeds 3 testsuite/cluster_rows.kg > "$W/correct/cluster_rows-stage16.log" 2>&1
echo "test cluster_rows.kg (kgen-stage16): exit $? $(grep -E 'passed' "$W/correct/cluster_rows-stage16.log" | tail -1)"
for k in kgen-base kgen kgen-stage16; do
	timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel center_2m,layernorm_2m,softmax_256k --json "$W/time/$k-default.json" testsuite/cluster_rows.kg > "$W/time/$k-default.log" 2>&1
	echo "bench $k, the long rows at their defaults: exit $?"
done
./bin/kgen bench --compare "$W/time/kgen-base-default.json" "$W/time/kgen-default.json" > "$W/time/compare-kgen-default.txt" 2>&1
echo "== kgen-base against kgen, the long rows at their defaults"
grep -hE "^[a-z]" "$W/time/compare-kgen-default.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-110
./bin/kgen bench --compare "$W/time/kgen-default.json" "$W/time/kgen-stage16-default.json" > "$W/time/compare-stage16-default.txt" 2>&1
echo "== kgen against kgen-stage16, the long rows at their defaults"
grep -hE "^[a-z]" "$W/time/compare-stage16-default.txt" | grep -v "^old:\|^new:\|^noise:\|^instance" | cut -c1-110
GN=groupnorm_kb,groupnorm_small
timeout -k 5 60 ./bin/kgen-regroup test --target cuda:sm_90 --seeds 3 --kernel $GN examples/norms.kg > "$W/correct/groupnorm-regroup.log" 2>&1
echo "test $GN (kgen-regroup): exit $? $(grep -E 'passed' "$W/correct/groupnorm-regroup.log" | tail -1)"
timeout -k 5 60 ./bin/kgen-regroup test --target cuda:sm_90 --seeds 3 --kernel $GN --config row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=512 examples/norms.kg > "$W/correct/groupnorm-regroup-staged.log" 2>&1
echo "test $GN staged by 16 blocks of 512 (kgen-regroup): exit $? $(grep -E 'passed' "$W/correct/groupnorm-regroup-staged.log" | tail -1)"
for k in kgen-base kgen kgen-regroup; do
	timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel groupnorm_kb --json "$W/time/$k-gn.json" examples/norms.kg > "$W/time/$k-gn.log" 2>&1
	timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel groupnorm_kb --config row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=512 --json "$W/time/$k-gn16.json" examples/norms.kg > "$W/time/$k-gn16.log" 2>&1
	echo "bench $k, groupnorm_kb at its default and staged by 16 blocks of 512: $(grep -h groupnorm_kb "$W/time/$k-gn.log" "$W/time/$k-gn16.log" | cut -c1-90 | tr '\n' '|')"
done
rm -rf "$W/emit"
tar czf "$FINAL/s37-stores.tgz" -C "$W" . && rm -rf "$W"
