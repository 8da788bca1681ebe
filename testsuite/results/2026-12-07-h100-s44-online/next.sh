#!/bin/sh
# For the next session's first call (written in the forty-fourth, not yet
# run): bin/kgen-base is the tree of 81f02e7 (16 warps at most), bin/kgen
# main at 759e6c6 or later (row-reduce's 32 warps, the default where rows
# streamed by no more programs than multiprocessors). 1. groupnorm_kb,
# whose statistics launch took 32 warps untimed, and the two softmaxes
# timed once, in both orders. 2. kgen tune of the Triton row-reduce
# launches still short of 80% of a same-size copy, now that the space has
# 32 warps, and the tuned configurations against the defaults.
tar xJf bin/bins.tar.xz -C bin
export PATH="/usr/local/cuda/bin:$PATH"
K=groupnorm_kb,softmax_vocab,kb_softmax_wide
F="examples testsuite/kernelbench/level1.kg"
KGENS="kgen-base kgen" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/ba1 testsuite/gpu_before_after.sh $F > $OUT/ba1.txt 2>&1
KGENS="kgen kgen-base" BASELINE= TARGETS=triton:sm_90 KERNELS=$K OUT=$OUT/ba2 testsuite/gpu_before_after.sh $F > $OUT/ba2.txt 2>&1
T=groupnorm_kb,instancenorm_kb,layernorm_3d_kb,frobenius_kb,softmax_vocab
./bin/kgen tune --target triton:sm_90 --kernel $T --strategy exhaustive --time 60s --db $OUT/tune.jsonl examples > $OUT/tune.log 2> $OUT/tune.err
echo "tune exit $?"
KERNELS=$T TARGETS=triton:sm_90 BASELINE= OUT=$OUT/tvd sh testsuite/gpu_tuned_vs_default.sh $OUT/tune.jsonl > $OUT/tvd.txt 2>&1
cd $OUT && tar czf all.tgz ba1 ba2 tvd && rm -rf ba1 ba2 tvd
tail -n 9 ba1.txt ba2.txt; cat tune.log; tail -n 10 tvd.txt
