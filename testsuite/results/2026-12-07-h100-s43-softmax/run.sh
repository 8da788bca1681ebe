#!/bin/bash
# Forty-third session's call: lower.splitOnline (bin/kgen; bin/kgen-base
# is main before it) timed and checked, then the experiments, most
# important first (the device time left was short):
#   ba/       softmax_vocab (whose plan changed; kb_softmax_wide is the
#             same shape) before and after on cuda:sm_90 and triton:sm_90,
#             no PyTorch beside them (testsuite/gpu_before_after.sh);
#   correct/  kgen test of backends/cuda/testdata/split_online.kg and
#             examples/softmax.kg on cuda:sm_90, triton:sm_90, hip:nvidia;
#   exp/      testsuite/exp/softmax_split.cu, then triton_softmax_split.py.
set -x
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/correct" "$OUT/ba" "$OUT/exp"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/machine.txt"
OUT=$OUT/ba TARGETS=cuda:sm_90,triton:sm_90 KERNELS=softmax_vocab BASELINE= timeout 100 sh testsuite/gpu_before_after.sh examples
for t in cuda:sm_90 triton:sm_90 hip:nvidia; do
  timeout 30 ./bin/kgen test --target $t backends/cuda/testdata/split_online.kg examples/softmax.kg > "$OUT/correct/$t.log" 2>&1
  echo "test $t: exit $? $(tail -1 "$OUT/correct/$t.log")"
done
nvcc -O3 -arch=sm_90 -o /tmp/softmax_split testsuite/exp/softmax_split.cu > "$OUT/exp/nvcc.log" 2>&1 && timeout 30 /tmp/softmax_split > "$OUT/exp/softmax_split.txt" 2>&1
cat "$OUT/exp/softmax_split.txt"
./bin/kgen build --target triton:sm_90 --kernel softmax_vocab -o "$OUT/exp/build" examples/softmax.kg > "$OUT/exp/build.log" 2>&1
timeout 50 python3 testsuite/exp/triton_softmax_split.py "$OUT/exp/build" > "$OUT/exp/triton_softmax_split.txt" 2> "$OUT/exp/triton_softmax_split.err"
cat "$OUT/exp/triton_softmax_split.txt"; tail -3 "$OUT/exp/triton_softmax_split.err"
