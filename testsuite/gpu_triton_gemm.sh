#!/bin/sh
# Issue 5's Triton GEMM target (tuned bf16 4096^3 at 85% of torch.matmul):
# kgen tune of matmul_bf16_4k on triton:sm_90 (model strategy, BUDGET
# evaluations, default 16) into $OUT/tune.jsonl (resuming DB when set),
# then REPEATS (default 3) runs of kgen bench with that database beside
# PyTorch eager, each its own process, so that the ratio's spread between
# runs shows. Build bin/kgen first and carry bin.
set -u
export PATH="/usr/local/cuda/bin:$PATH"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
[ -n "${DB:-}" ] && cp "$DB" "$OUT/tune.jsonl"
K=${KERNEL:-matmul_bf16_4k}
F=${FILE:-examples/matmul_lowp.kg}
timeout -k 10 "${TUNE_LIMIT:-240}" ./bin/kgen tune --target triton:sm_90 --db "$OUT/tune.jsonl" --strategy model \
	--budget "${BUDGET:-16}" --kernel "$K" "$F" > "$OUT/tune.txt" 2> "$OUT/tune.log"
echo "kgen tune: exit $?"
cat "$OUT/tune.txt"
for i in $(seq 1 "${REPEATS:-3}"); do
	./bin/kgen bench --target triton:sm_90 --db "$OUT/tune.jsonl" --baseline eager --kernel "$K" \
		--json "$OUT/bench-$i.json" --md "$OUT/bench-$i.md" "$F" > "$OUT/bench-$i.log" 2> "$OUT/bench-$i.err"
	echo "kgen bench $i: exit $?"
	grep -E "^triton" "$OUT/bench-$i.log"
done
