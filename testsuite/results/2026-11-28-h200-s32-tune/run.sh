#!/bin/bash
# The thirty-second session's last call, on nvidia-h200: kgen tune over
# the windows read as rows of vectors, Triton's new VEC among them:
# dw_mobilenet and dw_s2_5x5 on triton:sm_90 and cuda:sm_90, the model
# strategy, 10 evaluations a launch, each winner confirmed against its
# default interleaved (the tuner's own protocol).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
for t in triton:sm_90 cuda:sm_90; do
	n=$(echo $t | tr : _)
	timeout -k 5 110 ./bin/kgen tune --target $t --kernel dw_mobilenet,dw_s2_5x5 --strategy model --budget 10 --db "$OUT/tune-$n.jsonl" examples/depthwise_conv.kg > "$OUT/tune-$n.txt" 2>&1
	echo "tune $t: exit $?"
	tail -n 12 "$OUT/tune-$n.txt"
done
tar czf "$FINAL/s32-tune.tgz" -C "$OUT" . && rm -rf "$OUT"
