#!/bin/sh
# The forty-fifth session's third call (nvidia-h100-x1, bin/ carried):
# bin/kgen main at ff20763, bin/kgen-evict the same with Triton's
# row-reduce EVICT hints on wherever a launch reads its rows again
# (evict_last in the reductions' passes, evict_first in the outputs'),
# both orders; then ../2026-12-07-h100-s45-reads/ncu.sh.
export PATH="/usr/local/cuda/bin:$PATH"
F="examples testsuite/kernelbench/level1.kg"
K=softmax_vocab,kb_softmax_wide,instancenorm_kb
KGENS="kgen kgen-evict" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/e1 testsuite/gpu_before_after.sh $F > $OUT/e1.txt 2>&1
KGENS="kgen-evict kgen" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/e2 testsuite/gpu_before_after.sh $F > $OUT/e2.txt 2>&1
sh testsuite/results/2026-12-07-h100-s45-reads/ncu.sh > $OUT/ncu-summary.txt 2>&1
cd $OUT && tar czf all.tgz e1 e2 ncu-*.txt bench-cuda.txt && rm -rf e1 e2
tail -n 8 e1.txt e2.txt; cat ncu-summary.txt
