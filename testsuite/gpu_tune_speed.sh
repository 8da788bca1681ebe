#!/bin/sh
# How long kgen tune takes with two kgens (KGENS, default "kgen-base
# kgen"), each in turn on KERNELS (cuda:sm_90 unless TARGET) with a fresh
# database, the same strategy, budget and seed: the tuner's own overhead
# (writing inputs, checks, the confirmation), as the searches measure the
# same configurations. Build both into bin/ and carry bin. Logs go to
# $OUT; the reports and wall times are printed last.
#   KERNELS=axpy_16m,bias_scale_residual_kb testsuite/gpu_tune_speed.sh
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
KGENS=${KGENS:-kgen-base kgen}
for k in $KGENS; do
	start=$(date +%s)
	timeout -k 10 "${LIMIT:-200}" ./bin/$k tune --target "${TARGET:-cuda:sm_90}" --db "$OUT/$k.jsonl" --strategy model \
		--budget "${BUDGET:-12}" --time 120s --seed 1 --kernel "$KERNELS" examples > "$OUT/$k.txt" 2> "$OUT/$k.log"
	echo "$k: exit $?, $(( $(date +%s) - start )) s" | tee -a "$OUT/wall.txt"
done
for k in $KGENS; do
	echo "== $k"
	cat "$OUT/$k.txt"
done
cat "$OUT/wall.txt"
