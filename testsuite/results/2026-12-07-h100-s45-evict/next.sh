#!/bin/sh
# For the next session's first call (nvidia-h100-x1; build bin/kgen from
# main and carry bin): the three things the forty-fifth session left for
# the GPU, in one call (a start refused costs minutes of device time).
#   1. run.sh: Triton's row-reduce EVICT against the default, both orders;
#   2. ../2026-12-07-h100-s45-reads/ncu.sh: DRAM bytes of softmax_vocab's
#      kernel under kgen bench, triton and cuda;
#   3. testsuite/exp/triton_softmax_cached.py: the first 16384 or 32768
#      points of each row kept in registers for the outputs' pass.
sh testsuite/results/2026-12-07-h100-s45-evict/run.sh
sh testsuite/results/2026-12-07-h100-s45-reads/ncu.sh > $OUT/ncu-summary.txt 2>&1
./bin/kgen build --target triton:sm_90 --kernel softmax_vocab -o /tmp/sv examples/softmax.kg > $OUT/cached.txt 2>&1
timeout 200 python3 testsuite/exp/triton_softmax_cached.py /tmp/sv >> $OUT/cached.txt 2>&1
cat $OUT/ncu-summary.txt $OUT/cached.txt
