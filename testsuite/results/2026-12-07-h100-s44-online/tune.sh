#!/bin/sh
# The forty-fourth session's fourth call: bin/kgen-base is the tree of
# a2243e4, bin/kgen the same with the online term by libdevice's exp2
# (ex2.approx.ftz). Before/after in both orders; then kgen tune of
# softmax_vocab and instancenorm_kb on triton:sm_90 (exhaustive, 80 s a
# launch) and the tuned configurations against the defaults.
tar xJf bin/bins.tar.xz -C bin
export PATH="/usr/local/cuda/bin:$PATH"
K=softmax_vocab,kb_softmax_wide,cross_entropy_vocab,kb_log_softmax_nominal
F="examples testsuite/kernelbench/level1.kg"
KGENS="kgen-base kgen" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/ba1 testsuite/gpu_before_after.sh $F > $OUT/ba1.txt 2>&1
KGENS="kgen kgen-base" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/ba2 testsuite/gpu_before_after.sh $F > $OUT/ba2.txt 2>&1
./bin/kgen tune --target triton:sm_90 --kernel softmax_vocab,instancenorm_kb --strategy exhaustive --time 80s --db $OUT/tune.jsonl examples/softmax.kg examples/norms.kg > $OUT/tune.log 2> $OUT/tune.err
echo "tune exit $?"
KERNELS=softmax_vocab,instancenorm_kb TARGETS=triton:sm_90 BASELINE= OUT=$OUT/tvd sh testsuite/gpu_tuned_vs_default.sh $OUT/tune.jsonl > $OUT/tvd.txt 2>&1
cd $OUT && tar czf all.tgz ba1 ba2 tvd tune.log tune.err tune.jsonl && rm -rf ba1 ba2 tvd
tail -n 12 ba1.txt ba2.txt; tail -n 30 tune.log; tail -n 8 tvd.txt
