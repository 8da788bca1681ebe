#!/bin/bash
# The thirty-second session's third call, on nvidia-h200: windows whose
# rows fit as vectors of 2 computed point by point with their rows as
# vectors instead of in the window template's tiles, and VEC 2 by default
# where 4 does not fit (bin/kgen), against 7420f43 (bin/kgen-t), on
# cuda:sm_90, hip:nvidia and triton:sm_90, no PyTorch beside them; a sweep
# of CUDA's threads and VEC (testsuite/sweep-rows-cuda.txt); the changed
# files tested on the three targets.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT/ba" "$OUT/sweep" "$OUT/correct"
K=dw_s2_5x5,moving_average_kb,moving_average_small,maxpool_small,kb_maxpool2d_small
OUT="$OUT/ba" KGENS="kgen-t kgen" BASELINE= TARGETS=cuda:sm_90,hip:nvidia,triton:sm_90 KERNELS=$K \
	timeout -k 5 200 sh testsuite/gpu_before_after.sh examples/depthwise_conv.kg examples/pooling.kg examples/pad_concat.kg testsuite/kernelbench/level1.kg > "$OUT/ba.txt" 2>&1
OUT="$OUT/sweep" TARGET=cuda:sm_90 timeout -k 5 100 sh testsuite/gpu_sweep.sh testsuite/sweep-rows-cuda.txt > "$OUT/sweep.txt" 2>&1
for t in cuda:sm_90 hip:nvidia triton:sm_90; do
	n=$(echo $t | tr : _)
	timeout -k 5 90 ./bin/kgen test --target $t --seeds 3 examples/depthwise_conv.kg examples/pooling.kg examples/pad_concat.kg backends/cuda/testdata/windows.kg > "$OUT/correct/$n.log" 2>&1
	echo "test $t: exit $?" >> "$OUT/correct/exits.txt"
	timeout -k 5 60 ./bin/kgen test --target $t --seeds 3 --kernel kb_maxpool2d_small,kb_maxpool2d_nominal,kb_depthwise3x3_small testsuite/kernelbench/level1.kg > "$OUT/correct/$n-kb.log" 2>&1
	echo "test $t kernelbench: exit $?" >> "$OUT/correct/exits.txt"
done
echo "== table"
grep "kgen " "$OUT/ba/compare.txt"; grep "^summary" "$OUT/ba/compare.txt"
sed 's/  */ /g' "$OUT/sweep/sweep.txt" | cut -c1-150
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log; grep -h "^FAIL" "$OUT"/correct/*.log | head
tar czf "$FINAL/s32-third.tgz" -C "$OUT" . && rm -rf "$OUT"
