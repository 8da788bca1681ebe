#!/bin/sh
# The forty-fourth session's fifth call: kgen test on the H100 of the
# Triton emission of tune.sh's bin/kgen (the online term by libdevice's
# exp2): the streamed rows' specials at BLOCK 32 and the files whose
# online passes changed, symbolic plans and instances; then
# testsuite/exp/triton_softmax_warps.py on its softmax_vocab.
tar xJf bin/bins.tar.xz -C bin
export PATH="/usr/local/cuda/bin:$PATH"
./bin/kgen test --target triton:sm_90 --config row-reduce.BLOCK=32,row-reduce.BLOCK_ROWS=1 backends/triton/testdata/streamed.kg > $OUT/streamed.log 2>&1
echo "streamed exit $?"
timeout 200 ./bin/kgen test --target triton:sm_90 examples/softmax.kg examples/losses.kg > $OUT/examples.log 2>&1
echo "examples exit $?"
grep -h "FAIL\|plans:" $OUT/streamed.log $OUT/examples.log | tail -20
./bin/kgen build --target triton:sm_90 --kernel softmax_vocab -o /tmp/sv examples/softmax.kg > /dev/null 2>&1
python3 testsuite/exp/triton_softmax_warps.py /tmp/sv 2>&1 | tee $OUT/warps.txt
