#!/bin/sh
# The forty-sixth session's second call, not run (no machine was lent);
# for a later session (nvidia-h100-x1; bin/kgen built from main, which
# has Triton's default CACHE since 8df2b41; carry bin):
#   1. kgen test on triton:sm_90 of softmax.kg and norms.kg, whose
#      streamed instances now keep CACHE points by default;
#   2. kgen tune (model, 60 s a launch) of instancenorm_kb and
#      softmax_vocab on triton:sm_90 in the space that has CACHE, and the
#      tuned configurations against the defaults;
#   3. testsuite/exp/reverse_reread.py: does the L2 serve a
#      normalization's second read under kgen bench's clean flush, with
#      the outputs' launch reversed, with eviction hints, or with rows in
#      chunks?
export PATH="/usr/local/cuda/bin:$PATH"
timeout 200 ./bin/kgen test --target triton:sm_90 examples/softmax.kg examples/norms.kg > $OUT/correct.txt 2>&1
echo "kgen test exit $?"; grep -v "^ok " $OUT/correct.txt | tail -n 8
./bin/kgen tune --target triton:sm_90 --kernel instancenorm_kb,softmax_vocab --strategy model --time 60s --db $OUT/tune.jsonl examples/norms.kg examples/softmax.kg > $OUT/tune.log 2> $OUT/tune.err
echo "tune exit $?"
KERNELS=instancenorm_kb,softmax_vocab TARGETS=triton:sm_90 BASELINE= OUT=$OUT/tvd sh testsuite/gpu_tuned_vs_default.sh $OUT/tune.jsonl > $OUT/tvd.txt 2>&1
(cd $OUT && tar czf all.tgz tvd tune.log tune.err tune.jsonl && rm -rf tvd)
tail -n 12 $OUT/tune.log; tail -n 8 $OUT/tvd.txt
timeout 120 python3 testsuite/exp/reverse_reread.py > $OUT/reverse.txt 2>&1
echo "reverse_reread exit $?"
cat $OUT/reverse.txt
