#!/bin/bash
# The thirty-second session's first call, on nvidia-h200: three kgens
# (bin/kgen-a at 97a1137, rows read as vectors at VEC 2; bin/kgen-b at
# 41dc668, such windows at VEC 4 by default, b9138ec; bin/kgen, windows
# at strides above 1 read as vectors too) on the depthwise convolutions
# and poolings they change, cuda:sm_90 and hip:nvidia, beside eager; the
# changed files tested on both targets; testsuite/exp/l2_reuse.cu.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT/ba" "$OUT/correct" "$OUT/l2"
K=dw_mobilenet,kb_depthwise3x3_nominal,dw_relu6_s2,kb_maxpool2d_nominal,maxpool_2x2,maxpool_3x3_s2_p1,avgpool_2x2,maxpool1d_4
OUT="$OUT/ba" KGENS="kgen-a kgen-b kgen" BASELINE=eager TARGETS=cuda:sm_90,hip:nvidia KERNELS=$K \
	timeout -k 5 300 sh testsuite/gpu_before_after.sh examples/depthwise_conv.kg examples/pooling.kg testsuite/kernelbench/level1.kg > "$OUT/ba.txt" 2>&1
./bin/kgen bench --compare "$OUT/ba/kgen-b.json" "$OUT/ba/kgen.json" > "$OUT/ba/compare-b-new.txt" 2>&1
for t in cuda:sm_90 hip:nvidia; do
	n=$(echo $t | tr : _)
	timeout -k 5 90 ./bin/kgen test --target $t --seeds 3 examples/depthwise_conv.kg examples/pooling.kg > "$OUT/correct/$n.log" 2>&1
	echo "test $t: exit $?" >> "$OUT/correct/exits.txt"
	timeout -k 5 60 ./bin/kgen test --target $t --seeds 3 --kernel kb_depthwise3x3_nominal,kb_maxpool2d_nominal testsuite/kernelbench/level1.kg > "$OUT/correct/$n-kb.log" 2>&1
	echo "test $t kernelbench: exit $?" >> "$OUT/correct/exits.txt"
done
nvcc -O3 -arch=sm_90 -o "$OUT/l2/l2_reuse" testsuite/exp/l2_reuse.cu > "$OUT/l2/build.txt" 2>&1 && timeout -k 5 60 "$OUT/l2/l2_reuse" > "$OUT/l2/l2_reuse.txt" 2>&1
rm -f "$OUT/l2/l2_reuse"
echo "== table"
grep -v "^bench" "$OUT/ba/compare.txt" | tail -20
tail -20 "$OUT/ba/compare-b-new.txt"
cat "$OUT/correct/exits.txt"; grep -h 'plans' "$OUT"/correct/*.log
cat "$OUT/l2/l2_reuse.txt"
tar czf "$FINAL/s32-first.tgz" -C "$OUT" . && rm -rf "$OUT"
