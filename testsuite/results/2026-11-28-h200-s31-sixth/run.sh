#!/bin/bash
# The thirty-first session's sixth call, on nvidia-h200: the generic
# template's window rows read as vectors (rowWindow) before and after
# (bin/kgen-base at e29c191, bin/kgen with it) for dw_mobilenet and
# KernelBench's 3 x 3 depthwise convolution on cuda:sm_90 and hip:nvidia;
# dw_mobilenet by VEC and UNROLL (testsuite/sweep-dw-rows.txt); the
# depthwise files tested on both targets, at the default VEC and at 4.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT/ba" "$OUT/sweep" "$OUT/correct"
OUT="$OUT/ba" BASELINE= TARGETS=cuda:sm_90,hip:nvidia KERNELS=dw_mobilenet,kb_depthwise3x3_nominal \
	timeout -k 5 120 sh testsuite/gpu_before_after.sh examples/depthwise_conv.kg testsuite/kernelbench/level1.kg > "$OUT/ba.txt" 2>&1
OUT="$OUT/sweep" TARGET=cuda:sm_90 timeout -k 5 100 sh testsuite/gpu_sweep.sh testsuite/sweep-dw-rows.txt > "$OUT/sweep.txt" 2>&1
for t in cuda:sm_90 hip:nvidia; do
	n=$(echo $t | tr : _)
	timeout -k 5 60 ./bin/kgen test --target $t --seeds 3 --kernel dw_mobilenet,dw_s2_5x5,dw_small,dw_relu6_s2,dw_relu6_tiny,kb_depthwise3x3_nominal,kb_depthwise3x3_odd,kb_depthwise3x3_small examples/depthwise_conv.kg testsuite/kernelbench/level1.kg > "$OUT/correct/$n.log" 2>&1
	echo "test $t: exit $?" >> "$OUT/correct/exits.txt"
	timeout -k 5 60 ./bin/kgen test --target $t --seeds 3 --config generic.VEC=4 examples/depthwise_conv.kg > "$OUT/correct/$n-vec4.log" 2>&1
	echo "test $t VEC=4: exit $?" >> "$OUT/correct/exits.txt"
done
echo "== table"
tail -8 "$OUT/ba.txt"
sed 's/  */ /g' "$OUT/sweep/sweep.txt" | cut -c1-150
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log
tar czf "$FINAL/s31-sixth.tgz" -C "$OUT" . && rm -rf "$OUT"
