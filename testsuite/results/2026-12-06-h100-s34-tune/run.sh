#!/bin/bash
# The thirty-fourth session's third call, on nvidia-h100-x1: issue 5's
# tuning on the H100 of the memory-bound instances below 90% of a
# same-size copy at their defaults (2026-12-06-h100-s34-memory/), on
# cuda:sm_90 and then triton:sm_90 (testsuite/gpu_tune_targets.sh, model
# strategy, 10 evaluations a launch, each winner confirmed against its
# default interleaved), then each timed tuned against default in the
# same call.
set -u
FINAL=${OUT:-/tmp/out}
mkdir -p "$FINAL/w"
BUDGET=10 OUT=$FINAL/w TARGETS=cuda:sm_90 DEADLINE=150 \
	KERNELS=softplus_softsign_kb,dequantize_kb,softmax_dim1_big,dw_s2_5x5,softmax_temp,tile_rows_kb,misc_math_f64_1m,softmax_vocab \
	bash testsuite/gpu_tune_targets.sh 2>&1 | tail -15
BUDGET=10 OUT=$FINAL/w TARGETS=triton:sm_90 DEADLINE=150 \
	KERNELS=softplus_softsign_kb,cross_entropy_vocab,quantize_rows_kb,tile_rows_kb,instancenorm_kb,softmax_temp,dw_s2_5x5,misc_math_f64_1m \
	bash testsuite/gpu_tune_targets.sh 2>&1 | tail -15
tar czf "$FINAL/s34-tune.tgz" -C "$FINAL/w" . && rm -rf "$FINAL/w"
