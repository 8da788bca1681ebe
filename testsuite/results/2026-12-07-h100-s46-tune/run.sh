#!/bin/sh
# The forty-sixth session's second call (nvidia-h100-x1, bin/kgen built
# from 8df2b41: Triton's default CACHE): testsuite/exp/reverse_reread.py
# (does the L2 serve a normalization's second read under kgen bench's
# clean flush, with the outputs' launch reversed, with eviction hints, or
# rows taken in chunks?); then kgen tune (model, 75 s a launch) of
# instancenorm_kb and softmax_vocab on triton:sm_90 in the space that now
# has CACHE, and the tuned configurations against the defaults.
export PATH="/usr/local/cuda/bin:$PATH"
timeout 240 python3 testsuite/exp/reverse_reread.py > $OUT/reverse.txt 2>&1
echo "reverse_reread exit $?"
./bin/kgen tune --target triton:sm_90 --kernel instancenorm_kb,softmax_vocab --strategy model --time 75s --db $OUT/tune.jsonl examples/norms.kg examples/softmax.kg > $OUT/tune.log 2> $OUT/tune.err
echo "tune exit $?"
KERNELS=instancenorm_kb,softmax_vocab TARGETS=triton:sm_90 BASELINE= OUT=$OUT/tvd sh testsuite/gpu_tuned_vs_default.sh $OUT/tune.jsonl > $OUT/tvd.txt 2>&1
cd $OUT && tar czf all.tgz tvd tune.log tune.err tune.jsonl && rm -rf tvd
cat reverse.txt; tail -n 20 tune.log; tail -n 8 tvd.txt
