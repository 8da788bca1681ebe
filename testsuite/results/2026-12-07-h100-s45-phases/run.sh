#!/bin/sh
# The forty-fifth session's first call (nvidia-h100-x1, bin/ carried: bins.tar.xz as
# ../2026-12-07-h100-s44-online/next.sh says): triton_softmax_phases.py on
# the mask-free kgen's softmax_vocab, then next.sh (its timings).
tar xJf bin/bins.tar.xz -C bin && ./bin/kgen build --target triton:sm_90 --kernel softmax_vocab -o /tmp/svm examples/softmax.kg > $OUT/exp.txt 2>&1
timeout 120 python3 testsuite/exp/triton_softmax_phases.py /tmp/svm >> $OUT/exp.txt 2>&1
rm -rf bin/kgen bin/kgen-old bin/kgen-mid
sh testsuite/results/2026-12-07-h100-s44-online/next.sh
cat $OUT/exp.txt
