#!/bin/sh
# The forty-fifth session's second call (nvidia-h100-x1): where the first
# pass of Triton's softmax_vocab loses its time, each read alone.
python3 testsuite/exp/triton_softmax_reads.py > $OUT/reads.txt 2>&1
cat $OUT/reads.txt
