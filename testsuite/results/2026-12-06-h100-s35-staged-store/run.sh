#!/bin/bash
# The thirty-fifth session's seventh call, on nvidia-h100-x1: the staged
# copy of the sixth call (-staged-copy/), its outputs' loop striding by
# blockDim.x again (bin/kgen: 32-bit indices; bin/kgen-a: 64-bit, as in
# 258694d), against 258694d (bin/kgen-base). ptxas spills at 1024
# threads a block differ: softmax_vocab 12 bytes (kgen), none (kgen-a),
# none (kgen-base); softmax_256k none, 48, 20.
# 1. kgen test (bin/kgen) of staged_rows.kg staged in one block and by
#    clusters of 4 and 16, of cluster_rows.kg, and of the examples'
#    staged instances;
# 2. the three kgens: the staged defaults (softmax_vocab, kb_softmax_wide,
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
for k in kgen-base kgen kgen-a; do
	timeout 60 ./bin/$k bench --target cuda:sm_90 --kernel softmax_vocab,kb_softmax_wide,softmax_256k --json "$W/ba/$k.json" --md "$W/ba/$k.md" examples testsuite/kernelbench testsuite/cluster_rows.kg > "$W/ba/$k.log" 2>&1
	echo "bench $k defaults: exit $?"
	timeout 40 ./bin/$k bench --target cuda:sm_90 --kernel layernorm_2m,center_2m --config "row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=1024" --json "$W/ba/$k-c16.json" --md "$W/ba/$k-c16.md" testsuite/cluster_rows.kg > "$W/ba/$k-c16.log" 2>&1
	echo "bench $k staged by 16: exit $?"
done
for k in kgen kgen-a; do
	./bin/kgen bench --compare "$W/ba/kgen-base.json" "$W/ba/$k.json" > "$W/ba/compare-$k.txt" 2>&1
	./bin/kgen bench --compare "$W/ba/kgen-base-c16.json" "$W/ba/$k-c16.json" > "$W/ba/compare-$k-c16.txt" 2>&1
	echo "== kgen-base against $k"; grep -hE "softmax_vocab|kb_softmax_wide|softmax_256k|layernorm_2m|center_2m" "$W/ba/compare-$k.txt" "$W/ba/compare-$k-c16.txt" | cut -c1-110
done
tar czf "$FINAL/s35-staged-store.tgz" -C "$W" . && rm -rf "$W"
