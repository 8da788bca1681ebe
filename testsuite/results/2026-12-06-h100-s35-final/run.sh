#!/bin/bash
# The thirty-fifth session's tenth call, on nvidia-h100-x1: the committed
# tree (bin/kgen: kg_cluster_reduce with one cluster barrier a call; the
# staged copy with 32-bit indices and THREADS a constant; the outputs'
# loop of 258694d, which -staged-vocab/ showed softmax_vocab needs),
# against 258694d (bin/kgen-base).
# 1. kgen test of staged_rows.kg staged in one block and by clusters of
#    4 and 16, of cluster_rows.kg, of the examples' staged instances and
#    of the 26 example instances launched by clusters;
# 2. both kgens: the staged defaults (softmax_vocab, kb_softmax_wide,
#    softmax_256k), and center_2m and layernorm_2m staged by clusters of
#    16 blocks of 1024 threads.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W/correct" "$W/ba"
for c in 1:256 4:256 16:128; do
	IFS=: read -r k th <<< "$c"
	cfg="row-reduce.STAGE=1,row-reduce.CLUSTER=$k,row-reduce.PREFETCH=0,row-reduce.BLOCK_ROWS=1,row-reduce.THREADS=$th"
	timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 --max-work 3e7 --config "$cfg" testsuite/staged_rows.kg > "$W/correct/staged-c$k.log" 2>&1
	echo "test staged_rows CLUSTER=$k: exit $? $(grep -E 'passed' "$W/correct/staged-c$k.log" | tail -1)"
done
timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 testsuite/cluster_rows.kg > "$W/correct/cluster_rows.log" 2>&1
echo "test cluster_rows: exit $? $(grep -E 'passed' "$W/correct/cluster_rows.log" | tail -1)"
timeout -k 5 60 ./bin/kgen test --target cuda:sm_90 --seeds 3 --kernel softmax_vocab,kb_softmax_wide examples/softmax.kg testsuite/kernelbench/level1.kg > "$W/correct/examples.log" 2>&1
echo "test softmax_vocab,kb_softmax_wide: exit $? $(grep -E 'passed' "$W/correct/examples.log" | tail -1)"
K=l2_normalize_kb,frobenius_kb,vector_norm_1m,l1_normalize_kb,layernorm_3d_kb,kb_matvec_nominal,kb_matvec_odd,kb_softmax_nominal,kb_softmax_odd,kb_log_softmax_nominal,kb_log_softmax_odd,kb_l1norm_nominal,kb_l1norm_odd,kb_l2norm_nominal,kb_l2norm_odd,log_softmax_16x16384,cosine_kb,count_positive_kb,matvec_256x131072,dot_1m,instancenorm_kb,groupnorm_kb,mean_rows_kb,sum_all_1k,var_std_rows_kb,softmax_16x16384
timeout -k 5 150 ./bin/kgen test --target cuda:sm_90 --seeds 3 --kernel "$K" examples/l2norm.kg examples/layernorm.kg examples/log_softmax.kg examples/losses.kg examples/masked.kg examples/matvec.kg examples/norms.kg examples/reductions.kg examples/softmax.kg testsuite/kernelbench/level1.kg > "$W/correct/clusters.log" 2>&1
echo "test the 26 cluster instances: exit $? $(grep -E 'passed' "$W/correct/clusters.log" | tail -1)"
for k in kgen-base kgen; do
	timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel softmax_vocab,kb_softmax_wide,softmax_256k --json "$W/ba/$k.json" --md "$W/ba/$k.md" examples testsuite/kernelbench testsuite/cluster_rows.kg > "$W/ba/$k.log" 2>&1
	echo "bench $k defaults: exit $?"
	timeout 40 ./bin/$k bench --target cuda:sm_90 --kernel layernorm_2m,center_2m --config "row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=1024" --json "$W/ba/$k-c16.json" --md "$W/ba/$k-c16.md" testsuite/cluster_rows.kg > "$W/ba/$k-c16.log" 2>&1
	echo "bench $k staged by 16: exit $?"
done
for k in kgen; do
	./bin/kgen bench --compare "$W/ba/kgen-base.json" "$W/ba/$k.json" > "$W/ba/compare-$k.txt" 2>&1
	./bin/kgen bench --compare "$W/ba/kgen-base-c16.json" "$W/ba/$k-c16.json" > "$W/ba/compare-$k-c16.txt" 2>&1
	echo "== kgen-base against $k"; grep -hE "softmax_vocab|kb_softmax_wide|softmax_256k|layernorm_2m|center_2m" "$W/ba/compare-$k.txt" "$W/ba/compare-$k-c16.txt" | cut -c1-110
done
tar czf "$FINAL/s35-final.tgz" -C "$W" . && rm -rf "$W"
