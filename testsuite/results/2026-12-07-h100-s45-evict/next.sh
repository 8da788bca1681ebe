#!/bin/sh
# For the next session's first call (nvidia-h100-x1; build bin/kgen from
# main and carry bin): what the forty-fifth session left for the GPU, in
# one call (a start refused costs minutes of device time).
#   1. run.sh: Triton's row-reduce EVICT against the default, both orders;
#   2. CACHE=16384 against the default, both orders, on the same three
#      instances, and CACHE=32768 (softmaxes only: instancenorm_kb's 16
#      warps would keep 256 bytes a thread), one order;
#   3. ../2026-12-07-h100-s45-reads/ncu.sh: DRAM bytes of softmax_vocab's
#      kernel under kgen bench, triton and cuda.
# (testsuite/exp/triton_softmax_cached.py, the hand-written CACHE, can
# follow in a later call if kgen's own does not explain itself.)
export PATH="/usr/local/cuda/bin:$PATH"
sh testsuite/results/2026-12-07-h100-s45-evict/run.sh
wrap() { # name config
	printf '#!/bin/sh\ncmd=$1; shift\nexec "$(dirname "$0")/kgen" "$cmd" --config %s "$@"\n' "$2" > bin/$1
	chmod +x bin/$1
}
wrap kgen-c16 row-reduce.CACHE=16384
wrap kgen-c32 row-reduce.CACHE=32768
F="examples testsuite/kernelbench/level1.kg"
K=softmax_vocab,kb_softmax_wide,instancenorm_kb
run() { # name kgens kernels
	KGENS="$2" BASELINE= TARGETS=triton:sm_90 KERNELS=$3 OUT=$OUT/$1 testsuite/gpu_before_after.sh $F > $OUT/$1.txt 2>&1
}
run c1 "kgen kgen-c16" $K
run c2 "kgen-c16 kgen" $K
run c3 "kgen kgen-c32" softmax_vocab,kb_softmax_wide
(cd $OUT && tar czf cache.tgz c1 c2 c3 && rm -rf c1 c2 c3)
tail -n 8 $OUT/c1.txt $OUT/c2.txt $OUT/c3.txt
timeout 120 sh testsuite/results/2026-12-07-h100-s45-reads/ncu.sh > $OUT/ncu-summary.txt 2>&1
cat $OUT/ncu-summary.txt
