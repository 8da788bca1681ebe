#!/bin/bash
# The thirty-fifth session's second call (the outputs here), on
# nvidia-h100-x1: kg_cluster_reduce
# with one cluster barrier a call (the blocks' results in two slots by the
# row's parity) and each warp reading the C results, a lane a block
# (bin/kgen), against 258694d (bin/kgen-base: two barriers a call, every
# thread reading the C results itself). The first call ran the same
# script on a first version whose lanes at and above C kept a butterfly
# of identities, so only lane 0 of each warp had the result: 13 of the 26
# instances' 47 plans, 8 of cluster_rows.kg's 20 and 11 of staged_rows.kg's
# 18 (each cluster size) failed, every one whose outputs along the row
# read the reduction in every thread; kg_cluster_reduce now takes lane 0's
# result.
# 1. kgen test of every file with a cluster launch at its defaults, of
#    cluster_rows.kg, and of staged_rows.kg staged by clusters of 4 and 16;
# 2. the 26 example instances launched by clusters and cluster_rows.kg's
#    long rows, before and after (no PyTorch), and layernorm_2m and
#    center_2m staged by clusters of 16 blocks of 1024 and 512 threads;
# 3. testsuite/exp/grid_resident.cu, the hand-written clusters of 16.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W/correct" "$W/ba" "$W/ba-rows" "$W/staged" "$W/hand"
(nvcc -O3 -arch=sm_90 -o "$W/hand/grid_resident" testsuite/exp/grid_resident.cu > "$W/hand/build.log" 2>&1) &
K=l2_normalize_kb,frobenius_kb,vector_norm_1m,l1_normalize_kb,layernorm_3d_kb,kb_matvec_nominal,kb_matvec_odd,kb_softmax_nominal,kb_softmax_odd,kb_log_softmax_nominal,kb_log_softmax_odd,kb_l1norm_nominal,kb_l1norm_odd,kb_l2norm_nominal,kb_l2norm_odd,log_softmax_16x16384,cosine_kb,count_positive_kb,matvec_256x131072,dot_1m,instancenorm_kb,groupnorm_kb,mean_rows_kb,sum_all_1k,var_std_rows_kb,softmax_16x16384
timeout -k 5 150 ./bin/kgen test --target cuda:sm_90 --seeds 3 --kernel "$K" examples/l2norm.kg examples/layernorm.kg examples/log_softmax.kg examples/losses.kg examples/masked.kg examples/matvec.kg examples/norms.kg examples/reductions.kg examples/softmax.kg testsuite/kernelbench/level1.kg > "$W/correct/examples.log" 2>&1
echo "test the 26 cluster instances: exit $? $(grep -cE '^FAIL' "$W/correct/examples.log") FAIL; $(grep -E 'passed' "$W/correct/examples.log" | tail -1)"
timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 testsuite/cluster_rows.kg > "$W/correct/cluster_rows.log" 2>&1
echo "test cluster_rows: exit $? $(grep -cE '^FAIL' "$W/correct/cluster_rows.log") FAIL; $(grep -E 'passed' "$W/correct/cluster_rows.log" | tail -1)"
for c in 4:256 16:128; do
	IFS=: read -r k th <<< "$c"
	cfg="row-reduce.STAGE=1,row-reduce.CLUSTER=$k,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=$th"
	timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 --max-work 3e7 --config "$cfg" testsuite/staged_rows.kg > "$W/correct/staged-c$k.log" 2>&1
	echo "test staged_rows CLUSTER=$k: exit $? $(grep -cE '^FAIL' "$W/correct/staged-c$k.log") FAIL; $(grep -E 'passed' "$W/correct/staged-c$k.log" | tail -1)"
done
OUT=$W/ba BASELINE= TARGETS=cuda:sm_90 KERNELS=$K timeout 150 sh testsuite/gpu_before_after.sh examples testsuite/kernelbench 2>&1 | tail -3
OUT=$W/ba-rows BASELINE= TARGETS=cuda:sm_90 KERNELS=softmax_256k,layernorm_2m,center_2m timeout 60 sh testsuite/gpu_before_after.sh testsuite/cluster_rows.kg 2>&1 | tail -3
for k in kgen-base kgen; do
	for th in 1024 512; do
		cfg="row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=$th"
		timeout 40 ./bin/$k bench --target cuda:sm_90 --kernel layernorm_2m,center_2m --config "$cfg" --json "$W/staged/$k-t$th.json" --md "$W/staged/$k-t$th.md" testsuite/cluster_rows.kg > "$W/staged/$k-t$th.log" 2>&1
		echo "bench $k staged by 16, $th threads: exit $?"
	done
done
for th in 1024 512; do ./bin/kgen bench --compare "$W/staged/kgen-base-t$th.json" "$W/staged/kgen-t$th.json" > "$W/staged/compare-t$th.txt" 2>&1; done
wait
(cd "$W/hand" && timeout 60 ./grid_resident > run.log 2>&1; echo "grid_resident: exit $?"; tail -8 run.log)
echo "== compare (26 cluster instances)"; grep -v "^ *$" "$W/ba/compare.txt" | tail -32 | cut -c1-150
echo "== long rows"; grep -h "softmax_256k\|layernorm_2m\|center_2m" "$W"/ba-rows/compare.txt | cut -c1-200
echo "== staged by 16, 1024 and 512 threads"; grep -h "layernorm_2m\|center_2m" "$W"/staged/compare-t*.txt | cut -c1-200
tar czf "$FINAL/s35-cluster-reduce.tgz" -C "$W" . && rm -rf "$W"
