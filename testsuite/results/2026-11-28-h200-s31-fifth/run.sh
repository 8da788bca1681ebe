#!/bin/bash
# The thirty-first session's fifth call, on nvidia-h200-x4: the five
# memory-bound instances that the twenty-ninth session's Triton tuning did
# not reach, tuned on triton:sm_90 on the four GPUs (resuming its
# database), then timed tuned against default, and the nearest-shape rule
# checked: maxpool_2x2, maxpool_3x3_s2_p1, layernorm_bert and transpose_4k
# built with the first call's CUDA database take their defaults now.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
FINAL=${OUT:-/tmp/out}
OUT=$FINAL/w
mkdir -p "$OUT"
K=softmax_4kx16k,transpose_4k,nchw_to_nhwc_kb,transpose_last2_kb,tile_rows_kb
mkdir -p "$OUT/tune"
OUT="$OUT/tune" DB=testsuite/results/2026-11-28-h200-s29-tune/triton-memory-2/tune.jsonl DEADLINE=200 TARGET=triton:sm_90 KERNELS=$K \
	bash testsuite/gpu_tune_examples.sh > "$OUT/tune/run.txt" 2>&1
mkdir -p "$OUT/tvd"
CUDA_VISIBLE_DEVICES=0 OUT="$OUT/tvd" BASELINE= TARGETS=triton:sm_90 KERNELS=$K \
	timeout -k 5 150 sh testsuite/gpu_tuned_vs_default.sh "$OUT/tune/tune.jsonl" > "$OUT/tvd/run.txt" 2>&1 &
CUDA_VISIBLE_DEVICES=1 ./bin/kgen build --target cuda:sm_90 --emit-only -v --db testsuite/results/2026-11-28-h200-s31-first/tune-cuda_sm_90/tune.jsonl \
	-o "$OUT/nearest" examples/pooling.kg examples/layernorm.kg examples/transpose.kg > "$OUT/nearest.txt" 2>&1
wait
echo "== table"
grep -h '^kgen tune:' "$OUT/tune/run.txt"; tail -7 "$OUT/tune/tune.txt"
tail -9 "$OUT/tvd/compare.txt"
grep -E "maxpool_2x2|maxpool_3x3_s2_p1|layernorm_bert|transpose_4k" "$OUT/nearest.txt"
tar czf "$FINAL/s31-fifth.tgz" -C "$OUT" . && rm -rf "$OUT"
