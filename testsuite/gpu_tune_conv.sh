#!/bin/bash
# Issue 5's third exhaustively measured space: the ResNet 3x3 NHWC bf16
# convolution of testsuite/tune_spaces.kg on igemm-mma (108
# configurations), every one measured (strategy exhaustive, no budget)
# into $OUT/conv.jsonl, then every strategy replayed over it in simulation
# (20 seeds; batches of 1 and of 16). Build bin/kgen first; LIMIT bounds
# the tuning (default 400 s).
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
timeout -k 10 "${LIMIT:-400}" ./bin/kgen tune --target "${TARGET:-cuda:sm_90}" --db "$OUT/conv.jsonl" --strategy exhaustive \
	--kernel conv_nhwc_resnet testsuite/tune_spaces.kg > "$OUT/tune-conv.txt" 2> "$OUT/tune-conv.log"
echo "kgen tune (conv, exhaustive): exit $? after $SECONDS s"
cat "$OUT/tune-conv.txt"
./bin/kgen tune --simulate --db "$OUT/conv.jsonl" --seeds 20 > "$OUT/simulate-conv.txt" 2>&1
./bin/kgen tune --simulate --db "$OUT/conv.jsonl" --seeds 20 --batch 16 > "$OUT/simulate-conv-b16.txt" 2>&1
cat "$OUT/simulate-conv.txt" "$OUT/simulate-conv-b16.txt"
echo "records: $(cat "$OUT/conv.jsonl" 2>/dev/null | wc -l)"
