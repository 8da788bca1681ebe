#!/bin/bash
# The thirty-third session's row-reduce changes on one GPU call (bin/kgen)
# against fbd5183 (bin/kgen-base): a staged row's copy takes the first
# let's reductions as it goes; a softmax's sum keeps its exponentials in
# place of the staged row; the staged outputs test no element of a whole
# chunk; and a division by a value that is the same over the row
# multiplies by its reciprocal, computed once a row, and corrects the
# quotient twice (kg_div, correctly rounded). Timed on cuda:sm_90,
# no PyTorch beside them: the memory-bound instances whose code
# changed and a few others; then testsuite/gpu_stage.sh's tests with every
# row-reduce launch staged (BENCH=0), and the changed files tested at
# their defaults on both targets. bin/kgen-nodiv is bin/kgen without the
# divisions through a reciprocal (hoistDivisors returning at once), timed
# beside them: it is what was committed (the division was taken back, as
# it gained nothing); compare-share.txt compares it with bin/kgen-base
# (kgen bench --compare ba/kgen-base.json ba/kgen-nodiv.json, after the
# call).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT/ba" "$OUT/stage" "$OUT/correct"
K=softmax_vocab,kb_softmax_wide,softmax_temp,softmax_4kx16k,layernorm_bert,layernorm_3d_kb,quantize_rows_kb,global_avgpool_resnet,scores_bert,l2_normalize_kb,kb_softmax_nominal
OUT="$OUT/ba" KGENS="kgen-base kgen kgen-nodiv" BASELINE= TARGETS=cuda:sm_90 KERNELS=$K \
	timeout -k 5 300 sh testsuite/gpu_before_after.sh examples testsuite/kernelbench/level1.kg > "$OUT/ba.txt" 2>&1
# kgen-nodiv: bin/kgen without the divisions through a reciprocal (hoistDivisors returns at once)
./bin/kgen bench --compare "$OUT/ba/kgen-nodiv.json" "$OUT/ba/kgen.json" > "$OUT/ba/compare-div.txt" 2>&1
OUT="$OUT/stage" BENCH=0 LIMIT=60 timeout -k 5 130 bash testsuite/gpu_stage.sh > "$OUT/stage.txt" 2>&1
for t in cuda:sm_90 hip:nvidia; do
	n=$(echo $t | tr : _)
	timeout -k 5 80 ./bin/kgen test --target $t --seeds 3 examples/softmax.kg examples/layernorm.kg examples/norms.kg examples/losses.kg examples/l2norm.kg examples/quantize.kg examples/attention.kg > "$OUT/correct/$n.log" 2>&1
	echo "test $t: exit $?" >> "$OUT/correct/exits.txt"
done
echo "== table"
grep "kgen " "$OUT/ba/compare.txt"; grep "^summary" "$OUT/ba/compare.txt"
echo "== the divisions through a reciprocal: kgen-nodiv (old) against kgen (new)"
grep "kgen " "$OUT/ba/compare-div.txt"; grep "^summary" "$OUT/ba/compare-div.txt"
grep -E "exit|plans" "$OUT/stage.txt"
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log; grep -h "^FAIL" "$OUT"/correct/*.log | head
tar czf "$FINAL/s33-staged.tgz" -C "$OUT" . && rm -rf "$OUT"
