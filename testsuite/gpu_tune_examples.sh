#!/bin/bash
# Issue 5's tuned-versus-default evidence for every example instance on
# one target: kgen tune of every instance under examples/ (or of KERNELS)
# on every GPU of the machine (one runner a GPU; nvidia-h200-x4 gives four
# times one GPU's throughput for the same device time), resuming the
# database DB (a file kept from an earlier call, copied to $OUT/tune.jsonl;
# default a new one), until DEADLINE seconds (default 540). A run cut short
# resumes from $OUT/tune.jsonl without measuring again what it measured,
# and a launch whose finalists were re-timed keeps its winner. Build
# bin/kgen first and carry bin.
#   TARGET=cuda:sm_90 DB=testsuite/results/.../tune.jsonl testsuite/gpu_tune_examples.sh
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
[ -n "${DB:-}" ] && cp "$DB" "$OUT/tune.jsonl"
OUT="$OUT" "$(dirname "$0")/gpu_machine.sh"
before=$(grep -c . "$OUT/tune.jsonl" 2>/dev/null || echo 0)
timeout -k 20 "$((${DEADLINE:-540} - SECONDS))" ./bin/kgen tune --target "${TARGET:-cuda:sm_90}" --gpus all --db "$OUT/tune.jsonl" \
	--strategy model --budget "${BUDGET:-8}" --time 30s ${KERNELS:+--kernel "$KERNELS"} examples > "$OUT/tune.txt" 2> "$OUT/tune.log"
echo "kgen tune: exit $? after $SECONDS s; records $before -> $(grep -c . "$OUT/tune.jsonl")"
cat "$OUT/tune.txt"
