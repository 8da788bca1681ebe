#!/bin/sh
# The forty-fourth session's calls on nvidia-h100-x1 (bin/ carried: stripped
# kgens in bins.tar.xz). Call 2 (folder 1-a06bb96-vs-bb68f0d): bin/kgen-base
# at bb68f0d, bin/kgen at 19eb6be (a06bb96's update). Call 3 (folders 2-*):
# bin/kgen-old at bb68f0d, bin/kgen-base at 19eb6be, bin/kgen the tree of
# a2243e4. (Call 1 named instances that are not in the files, and timed nothing.)
tar xJf bin/bins.tar.xz -C bin
F="examples testsuite/kernelbench/level1.kg"
if [ "${CALL:-3}" = 2 ]; then
	K=softmax_vocab,kb_softmax_wide,cross_entropy_vocab,kb_softmax_nominal,kb_log_softmax_nominal,softmax_4kx16k,cross_entropy_kb
	KGENS="kgen-base kgen" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/r1 testsuite/gpu_before_after.sh $F
	KGENS="kgen kgen-base" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/r2 testsuite/gpu_before_after.sh $F
	exit
fi
K=softmax_vocab,kb_softmax_wide,cross_entropy_vocab,kb_softmax_nominal,kb_log_softmax_nominal,softmax_temp,instancenorm_kb,layernorm_3d_kb,frobenius_kb,groupnorm_kb
for p in "kgen-old kgen" "kgen-base kgen" "kgen kgen-old"; do
	d=/tmp/$(echo $p | tr ' ' _)
	KGENS="$p" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$d testsuite/gpu_before_after.sh $F > $d.txt 2>&1
done
tar czf $OUT/runs.tgz /tmp/kgen*
tail -n 14 /tmp/kgen*.txt
