#!/bin/sh
# The forty-fourth session's fifth call: kgen test on the H100 of the
# Triton emission of tune.sh's bin/kgen (the online term by libdevice's
# exp2): the streamed rows' specials at BLOCK 32 and the files whose
# online passes changed, symbolic plans and instances.
tar xJf bin/bins.tar.xz -C bin
export PATH="/usr/local/cuda/bin:$PATH"
./bin/kgen test --target triton:sm_90 --config row-reduce.BLOCK=32,row-reduce.BLOCK_ROWS=1 backends/triton/testdata/streamed.kg > $OUT/streamed.log 2>&1
echo "streamed exit $?"
timeout 200 ./bin/kgen test --target triton:sm_90 examples/softmax.kg examples/losses.kg > $OUT/examples.log 2>&1
echo "examples exit $?"
grep -h "FAIL\|plans:" $OUT/streamed.log $OUT/examples.log | tail -20
