#!/bin/bash
# The thirty-fifth session's sixth call, on nvidia-h100-x1: staged rows
# copied with 32-bit indices, a thread's whole chunks at fixed offsets
# (THREADS a constant) with no test a point, the chunks partly in the
# row or piece by threads 0 and 1 after them, and stored with 32-bit
# indices (bin/kgen), against 258694d (bin/kgen-base). (The fifth call,
# the same script on a first version, which copied batches of 8 whole
# chunks beside the general copy: softmax_vocab 32.51 -> 44.51 us, 8
# bytes spilled; center_2m staged by 16 blocks of 1024 threads 409.41 ->
# 364.77.)
# 1. kgen test of staged_rows.kg staged in one block and by clusters of 4
#    and 16, of cluster_rows.kg, and of the examples' staged instances;
# 2. before and after: the staged defaults (softmax_vocab, kb_softmax_wide,
#    softmax_256k) and center_2m and layernorm_2m staged by clusters of 16
#    blocks of 1024 and 512 threads.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
W=$FINAL/w
mkdir -p "$W/correct" "$W/ba" "$W/staged"
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
OUT=$W/ba BASELINE= TARGETS=cuda:sm_90 KERNELS=softmax_vocab,kb_softmax_wide,softmax_256k timeout 100 sh testsuite/gpu_before_after.sh examples testsuite/kernelbench testsuite/cluster_rows.kg 2>&1 | tail -1
for th in 1024 512; do
	cfg="row-reduce.STAGE=1,row-reduce.CLUSTER=16,row-reduce.PREFETCH=0,row-reduce.THREADS=$th"
	for k in kgen-base kgen; do
		timeout 40 ./bin/$k bench --target cuda:sm_90 --kernel layernorm_2m,center_2m --config "$cfg" --json "$W/staged/$k-t$th.json" --md "$W/staged/$k-t$th.md" testsuite/cluster_rows.kg > "$W/staged/$k-t$th.log" 2>&1
		echo "bench $k staged by 16, $th threads: exit $?"
	done
	./bin/kgen bench --compare "$W/staged/kgen-base-t$th.json" "$W/staged/kgen-t$th.json" > "$W/staged/compare-t$th.txt" 2>&1
done
echo "== staged defaults"; grep -E "softmax_vocab|kb_softmax_wide|softmax_256k" "$W/ba/compare.txt" | cut -c1-110
echo "== staged by 16, 1024 then 512 threads"; grep -h "layernorm_2m\|center_2m" "$W"/staged/compare-t*.txt | cut -c1-110
tar czf "$FINAL/s35-staged-copy.tgz" -C "$W" . && rm -rf "$W"
