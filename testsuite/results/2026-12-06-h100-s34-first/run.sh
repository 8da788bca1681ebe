#!/bin/bash
# The thirty-fourth session's first timing call, on nvidia-h100-x1.
# 1. b5c4e12 (kg_sincos: a sine and a cosine of one argument computed
#    together) against 48c8863 (bin/kgen-base), misc_math_f64's two
#    instances on cuda:sm_90 and hip:nvidia, no PyTorch beside them;
# 2. kgen test of elementwise.kg (both misc_math instances among them) on
#    both targets, default and specials inputs;
# 3. sweep.txt: the configurations of the four small launches below 80% of
#    a same-size copy (testsuite/gpu_sweep.sh, cuda:sm_90).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
R=testsuite/results/2026-12-06-h100-s34-first
mkdir -p "$FINAL/w/ba" "$FINAL/w/correct" "$FINAL/w/sweep"
OUT=$FINAL/w/ba BASELINE= TARGETS=cuda:sm_90,hip:nvidia KERNELS=misc_math_f64_1m \
	timeout 120 sh testsuite/gpu_before_after.sh examples 2>&1 | tail -8
for t in cuda:sm_90 hip:nvidia; do
	timeout 100 ./bin/kgen test --target $t --dists normal,uniform,specials examples/elementwise.kg > "$FINAL/w/correct/${t%%:*}.log" 2>&1
	echo "test $t: exit $?"
	tail -3 "$FINAL/w/correct/${t%%:*}.log"
done
OUT=$FINAL/w/sweep timeout 300 sh testsuite/gpu_sweep.sh $R/sweep.txt > /dev/null 2>&1
echo "== sweep"
cut -c1-200 "$FINAL/w/sweep/sweep.txt"
tar czf "$FINAL/s34-first.tgz" -C "$FINAL/w" . && rm -rf "$FINAL/w"
