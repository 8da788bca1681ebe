#!/bin/sh
# Written in the forty-fifth session, for the next session's first call
# (its own device time ran out first): Triton's row-reduce EVICT
# (a86484b: evict_last in a streamed row's reductions' passes,
# evict_first in its outputs' pass), timed against the default, both
# orders, on the instances whose one launch streams its rows through
# more than one pass. bin/kgen is main's; bin/kgen-evict, made here, is
# the same kgen with --config row-reduce.EVICT=1. Carry bin.
export PATH="/usr/local/cuda/bin:$PATH"
printf '#!/bin/sh\ncmd=$1; shift\nexec "$(dirname "$0")/kgen" "$cmd" --config row-reduce.EVICT=1 "$@"\n' > bin/kgen-evict
chmod +x bin/kgen-evict
F="examples testsuite/kernelbench/level1.kg"
K=softmax_vocab,kb_softmax_wide,instancenorm_kb
KGENS="kgen kgen-evict" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/e1 testsuite/gpu_before_after.sh $F > $OUT/e1.txt 2>&1
KGENS="kgen-evict kgen" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/e2 testsuite/gpu_before_after.sh $F > $OUT/e2.txt 2>&1
cd $OUT && tar czf all.tgz e1 e2 && rm -rf e1 e2
tail -n 8 e1.txt e2.txt
