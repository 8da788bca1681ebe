#!/bin/bash
# The thirty-second session's second call, on nvidia-h200: Triton's
# windows read as rows of vectors (7420f43, bin/kgen) against 7b9fecd
# (bin/kgen-s, point by point on Triton) on triton:sm_90, no PyTorch
# beside them; a sweep of VEC, BLOCK and num_warps
# (testsuite/sweep-triton-rows.txt); the changed files tested on
# triton:sm_90.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT/ba" "$OUT/sweep" "$OUT/correct"
K=dw_mobilenet,dw_relu6_s2,kb_depthwise3x3_nominal,kb_depthwise3x3_small,kb_maxpool2d_nominal,maxpool_2x2,maxpool_3x3_s2_p1,avgpool_2x2,maxpool1d_4,moving_average_kb
for t in triton:sm_90; do
	n=$(echo $t | tr : _)
	timeout -k 5 120 ./bin/kgen test --target $t --seeds 3 examples/depthwise_conv.kg examples/pooling.kg backends/cuda/testdata/windows.kg > "$OUT/correct/$n.log" 2>&1
	echo "test $t: exit $?" >> "$OUT/correct/exits.txt"
	timeout -k 5 60 ./bin/kgen test --target $t --seeds 3 --kernel kb_depthwise3x3_nominal,kb_depthwise3x3_small,kb_maxpool2d_nominal testsuite/kernelbench/level1.kg > "$OUT/correct/$n-kb.log" 2>&1
	echo "test $t kernelbench: exit $?" >> "$OUT/correct/exits.txt"
done
OUT="$OUT/ba" KGENS="kgen-s kgen" BASELINE= TARGETS=triton:sm_90 KERNELS=$K \
	timeout -k 5 240 sh testsuite/gpu_before_after.sh examples/depthwise_conv.kg examples/pooling.kg examples/pad_concat.kg testsuite/kernelbench/level1.kg > "$OUT/ba.txt" 2>&1
OUT="$OUT/sweep" TARGET=triton:sm_90 timeout -k 5 150 sh testsuite/gpu_sweep.sh testsuite/sweep-triton-rows.txt > "$OUT/sweep.txt" 2>&1
echo "== table"
grep "kgen " "$OUT/ba/compare.txt"; grep "^summary" "$OUT/ba/compare.txt"
sed 's/  */ /g' "$OUT/sweep/sweep.txt" | cut -c1-150
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log; grep -h "^FAIL" "$OUT"/correct/*.log | head
tar czf "$FINAL/s32-second.tgz" -C "$OUT" . && rm -rf "$OUT"
