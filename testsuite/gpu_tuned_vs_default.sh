#!/bin/sh
# Issue 5's tuned-versus-default table: kgen bench of KERNELS on TARGETS
# (default cuda:sm_90,triton:sm_90) with the heuristic defaults (--db off)
# and then with the tuning databases given as arguments (joined into one),
# in one call, beside PyTorch eager unless BASELINE is empty; then kgen
# bench --compare of the two reports. Build bin/kgen first and carry bin.
# Logs go to $OUT; the comparison is printed last.
#   KERNELS=pad2d_kb,gemv_8k testsuite/gpu_tuned_vs_default.sh testsuite/results/*/tune.jsonl
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
TARGETS=${TARGETS:-cuda:sm_90,triton:sm_90}
base=${BASELINE-eager}
cat "$@" > "$OUT/db.jsonl"
for db in off tuned; do
	arg=off
	[ "$db" = tuned ] && arg="$OUT/db.jsonl"
	./bin/kgen bench --target "$TARGETS" --kernel "$KERNELS" --db "$arg" ${base:+--baseline "$base"} \
		--json "$OUT/$db.json" --md "$OUT/$db.md" examples > "$OUT/$db.log" 2> "$OUT/$db.err"
	echo "kgen bench --db $db: exit $?"
done
./bin/kgen bench --compare "$OUT/off.json" "$OUT/tuned.json" 2>&1 | tee "$OUT/compare.txt"
