#!/bin/bash
# The thirty-third session's first call, on nvidia-h200: a staged row's
# copy into shared memory computing the softmax's max and its sum of
# exponentials online as it goes (bin/kgen: the session's first version
# of backends/cuda/rowreduce.go's stageAccs, which paired them wherever the
# max was the first let; never committed as such, since a148fc6 pairs them
# only where no pass is left), against fbd5183 (bin/kgen-base), on
# cuda:sm_90, no PyTorch beside them; then testsuite/gpu_stage.sh:
# testsuite/staged_rows.kg tested with every row-reduce launch staged on
# cuda:sm_90 and hip:nvidia, and the long-row instances timed staged
# (THREADS 512 and 1024) against their defaults; then softmax.kg and
# losses.kg tested at their defaults.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT/ba" "$OUT/stage" "$OUT/correct"
OUT="$OUT/ba" KGENS="kgen-base kgen" BASELINE= TARGETS=cuda:sm_90 KERNELS=softmax_vocab,kb_softmax_wide \
	timeout -k 5 150 sh testsuite/gpu_before_after.sh examples/softmax.kg testsuite/kernelbench/level1.kg > "$OUT/ba.txt" 2>&1
OUT="$OUT/stage" KERNELS=softmax_vocab,cross_entropy_vocab,logsumexp_f16_odd,layernorm_bf16_odd LIMIT=150 \
	timeout -k 5 330 bash testsuite/gpu_stage.sh > "$OUT/stage.txt" 2>&1
for t in cuda:sm_90; do
	n=$(echo $t | tr : _)
	timeout -k 5 90 ./bin/kgen test --target $t --seeds 3 examples/softmax.kg examples/losses.kg > "$OUT/correct/$n.log" 2>&1
	echo "test $t: exit $?" >> "$OUT/correct/exits.txt"
done
echo "== table"
grep "kgen " "$OUT/ba/compare.txt"; grep "^summary" "$OUT/ba/compare.txt"
cat "$OUT/stage.txt" | cut -c1-200
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log; grep -h "^FAIL" "$OUT"/correct/*.log | head
tar czf "$FINAL/s33-first.tgz" -C "$OUT" . && rm -rf "$OUT"
